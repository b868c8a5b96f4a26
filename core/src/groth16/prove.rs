//! One proof: synthesize, evaluate, then allocate / stage / compute / release on the
//! backend, and the final combination on the host exactly as ark-groth16 does it.

use std::time::Instant;

use ark_ec::CurveGroup;
use ark_ff::Zero;
use ark_relations::gr1cs::ConstraintSynthesizer;

use super::{evaluate, proof_plan_for, synthesize, verify, Proof, StagedKey, Synthesized};
use crate::report::{PhaseTimes, ProofReport};
use crate::{
    Fr, G1Projective, G2Projective, Lease, MsmSpan, NttKind, Phase, PhaseExt, ProverBackend, Result,
};

/// Choices for one proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProveOptions {
    /// Verify the proof before returning it (a proof that fails is an error).
    pub verify: bool,
}

impl Default for ProveOptions {
    fn default() -> Self {
        ProveOptions { verify: true }
    }
}

/// A proof and its report.
#[derive(Clone, Debug)]
pub struct ProofOutput {
    /// The proof, arkworks' own type.
    pub proof: Proof,
    /// Timings and memory of this proof.
    pub report: ProofReport,
    /// Public inputs (without the constant one), for the caller's own verification.
    pub public_inputs: Vec<Fr>,
}

/// Proves `circuit` with randomness `r`, `s` on `backend` using the staged `key`.
pub fn prove<C: ConstraintSynthesizer<Fr>>(
    backend: &dyn ProverBackend,
    key: &StagedKey,
    circuit: C,
    r: Fr,
    s: Fr,
    options: ProveOptions,
) -> Result<ProofOutput> {
    let start = Instant::now();
    let synthesized = synthesize(circuit).phase(Phase::Synthesize)?;
    let synthesize_time = start.elapsed();
    let mut out = prove_synthesized(backend, key, &synthesized, r, s, options)?;
    out.report.times.synthesize = synthesize_time;
    Ok(out)
}

struct Accumulators {
    h: G1Projective,
    l: G1Projective,
    a: G1Projective,
    b_g1: G1Projective,
    b_g2: G2Projective,
}

/// Proves an already synthesized circuit (the engine synthesizes ahead of the device).
pub fn prove_synthesized(
    backend: &dyn ProverBackend,
    key: &StagedKey,
    synthesized: &Synthesized,
    r: Fr,
    s: Fr,
    options: ProveOptions,
) -> Result<ProofOutput> {
    let shape = synthesized.shape;
    key.check_matches(&shape)?;
    let mut times = PhaseTimes::default();

    let t = Instant::now();
    let evals = evaluate(synthesized).phase(Phase::Evaluate)?;
    times.evaluate = t.elapsed();

    let t = Instant::now();
    let reduction = key.reduction();
    let plan = proof_plan_for(backend, &shape, reduction);
    let bytes_planned = plan.total_bytes();
    // The staged key holds its bytes while this proof waits for budget: a proof that
    // cannot fit beside it would wait forever, so it fails at once instead.
    let key_bytes = key.lease().plan().total_bytes();
    backend
        .budget()
        .check_fits(bytes_planned.saturating_add(key_bytes))
        .phase(Phase::Allocate)?;
    let mut lease = guarded(Phase::Allocate, || backend.allocate(plan))?;
    let n = shape.domain_size();
    let vars = shape.num_variables();
    let (a, b, c, z) = guarded(Phase::Allocate, || {
        Ok((
            backend.alloc_scalars(&mut lease, "a", n)?,
            backend.alloc_scalars(&mut lease, "b", n)?,
            backend.alloc_scalars(&mut lease, "c", n)?,
            backend.alloc_scalars(&mut lease, "z", vars)?,
        ))
    })?;
    times.allocate = t.elapsed();

    // h = ((A·B − C) / Z) on the coset, back to coefficients: ark's LibsnarkReduction
    // (snarkjs': A·B − C on its coset, left there; `reduction.rs`).
    // Each vector is staged just before the transforms that use it, so that a
    // backend whose staging returns once the copy is queued (CUDA: a copy stream)
    // converts and copies the next vector while the device transforms the last one.
    // `stage` is the host's time inside the staging calls, `ntt` the rest, up to the
    // end of the transforms.
    let domain = reduction
        .transform_domain(shape.log_domain)
        .phase(Phase::Ntt)?;
    let mut stage_time = std::time::Duration::ZERO;
    let t = Instant::now();
    let mut stage = |lease: &mut Lease, buf: crate::ScalarBuf, values: &[Fr]| {
        let t = Instant::now();
        let staged = guarded(Phase::Stage, || {
            backend.stage_scalars_padded(lease, buf, values)
        });
        stage_time += t.elapsed();
        staged
    };
    // Evaluations on the domain to evaluations on the coset.
    let to_coset = |lease: &mut Lease, buf: crate::ScalarBuf| {
        backend.ntt(lease, buf, &domain, NttKind::Inverse)?;
        backend.ntt(lease, buf, &domain, NttKind::CosetForward)
    };
    stage(&mut lease, a, &evals.a)?;
    guarded(Phase::Ntt, || to_coset(&mut lease, a))?;
    stage(&mut lease, b, &evals.b)?;
    guarded(Phase::Ntt, || {
        to_coset(&mut lease, b)?;
        backend.mul_assign(&mut lease, a, b)
    })?;
    stage(&mut lease, c, &evals.c)?;
    guarded(Phase::Ntt, || {
        to_coset(&mut lease, c)?;
        backend.sub_mul_assign(&mut lease, a, c, reduction.quotient_factor(&domain))?;
        if reduction.back_to_coefficients() {
            backend.ntt(&mut lease, a, &domain, NttKind::CosetInverse)?;
        }
        Ok(())
    })?;
    stage(&mut lease, z, &synthesized.assignment)?;
    drop(evals);
    guarded(Phase::Ntt, || backend.synchronize())?;
    times.stage = stage_time;
    times.ntt = t.elapsed().saturating_sub(stage_time);

    let t = Instant::now();
    let acc = guarded(Phase::Msm, || {
        msms(backend, &mut lease, key, a, z, r, shape.num_instance)
    })?;
    times.msm = t.elapsed();

    let t = Instant::now();
    let usage = lease.release().phase(Phase::Release)?;
    times.release = t.elapsed();

    let proof = combine(key, &acc, r, s);
    let public_inputs = synthesized.assignment[1..shape.num_instance].to_vec();
    if options.verify {
        let t = Instant::now();
        verify(key, &public_inputs, &proof).phase(Phase::Verify)?;
        times.verify = t.elapsed();
    }
    let info = backend.info();
    Ok(ProofOutput {
        proof,
        public_inputs,
        report: ProofReport {
            backend: info.label(),
            device: info.device_name.clone(),
            shape,
            times,
            bytes_planned,
            peak_bytes: usage.peak,
            key_bytes,
            verified: options.verify,
            budget: backend.budget().stats(),
        },
    })
}

