//! The proving key: its resident queries staged once on a device in a long-lived
//! lease, the rest kept in the host copy for proofs to stream.

use std::sync::Arc;

use ark_groth16::PreparedVerifyingKey;

use super::schedule::{
    choose, Evaluation, MatrixSizes, Query, QuerySet, ScheduleChoice, ScheduledPlan,
};
use super::{items, ProvingKey, QapMatrices, Reduction, Schedule, Synthesized};
use crate::host_stages::HostStages;
use crate::{
    Bls12_381, BufferUse, Error, G1Buf, G2Buf, HostPin, Lease, LeaseUsage, PairingCurve, Phase,
    PhaseExt, ProofShape, ProverBackend, Result, ScalarMix, SparseMatrixBufs,
};

/// The sizes an ark-groth16 (libsnark reduction) proving key was made for, read from
/// its query lengths.
pub fn key_shape<E: PairingCurve>(pk: &ProvingKey<E>) -> Result<ProofShape> {
    key_shape_for(pk, Reduction::Libsnark)
}

/// The sizes a proving key for `reduction` was made for (the reduction says how long
/// its h query is for a domain).
pub fn key_shape_for<E: PairingCurve>(
    pk: &ProvingKey<E>,
    reduction: Reduction,
) -> Result<ProofShape> {
    let vars = pk.a_query.len();
    let witness = pk.l_query.len();
    let bad = |what: String| {
        Err(Error::InvalidInput(format!(
            "malformed proving key: {what}"
        )))
    };
    if vars == 0 || witness >= vars {
        return bad(format!("{vars} variables with {witness} witness variables"));
    }
    if pk.b_g1_query.len() != vars || pk.b_g2_query.len() != vars {
        return bad(format!(
            "query lengths differ (a {vars}, b_g1 {}, b_g2 {})",
            pk.b_g1_query.len(),
            pk.b_g2_query.len()
        ));
    }
    let domain = match reduction.domain_size(pk.h_query.len()) {
        Some(d) if d.is_power_of_two() => d,
        _ => {
            return bad(format!(
                "h query of {} points does not fit a power-of-two domain for the {reduction:?} reduction",
                pk.h_query.len()
            ))
        }
    };
    let instance = vars - witness;
    if pk.vk.gamma_abc_g1.len() != instance {
        return bad(format!(
            "verifying key has {} gamma_abc points for {instance} instance variables",
            pk.vk.gamma_abc_g1.len()
        ));
    }
    if domain < instance {
        return bad(format!(
            "domain of {domain} points is smaller than its {instance} instance variables"
        ));
    }
    Ok(ProofShape {
        num_constraints: domain - instance,
        num_instance: instance,
        num_witness: witness,
        log_domain: domain.trailing_zeros(),
    })
}

/// How a key is staged: its reduction and the schedule its proofs run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeyOptions {
    /// The reduction the key was made for.
    pub reduction: Reduction,
    /// Proofs that will run at once beside the key on this device (the engine's
    /// workers per device): the budget is shared between them.
    pub workers: usize,
    /// Bytes the schedule may plan for the key and its proofs, below the device budget
    /// (`None`: the whole budget). It caps what is planned, not the budget (that is
    /// [`crate::registry::ProbeOptions::budget_cap`]).
    pub schedule_cap: Option<u64>,
    /// A fixed schedule instead of the fastest that fits (tests, tuning).
    pub schedule: Option<Schedule>,
    /// What the proofs' witnesses are known to look like, for predicting their time
    /// ([`ScalarMix::FULL`] when nothing is known).
    pub witness: ScalarMix,
    /// The host's stages that feed this device, where known: the chooser then serves
    /// no more proofs per second than the host supplies.
    pub host: Option<HostStages>,
}

impl Default for KeyOptions {
    fn default() -> Self {
        KeyOptions {
            reduction: Reduction::Libsnark,
            workers: 1,
            schedule_cap: None,
            schedule: None,
            witness: ScalarMix::FULL,
            host: None,
        }
    }
}

