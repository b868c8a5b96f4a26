//! Running the suite on one backend, or on every registered backend.

use crucible_core::curve::Curve;
use crucible_core::registry::{probe_all, probe_listed, Probe, ProbeOptions, RegisteredCurve};
use crucible_core::{Bls12_381, Bn254, PairingCurve, ProverBackend};

use crate::runner::{curve_prefix, Runner};
use crate::{
    empty_query_cases, evaluation_cases, lease_checks, msm_cases, ntt_cases, proof_cases,
    schedule_cases, staging_cases, tight_budget_cases, CaseResult, Config, Outcome, Summary,
};

/// Runs the whole suite on `backend`, on its curve `E` (not required: unsupported cases
/// are reported as such, not as failures).
pub fn run<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    config: &Config,
    on_case: &mut dyn FnMut(&CaseResult),
) -> Summary {
    run_backend(backend, config, false, on_case)
}

/// Every case family on one backend and curve (BN254's named `bn254/...`).
fn run_backend<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
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

/// One registered backend's `probes` on curve `E`: each available one runs the suite; an
/// unavailable one is one `backend` case (`bn254/backend` on BN254) saying why,
/// skipped, or failed when the backend is `required`. Returns the summary and whether
/// any device was available.
fn run_probes<E: RegisteredCurve>(
    registration: &crucible_core::registry::BackendRegistration,
    probes: Vec<Probe<E>>,
    config: &Config,
    required: bool,
    on_case: &mut dyn FnMut(&CaseResult),
) -> (Summary, bool) {
    let mut total = Summary {
        seed: config.seed,
        ..Summary::default()
    };
    let mut any_available = false;
    for probe in probes {
        match probe {
            Probe::Available(backend) => {
                any_available = true;
                total.absorb(run_backend(&*backend, config, required, on_case));
            }
            Probe::Unavailable { reason } => {
                let outcome = if required {
                    Outcome::Failed(format!(
                        "required by CRUCIBLE_REQUIRE but unavailable: {reason}"
                    ))
                } else {
                    Outcome::Skipped(format!("unavailable: {reason}"))
                };
                let case = CaseResult {
                    backend: registration.name.to_string(),
                    name: format!("{}backend", curve_prefix(E::CURVE)),
                    outcome,
                    duration: Default::default(),
                };
                total.record(&case);
                on_case(&case);
            }
        }
    }
    (total, any_available)
}

/// Runs the suite on every registered backend whose name matches `which` (`all` for
/// every one), on each curve of `config.curves`. Unavailable backends are skipped with
/// their reason, and unsupported cases reported as unsupported, or both fail when the
/// backend is listed in `required`. A backend with no device at all on BLS12-381 is
/// not probed again on BN254: its one `backend` case says why.
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
        probe_listed::<Bls12_381>(options)
    } else {
        probe_all::<Bls12_381>(options)
    };
    for probed in probed_all {
        let registration = probed.registration;
        if which != "all" && which != registration.name {
            continue;
        }
        seen.push(registration.name.to_string());
        let is_required = required.iter().any(|r| r == registration.name);
        let mut bls_probes = Some(probed.probes);
        let mut bls_available = None;
        for curve in &config.curves {
            match curve {
                Curve::Bls12_381 => {
                    let probes = bls_probes.take().unwrap_or_default();
                    let (summary, available) =
                        run_probes(registration, probes, config, is_required, on_case);
                    total.absorb(summary);
                    bls_available = Some(available);
                }
                Curve::Bn254 if bls_available != Some(false) => {
                    let (summary, _) = run_probes(
                        registration,
                        Bn254::probe(registration, options),
                        config,
                        is_required,
                        on_case,
                    );
                    total.absorb(summary);
                }
                Curve::Bn254 => {}
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
