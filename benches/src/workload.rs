//! A prepared benchmark of one operation at one size on one backend.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ark_ff::{UniformRand, Zero};
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use crucible_core::fixtures::circuit::BitHeavyCircuit;
use crucible_core::groth16::{
    prove, schedule_for, KeyOptions, ProveOptions, ProvingKey, StagedKey,
};
use crucible_core::group::{MsmGroup, G1, G2};
use crucible_core::streamed_msm::HostMsm;
use crucible_core::{
    Bls12_381, BufferUse, Domain, ElementKind, Error, Lease, MemoryPlan, MsmSpan, NttKind,
    PairingCurve, PinnedScalars, ProverBackend, Result, ScalarBuf, ScratchNeed,
};

use crate::op::prove_shape;
use crate::{mixed_scalars, random_bases, random_scalars, HostMemory, Op};
use crucible_core::ScalarMix;

/// The times of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunTimes {
    /// Inputs already on the device: from launching the operation to `synchronize()`
    /// (for `prove`: the proof's stage, NTT and MSM phases, with the proving key
    /// already staged: the witness's staging and all device compute, not the
    /// synthesis and evaluation on the host before it).
    pub resident: Duration,
    /// Staging the inputs, the operation, and reading the result back (for an MSM:
    /// the one-shot [`HostMsm`] from host bases and scalars, its slots allocated
    /// beforehand, so nothing a backend builds for resident bases is paid for or used;
    /// for `prove`: staging the key, the proof, and releasing the key).
    pub with_transfers: Duration,
    /// Whether `resident` was read off the device's clock (events queued around the
    /// operation) rather than the host's.
    pub device_clock: bool,
}

/// Times `op` (work queued on the device) from a device marker before it to one after
/// it where the backend has a device clock, else on the host up to `synchronize()`.
fn time_resident<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    op: impl FnOnce() -> Result<()>,
) -> Result<(Duration, bool)> {
    let start = backend.device_marker()?;
    let t = Instant::now();
    op()?;
    let end = backend.device_marker()?;
    backend.synchronize()?;
    let host = t.elapsed();
    match (start, end) {
        (Some(start), Some(end)) => Ok((end.since(start.as_ref())?, true)),
        _ => Ok((host, false)),
    }
}

/// A whole proof to time: the benchmark circuit's key and sizes.
#[derive(Clone)]
pub struct ProveTask<E: PairingCurve = Bls12_381> {
    /// Proving key of `BitHeavyCircuit { constraints, inputs, bits_per_mille }`.
    pub key: Arc<ProvingKey<E>>,
    /// Constraints of the circuit.
    pub constraints: usize,
    /// Public inputs of the circuit.
    pub inputs: usize,
    /// Constraints per thousand that check a bit (0: the plain benchmark chain).
    pub bits_per_mille: u16,
}

/// What a workload times.
#[derive(Clone)]
pub enum Task<E: PairingCurve = Bls12_381> {
    /// An NTT of `2^log_size` points.
    Ntt {
        /// Which transform.
        kind: NttKind,
        /// log2 of the length.
        log_size: u32,
        /// Where the "+transfers" run's input and output vectors live.
        host: HostMemory,
    },
    /// A G1 MSM of `len` terms.
    MsmG1 {
        /// Terms.
        len: usize,
        /// What its scalars look like.
        mix: ScalarMix,
    },
    /// A G2 MSM of `len` terms.
    MsmG2 {
        /// Terms.
        len: usize,
        /// What its scalars look like.
        mix: ScalarMix,
    },
    /// A whole proof.
    Prove(ProveTask<E>),
}

impl<E: PairingCurve> Task<E> {
    /// The task for `op` at `size`; `key` supplies the proving key for [`Op::Prove`]
    /// (called only then, with the number of constraints).
    pub fn new<Err: From<Error>>(
        op: Op,
        size: usize,
        key: impl FnOnce(usize) -> std::result::Result<Arc<ProvingKey<E>>, Err>,
    ) -> std::result::Result<Task<E>, Err> {
        op.check_size(size)?;
        let ntt = |kind| Task::Ntt {
            kind,
            log_size: size.trailing_zeros(),
            host: HostMemory::Pageable,
        };
        Ok(match op {
            Op::Ntt => ntt(NttKind::Forward),
            Op::Intt => ntt(NttKind::Inverse),
            Op::CosetNtt => ntt(NttKind::CosetForward),
            Op::MsmG1 => Task::MsmG1 {
                len: size,
                mix: ScalarMix::FULL,
            },
            Op::MsmG2 => Task::MsmG2 {
                len: size,
                mix: ScalarMix::FULL,
            },
            Op::Prove => Task::Prove(ProveTask {
                key: key(size)?,
                constraints: size,
                inputs: crate::PROVE_INPUTS,
                bits_per_mille: 0,
            }),
        })
    }
}

