//! The wgpu backend's tests, in one binary (each test binary links wgpu and arkworks,
//! and the staged test executables must fit the device machine's transfer limit).
//! The tests run one at a time (`common::serial`): they share backends, whose shader
//! pipelines are slow to compile on llvmpipe, and assert their budgets.

mod common;
mod conformance;
mod curve;
mod errors;
mod field;
mod msm;
mod ntt;
mod pipeline_cache;
mod sparse_product;
mod staging;
mod straight;
mod warm_up;
