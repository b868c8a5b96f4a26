//! Runs the conformance suite on every registered backend, one test per curve (so the
//! two run side by side). Unavailable backends are reported as skipped with their
//! reason and cases a backend does not implement as unsupported (the template's), or
//! both fail when named in `CRUCIBLE_REQUIRE`. `CRUCIBLE_MAX_LOG` sets the largest size
//! (default 8), `CRUCIBLE_SEED` replays a run, `CRUCIBLE_CONFORMANCE_BACKEND` runs one
//! backend only (default `all`).

use crucible_backends as _;
use crucible_conformance::{required_backends, run_registered, Config};
use crucible_core::curve::Curve;
use crucible_core::registry::ProbeOptions;

fn every_registered_backend_matches_arkworks_on(curve: Curve) {
    let max_log = std::env::var("CRUCIBLE_MAX_LOG")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let mut config = Config::new(max_log);
    config.curves = vec![curve];
    println!(
        "conformance on {}: max log size {max_log}, seed {}",
        curve.name(),
        config.seed
    );
    let which = std::env::var("CRUCIBLE_CONFORMANCE_BACKEND").unwrap_or_else(|_| "all".into());
    let summary = run_registered(
        &which,
        &config,
        &required_backends(),
        &ProbeOptions::default(),
        &mut |case| println!("{case}"),
    );
    println!("{summary}");
    for skip in &summary.skips {
        println!("skipped: {skip}");
    }
    assert!(summary.passed > 0, "no case ran on {}", curve.name());
    assert!(
        summary.ok(),
        "failures on {} (seed {}):\n{}",
        curve.name(),
        config.seed,
        summary.failures.join("\n")
    );
}

#[test]
fn every_registered_backend_matches_arkworks_on_bls12_381() {
    every_registered_backend_matches_arkworks_on(Curve::Bls12_381);
}

#[test]
fn every_registered_backend_matches_arkworks_on_bn254() {
    every_registered_backend_matches_arkworks_on(Curve::Bn254);
}
