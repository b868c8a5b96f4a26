//! Runnable examples of crucible as a library: see `examples/`. The README's library
//! quick start is `examples/prove_my_circuit.rs`, and `tests/readme.rs` keeps the two
//! the same.
#![forbid(unsafe_code)]
