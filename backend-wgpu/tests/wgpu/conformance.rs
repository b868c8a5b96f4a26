//! The conformance suite (NTT, pointwise, MSM edge cases, byte-identical proofs, lease
//! invariants) on the first wgpu adapter, at sizes llvmpipe runs in a few minutes.
//! `CRUCIBLE_MAX_LOG` sets the largest size (default 6), `CRUCIBLE_SEED` replays a run,
//! `CRUCIBLE_FILTER` runs only the cases whose name contains it.

use crate::common;

use crucible_conformance::{run, Config};

#[test]
fn conformance_suite_passes_on_wgpu() {
    let _serial = common::serial();
    let Some(backend) = common::backend("conformance_suite_passes_on_wgpu") else {
        return;
    };
    let max_log = std::env::var("CRUCIBLE_MAX_LOG")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    let mut config = Config::new(max_log);
    config.filter = std::env::var("CRUCIBLE_FILTER").ok();
    println!(
        "conformance on {}: max log size {max_log}, seed {}",
        crucible_core::ProverBackend::info(backend).device_name,
        config.seed
    );
    let summary = run(backend, &config, &mut |case| println!("{case}"));
    println!("{summary}");
    assert!(summary.passed > 0, "no case ran");
    assert!(summary.ok(), "failures:\n{}", summary.failures.join("\n"));
}
