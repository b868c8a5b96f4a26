//! One proof: synthesize, evaluate, then allocate / stage / compute / release on the
//! backend, and the final combination on the host exactly as ark-groth16 does it.

use std::time::Instant;

use ark_ec::CurveGroup;
use ark_ff::Zero;
use ark_relations::gr1cs::ConstraintSynthesizer;

use super::key::{HeldMatrices, StagedMatrices};
use super::schedule::{chunk_lens, proof_plan_for, DomainVectors, Query};
use super::{
    evaluate, items, synthesize, verify, Evaluations, Proof, QapMatrices, Reduction, Schedule,
    SparseMatrix, StagedKey, Synthesized,
};
use crate::group::{MsmGroup, G1, G2};
use crate::report::{PhaseTimes, ProofReport};
use crate::streamed_msm::streamed_msm;
use crate::{
    Bls12_381, BufferUse, Lease, MemoryPlan, MsmSpan, NttKind, PairingCurve, Phase, PhaseExt,
    ProofShape, ProverBackend, Result, ScalarBuf, SparseMatrixBufs,
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
pub struct ProofOutput<E: PairingCurve = Bls12_381> {
    /// The proof, arkworks' own type.
    pub proof: Proof<E>,
    /// Timings and memory of this proof.
    pub report: ProofReport,
    /// Public inputs (without the constant one), for the caller's own verification.
    pub public_inputs: Vec<E::ScalarField>,
}

/// Proves `circuit` with randomness `r`, `s` on `backend` using the staged `key`.
pub fn prove<E: PairingCurve, C: ConstraintSynthesizer<E::ScalarField>>(
    backend: &dyn ProverBackend<E>,
    key: &StagedKey<E>,
    circuit: C,
    r: E::ScalarField,
    s: E::ScalarField,
    options: ProveOptions,
) -> Result<ProofOutput<E>> {
    let start = Instant::now();
    let synthesized = synthesize(circuit).phase(Phase::Synthesize)?;
    let synthesize_time = start.elapsed();
    let mut out = prove_synthesized(backend, key, &synthesized, r, s, options)?;
    out.report.times.synthesize = synthesize_time;
    Ok(out)
}

struct Accumulators<E: PairingCurve> {
    h: E::G1,
    l: E::G1,
    a: E::G1,
    b_g1: E::G1,
    b_g2: E::G2,
}

/// A proof's leases, paid for by one budget acquisition (so that a proof never holds
/// part of its memory while it waits for the rest): `work` holds the domain vectors,
/// the assignment and the scratch; `chunks[j]` the streamed MSMs' chunk buffers `j`
/// (the bases of those MSMs, a lease a slot: streamed_msm.rs stages one while the MSM
/// reads the other).
struct ProofLeases {
    work: Lease,
    chunks: [Lease; 2],
}

fn allocate_proof<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    plan: MemoryPlan,
) -> Result<ProofLeases> {
    let mut work_plan = MemoryPlan::new(plan.label.clone());
    let mut chunk_plans =
        [0, 1].map(|j| MemoryPlan::new(format!("{} (chunk buffers {j})", plan.label)));
    for item in plan.items() {
        let target = if items::is_chunk(item.key) {
            &mut chunk_plans[(item.key.index() % 2) as usize]
        } else {
            &mut work_plan
        };
        target.item(item.key, item.bytes);
    }
    // `allocate_together` checks each lease's plan with the backend.
    let [c0, c1] = chunk_plans;
    let mut leases = backend
        .allocate_together(vec![work_plan, c0, c1])?
        .into_iter();
    match (leases.next(), leases.next(), leases.next()) {
        (Some(work), Some(c0), Some(c1)) => Ok(ProofLeases {
            work,
            chunks: [c0, c1],
        }),
        _ => Err(crate::Error::InvalidInput(
            "a proof allocates three leases".into(),
        )),
    }
}

