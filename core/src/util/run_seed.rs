//! The seed of a test or conformance run: replayable from the environment.

/// `CRUCIBLE_SEED` to replay a run, else fresh from the clock.
pub fn run_seed() -> u64 {
    std::env::var("CRUCIBLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
}