impl<E: PairingCurve> Task<E> {
    /// The same task with MSM scalars of `mix` (for a proof: a circuit whose witness
    /// has that share of bits, [`BitHeavyCircuit`], whose key the caller supplied);
    /// an error for an NTT.
    pub fn with_scalar_mix(self, mix: ScalarMix) -> Result<Task<E>> {
        match self {
            Task::MsmG1 { len, .. } => Ok(Task::MsmG1 { len, mix }),
            Task::MsmG2 { len, .. } => Ok(Task::MsmG2 { len, mix }),
            Task::Prove(task) => Ok(Task::Prove(ProveTask {
                bits_per_mille: mix.per_mille(),
                ..task
            })),
            Task::Ntt { .. } if mix == ScalarMix::FULL => Ok(self),
            Task::Ntt { .. } => Err(Error::InvalidInput(
                "a scalar mix applies to msm-g1, msm-g2 and prove only".into(),
            )),
        }
    }

    /// The same task with its "+transfers" host vectors in `host` memory; an error
    /// for anything but a transform when `host` is not pageable.
    pub fn with_host_memory(self, host: HostMemory) -> Result<Task<E>> {
        match self {
            Task::Ntt { kind, log_size, .. } => Ok(Task::Ntt {
                kind,
                log_size,
                host,
            }),
            _ if host == HostMemory::Pageable => Ok(self),
            _ => Err(Error::InvalidInput(
                "pinned host memory applies to ntt, intt and coset-ntt only".into(),
            )),
        }
    }
}

/// Every memory plan a workload of `task` holds at once on `backend`: check their sum
/// against the budget before running anything.
pub fn workload_plans<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    task: &Task<E>,
) -> Result<Vec<MemoryPlan>> {
    Ok(match task {
        Task::Ntt { log_size, .. } => {
            let domain = Domain::<E::ScalarField>::with_log_size(*log_size)?;
            let mut plan = MemoryPlan::new(format!("ntt of 2^{log_size}"));
            plan.item(
                items::DATA,
                backend.buffer_bytes(ElementKind::Scalar, domain.size, BufferUse::Plain)?,
            );
            plan.merge(&backend.scratch_plan(&ScratchNeed {
                ntt: Some(domain),
                ..ScratchNeed::default()
            }));
            vec![plan]
        }
        Task::MsmG1 { len, .. } => msm_plans::<G1<E>>(backend, *len)?,
        Task::MsmG2 { len, .. } => msm_plans::<G2<E>>(backend, *len)?,
        Task::Prove(task) => prove_plans(backend, task.constraints, task.inputs)?,
    })
}

// The schedule a staged key gets on this budget (the fastest that fits).
fn prove_plans<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    constraints: usize,
    inputs: usize,
) -> Result<Vec<MemoryPlan>> {
    let shape = prove_shape(constraints, inputs)?;
    let choice = schedule_for(backend, &shape, &KeyOptions::default(), None)?;
    Ok(vec![choice.chosen.key, choice.chosen.proof])
}

/// The plans a workload of `op` at `size` holds at once, known before its task is made
/// (for `prove`, before its proving key is generated): check them first.
pub fn op_plans<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    op: Op,
    size: usize,
) -> Result<Vec<MemoryPlan>> {
    op.check_size(size)?;
    match op {
        Op::Prove => prove_plans(backend, size, crate::PROVE_INPUTS),
        _ => {
            let task = Task::new(op, size, |_| -> Result<Arc<ProvingKey<E>>> {
                Err(Error::InvalidInput(
                    "only `prove` needs a proving key".into(),
                ))
            })?;
            workload_plans(backend, &task)
        }
    }
}

/// The bytes of `plans` together, or an error when they overflow `u64`.
pub fn total_bytes(plans: &[MemoryPlan]) -> Result<u64> {
    plans
        .iter()
        .try_fold(0u64, |sum, p| sum.checked_add(p.total_bytes()))
        .ok_or_else(|| Error::InvalidInput("the workload's plans overflow u64 bytes".into()))
}