/// Proves an already synthesized circuit under the key's schedule: evaluates it on
/// the host unless the key evaluates it on the device ([`StagedKey::evaluates`]),
/// then [`prove_evaluated`].
pub fn prove_synthesized<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    key: &StagedKey<E>,
    synthesized: &Synthesized<E::ScalarField>,
    r: E::ScalarField,
    s: E::ScalarField,
    options: ProveOptions,
) -> Result<ProofOutput<E>> {
    let t = Instant::now();
    let evals = host_evaluation(key, synthesized)?;
    let evaluate_time = t.elapsed();
    let mut out = prove_evaluated(backend, key, synthesized, evals.as_ref(), r, s, options)?;
    out.report.times.evaluate = evaluate_time;
    Ok(out)
}

/// A·z, B·z and C·z on the host where the key does not evaluate `synthesized` on the
/// device (`None` where it does).
pub fn host_evaluation<E: PairingCurve>(
    key: &StagedKey<E>,
    synthesized: &Synthesized<E::ScalarField>,
) -> Result<Option<Evaluations<E::ScalarField>>> {
    if key.evaluates(synthesized) {
        return Ok(None);
    }
    evaluate(synthesized).phase(Phase::Evaluate).map(Some)
}

/// Proves a synthesized circuit whose A·z, B·z, C·z are already evaluated on the host
/// (`evals`), or, with `None`, evaluated on the device from the key's matrices (the
/// engine evaluates on its synthesis threads, ahead of the device, so that a device
/// worker's time is the device's). The report's synthesis and evaluation times are
/// the caller's to fill in.
pub fn prove_evaluated<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    key: &StagedKey<E>,
    synthesized: &Synthesized<E::ScalarField>,
    evals: Option<&Evaluations<E::ScalarField>>,
    r: E::ScalarField,
    s: E::ScalarField,
    options: ProveOptions,
) -> Result<ProofOutput<E>> {
    let shape = synthesized.shape;
    key.check_matches(&shape)?;
    let values = match evals {
        Some(evals) => Values::Host(evals),
        None => match key.matrices() {
            Some(staged) if key.evaluates(synthesized) => Values::Device(staged),
            _ => {
                return Err(crate::Error::InvalidInput(
                    "the circuit was not evaluated, and the key holds no matrices of it to evaluate on the device".into(),
                ))
            }
        },
    };
    let schedule = key.schedule();
    let reduction = key.reduction();
    let mut times = PhaseTimes::default();

    let t = Instant::now();
    let plan = guarded(Phase::Allocate, || {
        let matrices = key.matrices().map(|m| &m.sizes);
        proof_plan_for(backend, &shape, reduction, &schedule, matrices)
    })?;
    let bytes_planned = plan.total_bytes();
    // The staged key holds its bytes while this proof waits for budget: a proof that
    // cannot fit beside it would wait forever, so it fails at once instead.
    let key_bytes = key.lease().plan().total_bytes();
    backend
        .budget()
        .check_fits(bytes_planned.saturating_add(key_bytes))
        .phase(Phase::Allocate)?;
    let mut leases = guarded(Phase::Allocate, || allocate_proof(backend, plan))?;
    times.allocate = t.elapsed();

    let t = Instant::now();
    let mut stage_time = std::time::Duration::ZERO;
    let (h, z) = quotient(
        backend,
        (&mut leases.work, &mut leases.chunks[0]),
        key.lease(),
        &shape,
        &schedule,
        reduction,
        values,
        &synthesized.assignment,
        &mut stage_time,
    )?;
    guarded(Phase::Ntt, || backend.synchronize())?;
    times.stage = stage_time;
    times.ntt = t.elapsed().saturating_sub(stage_time);

    let t = Instant::now();
    let acc = guarded(Phase::Msm, || {
        msms(backend, &mut leases, key, &schedule, h, z, r)
    })?;
    times.msm = t.elapsed();

    let t = Instant::now();
    let [c0, c1] = leases.chunks;
    let chunk_peak = c0.release().phase(Phase::Release)?.peak;
    let chunk_peak = chunk_peak.saturating_add(c1.release().phase(Phase::Release)?.peak);
    let usage = leases.work.release().phase(Phase::Release)?;
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
            schedule: schedule.to_string(),
            reduction: format!("{reduction:?}"),
            times,
            bytes_planned,
            peak_bytes: usage.peak.saturating_add(chunk_peak),
            key_bytes,
            verified: options.verify,
            budget: backend.budget().stats(),
        },
    })
}