/// Chooses the schedule `options` ask for on `backend`, for a key of `shape` (and the
/// circuit's `matrices`, where they will be staged with it): the fastest that fits
/// the budget (capped by the schedule cap), or the fixed one after checking it fits.
pub fn schedule_for<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    shape: &ProofShape,
    options: &KeyOptions,
    matrices: Option<&MatrixSizes>,
) -> Result<ScheduleChoice> {
    let capacity = options
        .schedule_cap
        .map_or(backend.budget().capacity(), |m| {
            m.min(backend.budget().capacity())
        });
    let mut choice = choose(
        backend,
        shape,
        options.reduction,
        capacity,
        options.workers,
        matrices,
        options.witness,
        options.host.as_ref(),
    )?;
    if let Some(fixed) = options.schedule {
        // A fixed schedule runs as many of the workers' proofs at once as it fits
        // (the others wait for memory, as with a chosen one); not even one is an
        // error naming the bytes it needs.
        if fixed.evaluation.on_device() && !backend.supports_sparse_product() {
            return Err(Error::Unsupported(format!(
                "{} has no sparse product: it cannot evaluate on the device",
                backend.info().label()
            )));
        }
        let plan = ScheduledPlan::new(
            backend,
            shape,
            options.reduction,
            fixed,
            matrices,
            options.witness,
        )?;
        let fit = (1..=options.workers.max(1))
            .rev()
            .find(|&w| plan.bytes_for(w) <= capacity);
        let Some(workers) = fit else {
            return Err(Error::OutOfBudget {
                budget: backend.budget().name().to_string(),
                needed: plan.bytes_for(1),
                capacity,
            });
        };
        choice.proofs_per_second = plan.proofs_per_second(
            workers,
            backend.cost_model().overlaps_staging,
            options.host.as_ref(),
        );
        choice.chosen = plan;
        choice.workers = workers;
    }
    Ok(choice)
}

/// The device buffers of the resident queries.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResidentBases {
    /// `a_query`, when resident.
    pub a_query: Option<G1Buf>,
    /// `b_g1_query`, when resident.
    pub b_g1_query: Option<G1Buf>,
    /// `h_query`, when resident.
    pub h_query: Option<G1Buf>,
    /// `l_query`, when resident.
    pub l_query: Option<G1Buf>,
    /// `b_g2_query`, when resident.
    pub b_g2_query: Option<G2Buf>,
}

impl ResidentBases {
    /// The resident G1 buffer of `q`, if it is a resident G1 query.
    pub fn g1(&self, q: Query) -> Option<G1Buf> {
        match q {
            Query::A => self.a_query,
            Query::BG1 => self.b_g1_query,
            Query::H => self.h_query,
            Query::L => self.l_query,
            Query::BG2 => None,
        }
    }
}

/// A circuit's matrices for the device evaluation: staged with a key, or streamed by
/// its proofs.
pub struct StagedMatrices<E: PairingCurve = Bls12_381> {
    /// The host layout they were staged from (a proof's circuit must carry the same).
    pub source: Arc<QapMatrices<E::ScalarField>>,
    /// Where a proof's products read them from.
    pub held: HeldMatrices,
    /// Their sizes, which a proof's plan is sized from.
    pub sizes: MatrixSizes,
}

/// Where a staged key's matrices are for its proofs' products.
pub enum HeldMatrices {
    /// Staged with the key ([`Evaluation::Device`]): A, B, then C where there is one.
    Staged(Vec<SparseMatrixBufs>),
    /// Streamed per proof ([`Evaluation::DeviceStreamed`]): the runs of rows of A, B,
    /// then C, in order, that a proof stages one at a time, of at most `chunk` rows and
    /// entries each.
    Streamed {
        /// The most rows, and the most entries, of one run.
        chunk: usize,
        /// Each matrix's runs.
        runs: Vec<Vec<std::ops::Range<usize>>>,
    },
}

