//! Small utilities every front end shares: byte sizes, the cache directory, a stable
//! hash, key files crucible did not write, the run seed and the tuning file.
//! Re-exported at the crate root.

pub(crate) mod byte_size;
pub mod cache_dir;
pub mod hash;
pub mod key_file;
pub mod run_seed;
pub mod tuning_file;
