//! Shared by the wgpu tests: opening the adapter (or skipping, or failing when
//! `CRUCIBLE_REQUIRE` names wgpu) and seeded randomness that prints its seed on failure.
#![allow(dead_code)]

use ark_std::rand::rngs::StdRng;
use ark_std::rand::SeedableRng;
use crucible_backend_wgpu::{WgpuBackend, WgpuOptions};
use crucible_core::registry::ProbeOptions;

/// Whether `CRUCIBLE_REQUIRE` (comma-separated backend names) includes wgpu.
pub fn wgpu_required() -> bool {
    std::env::var("CRUCIBLE_REQUIRE")
        .map(|v| v.split(',').any(|s| s.trim() == "wgpu"))
        .unwrap_or(false)
}

/// The first adapter, opened with `options`; `None` (after saying why) when there is
/// none and wgpu is not required. When it is required, a missing adapter fails the test.
pub fn backend_with(test: &str, options: WgpuOptions) -> Option<WgpuBackend> {
    match WgpuBackend::open(&ProbeOptions::default(), &options) {
        Ok(b) => Some(b),
        Err(e) => {
            assert!(
                !wgpu_required(),
                "{test}: wgpu is required (CRUCIBLE_REQUIRE) but unavailable: {e}"
            );
            println!("{test}: skipped, wgpu unavailable: {e}");
            None
        }
    }
}

/// The first adapter with its own limits.
pub fn backend(test: &str) -> Option<WgpuBackend> {
    backend_with(test, WgpuOptions::default())
}

/// Prints the seed if the test panics while it is alive.
pub struct Seed(pub u64);

impl Drop for Seed {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "random inputs came from seed {} (set CRUCIBLE_SEED={} to repeat)",
                self.0, self.0
            );
        }
    }
}

/// A fresh random generator (or `CRUCIBLE_SEED`'s), with the guard that reports its seed.
pub fn rng() -> (StdRng, Seed) {
    let seed = std::env::var("CRUCIBLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0)
        });
    (StdRng::seed_from_u64(seed), Seed(seed))
}
