//! Runs the conformance suite on every registered backend. Unavailable backends are
//! reported as skipped with their reason and cases a backend does not implement as
//! unsupported (the template's), or both fail when named in `CRUCIBLE_REQUIRE`.
//! `CRUCIBLE_MAX_LOG` sets the largest size (default 8), `CRUCIBLE_SEED` replays a run,
//! `CRUCIBLE_CONFORMANCE_BACKEND` runs one backend only (default `all`).

use crucible_backends as _;
use crucible_conformance::{required_backends, run_registered, Config};
use crucible_core::registry::ProbeOptions;

#[test]
fn every_registered_backend_matches_arkworks() {
    let max_log = std::env::var("CRUCIBLE_MAX_LOG")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let config = Config::new(max_log);
    println!("conformance: max log size {max_log}, seed {}", config.seed);
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
    assert!(summary.passed > 0, "no case ran");
    assert!(summary.ok(), "failures:\n{}", summary.failures.join("\n"));
}
