//! The files crate's integration tests, one binary: the readers and writers against
//! real circom and snarkjs files of both curves, the powers of tau, key loading, and
//! hostile inputs, each in its file below (with the two helpers they share).

mod bad_points;
mod big_zkey;
mod curves;
mod fuzz;
mod ptau;
mod snarkjs_files;
mod zkey_load;