/// Where `evaluation` keeps `matrices` for the proofs: staged into `lease`, or split
/// into the runs a proof streams; `None` where the host evaluates.
fn hold_matrices<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    matrices: &QapMatrices<E::ScalarField>,
    evaluation: Evaluation,
    lease: &mut Lease,
) -> Result<Option<HeldMatrices>> {
    Ok(match evaluation {
        Evaluation::Device => Some(HeldMatrices::Staged(stage_matrices(
            backend, matrices, lease,
        )?)),
        Evaluation::DeviceStreamed { chunk } => Some(HeldMatrices::Streamed {
            chunk,
            runs: matrices
                .staged()
                .map(|matrix| matrix.row_chunks(chunk))
                .collect::<Result<_>>()
                .phase(Phase::Allocate)?,
        }),
        Evaluation::Host => None,
    })
}

/// A proving key whose resident bases live on one device, shared by every proof
/// there; the host copy (one, shared by every device) serves the streamed queries.
pub struct StagedKey<E: PairingCurve = Bls12_381> {
    // The streamed queries' host memory, page-locked for the backend's copies while
    // the key is staged (shared with every other device that pinned the same key).
    // Declared first, so dropped before the key's memory may be freed with `pk`.
    pins: Vec<Box<dyn HostPin>>,
    pinned: QuerySet,
    pk: Arc<ProvingKey<E>>,
    pvk: PreparedVerifyingKey<E>,
    shape: ProofShape,
    reduction: Reduction,
    choice: ScheduleChoice,
    backend_label: String,
    lease: Lease,
    bases: ResidentBases,
    matrices: Option<StagedMatrices<E>>,
}

impl<E: PairingCurve> StagedKey<E> {
    /// Stages every query (the resident schedule, ark-groth16's reduction) when the
    /// budget holds them, else the fastest schedule that fits one proof.
    pub fn stage(backend: &dyn ProverBackend<E>, pk: Arc<ProvingKey<E>>) -> Result<StagedKey<E>> {
        Self::stage_with(backend, pk, &KeyOptions::default())
    }

    /// Chooses the schedule for `options`, allocates the key's lease (waiting for
    /// budget) and copies the resident queries to the device.
    pub fn stage_with(
        backend: &dyn ProverBackend<E>,
        pk: Arc<ProvingKey<E>>,
        options: &KeyOptions,
    ) -> Result<StagedKey<E>> {
        Self::stage_for_circuit(backend, pk, None, options)
    }

    /// [`StagedKey::stage_with`], with the circuit's `matrices` as candidates for the
    /// device: where the chosen schedule evaluates there, they are staged with the
    /// bases, and proofs whose circuit carries the same matrices
    /// ([`Synthesized::qap`]) stage only their assignment.
    pub fn stage_for_circuit(
        backend: &dyn ProverBackend<E>,
        pk: Arc<ProvingKey<E>>,
        matrices: Option<Arc<QapMatrices<E::ScalarField>>>,
        options: &KeyOptions,
    ) -> Result<StagedKey<E>> {
        let shape = key_shape_for(&pk, options.reduction)?;
        // A key knows its domain, not its constraints: the matrices must agree on
        // the variables and the domain.
        if let Some(m) = &matrices {
            let (k, c) = (&shape, &m.shape);
            if (k.num_instance, k.num_witness, k.log_domain)
                != (c.num_instance, c.num_witness, c.log_domain)
            {
                return Err(Error::InvalidInput(format!(
                    "the circuit's matrices are for {} instance and {} witness variables over a domain of 2^{}; the key for {}, {} and 2^{}",
                    c.num_instance, c.num_witness, c.log_domain, k.num_instance, k.num_witness, k.log_domain
                )));
            }
        }
        let sizes = matrices.as_ref().map(|m| m.sizes());
        let choice =
            schedule_for(backend, &shape, options, sizes.as_ref()).phase(Phase::Allocate)?;
        let plan = choice.chosen.key.clone();
        let mut lease = backend.allocate(plan).phase(Phase::Allocate)?;
        let (pins, pinned) =
            pin_streamed(backend, &pk, choice.chosen.schedule).phase(Phase::Allocate)?;
        // The kernels compile (where a backend compiles them) while the bases copy.
        let domain = shape.domain()?;
        let (staged, warmed) = std::thread::scope(|scope| {
            let warm_up = scope.spawn(|| backend.warm_up(&domain));
            let staged = stage_resident(backend, &pk, &mut lease, choice.chosen.schedule).and_then(
                |bases| {
                    let staged = match (&matrices, sizes) {
                        (Some(m), Some(sizes)) => hold_matrices(
                            backend,
                            m,
                            choice.chosen.schedule.evaluation,
                            &mut lease,
                        )?
                        .map(|held| StagedMatrices {
                            source: Arc::clone(m),
                            held,
                            sizes,
                        }),
                        _ => None,
                    };
                    backend.synchronize().phase(Phase::Stage)?;
                    Ok((bases, staged))
                },
            );
            let warmed = warm_up.join().unwrap_or_else(|panic| {
                Err(crate::Error::device(
                    "backend",
                    format!("panicked warming up: {}", crate::panic_message(&*panic)),
                ))
            });
            (staged, warmed)
        });
        let (bases, matrices) = staged?;
        warmed.phase(Phase::Allocate)?;
        Ok(StagedKey {
            pvk: ark_groth16::prepare_verifying_key(&pk.vk),
            pk,
            shape,
            reduction: options.reduction,
            choice,
            backend_label: backend.info().label(),
            lease,
            bases,
            matrices,
            pins,
            pinned,
        })
    }

