//! MSM through ark-ec's `VariableBaseMSM`, with its scalar conversion in a leased buffer.

use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::PrimeField;
use crucible_core::{
    check_span, BufferId, Error, Lease, MemoryPlan, MsmSpan, PlanKey, Result, ScratchNeed,
};
use rayon::prelude::*;

use crate::memory::try_zeroed;

/// Plan item holding the MSM's scalars converted out of Montgomery form.
pub const SCALARS_ITEM: PlanKey = PlanKey::new("cpu", "msm_scalars");

/// Scratch for the largest MSM in `need` (one canonical integer per term).
pub fn scratch_plan<F: PrimeField>(need: &ScratchNeed<F>) -> MemoryPlan {
    let mut plan = MemoryPlan::new("cpu scratch");
    let terms = need.msm_g1.max(need.msm_g2);
    if terms > 0 {
        // Saturates instead of wrapping: a plan past u64 can never fit a budget.
        let bytes = (terms as u64).saturating_mul(size_of::<F::BigInt>() as u64);
        plan.item(SCALARS_ITEM, bytes);
    }
    plan
}

/// Σ scalars·bases for any curve group `G`.
pub fn msm<G>(
    work: &mut Lease,
    bases: &Lease,
    bases_id: BufferId,
    bases_len: usize,
    span: &MsmSpan<impl Copy>,
) -> Result<G>
where
    G: CurveGroup + VariableBaseMSM,
    G::Affine: 'static,
{
    check_span(span, bases_len)?;
    if span.len == 0 {
        return Ok(G::zero());
    }
    let bytes = (span.len * size_of::<<G::ScalarField as PrimeField>::BigInt>()) as u64;
    let scratch = work.allocate(SCALARS_ITEM, bytes, || {
        try_zeroed(span.len, <G::ScalarField as PrimeField>::BigInt::default())
    })?;
    let (ints, scalars) = work
        .get_mut_and_ref::<Vec<<G::ScalarField as PrimeField>::BigInt>, Vec<G::ScalarField>>(
            scratch,
            span.scalars.id(),
        )?;
    let out_of_range = || Error::InvalidInput("MSM span beyond its buffers".into());
    let scalars = scalars
        .get(span.scalar_offset..span.scalar_offset + span.len)
        .ok_or_else(out_of_range)?;
    ints.par_iter_mut()
        .zip(scalars)
        .for_each(|(i, s)| *i = s.into_bigint());
    let points = bases
        .get::<Vec<G::Affine>>(bases_id)?
        .get(span.base_offset..span.base_offset + span.len)
        .ok_or_else(out_of_range)?;
    let result = G::msm_bigint(points, ints);
    work.free(scratch)?;
    Ok(result)
}
