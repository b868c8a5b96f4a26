//! The suite builds only valid cases at every `max_log_size`: a correct backend passes
//! at the smallest sizes too.

use crucible_backends::cpu::CpuBackend;
use crucible_conformance::{run, run_seed, Config};
use crucible_core::registry::ProbeOptions;

#[test]
fn the_cpu_backend_passes_the_suite_at_the_smallest_sizes() {
    let backend = CpuBackend::<crucible_core::Bls12_381>::new(&ProbeOptions::default());
    for max_log_size in [0, 1, 2] {
        let mut config = Config::new(max_log_size);
        config.seed = run_seed();
        // Whole proofs are covered elsewhere; these sizes concern the primitives.
        let mut failures = Vec::new();
        let summary = run(&backend, &config, &mut |case| {
            if matches!(case.outcome, crucible_conformance::Outcome::Failed(_)) {
                failures.push(case.to_string());
            }
        });
        assert!(
            summary.ok() && summary.passed > 0,
            "--max-log-size {max_log_size}: {summary}: {failures:#?}"
        );
    }
}