    /// The streamed queries whose host memory the backend pinned, so that proofs copy
    /// their points as they lie ([`ProverBackend::pin_g1_bases`]); empty where the
    /// backend pins nothing or nothing streams.
    pub fn pinned_queries(&self) -> QuerySet {
        self.pinned
    }

    /// The circuit's matrices on the device, where the schedule evaluates there.
    pub fn matrices(&self) -> Option<&StagedMatrices<E>> {
        self.matrices.as_ref()
    }

    /// Whether a proof of `synthesized` evaluates on the device: the key holds the
    /// matrices that circuit carries.
    pub fn evaluates(&self, synthesized: &Synthesized<E::ScalarField>) -> bool {
        match (&self.matrices, &synthesized.qap) {
            (Some(staged), Some(qap)) => Arc::ptr_eq(&staged.source, qap),
            _ => false,
        }
    }

    /// The host copy of the key (the final combination, the streamed queries).
    pub fn proving_key(&self) -> &ProvingKey<E> {
        &self.pk
    }

    /// The prepared verifying key.
    pub fn prepared_verifying_key(&self) -> &PreparedVerifyingKey<E> {
        &self.pvk
    }

    /// The sizes the key was made for.
    pub fn shape(&self) -> &ProofShape {
        &self.shape
    }

    /// The reduction the key was made for.
    pub fn reduction(&self) -> Reduction {
        self.reduction
    }

    /// The schedule its proofs run.
    pub fn schedule(&self) -> Schedule {
        self.choice.chosen.schedule
    }

    /// The schedule with its plans, predicted time and the shape's floor.
    pub fn schedule_choice(&self) -> &ScheduleChoice {
        &self.choice
    }

    /// The device buffers of the resident queries.
    pub fn resident_bases(&self) -> &ResidentBases {
        &self.bases
    }

    /// The lease holding the resident bases.
    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    /// The backend label it was staged on.
    pub fn backend_label(&self) -> &str {
        &self.backend_label
    }

    /// Frees the bases and returns their budget; the streamed queries are unpinned
    /// (where no other staged copy of the key holds them).
    pub fn release(self) -> Result<LeaseUsage> {
        let usage = self.lease.release();
        drop(self.pins);
        usage
    }

    /// Checks that a circuit of `shape` matches this key.
    pub fn check_matches(&self, shape: &ProofShape) -> Result<()> {
        let k = &self.shape;
        let mismatch = |what: &str, key: usize, circuit: usize| {
            Err(Error::InvalidInput(format!(
                "proving key does not match the circuit: key has {key} {what}, circuit has {circuit}"
            )))
        };
        if k.num_instance != shape.num_instance {
            return mismatch("instance variables", k.num_instance, shape.num_instance);
        }
        if k.num_witness != shape.num_witness {
            return mismatch("witness variables", k.num_witness, shape.num_witness);
        }
        if k.log_domain != shape.log_domain {
            return mismatch("domain points", k.domain_size(), shape.domain_size());
        }
        Ok(())
    }
}