/// Where A·z, B·z and C·z come from: the host's evaluations, staged, or the
/// matrices staged with the key (A, B, then C where there is one), multiplied out on
/// the device.
#[derive(Clone, Copy)]
enum Values<'a, E: PairingCurve> {
    Host(&'a Evaluations<E::ScalarField>),
    Device(&'a StagedMatrices<E>),
}

/// The quotient's scalars for the h query (in `DOMAIN_A`) and the assignment z for
/// the other MSMs, through the schedule's domain vectors.
///
/// Host values: each vector is staged just before the transforms that use it, so
/// that a backend whose staging returns once the copy is queued (CUDA: a copy
/// stream) converts and copies the next vector while the device transforms the last
/// one. Device values: z is staged first and each vector is a sparse product of it.
/// `stage_time` gathers the host's time inside the staging calls.
#[allow(clippy::too_many_arguments)]
fn quotient<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    (lease, runs_lease): (&mut Lease, &mut Lease),
    key_lease: &Lease,
    shape: &ProofShape,
    schedule: &Schedule,
    reduction: Reduction,
    values: Values<'_, E>,
    assignment: &[E::ScalarField],
    stage_time: &mut std::time::Duration,
) -> Result<(ScalarBuf, ScalarBuf)> {
    let n = shape.domain_size();
    let vars = shape.num_variables();
    let domain = shape.domain()?;
    let coset = reduction.coset_domain(&domain).phase(Phase::Ntt)?;
    let mut stage = |lease: &mut Lease, buf: ScalarBuf, values: &[E::ScalarField]| {
        let t = Instant::now();
        let staged = guarded(Phase::Stage, || {
            backend.stage_scalars_padded(lease, buf, values)
        });
        *stage_time += t.elapsed();
        staged
    };
    // Evaluations on the domain to evaluations on the reduction's coset, both over the
    // reduction's roots of unity (snarkjs' are not arkworks').
    let to_coset = |lease: &mut Lease, buf: ScalarBuf| {
        backend.ntt(lease, buf, &coset, NttKind::Inverse)?;
        backend.ntt(lease, buf, &coset, NttKind::CosetForward)
    };
    let finish = |lease: &mut Lease, a: ScalarBuf, c: ScalarBuf| {
        to_coset(lease, c)?;
        backend.sub_mul_assign(lease, a, c, reduction.quotient_factor(&coset)?)?;
        if reduction.back_to_coefficients() {
            backend.ntt(lease, a, &coset, NttKind::CosetInverse)?;
        }
        Ok(())
    };
    let alloc = |lease: &mut Lease, key, len| {
        guarded(Phase::Allocate, || backend.alloc_scalars(lease, key, len))
    };
    // z has an item of its own where the domain vectors are resident or the schedule
    // evaluates on the device; otherwise it takes b's buffer at the end.
    let own_z = schedule.domain == DomainVectors::Resident || schedule.evaluation.on_device();
    let a = alloc(lease, items::DOMAIN_A, n)?;
    let b = alloc(lease, items::DOMAIN_B, n)?;
    let evals = match values {
        Values::Host(evals) => evals,
        Values::Device(staged) => {
            let z = alloc(lease, items::ASSIGNMENT, vars)?;
            stage(lease, z, assignment)?;
            let products = Products::new(backend, runs_lease, staged)?;
            let mut product = |lease: &mut Lease, m: usize, out: ScalarBuf| {
                products.product(backend, (lease, key_lease, &mut *runs_lease), m, z, out)
            };
            guarded(Phase::Evaluate, || {
                product(lease, 0, a)?;
                product(lease, 1, b)
            })?;
            match schedule.domain {
                DomainVectors::Resident => {
                    let c = alloc(lease, items::DOMAIN_C, n)?;
                    guarded(Phase::Evaluate, || {
                        if staged.sizes.has_c {
                            product(lease, 2, c)
                        } else {
                            // C·z = A·z ∘ B·z, before either is transformed.
                            product(lease, 0, c)?;
                            backend.mul_assign(lease, c, b)
                        }
                    })?;
                    guarded(Phase::Ntt, || {
                        to_coset(lease, a)?;
                        to_coset(lease, b)?;
                        backend.mul_assign(lease, a, b)?;
                        finish(lease, a, c)
                    })?;
                }
                DomainVectors::Sequenced => {
                    guarded(Phase::Ntt, || {
                        to_coset(lease, a)?;
                        to_coset(lease, b)?;
                        backend.mul_assign(lease, a, b)
                    })?;
                    // C·z into b's buffer (a schedule without C is never sequenced).
                    guarded(Phase::Evaluate, || product(lease, 2, b))?;
                    guarded(Phase::Ntt, || finish(lease, a, b))?;
                }
            }
            return Ok((a, z));
        }
    };
    stage(lease, a, &evals.a)?;
    guarded(Phase::Ntt, || to_coset(lease, a))?;
    stage(lease, b, &evals.b)?;
    guarded(Phase::Ntt, || {
        to_coset(lease, b)?;
        backend.mul_assign(lease, a, b)
    })?;
    let z = match schedule.domain {
        DomainVectors::Resident => {
            let c = alloc(lease, items::DOMAIN_C, n)?;
            stage(lease, c, &evals.c)?;
            guarded(Phase::Ntt, || finish(lease, a, c))?;
            let z = alloc(lease, items::ASSIGNMENT, vars)?;
            stage(lease, z, assignment)?;
            z
        }
        DomainVectors::Sequenced => {
            // c reuses b's buffer, then the assignment takes its own item or b's.
            stage(lease, b, &evals.c)?;
            guarded(Phase::Ntt, || finish(lease, a, b))?;
            let item = if own_z {
                items::ASSIGNMENT
            } else {
                lease.free(b.id()).phase(Phase::Allocate)?;
                items::DOMAIN_B
            };
            let z = alloc(lease, item, vars)?;
            stage(lease, z, assignment)?;
            z
        }
    };
    Ok((a, z))
}