/// An MSM workload's plans: the resident bases, the scalars and scratch of the resident
/// MSM, then the one-shot MSM's ([`HostMsm::plans`]).
fn msm_plans<G: MsmGroup>(
    backend: &dyn ProverBackend<G::Curve>,
    len: usize,
) -> Result<Vec<MemoryPlan>> {
    let mut bases = MemoryPlan::new(format!("msm bases ({len})"));
    bases.item(
        items::BASES,
        backend.buffer_bytes(G::KIND, len, BufferUse::Resident)?,
    );
    let mut work = MemoryPlan::new(format!("msm of {len} terms"));
    work.item(
        items::SCALARS,
        backend.buffer_bytes(ElementKind::Scalar, len, BufferUse::Plain)?,
    );
    work.merge(&backend.scratch_plan(&G::need(len)));
    let mut plans = vec![bases, work];
    plans.extend(HostMsm::<G>::plans(backend, len)?);
    Ok(plans)
}

/// Plan items of the benchmarks' own buffers.
mod items {
    use crucible_core::PlanKey;

    /// The NTT's data.
    pub const DATA: PlanKey = PlanKey::new("bench", "data");
    /// MSM bases, resident (staged once, with whatever the backend builds at staging).
    pub const BASES: PlanKey = PlanKey::new("bench", "bases");
    /// MSM scalars.
    pub const SCALARS: PlanKey = PlanKey::new("bench", "scalars");
}

type Affine<G> = <G as MsmGroup>::Affine;

struct MsmState<G: MsmGroup> {
    // Random per workload (an MSM's cost does not depend on its bases): staged once
    // into `bases` (resident, as a proving key is), and summed again each run from the
    // host by `one_shot` (as a caller with one MSM to do would).
    points: Vec<Affine<G>>,
    bases_lease: Lease,
    bases: G::Buf,
    one_shot: HostMsm<G>,
    work: Lease,
    scalars: ScalarBuf,
    mix: ScalarMix,
}

impl<G: MsmGroup> MsmState<G> {
    fn new(
        backend: &dyn ProverBackend<G::Curve>,
        plans: Vec<MemoryPlan>,
        len: usize,
        mix: ScalarMix,
        rng: &mut StdRng,
    ) -> Result<Self> {
        // The one-shot MSM's plans come after these two; it allocates them itself.
        let mut plans = plans.into_iter();
        let (Some(bases_plan), Some(work_plan)) = (plans.next(), plans.next()) else {
            return Err(Error::InvalidInput(
                "an MSM workload starts with two plans".into(),
            ));
        };
        let mut bases_lease = backend.allocate(bases_plan)?;
        let bases = G::alloc(
            backend,
            &mut bases_lease,
            items::BASES,
            len,
            BufferUse::Resident,
        )?;
        let points = random_bases::<G::Projective>(len, rng);
        G::stage(backend, &mut bases_lease, bases, &points)?;
        let mut work = backend.allocate(work_plan)?;
        let scalars = backend.alloc_scalars(&mut work, items::SCALARS, len)?;
        let one_shot = HostMsm::allocate(backend, len)?;
        Ok(MsmState {
            points,
            bases_lease,
            bases,
            one_shot,
            work,
            scalars,
            mix,
        })
    }

    fn run(&mut self, backend: &dyn ProverBackend<G::Curve>, rng: &mut StdRng) -> Result<RunTimes> {
        let scalars = mixed_scalars(self.scalars.len(), self.mix, rng);
        let span = MsmSpan {
            bases: self.bases,
            base_offset: 0,
            scalars: self.scalars,
            scalar_offset: 0,
            len: self.scalars.len(),
        };
        // Resident: the scalars staged, then the MSM over the resident bases. The
        // result is a host value: the call returns once the device is done (and the
        // host has combined the windows, which the device clock also counts).
        backend.stage_scalars(&mut self.work, self.scalars, &scalars)?;
        backend.synchronize()?;
        let (work, lease) = (&mut self.work, &self.bases_lease);
        let (resident, device_clock) = time_resident(backend, || {
            black_box(G::msm(backend, work, lease, span)?);
            Ok(())
        })?;
        // One-shot: bases and scalars from the host, the MSM, its result back.
        let t0 = Instant::now();
        black_box(self.one_shot.msm(backend, &self.points, &scalars)?);
        let with_transfers = t0.elapsed();
        Ok(RunTimes {
            resident,
            with_transfers,
            device_clock,
        })
    }

    fn release(self) -> Result<()> {
        let one_shot = self.one_shot.release();
        let work = self.work.release();
        self.bases_lease.release()?;
        work.map(drop)?;
        one_shot
    }
}

enum State<E: PairingCurve> {
    Ntt {
        kind: NttKind,
        domain: Domain<E::ScalarField>,
        lease: Lease,
        buf: ScalarBuf,
        // The host vector the result comes back into, reused across runs as a caller
        // transforming in place would (sppark's host-in/host-out transform too).
        host: Vec<E::ScalarField>,
        memory: HostMemory,
    },
    MsmG1(MsmState<G1<E>>),
    MsmG2(MsmState<G2<E>>),
    Prove(ProveTask<E>),
}

