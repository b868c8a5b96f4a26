//! What a run of the suite covers: curves, sizes, seed and filter.

use crucible_core::curve::Curve;
use crucible_core::run_seed::run_seed;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Largest NTT is 2^max_log_size; MSM edge sizes go up to 2^max_log_size + 1 on G1
    /// and 2^(max_log_size − 2) + 1 on G2.
    pub max_log_size: u32,
    /// Whole proofs land on the boundaries of a 2^proof_log_size domain.
    pub proof_log_size: u32,
    /// Seed every case's inputs derive from.
    pub seed: u64,
    /// Only cases whose name contains this string.
    pub filter: Option<String>,
    /// The curves run, in this order (BLS12-381's cases, then BN254's `bn254/...`).
    pub curves: Vec<Curve>,
}

impl Config {
    /// Defaults for `max_log_size` with a fresh random seed.
    pub fn new(max_log_size: u32) -> Self {
        Config {
            seed: run_seed(),
            max_log_size,
            proof_log_size: max_log_size.clamp(2, 10),
            filter: None,
            curves: Curve::ALL.to_vec(),
        }
    }
}