/// How a proof's products read the key's matrices: from the key's lease where they
/// are staged with it, else run by run through buffers in the proof's first chunk lease.
enum Products<'a, E: PairingCurve> {
    Staged(&'a [SparseMatrixBufs]),
    Streamed {
        source: &'a QapMatrices<E::ScalarField>,
        runs: &'a [Vec<std::ops::Range<usize>>],
        buffers: RunBuffers,
    },
}

impl<'a, E: PairingCurve> Products<'a, E> {
    /// For `staged`'s matrices, allocating the run buffers where they are streamed (as
    /// the proof plan sized them, [`crate::groth16::MatrixSizes::run_buffers`]).
    fn new(
        backend: &dyn ProverBackend<E>,
        runs_lease: &mut Lease,
        staged: &'a StagedMatrices<E>,
    ) -> Result<Products<'a, E>> {
        Ok(match &staged.held {
            HeldMatrices::Staged(buffers) => Products::Staged(buffers),
            HeldMatrices::Streamed { chunk, runs } => Products::Streamed {
                source: &staged.source,
                runs,
                buffers: RunBuffers::alloc(backend, runs_lease, staged.sizes.run_buffers(*chunk))?,
            },
        })
    }

    /// `out` = matrix `m` · `z`.
    fn product(
        &self,
        backend: &dyn ProverBackend<E>,
        (work, key_lease, runs_lease): (&mut Lease, &Lease, &mut Lease),
        m: usize,
        z: ScalarBuf,
        out: ScalarBuf,
    ) -> Result<()> {
        match self {
            Products::Staged(matrices) => {
                let matrix = *matrices.get(m).ok_or_else(|| {
                    crate::Error::InvalidInput(format!("the key holds no matrix {m}"))
                })?;
                crate::check_sparse_product(&matrix, z, out)?;
                backend.sparse_product(work, key_lease, matrix, z, out)
            }
            Products::Streamed {
                source,
                runs,
                buffers,
            } => {
                let (Some(matrix), Some(runs)) = (source.staged().nth(m), runs.get(m)) else {
                    return Err(crate::Error::InvalidInput(format!(
                        "no streamed matrix {m}"
                    )));
                };
                buffers.product(backend, (work, runs_lease), matrix, runs, z, out)
            }
        }
    }
}

