//! Lease invariants every backend must keep: refused plans, refused allocations, and
//! the budget back at its baseline after every error path.

use std::sync::Arc;

use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::fixtures::key_cache::generate_key;
use crucible_core::groth16::{prove, ProveOptions, StagedKey};
use crucible_core::{ElementKind, Error, MemoryPlan, NttKind, PairingCurve};

use crate::inputs::random_scalars;
use crate::items;
use crate::items::scalar_plan;
use crate::runner::Runner;
use crate::CaseError;

/// The lease cases (the runner fails any case that leaves budget in use).
pub fn run<E: PairingCurve>(r: &mut Runner<'_, E>) {
    let backend = r.backend;
    r.case("lease/plan-larger-than-budget-fails-at-once", |_| {
        let capacity = backend.budget().capacity();
        let mut plan = MemoryPlan::new("too big");
        plan.item(items::HUGE, capacity + 1);
        match backend.allocate(plan) {
            Err(Error::OutOfBudget {
                needed,
                capacity: c,
                ..
            }) if needed == capacity + 1 && c == capacity => Ok(()),
            Err(e) => Err(CaseError::wrong_error(e)),
            Ok(_) => Err("a plan larger than the budget was granted".into()),
        }
    });
    r.case("lease/allocation-beyond-plan-is-refused", |_| {
        let mut plan = MemoryPlan::new("one buffer");
        plan.item(items::X, items::bytes(backend, ElementKind::Scalar, 8));
        let mut lease = backend.allocate(plan)?;
        match backend.alloc_scalars(&mut lease, items::X, 9) {
            Err(Error::LeaseExceeded { buffer, .. }) if *buffer == items::X.to_string() => {}
            Err(e) => return Err(CaseError::wrong_error(e)),
            Ok(_) => return Err("allocation beyond the plan was granted".into()),
        }
        match backend.alloc_scalars(&mut lease, items::NOT_IN_PLAN, 1) {
            Err(Error::LeaseExceeded { buffer, .. })
                if *buffer == items::NOT_IN_PLAN.to_string() => {}
            Err(e) => return Err(CaseError::wrong_error(e)),
            Ok(_) => return Err("allocation outside the plan was granted".into()),
        }
        lease.release()?;
        Ok(())
    });
    r.case("lease/dropped-mid-way-returns-budget", |rng| {
        let domain = crucible_core::Domain::with_log_size(4)?;
        let plan = scalar_plan(
            backend,
            &[(items::X, domain.size)],
            crucible_core::ScratchNeed {
                ntt: Some(domain),
                ..Default::default()
            },
        );
        let mut lease = backend.allocate(plan)?;
        let x = backend.alloc_scalars(&mut lease, items::X, domain.size)?;
        let values: Vec<E::ScalarField> = random_scalars(rng, domain.size);
        backend.stage_scalars(&mut lease, x, &values)?;
        backend.ntt(&mut lease, x, &domain, NttKind::Forward)?;
        drop(lease);
        Ok(())
    });
    r.case("lease/failed-stage-returns-budget", |_| {
        let mut plan = MemoryPlan::new("bad stage");
        plan.item(items::X, items::bytes(backend, ElementKind::Scalar, 4));
        let mut lease = backend.allocate(plan)?;
        let x = backend.alloc_scalars(&mut lease, items::X, 4)?;
        match backend.stage_scalars(&mut lease, x, &[E::ScalarField::from(1u64); 5]) {
            // The backend's `Unsupported` is no proof that it checks the length.
            Err(e) if matches!(e.root(), Error::Unsupported(_)) => Err(e.into()),
            Err(_) => Ok(()),
            Ok(()) => Err("staging 5 scalars into a buffer of 4 was accepted".into()),
        }
    });
    r.case("lease/mismatched-key-is-refused-before-allocating", |rng| {
        let seed = ark_std::rand::Rng::gen::<u64>(rng);
        let pk = generate_key(12, 1, seed)?;
        let key = StagedKey::stage(backend, Arc::new(pk))?;
        let staged = backend.budget().in_use();
        let wrong = BenchCircuit {
            constraints: 40,
            inputs: 1,
            seed,
        };
        let result = prove(
            backend,
            &key,
            wrong,
            E::ScalarField::from(3u64),
            E::ScalarField::from(5u64),
            ProveOptions::default(),
        );
        let after = backend.budget().in_use();
        key.release()?;
        match result {
            Err(e)
                if matches!(e.root(), Error::InvalidInput(m) if m.contains("does not match"))
                    && after == staged =>
            {
                Ok(())
            }
            Err(e) => {
                Err(CaseError::from(e)
                    .context(&format!("wrong error or budget ({after} vs {staged})")))
            }
            Ok(_) => Err("a circuit of another shape was proved with the key".into()),
        }
    });
}