/// One operation at one size on one backend, with its leases allocated.
pub struct Workload<'a, E: PairingCurve = Bls12_381> {
    backend: &'a dyn ProverBackend<E>,
    state: State<E>,
    rng: StdRng,
}

impl<'a, E: PairingCurve> Workload<'a, E> {
    /// Allocates the workload's leases on `backend` (failing at once if they cannot
    /// fit its budget); inputs are drawn from `seed`.
    pub fn prepare(backend: &'a dyn ProverBackend<E>, task: Task<E>, seed: u64) -> Result<Self> {
        let mut rng = StdRng::seed_from_u64(seed);
        let plans = workload_plans(backend, &task)?;
        backend.budget().check_fits(total_bytes(&plans)?)?;
        let state = match task {
            Task::Ntt {
                kind,
                log_size,
                host: memory,
            } => {
                let domain = Domain::<E::ScalarField>::with_log_size(log_size)?;
                let [plan] = <[MemoryPlan; 1]>::try_from(plans)
                    .map_err(|_| Error::InvalidInput("an NTT workload has one plan".into()))?;
                let mut lease = backend.allocate(plan)?;
                let buf = backend.alloc_scalars(&mut lease, items::DATA, domain.size)?;
                State::Ntt {
                    kind,
                    domain,
                    lease,
                    buf,
                    host: vec![E::ScalarField::zero(); domain.size],
                    memory,
                }
            }
            Task::MsmG1 { len, mix } => {
                State::MsmG1(MsmState::new(backend, plans, len, mix, &mut rng)?)
            }
            Task::MsmG2 { len, mix } => {
                State::MsmG2(MsmState::new(backend, plans, len, mix, &mut rng)?)
            }
            Task::Prove(task) => State::Prove(task),
        };
        Ok(Workload {
            backend,
            state,
            rng,
        })
    }

    /// One timed run on fresh random inputs (drawn before the clock starts).
    pub fn run(&mut self) -> Result<RunTimes> {
        let backend = self.backend;
        let rng = &mut self.rng;
        match &mut self.state {
            State::Ntt {
                kind,
                domain,
                lease,
                buf,
                host,
                memory,
            } => {
                let mut data = random_scalars(domain.size, rng);
                // Pinned (or not) before the clock starts, unpinned after it stops.
                let (src, mut dst) = match memory {
                    HostMemory::Pageable => (
                        PinnedScalars::unpinned(&mut data),
                        PinnedScalars::unpinned(host),
                    ),
                    HostMemory::Pinned => {
                        (backend.pin_scalars(&mut data)?, backend.pin_scalars(host)?)
                    }
                };
                let t0 = Instant::now();
                backend.stage_scalars(lease, *buf, &src)?;
                backend.synchronize()?;
                let (resident, device_clock) =
                    time_resident(backend, || backend.ntt(lease, *buf, domain, *kind))?;
                backend.read_scalars_into(lease, *buf, &mut dst)?;
                black_box(&mut *dst);
                let t3 = Instant::now();
                Ok(RunTimes {
                    resident,
                    with_transfers: t3 - t0,
                    device_clock,
                })
            }
            State::MsmG1(msm) => msm.run(backend, rng),
            State::MsmG2(msm) => msm.run(backend, rng),
            State::Prove(task) => run_prove(backend, task, rng),
        }
    }

    /// Frees the workload's leases.
    pub fn release(self) -> Result<()> {
        match self.state {
            State::Ntt { lease, .. } => lease.release().map(drop),
            State::MsmG1(msm) => msm.release(),
            State::MsmG2(msm) => msm.release(),
            State::Prove(_) => Ok(()),
        }
    }
}

fn run_prove<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    task: &ProveTask<E>,
    rng: &mut StdRng,
) -> Result<RunTimes> {
    let circuit = BitHeavyCircuit {
        constraints: task.constraints,
        inputs: task.inputs,
        seed: rng.gen(),
        bits_per_mille: task.bits_per_mille,
    };
    let (r, s) = (E::ScalarField::rand(rng), E::ScalarField::rand(rng));
    let t0 = Instant::now();
    let key = StagedKey::stage(backend, Arc::clone(&task.key))?;
    let proof = prove(backend, &key, circuit, r, s, ProveOptions { verify: false });
    let released = key.release();
    let t3 = Instant::now();
    let proof = proof?;
    released?;
    let resident = proof.report.times.stage_and_compute();
    black_box(proof);
    Ok(RunTimes {
        resident,
        with_transfers: t3 - t0,
        device_clock: false,
    })
}