/// The buffers a proof streams its matrices' runs through (in its first chunk lease):
/// the row starts and entries of one run, and one matrix's coefficients.
struct RunBuffers {
    row_starts: crate::IndexBuf,
    entries: crate::IndexBuf,
    coefficients: ScalarBuf,
}

impl RunBuffers {
    /// Allocates them, `(row starts, entry words, coefficients)` long.
    fn alloc<E: PairingCurve>(
        backend: &dyn ProverBackend<E>,
        lease: &mut Lease,
        (starts, entries, coefficients): (usize, usize, usize),
    ) -> Result<RunBuffers> {
        guarded(Phase::Allocate, || {
            Ok(RunBuffers {
                row_starts: backend.alloc_indices(
                    lease,
                    items::MATRIX_CHUNK_ROW_STARTS.at(0),
                    starts,
                )?,
                entries: backend.alloc_indices(
                    lease,
                    items::MATRIX_CHUNK_ENTRIES.at(0),
                    entries,
                )?,
                coefficients: backend.alloc_scalars(
                    lease,
                    items::MATRIX_CHUNK_COEFFICIENTS.at(0),
                    coefficients,
                )?,
            })
        })
    }

    /// `out` = `matrix` · `z`, run by run in order: each run's rows and entries
    /// staged into these buffers, then multiplied out from its first row (each zeroes
    /// `out` past its rows, and the next run writes over those).
    fn product<E: PairingCurve>(
        &self,
        backend: &dyn ProverBackend<E>,
        (work, runs_lease): (&mut Lease, &mut Lease),
        matrix: &SparseMatrix<E::ScalarField>,
        runs: &[std::ops::Range<usize>],
        z: ScalarBuf,
        out: ScalarBuf,
    ) -> Result<()> {
        backend.stage_scalars(runs_lease, self.coefficients, matrix.coefficients())?;
        let bufs = |rows: usize, first_row: usize| SparseMatrixBufs {
            row_starts: self.row_starts,
            entries: self.entries,
            coefficients: self.coefficients,
            rows,
            first_row,
        };
        if runs.is_empty() {
            // No rows: `out` is all zeros.
            backend.stage_indices(runs_lease, self.row_starts, &[0])?;
            crate::check_sparse_product(&bufs(0, 0), z, out)?;
            return backend.sparse_product(work, runs_lease, bufs(0, 0), z, out);
        }
        for run in runs {
            backend.stage_indices(
                runs_lease,
                self.row_starts,
                &matrix.chunk_row_starts(run.clone()),
            )?;
            backend.stage_indices(
                runs_lease,
                self.entries,
                matrix.chunk_entry_words(run.clone()),
            )?;
            let matrix = bufs(run.len(), run.start);
            crate::check_sparse_product(&matrix, z, out)?;
            backend.sparse_product(work, runs_lease, matrix, z, out)?;
        }
        Ok(())
    }
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

/// The scalars and host bases of one query's MSM.
struct MsmTerms<'a, A> {
    scalars: ScalarBuf,
    scalar_offset: usize,
    base_offset: usize,
    host_bases: &'a [A],
}

fn terms<'a, A>(
    q: Query,
    shape: &ProofShape,
    h: ScalarBuf,
    z: ScalarBuf,
    h_len: usize,
    query: &'a [A],
) -> MsmTerms<'a, A> {
    match q {
        Query::H => MsmTerms {
            scalars: h,
            scalar_offset: 0,
            base_offset: 0,
            host_bases: &query[..h_len],
        },
        Query::L => MsmTerms {
            scalars: z,
            scalar_offset: shape.num_instance,
            base_offset: 0,
            host_bases: query,
        },
        // Queries skip index 0 (the constant one), which the combination adds directly.
        Query::A | Query::BG1 | Query::BG2 => MsmTerms {
            scalars: z,
            scalar_offset: 1,
            base_offset: 1,
            host_bases: &query[1..],
        },
    }
}

