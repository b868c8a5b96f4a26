//! The runner every case goes through: each case seeded from its name, panics caught,
//! a leaked budget or a deferred release error failing the case.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_core::{Bls12_381, PairingCurve, ProverBackend};

use crate::{CaseError, CaseResult, Config, Outcome, Summary};

/// Runs cases against one backend on the curve `E`, reporting each through `on_case`.
pub(crate) struct Runner<'a, E: PairingCurve = Bls12_381> {
    pub backend: &'a dyn ProverBackend<E>,
    pub config: &'a Config,
    /// Named in `CRUCIBLE_REQUIRE`: an unsupported case fails.
    required: bool,
    label: String,
    summary: Summary,
    on_case: &'a mut dyn FnMut(&CaseResult),
}

impl<'a, E: PairingCurve> Runner<'a, E> {
    /// A runner for `backend`; `required` when `CRUCIBLE_REQUIRE` names it.
    pub fn new(
        backend: &'a dyn ProverBackend<E>,
        config: &'a Config,
        required: bool,
        on_case: &'a mut dyn FnMut(&CaseResult),
    ) -> Self {
        Runner {
            backend,
            config,
            required,
            label: backend.info().label(),
            summary: Summary {
                seed: config.seed,
                ..Summary::default()
            },
            on_case,
        }
    }

    /// What the cases run so far came to.
    pub fn into_summary(self) -> Summary {
        self.summary
    }

    /// Runs one case, named with its curve's prefix ([`curve_prefix`]): skipped if
    /// filtered out, failed on error, panic or leaked budget, unsupported when the
    /// backend answers `Unsupported` (failed if it is required).
    pub fn case(&mut self, name: &str, body: impl FnOnce(&mut StdRng) -> Result<(), CaseError>) {
        let name = &format!("{}{name}", curve_prefix(E::CURVE));
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

/// The prefix of a curve's case names: none for BLS12-381, `bn254/` for BN254.
pub fn curve_prefix(curve: crucible_core::curve::Curve) -> &'static str {
    match curve {
        crucible_core::curve::Curve::Bls12_381 => "",
        crucible_core::curve::Curve::Bn254 => "bn254/",
    }
}