/// Runs one phase of backend calls; a panic inside the backend becomes a device error
/// tagged with the phase (the lease is then dropped, which frees it), never an unwind
/// through the caller.
fn guarded<T>(phase: Phase, body: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(result) => result.phase(phase),
        Err(panic) => Err(crate::Error::device(
            "backend",
            format!("panicked: {}", crate::panic_message(&*panic)),
        )
        .in_phase(phase)),
    }
}

fn msms(
    backend: &dyn ProverBackend,
    lease: &mut Lease,
    key: &StagedKey,
    h: crate::ScalarBuf,
    z: crate::ScalarBuf,
    r: Fr,
    num_instance: usize,
) -> Result<Accumulators> {
    let bases = key.lease();
    let vars = z.len;
    let span = |bases, base_offset, scalars, scalar_offset, len| MsmSpan {
        bases,
        base_offset,
        scalars,
        scalar_offset,
        len,
    };
    let h_len = key.h_query.len;
    let h_acc = backend.msm_g1(lease, bases, span(key.h_query, 0, h, 0, h_len))?;
    let l_acc = backend.msm_g1(
        lease,
        bases,
        span(key.l_query, 0, z, num_instance, vars - num_instance),
    )?;
    // Queries skip index 0 (the constant one), which the combination adds directly.
    let a_acc = backend.msm_g1(lease, bases, span(key.a_query, 1, z, 1, vars - 1))?;
    let b_g1_acc = if r.is_zero() {
        G1Projective::zero()
    } else {
        backend.msm_g1(lease, bases, span(key.b_g1_query, 1, z, 1, vars - 1))?
    };
    let b_g2_acc = backend.msm_g2(
        lease,
        bases,
        MsmSpan {
            bases: key.b_g2_query,
            base_offset: 1,
            scalars: z,
            scalar_offset: 1,
            len: vars - 1,
        },
    )?;
    Ok(Accumulators {
        h: h_acc,
        l: l_acc,
        a: a_acc,
        b_g1: b_g1_acc,
        b_g2: b_g2_acc,
    })
}

// The same group operations, in the same order, as ark-groth16's
// `create_proof_with_assignment`, so the affine results are identical.
fn combine(key: &StagedKey, acc: &Accumulators, r: Fr, s: Fr) -> Proof {
    let pk = key.proving_key();
    let r_s_delta_g1 = pk.delta_g1 * (r * s);

    let mut g_a = pk.delta_g1 * r;
    g_a += pk.a_query[0];
    g_a += acc.a;
    g_a += pk.vk.alpha_g1;
    let s_g_a = g_a * s;

    let g1_b = if r.is_zero() {
        G1Projective::zero()
    } else {
        let mut g1_b = pk.delta_g1 * s;
        g1_b += pk.b_g1_query[0];
        g1_b += acc.b_g1;
        g1_b += pk.beta_g1;
        g1_b
    };

    let mut g2_b = pk.vk.delta_g2 * s;
    g2_b += pk.b_g2_query[0];
    g2_b += acc.b_g2;
    g2_b += pk.vk.beta_g2;
    let r_g1_b = g1_b * r;

    let mut g_c = s_g_a;
    g_c += r_g1_b;
    g_c -= r_s_delta_g1;
    g_c += acc.l;
    g_c += acc.h;

    Proof {
        a: g_a.into_affine(),
        b: g2_b.into_affine(),
        c: g_c.into_affine(),
    }
}
