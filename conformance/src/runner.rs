//! Running the suite on one backend, or on every registered backend.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_core::registry::{probe_all, probe_listed, Probe, ProbeOptions};
use crucible_core::ProverBackend;

use crate::{
    empty_query_cases, evaluation_cases, lease_checks, msm_cases, ntt_cases, proof_cases,
    schedule_cases, staging_cases, CaseError, CaseResult, Outcome, Summary,
};

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
}

pub use crucible_core::run_seed::run_seed;

impl Config {
    /// Defaults for `max_log_size` with a fresh random seed.
    pub fn new(max_log_size: u32) -> Self {
        Config {
            seed: run_seed(),
            max_log_size,
            proof_log_size: max_log_size.clamp(2, 10),
            filter: None,
        }
    }
}

/// Runs cases against one backend, reporting each through `on_case`.
pub(crate) struct Runner<'a> {
    pub backend: &'a dyn ProverBackend,
    pub config: &'a Config,
    /// Named in `CRUCIBLE_REQUIRE`: an unsupported case fails.
    required: bool,
    label: String,
    summary: Summary,
    on_case: &'a mut dyn FnMut(&CaseResult),
}

impl Runner<'_> {
    /// Runs one case: skipped if filtered out, failed on error, panic or leaked budget,
    /// unsupported when the backend answers `Unsupported` (failed if it is required).
    pub fn case(&mut self, name: &str, body: impl FnOnce(&mut StdRng) -> Result<(), CaseError>) {
        if let Some(f) = &self.config.filter {
            if !name.contains(f.as_str()) {
                return;
            }
        }
        let case_seed = self.config.seed ^ crucible_core::hash::fnv1a(name.as_bytes());
        let mut rng = StdRng::seed_from_u64(case_seed);
        let budget = self.backend.budget();
        let baseline = budget.in_use();
        let start = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| body(&mut rng)));
        let duration = start.elapsed();
        let leaked = budget.in_use().saturating_sub(baseline);
        let deferred = budget.take_deferred_errors();
        let outcome = match result {
            Ok(Ok(())) if leaked == 0 && deferred.is_empty() => Outcome::Passed,
            Ok(Ok(())) if leaked > 0 => Outcome::Failed(format!(
                "{leaked} bytes of budget still in use after the case"
            )),
            Ok(Ok(())) => Outcome::Failed(format!("errors while releasing: {deferred:?}")),
            Ok(Err(CaseError::Failed(why))) => {
                Outcome::Failed(format!("{why} (case seed {case_seed})"))
            }
            // An unsupported answer must still return the budget on its error path.
            Ok(Err(CaseError::Unsupported(why))) if leaked > 0 => Outcome::Failed(format!(
                "{why}; then {leaked} bytes of budget still in use after the case"
            )),
            Ok(Err(CaseError::Unsupported(why))) if !deferred.is_empty() => {
                Outcome::Failed(format!("{why}; then errors while releasing: {deferred:?}"))
            }
            Ok(Err(CaseError::Unsupported(why))) if self.required => Outcome::Failed(format!(
                "required by CRUCIBLE_REQUIRE but unsupported: {why}"
            )),
            Ok(Err(CaseError::Unsupported(why))) => Outcome::Unsupported(why),
            Err(panic) => Outcome::Failed(format!(
                "panicked: {} (case seed {case_seed})",
                crucible_core::panic_message(&*panic)
            )),
        };
        let case = CaseResult {
            backend: self.label.clone(),
            name: name.to_string(),
            outcome,
            duration,
        };
        self.summary.record(&case);
        (self.on_case)(&case);
    }
}

/// Runs the whole suite on `backend` (not required: unsupported cases are reported as
/// such, not as failures).
pub fn run(
    backend: &dyn ProverBackend,
    config: &Config,
    on_case: &mut dyn FnMut(&CaseResult),
) -> Summary {
    run_backend(backend, config, false, on_case)
}

fn run_backend(
    backend: &dyn ProverBackend,
    config: &Config,
    required: bool,
    on_case: &mut dyn FnMut(&CaseResult),
) -> Summary {
    let mut runner = Runner {
        backend,
        config,
        required,
        label: backend.info().label(),
        summary: Summary {
            seed: config.seed,
            ..Summary::default()
        },
        on_case,
    };
    ntt_cases::run(&mut runner);
    staging_cases::run(&mut runner);
    msm_cases::run(&mut runner);
    proof_cases::run(&mut runner);
    schedule_cases::run(&mut runner);
    empty_query_cases::run(&mut runner);
    evaluation_cases::run(&mut runner);
    lease_checks::run(&mut runner);
    runner.summary
}

/// Runs the suite on every registered backend whose name matches `which` (`all` for
/// every one). Unavailable backends are skipped with their reason, and unsupported
/// cases reported as unsupported, or both fail when the backend is listed in
/// `required`.
pub fn run_registered(
    which: &str,
    config: &Config,
    required: &[String],
    options: &ProbeOptions,
    on_case: &mut dyn FnMut(&CaseResult),
) -> Summary {
    let mut total = Summary {
        seed: config.seed,
        ..Summary::default()
    };
    let mut seen = Vec::new();
    // `all` leaves out the backends run only when named (the template).
    let probed_all = if which == "all" {
        probe_listed(options)
    } else {
        probe_all(options)
    };
    for probed in probed_all {
        let name = probed.registration.name;
        if which != "all" && which != name {
            continue;
        }
        seen.push(name.to_string());
        let is_required = required.iter().any(|r| r == name);
        for probe in probed.probes {
            match probe {
                Probe::Available(backend) => {
                    total.absorb(run_backend(&*backend, config, is_required, on_case))
                }
                Probe::Unavailable { reason } => {
                    let outcome = if is_required {
                        Outcome::Failed(format!(
                            "required by CRUCIBLE_REQUIRE but unavailable: {reason}"
                        ))
                    } else {
                        Outcome::Skipped(format!("unavailable: {reason}"))
                    };
                    let case = CaseResult {
                        backend: name.to_string(),
                        name: "backend".into(),
                        outcome,
                        duration: Default::default(),
                    };
                    total.record(&case);
                    on_case(&case);
                }
            }
        }
    }
    for r in required {
        if !seen.contains(r) && (which == "all" || which == r) {
            let case = CaseResult {
                backend: r.clone(),
                name: "backend".into(),
                outcome: Outcome::Failed("required by CRUCIBLE_REQUIRE but not compiled in".into()),
                duration: Default::default(),
            };
            total.record(&case);
            on_case(&case);
        }
    }
    if which != "all" && seen.is_empty() {
        let case = CaseResult {
            backend: which.to_string(),
            name: "backend".into(),
            outcome: Outcome::Failed(format!("no registered backend named `{which}`")),
            duration: Default::default(),
        };
        total.record(&case);
        on_case(&case);
    }
    total
}