/// Pins the host memory of the queries `schedule` (as the key runs it: a query with
/// no term is resident there) streams, where the backend pins bases; returns the pins
/// and the queries they cover.
fn pin_streamed<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    pk: &ProvingKey<E>,
    schedule: Schedule,
) -> Result<(Vec<Box<dyn HostPin>>, QuerySet)> {
    let mut pins = Vec::new();
    let mut pinned = QuerySet::NONE;
    for q in Query::ALL
        .into_iter()
        .filter(|q| !schedule.resident.contains(*q))
    {
        let pin = match q {
            Query::A => backend.pin_g1_bases(&pk.a_query)?,
            Query::BG1 => backend.pin_g1_bases(&pk.b_g1_query)?,
            Query::H => backend.pin_g1_bases(&pk.h_query)?,
            Query::L => backend.pin_g1_bases(&pk.l_query)?,
            Query::BG2 => backend.pin_g2_bases(&pk.b_g2_query)?,
        };
        if let Some(pin) = pin {
            pins.push(pin);
            pinned = pinned.with(q);
        }
    }
    Ok((pins, pinned))
}

/// Copies `schedule`'s resident queries of `pk` into `lease` (the caller waits for the
/// copies).
fn stage_resident<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    pk: &ProvingKey<E>,
    lease: &mut Lease,
    schedule: Schedule,
) -> Result<ResidentBases> {
    let mut bases = ResidentBases::default();
    for q in schedule.resident.iter() {
        let key = q.key();
        let g1 = |lease: &mut Lease, src: &[E::G1Affine]| -> Result<G1Buf> {
            let buf = backend
                .alloc_g1(lease, key, src.len(), BufferUse::Resident)
                .phase(Phase::Allocate)?;
            backend.stage_g1(lease, buf, src).phase(Phase::Stage)?;
            Ok(buf)
        };
        match q {
            Query::A => bases.a_query = Some(g1(lease, &pk.a_query)?),
            Query::BG1 => bases.b_g1_query = Some(g1(lease, &pk.b_g1_query)?),
            Query::H => bases.h_query = Some(g1(lease, &pk.h_query)?),
            Query::L => bases.l_query = Some(g1(lease, &pk.l_query)?),
            Query::BG2 => {
                let buf = backend
                    .alloc_g2(lease, key, pk.b_g2_query.len(), BufferUse::Resident)
                    .phase(Phase::Allocate)?;
                backend
                    .stage_g2(lease, buf, &pk.b_g2_query)
                    .phase(Phase::Stage)?;
                bases.b_g2_query = Some(buf);
            }
        }
    }
    Ok(bases)
}

/// Copies A, B (and C) of `matrices` into `lease`, each in the key plan's items.
fn stage_matrices<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    matrices: &QapMatrices<E::ScalarField>,
    lease: &mut Lease,
) -> Result<Vec<SparseMatrixBufs>> {
    matrices
        .staged()
        .enumerate()
        .map(|(i, m)| {
            let at = i as u32;
            let words = |lease: &mut Lease, key: crate::PlanKey, src: &[u32]| {
                let buf = backend
                    .alloc_indices(lease, key, src.len())
                    .phase(Phase::Allocate)?;
                backend.stage_indices(lease, buf, src).phase(Phase::Stage)?;
                Ok::<_, Error>(buf)
            };
            let row_starts = words(lease, items::MATRIX_ROW_STARTS.at(at), m.row_starts())?;
            let entries = words(lease, items::MATRIX_ENTRIES.at(at), m.entry_words())?;
            let coefficients = backend
                .alloc_scalars(
                    lease,
                    items::MATRIX_COEFFICIENTS.at(at),
                    m.coefficients().len(),
                )
                .phase(Phase::Allocate)?;
            backend
                .stage_scalars(lease, coefficients, m.coefficients())
                .phase(Phase::Stage)?;
            Ok(SparseMatrixBufs {
                row_starts,
                entries,
                coefficients,
                rows: m.rows(),
                first_row: 0,
            })
        })
        .collect()
}
