//! MSM through ark-ec's `VariableBaseMSM`, with its scalar conversion in a leased buffer.

use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::{BigInteger256, PrimeField};
use crucible_core::{
    check_span, BufferId, Error, Fr, Lease, MemoryPlan, MsmSpan, PlanKey, Result, ScratchNeed,
};
use rayon::prelude::*;

use crate::memory::try_zeroed;

/// Plan item holding the MSM's scalars converted out of Montgomery form.
pub const SCALARS_ITEM: PlanKey = PlanKey::new("cpu", "msm_scalars");

/// Scratch for the largest MSM in `need` (one canonical integer per term).
pub fn scratch_plan(need: &ScratchNeed) -> MemoryPlan {
    let mut plan = MemoryPlan::new("cpu scratch");
    let terms = need.msm_g1.max(need.msm_g2);
    if terms > 0 {
        // Saturates instead of wrapping: a plan past u64 can never fit a budget.
        let bytes = (terms as u64).saturating_mul(size_of::<BigInteger256>() as u64);
        plan.item(SCALARS_ITEM, bytes);
    }
    plan
}

/// Σ scalars·bases for any curve group `G` over `Fr`.
pub fn msm<G>(
    work: &mut Lease,
    bases: &Lease,
    bases_id: BufferId,
    bases_len: usize,
    span: &MsmSpan<impl Copy>,
) -> Result<G>
where
    G: CurveGroup<ScalarField = Fr> + VariableBaseMSM,
    G::Affine: 'static,
{
    check_span(span, bases_len)?;
    if span.len == 0 {
        return Ok(G::zero());
    }
    let bytes = (span.len * size_of::<BigInteger256>()) as u64;
    let scratch = work.allocate(SCALARS_ITEM, bytes, || {
        try_zeroed(span.len, BigInteger256::default())
    })?;
    let (ints, scalars) =
        work.get_mut_and_ref::<Vec<BigInteger256>, Vec<Fr>>(scratch, span.scalars.id())?;
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
