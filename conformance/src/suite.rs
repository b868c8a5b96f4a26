//! Running the suite on one backend, or on every registered backend.

use crucible_core::registry::{probe_all, probe_listed, Probe, ProbeOptions, RegisteredCurve};
use crucible_core::{Bn254, ProverBackend};

use crate::runner::Runner;
use crate::{
    empty_query_cases, evaluation_cases, lease_checks, msm_cases, ntt_cases, proof_cases,
    schedule_cases, staging_cases, tight_budget_cases, CaseResult, Config, Outcome, Summary,
};

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
    let mut runner = Runner::new(backend, config, required, on_case);
    ntt_cases::run(&mut runner);
    staging_cases::run(&mut runner);
    msm_cases::run(&mut runner);
    proof_cases::run(&mut runner);
    schedule_cases::run(&mut runner);
    empty_query_cases::run(&mut runner);
    evaluation_cases::run(&mut runner);
    tight_budget_cases::run(&mut runner);
    lease_checks::run(&mut runner);
    runner.into_summary()
}

/// The cases that run on BN254 too (`bn254/...`): every NTT kind and the pointwise
/// ops against ark-poly, and whole proofs, byte for byte against ark-groth16 with both
/// reductions.
fn run_bn254(
    backend: &dyn ProverBackend<Bn254>,
    config: &Config,
    required: bool,
    on_case: &mut dyn FnMut(&CaseResult),
) -> Summary {
    let mut runner = Runner::new(backend, config, required, on_case);
    ntt_cases::run(&mut runner);
    proof_cases::run(&mut runner);
    runner.into_summary()
}

/// `name`'s BN254 devices: each runs [`run_bn254`]; a backend that does not prove
/// BN254 is one skipped case saying why (BN254 is not yet every backend's, so not a
/// failure even where `CRUCIBLE_REQUIRE` names the backend).
fn run_registered_bn254(
    registration: &crucible_core::registry::BackendRegistration,
    config: &Config,
    required: bool,
    options: &ProbeOptions,
    on_case: &mut dyn FnMut(&CaseResult),
) -> Summary {
    let mut total = Summary {
        seed: config.seed,
        ..Summary::default()
    };
    for probe in Bn254::probe(registration, options) {
        match probe {
            Probe::Available(backend) => {
                total.absorb(run_bn254(&*backend, config, required, on_case))
            }
            Probe::Unavailable { reason } => {
                let case = CaseResult {
                    backend: registration.name.to_string(),
                    name: "bn254/backend".into(),
                    outcome: Outcome::Skipped(format!("unavailable: {reason}")),
                    duration: Default::default(),
                };
                total.record(&case);
                on_case(&case);
            }
        }
    }
    total
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
        probe_listed::<crucible_core::Bls12_381>(options)
    } else {
        probe_all::<crucible_core::Bls12_381>(options)
    };
    for probed in probed_all {
        let name = probed.registration.name;
        if which != "all" && which != name {
            continue;
        }
        seen.push(name.to_string());
        let is_required = required.iter().any(|r| r == name);
        let mut any_available = false;
        for probe in probed.probes {
            match probe {
                Probe::Available(backend) => {
                    any_available = true;
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
        if any_available {
            total.absorb(run_registered_bn254(
                probed.registration,
                config,
                is_required,
                options,
                on_case,
            ));
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