/// One query's MSM: on its resident bases, or streamed through the chunk buffers.
fn query_msm<E: PairingCurve, G: MsmGroup<Curve = E>>(
    backend: &dyn ProverBackend<E>,
    leases: &mut ProofLeases,
    key: &StagedKey<E>,
    resident: Option<G::Buf>,
    chunk_buffers: Option<[G::Buf; 2]>,
    t: MsmTerms<'_, G::Affine>,
    q: Query,
) -> Result<G::Projective> {
    match (resident, chunk_buffers) {
        (Some(bases), _) => G::msm(
            backend,
            &mut leases.work,
            key.lease(),
            MsmSpan {
                bases,
                base_offset: t.base_offset,
                scalars: t.scalars,
                scalar_offset: t.scalar_offset,
                len: t.host_bases.len(),
            },
        ),
        (None, Some(buffers)) => streamed_msm::<G>(
            backend,
            &mut leases.work,
            leases.chunks.each_mut(),
            buffers,
            t.host_bases,
            t.scalars,
            t.scalar_offset,
        ),
        (None, None) => Err(crate::Error::InvalidInput(format!(
            "query {} is neither resident nor streamed",
            q.name()
        ))),
    }
}

fn msms<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    leases: &mut ProofLeases,
    key: &StagedKey<E>,
    schedule: &Schedule,
    h: ScalarBuf,
    z: ScalarBuf,
    r: E::ScalarField,
) -> Result<Accumulators<E>> {
    let pk = key.proving_key();
    let shape = *key.shape();
    let h_len = Query::H.msm_terms(&shape, key.reduction());
    let (g1_chunk, g2_chunk) = chunk_lens(&shape, key.reduction(), schedule);
    let g1_buffers = match g1_chunk {
        0 => None,
        len => Some([
            backend.alloc_g1(
                &mut leases.chunks[0],
                items::G1_CHUNK.at(0),
                len,
                BufferUse::Plain,
            )?,
            backend.alloc_g1(
                &mut leases.chunks[1],
                items::G1_CHUNK.at(1),
                len,
                BufferUse::Plain,
            )?,
        ]),
    };
    let g2_buffers = match g2_chunk {
        0 => None,
        len => Some([
            backend.alloc_g2(
                &mut leases.chunks[0],
                items::G2_CHUNK.at(0),
                len,
                BufferUse::Plain,
            )?,
            backend.alloc_g2(
                &mut leases.chunks[1],
                items::G2_CHUNK.at(1),
                len,
                BufferUse::Plain,
            )?,
        ]),
    };
    let resident = key.resident_bases();
    let mut g1 = |q: Query, query: &[E::G1Affine]| {
        let t = terms(q, &shape, h, z, h_len, query);
        query_msm::<E, G1<E>>(backend, leases, key, resident.g1(q), g1_buffers, t, q)
    };
    let h_acc = g1(Query::H, &pk.h_query)?;
    let l_acc = g1(Query::L, &pk.l_query)?;
    let a_acc = g1(Query::A, &pk.a_query)?;
    let b_g1_acc = if r.is_zero() {
        E::G1::zero()
    } else {
        g1(Query::BG1, &pk.b_g1_query)?
    };
    let t = terms(Query::BG2, &shape, h, z, h_len, &pk.b_g2_query);
    let b_g2_acc = query_msm::<E, G2<E>>(
        backend,
        leases,
        key,
        resident.b_g2_query,
        g2_buffers,
        t,
        Query::BG2,
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
fn combine<E: PairingCurve>(
    key: &StagedKey<E>,
    acc: &Accumulators<E>,
    r: E::ScalarField,
    s: E::ScalarField,
) -> Proof<E> {
    let pk = key.proving_key();
    let r_s_delta_g1 = pk.delta_g1 * (r * s);

    let mut g_a = pk.delta_g1 * r;
    g_a += pk.a_query[0];
    g_a += acc.a;
    g_a += pk.vk.alpha_g1;
    let s_g_a = g_a * s;

    let g1_b = if r.is_zero() {
        E::G1::zero()
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
