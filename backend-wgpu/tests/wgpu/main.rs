//! The wgpu backend's tests, in one binary (each test binary links wgpu and arkworks
//! anew). The tests run one at a time (`common::serial`): they share backends, whose
//! shader pipelines are slow to compile on llvmpipe, and assert their budgets. The
//! conformance suite runs on wgpu from `conformance/tests/conformance/registered.rs`, with every
//! other registered backend (`CRUCIBLE_CONFORMANCE_BACKEND=wgpu` for wgpu alone).

mod common;
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
