//! Schedules: how one proof uses the device memory it is given.
//!
//! A schedule says which of the key's queries stay resident on the device (staged
//! once, shared by every proof there) and which stream from the host copy in chunks
//! through two chunk buffers per proof, and whether the domain vectors are all
//! resident or sequenced through two domain-sized buffers, and whether A·z, B·z and
//! C·z are evaluated on the host or on the device from matrices staged with the key
//! ([`Evaluation`]). Every schedule is an
//! exact pair of [`MemoryPlan`]s; the chooser takes the fastest one whose key and
//! `workers` proofs fit the budget, by the backend's [`CostModel`](crate::CostModel).

use std::fmt;

use super::{items, Reduction};
use crate::host_stages::HostStages;
use crate::{
    human_bytes, BufferUse, ElementKind, Error, MemoryPlan, PlanKey, ProofShape, ProverBackend,
    Result, ScalarMix, ScratchNeed,
};

/// One query of a proving key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Query {
    /// `h_query` (G1), the quotient's bases.
    H,
    /// `l_query` (G1), over the witness.
    L,
    /// `a_query` (G1).
    A,
    /// `b_g1_query` (G1).
    BG1,
    /// `b_g2_query` (G2).
    BG2,
}

impl Query {
    /// Every query, in the order the proof runs their MSMs.
    pub const ALL: [Query; 5] = [Query::H, Query::L, Query::A, Query::BG1, Query::BG2];

    /// The name users see.
    pub fn name(self) -> &'static str {
        match self {
            Query::H => "h",
            Query::L => "l",
            Query::A => "a",
            Query::BG1 => "b_g1",
            Query::BG2 => "b_g2",
        }
    }

    /// G1 or G2 bases.
    pub fn kind(self) -> ElementKind {
        match self {
            Query::BG2 => ElementKind::G2,
            _ => ElementKind::G1,
        }
    }

    /// The plan item of the query when it is resident.
    pub fn key(self) -> PlanKey {
        match self {
            Query::H => items::H_QUERY,
            Query::L => items::L_QUERY,
            Query::A => items::A_QUERY,
            Query::BG1 => items::B_G1_QUERY,
            Query::BG2 => items::B_G2_QUERY,
        }
    }

    /// Points of this query in a key of `shape`.
    pub fn len(self, shape: &ProofShape, reduction: Reduction) -> usize {
        match self {
            Query::H => reduction.h_len(shape.domain_size()),
            Query::L => shape.num_witness,
            Query::A | Query::BG1 | Query::BG2 => shape.num_variables(),
        }
    }

    /// Terms of this query's MSM in a proof (A and B skip the constant one, which the
    /// final combination adds directly).
    pub fn msm_terms(self, shape: &ProofShape, reduction: Reduction) -> usize {
        match self {
            Query::A | Query::BG1 | Query::BG2 => shape.num_variables() - 1,
            other => other.len(shape, reduction),
        }
    }

    /// The mix of this query's MSM scalars in a proof whose witness is of `witness`:
    /// the quotient's coefficients (`h`) are full width whatever the witness.
    pub fn scalars(self, witness: ScalarMix) -> ScalarMix {
        match self {
            Query::H => ScalarMix::FULL,
            _ => witness,
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of queries (the resident ones of a schedule).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct QuerySet(u8);

impl QuerySet {
    /// No query.
    pub const NONE: QuerySet = QuerySet(0);
    /// Every query.
    pub const ALL: QuerySet = QuerySet(0b1_1111);

    /// Whether `q` is in the set.
    pub fn contains(self, q: Query) -> bool {
        self.0 & q.bit() != 0
    }

    /// The set with `q` added.
    pub fn with(self, q: Query) -> QuerySet {
        QuerySet(self.0 | q.bit())
    }

    /// The set without `q`.
    pub fn without(self, q: Query) -> QuerySet {
        QuerySet(self.0 & !q.bit())
    }

    /// The queries in the set, in [`Query::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Query> {
        Query::ALL.into_iter().filter(move |q| self.contains(*q))
    }

    /// Every subset of the five queries.
    pub fn all_subsets() -> impl Iterator<Item = QuerySet> {
        (0..=Self::ALL.0).map(QuerySet)
    }
}

impl fmt::Display for QuerySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == QuerySet::NONE {
            return f.write_str("none");
        }
        let names: Vec<&str> = self.iter().map(Query::name).collect();
        f.write_str(&names.join(","))
    }
}

impl serde::Serialize for QuerySet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// Where a proof keeps its domain vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DomainVectors {
    /// A·z, B·z, C·z and the assignment each in its own buffer, all at once (the
    /// staging of one overlaps the transforms of the last).
    Resident,
    /// Two domain-sized buffers: a → coset; b → coset, a·b; c into b's buffer →
    /// coset, the quotient; then the assignment into b's buffer.
    Sequenced,
}

/// Where A·z, B·z and C·z are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evaluation {
    /// On the host (in parallel over rows); the three vectors are staged per proof.
    Host,
    /// On the device ([`ProverBackend::sparse_product`]) from the circuit's matrices,
    /// staged once with the key; per proof only the assignment is staged, and the
    /// assignment stays on the device for the whole proof.
    Device,
    /// On the device as [`Evaluation::Device`], the matrices streamed per proof instead
    /// (for budgets that cannot hold them beside the key): each matrix's coefficients,
    /// then its rows in runs of at most `chunk` rows and `chunk` entries, through one
    /// chunk buffer, multiplied out run by run.
    DeviceStreamed {
        /// The most rows, and the most entries, of one run.
        chunk: usize,
    },
}

impl Evaluation {
    /// Whether the sparse products run on the device (matrices staged or streamed).
    pub fn on_device(self) -> bool {
        self != Evaluation::Host
    }
}

/// The sizes of a circuit's matrices in the device layout
/// ([`QapMatrices`](super::QapMatrices)), what a schedule that evaluates on the device
/// stages with the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct MatrixSizes {
    /// Rows of A, B and C (A with the instance rows appended).
    pub rows: [usize; 3],
    /// Entries of A, B and C.
    pub entries: [usize; 3],
    /// Distinct coefficients of A, B and C.
    pub coefficients: [usize; 3],
    /// Whether C is staged; without it C·z is A·z ∘ B·z (a `.zkey`'s circuit).
    pub has_c: bool,
    /// Entries of the longest row of any of them (a streamed run holds at least it).
    pub longest_row: usize,
}

impl MatrixSizes {
    /// The matrices staged: A, B, and C where there is one.
    pub fn staged(&self) -> usize {
        if self.has_c {
            3
        } else {
            2
        }
    }

    /// Entries a proof's sparse products read (A twice without C: once for A·z,
    /// once for the product that stands for C·z).
    pub fn product_entries(&self) -> u64 {
        let [a, b, c] = self.entries.map(|e| e as u64);
        if self.has_c {
            a + b + c
        } else {
            2 * a + b
        }
    }

    /// The matrices a proof's products read, in order, as indices into A, B, C (A
    /// again for the product that stands for C·z without C).
    pub fn products(&self) -> [usize; 3] {
        if self.has_c {
            [0, 1, 2]
        } else {
            [0, 1, 0]
        }
    }

    /// The lengths of a proof's run buffers for runs of at most `chunk` rows and
    /// entries: row starts (words), entry words, and coefficients (scalars), each
    /// enough for any run of any matrix.
    pub fn run_buffers(&self, chunk: usize) -> (usize, usize, usize) {
        let longest = |v: &[usize; 3]| v.iter().copied().max().unwrap_or(0);
        let rows = chunk.min(longest(&self.rows));
        let entries = chunk.min(longest(&self.entries));
        (
            rows + 1,
            2 * entries.max(1),
            longest(&self.coefficients).max(2),
        )
    }

    /// Bytes a proof streams where the matrices are not staged with the key: each
    /// product's row starts (a word a row and one a run, `runs` of them at most),
    /// entries (two words each) and coefficients.
    pub fn streamed_bytes(&self, chunk: usize, scalar_bytes: u64) -> u64 {
        self.products()
            .iter()
            .map(|&m| {
                let runs =
                    self.rows[m].div_ceil(chunk.max(1)) + self.entries[m].div_ceil(chunk.max(1));
                4 * (self.rows[m] + runs) as u64
                    + 8 * self.entries[m] as u64
                    + scalar_bytes * self.coefficients[m] as u64
            })
            .sum()
    }
}

/// How one proof uses device memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Schedule {
    /// Queries staged once with the key; the rest stream from the host per proof.
    pub resident: QuerySet,
    /// The domain vectors' layout.
    pub domain: DomainVectors,
    /// Points per chunk of a streamed MSM (ignored when nothing streams).
    pub chunk: usize,
    /// Where A·z, B·z and C·z are computed.
    pub evaluation: Evaluation,
}

impl Schedule {
    /// Everything resident, evaluated on the host: the fastest schedule without the
    /// circuit's matrices.
    pub const RESIDENT: Schedule = Schedule {
        resident: QuerySet::ALL,
        domain: DomainVectors::Resident,
        chunk: 0,
        evaluation: Evaluation::Host,
    };

    /// Whether any query streams.
    pub fn streams(&self) -> bool {
        self.resident != QuerySet::ALL
    }

    /// The schedule as a key of `shape` runs it: a query with no term to sum (the l
    /// query of a circuit without witness variables, the h query of a domain of one
    /// point, a, b_g1 and b_g2 with the constant as the only variable) is resident, as
    /// it has nothing to stream; its buffer holds at most the constant's point and its
    /// MSM sums nothing to the identity. So every query of every schedule is either
    /// resident or streamed.
    pub fn for_shape(self, shape: &ProofShape, reduction: Reduction) -> Schedule {
        let resident = Query::ALL
            .into_iter()
            .filter(|q| q.msm_terms(shape, reduction) == 0)
            .fold(self.resident, QuerySet::with);
        let chunk = if resident == QuerySet::ALL {
            0
        } else {
            self.chunk
        };
        Schedule {
            resident,
            chunk,
            ..self
        }
    }

    /// Checks the schedule can run for a key with `matrices` (`None`: without the
    /// circuit's matrices): a streamed query needs chunks of at least a point, a
    /// device evaluation the matrices, and one without C all three domain vectors
    /// (its C·z is a product of the other two, computed before their transforms).
    pub fn validate(&self, matrices: Option<&MatrixSizes>) -> Result<()> {
        if self.streams() && self.chunk == 0 {
            return Err(Error::InvalidInput(
                "a schedule that streams bases needs a chunk of at least one point".into(),
            ));
        }
        if self.evaluation.on_device() {
            match matrices {
                None => {
                    return Err(Error::InvalidInput(
                        "a schedule that evaluates on the device needs the circuit's matrices"
                            .into(),
                    ))
                }
                Some(m) if !m.has_c && self.domain == DomainVectors::Sequenced => {
                    return Err(Error::InvalidInput(
                        "a circuit without C (a .zkey's) evaluates on the device only with resident domain vectors".into(),
                    ))
                }
                Some(_) => {}
            }
        }
        if let (Evaluation::DeviceStreamed { chunk }, Some(m)) = (self.evaluation, matrices) {
            if chunk == 0 || chunk < m.longest_row {
                return Err(Error::InvalidInput(format!(
                    "streamed matrices in runs of {chunk} entries: the longest row has {}",
                    m.longest_row
                )));
            }
        }
        Ok(())
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Schedule::RESIDENT {
            return f.write_str("resident");
        }
        if self.evaluation.on_device() {
            let host = Schedule {
                evaluation: Evaluation::Host,
                ..*self
            };
            return match self.evaluation {
                Evaluation::DeviceStreamed { chunk } => write!(
                    f,
                    "{host}; evaluated on the device, the matrices streamed in runs of {chunk} entries"
                ),
                _ => write!(f, "{host}; evaluated on the device"),
            };
        }
        let domain = match self.domain {
            DomainVectors::Resident => "resident",
            DomainVectors::Sequenced => "sequenced",
        };
        if self.streams() {
            let streamed = QuerySet(QuerySet::ALL.0 & !self.resident.0);
            write!(
                f,
                "bases resident: {}, streamed: {} in chunks of {} points; domain vectors {domain}",
                self.resident, streamed, self.chunk
            )
        } else {
            write!(f, "bases resident; domain vectors {domain}")
        }
    }
}

/// A schedule with its exact plans and its predicted time.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScheduledPlan {
    /// The schedule.
    pub schedule: Schedule,
    /// The staged key's plan (its resident queries).
    pub key: MemoryPlan,
    /// One proof's plan (domain vectors, chunk buffers, scratch).
    pub proof: MemoryPlan,
    /// Predicted stage + compute seconds of one proof (its latency).
    pub predicted_seconds: f64,
    /// Of which the device's compute (transforms, products, MSMs).
    pub compute_seconds: f64,
    /// And the copies from the host (vectors, streamed bases), which a backend with a
    /// copy stream runs beside another proof's compute.
    pub copy_seconds: f64,
    /// Matrix entries a proof's evaluation reads on the host: 0 where the device
    /// evaluates (or the circuit's matrices are not known).
    pub host_entries: u64,
}

impl ScheduledPlan {
    /// The plans of `schedule` for a key of `shape` (with `matrices` where the
    /// circuit's are known) on `backend` (the schedule as the key runs it:
    /// [`Schedule::for_shape`]), its time predicted for witnesses of `witness`.
    pub fn new(
        backend: &dyn ProverBackend,
        shape: &ProofShape,
        reduction: Reduction,
        schedule: Schedule,
        matrices: Option<&MatrixSizes>,
        witness: ScalarMix,
    ) -> Result<ScheduledPlan> {
        let schedule = schedule.for_shape(shape, reduction);
        schedule.validate(matrices)?;
        let p = predict(backend, shape, reduction, &schedule, matrices, witness);
        let host_entries = match (schedule.evaluation, matrices) {
            (Evaluation::Host, Some(m)) => m.entries[..m.staged()].iter().map(|e| *e as u64).sum(),
            _ => 0,
        };
        Ok(ScheduledPlan {
            host_entries,
            key: key_plan_for(backend, shape, reduction, &schedule, matrices)?,
            proof: proof_plan_for(backend, shape, reduction, &schedule, matrices)?,
            predicted_seconds: p.latency,
            compute_seconds: p.compute,
            copy_seconds: p.copy,
            schedule,
        })
    }

    /// Predicted proofs per second with `workers` proofs in flight at once on one
    /// device: each proof takes its latency, and proofs overlap up to the device's
    /// own limit, its compute or, with a copy stream, its copies, whichever is longer
    /// (without one, copies and compute take turns). So two streamed proofs can beat
    /// one resident proof at a time, where the resident schedule fits only one. With
    /// the `host`'s stages, no more than the host supplies (its synthesis, and the
    /// evaluation where this schedule leaves it to the host).
    pub fn proofs_per_second(
        &self,
        workers: usize,
        overlaps_staging: bool,
        host: Option<&HostStages>,
    ) -> f64 {
        let device = if overlaps_staging {
            self.compute_seconds.max(self.copy_seconds)
        } else {
            self.compute_seconds + self.copy_seconds
        };
        let latency = self.predicted_seconds.max(device).max(1e-12);
        let rate = (workers.max(1) as f64 / latency).min(1.0 / device.max(1e-12));
        host.map_or(rate, |h| rate.min(h.proofs_per_second(self.host_entries)))
    }

    /// Bytes of the key and `workers` proofs at once.
    pub fn bytes_for(&self, workers: usize) -> u64 {
        self.proof
            .total_bytes()
            .saturating_mul(workers as u64)
            .saturating_add(self.key.total_bytes())
    }
}

/// The smallest chunk the chooser considers: below it the per-call cost of an MSM
/// dominates. The floor is computed with it.
pub const MIN_CHUNK: usize = 1 << 12;

/// The smallest run of a streamed matrix the chooser considers (entries, and rows).
pub const MIN_MATRIX_CHUNK: usize = 1 << 14;

/// Plan for the staged key: the resident queries, laid out for reuse, and the
/// matrices where the schedule evaluates on the device.
pub fn key_plan_for(
    backend: &dyn ProverBackend,
    shape: &ProofShape,
    reduction: Reduction,
    schedule: &Schedule,
    matrices: Option<&MatrixSizes>,
) -> Result<MemoryPlan> {
    let mut plan = MemoryPlan::new(format!("proving key on {}", backend.info().label()));
    for q in schedule.resident.iter() {
        let bytes = backend.buffer_bytes(q.kind(), q.len(shape, reduction), BufferUse::Resident)?;
        plan.item(q.key(), bytes);
    }
    if let (Evaluation::Device, Some(m)) = (schedule.evaluation, matrices) {
        let words = |len: usize| backend.buffer_bytes(ElementKind::Index, len, BufferUse::Plain);
        for i in 0..m.staged() {
            let at = i as u32;
            plan.item(items::MATRIX_ROW_STARTS.at(at), words(m.rows[i] + 1)?)
                .item(items::MATRIX_ENTRIES.at(at), words(2 * m.entries[i])?)
                .item(
                    items::MATRIX_COEFFICIENTS.at(at),
                    backend.buffer_bytes(
                        ElementKind::Scalar,
                        m.coefficients[i],
                        BufferUse::Plain,
                    )?,
                );
        }
    }
    Ok(plan)
}

/// Plan for one proof under `schedule`: the domain vectors, the assignment, the chunk
/// buffers of the streamed queries (and matrices, sized from `matrices`) and the
/// scratch of every NTT and MSM.
pub fn proof_plan_for(
    backend: &dyn ProverBackend,
    shape: &ProofShape,
    reduction: Reduction,
    schedule: &Schedule,
    matrices: Option<&MatrixSizes>,
) -> Result<MemoryPlan> {
    let n = shape.domain_size();
    let vars = shape.num_variables();
    let scalars = |len: usize| backend.buffer_bytes(ElementKind::Scalar, len, BufferUse::Plain);
    let mut plan = MemoryPlan::new(format!(
        "proof of 2^{} domain on {} ({schedule})",
        shape.log_domain,
        backend.info().label()
    ));
    match (schedule.domain, schedule.evaluation) {
        (DomainVectors::Resident, _) => {
            plan.item(items::DOMAIN_A, scalars(n)?)
                .item(items::DOMAIN_B, scalars(n)?)
                .item(items::DOMAIN_C, scalars(n)?)
                .item(items::ASSIGNMENT, scalars(vars)?);
        }
        (DomainVectors::Sequenced, Evaluation::Host) => {
            plan.item(items::DOMAIN_A, scalars(n)?)
                .item(items::DOMAIN_B, scalars(n.max(vars))?);
        }
        // The products read the assignment, so it is staged first and stays.
        (DomainVectors::Sequenced, Evaluation::Device | Evaluation::DeviceStreamed { .. }) => {
            plan.item(items::DOMAIN_A, scalars(n)?)
                .item(items::DOMAIN_B, scalars(n)?)
                .item(items::ASSIGNMENT, scalars(vars)?);
        }
    }
    let mut need = ScratchNeed {
        ntt: Some(shape.domain()),
        ..ScratchNeed::default()
    };
    for q in Query::ALL {
        let terms = q.msm_terms(shape, reduction);
        let len = if schedule.resident.contains(q) {
            terms
        } else {
            terms.min(schedule.chunk)
        };
        match q.kind() {
            ElementKind::G2 => need.msm_g2 = need.msm_g2.max(len),
            _ => need.msm_g1 = need.msm_g1.max(len),
        }
    }
    let (g1_chunk, g2_chunk) = chunk_lens(shape, reduction, schedule);
    for (key, kind, len) in [
        (items::G1_CHUNK, ElementKind::G1, g1_chunk),
        (items::G2_CHUNK, ElementKind::G2, g2_chunk),
    ] {
        if len > 0 {
            let bytes = backend.buffer_bytes(kind, len, BufferUse::Plain)?;
            plan.item(key.at(0), bytes).item(key.at(1), bytes);
        }
    }
    if let (Evaluation::DeviceStreamed { chunk }, Some(m)) = (schedule.evaluation, matrices) {
        // One run of any matrix at a time, in the first chunk lease (no MSM uses it
        // before the products are done).
        let (starts, entries, coefficients) = m.run_buffers(chunk);
        let words = |len: usize| backend.buffer_bytes(ElementKind::Index, len, BufferUse::Plain);
        plan.item(items::MATRIX_CHUNK_ROW_STARTS.at(0), words(starts)?)
            .item(items::MATRIX_CHUNK_ENTRIES.at(0), words(entries)?)
            .item(
                items::MATRIX_CHUNK_COEFFICIENTS.at(0),
                scalars(coefficients)?,
            );
    }
    plan.merge(&backend.scratch_plan(&need));
    Ok(plan)
}

/// Points of the G1 and of the G2 chunk buffers a proof under `schedule` allocates
/// (0 when no query of that group streams): the chunk, or the longest streamed MSM of
/// the group if that is shorter.
pub fn chunk_lens(shape: &ProofShape, reduction: Reduction, schedule: &Schedule) -> (usize, usize) {
    let (mut g1, mut g2) = (0, 0);
    for q in Query::ALL
        .into_iter()
        .filter(|q| !schedule.resident.contains(*q))
    {
        let len = q.msm_terms(shape, reduction).min(schedule.chunk);
        match q.kind() {
            ElementKind::G2 => g2 = g2.max(len),
            _ => g1 = g1.max(len),
        }
    }
    (g1, g2)
}

/// A proof's predicted seconds: its latency, and the device's compute and copies in it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    /// Stage + compute, start to end.
    pub latency: f64,
    /// Transforms, sparse products and MSMs.
    pub compute: f64,
    /// Host-to-device copies.
    pub copy: f64,
}

/// Predicted seconds of one proof under `schedule` (`matrices`: the circuit's, for a
/// device evaluation) whose witness is of `witness`.
pub fn predict(
    backend: &dyn ProverBackend,
    shape: &ProofShape,
    reduction: Reduction,
    schedule: &Schedule,
    matrices: Option<&MatrixSizes>,
    witness: ScalarMix,
) -> Prediction {
    let model = backend.cost_model();
    let n = shape.domain_size();
    let scalar_bytes = backend.element_bytes(ElementKind::Scalar);
    let ntt = f64::from(reduction.transforms()) * model.ntt_seconds(shape.log_domain);
    let z_bytes = shape.num_variables() as u64 * scalar_bytes;
    let (staging, mut copy, sparse) = match (schedule.evaluation, matrices) {
        // Only z crosses the bus, before anything can run; then the products.
        (Evaluation::Device, Some(m)) => {
            let z = model.stage_seconds(z_bytes);
            let sparse = model.sparse_seconds(m.product_entries());
            (z + sparse, z, sparse)
        }
        // z, then each run of each matrix, staged while nothing else runs.
        (Evaluation::DeviceStreamed { chunk }, Some(m)) => {
            let copied = model.stage_seconds(z_bytes + m.streamed_bytes(chunk, scalar_bytes));
            let sparse = model.sparse_seconds(m.product_entries());
            (copied + sparse, copied, sparse)
        }
        _ => {
            // a, b, c and z; with a copy stream the later vectors hide behind the
            // transforms of the earlier ones, unless they wait for a buffer
            // (sequenced).
            let vectors = model.stage_seconds(3 * n as u64 * scalar_bytes + z_bytes);
            let hidden = match (model.overlaps_staging, schedule.domain) {
                (false, _) => 0.0,
                (true, DomainVectors::Resident) => 0.5,
                (true, DomainVectors::Sequenced) => 0.25,
            };
            (vectors * (1.0 - hidden), vectors, 0.0)
        }
    };
    let mut compute = ntt + sparse;
    let mut msm = 0.0;
    for q in Query::ALL {
        let terms = q.msm_terms(shape, reduction);
        let g2 = q.kind() == ElementKind::G2;
        let mix = q.scalars(witness);
        if schedule.resident.contains(q) || terms == 0 {
            msm += model.msm_seconds(terms, g2, mix);
            compute += model.msm_seconds(terms, g2, mix);
            continue;
        }
        let chunk = schedule.chunk.max(1);
        let full = terms / chunk;
        let rest = terms % chunk;
        let chunks =
            full as f64 * model.msm_seconds(chunk, g2, mix) + model.msm_seconds(rest, g2, mix);
        let point = backend.element_bytes(q.kind());
        let bases = model.stream_seconds(terms as u64 * point);
        msm += if model.overlaps_staging {
            // The first chunk's copy is not hidden; then each copy runs beside an MSM.
            chunks.max(bases) + model.stream_seconds(chunk.min(terms) as u64 * point)
        } else {
            chunks + bases
        };
        compute += chunks;
        copy += bases;
    }
    Prediction {
        latency: ntt + staging + msm,
        compute,
        copy,
    }
}

/// Every schedule the chooser considers for `shape`: each resident set, each domain
/// layout, chunks from [`MIN_CHUNK`] up by powers of two to the longest MSM, and each
/// evaluation `backend` can run with `matrices`; each as the key runs it
/// ([`Schedule::for_shape`]), once.
fn candidates(
    backend: &dyn ProverBackend,
    shape: &ProofShape,
    reduction: Reduction,
    matrices: Option<&MatrixSizes>,
) -> Vec<Schedule> {
    let longest = Query::ALL
        .iter()
        .map(|q| q.msm_terms(shape, reduction))
        .max()
        .unwrap_or(0)
        .max(1);
    let mut chunks = Vec::new();
    let mut c = MIN_CHUNK.min(longest);
    while c < longest {
        chunks.push(c);
        c = c.saturating_mul(2);
    }
    chunks.push(longest);
    let mut evaluations = vec![Evaluation::Host];
    if let Some(m) = matrices.filter(|_| backend.supports_sparse_product()) {
        evaluations.push(Evaluation::Device);
        // Runs from MIN_MATRIX_CHUNK up by fours to one that holds any matrix whole.
        let whole = m.rows.iter().chain(&m.entries).copied().max().unwrap_or(1);
        let mut chunk = MIN_MATRIX_CHUNK.max(m.longest_row.next_power_of_two());
        loop {
            evaluations.push(Evaluation::DeviceStreamed {
                chunk: chunk.min(whole),
            });
            if chunk >= whole {
                break;
            }
            chunk = chunk.saturating_mul(4);
        }
    }
    let mut out = Vec::new();
    for resident in QuerySet::all_subsets() {
        for domain in [DomainVectors::Resident, DomainVectors::Sequenced] {
            for &evaluation in &evaluations {
                let chunks: &[usize] = if resident == QuerySet::ALL {
                    &[0]
                } else {
                    &chunks
                };
                for &chunk in chunks {
                    out.push(Schedule {
                        resident,
                        domain,
                        chunk,
                        evaluation,
                    });
                }
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.into_iter()
        .map(|s| s.for_shape(shape, reduction))
        .filter(|s| s.validate(matrices).is_ok() && seen.insert(*s))
        .collect()
}

/// The schedule chosen for a budget, with the floor of its shape.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScheduleChoice {
    /// The schedule of the most proofs per second for the workers asked (with one
    /// worker, the fastest) whose key and proofs in flight fit.
    pub chosen: ScheduledPlan,
    /// The schedule with the fewest bytes (key plus the workers' proofs).
    pub floor: ScheduledPlan,
    /// The budget chosen for, in bytes.
    pub capacity: u64,
    /// Proofs that fit at once beside the key (at most the workers asked for; the
    /// other workers wait for memory).
    pub workers: usize,
    /// Predicted proofs per second of one device with that many in flight.
    pub proofs_per_second: f64,
}

impl ScheduleChoice {
    /// The floor in bytes: the smallest budget at which `workers` proofs of this
    /// shape run at once.
    pub fn floor_bytes(&self) -> u64 {
        self.floor.bytes_for(self.workers)
    }
}

/// Chooses the schedule of the most proofs per second for `workers` proofs at once
/// ([`ScheduledPlan::proofs_per_second`]) among those whose key plus the proofs that
/// run at once fit `capacity` bytes: each schedule runs as many of the workers'
/// proofs at once as fit (down to one; the other workers wait for memory), so a
/// streamed schedule that fits two proofs competes with a resident one that fits one.
/// Ties go to the lower latency, then to fewer bytes. With one worker this is the
/// fastest schedule that fits. Below the floor of one proof: [`Error::BelowFloor`],
/// at once. With the circuit's `matrices` (and a backend with a sparse product),
/// schedules that evaluate on the device are candidates too: the matrices staged with
/// the key, or, only where no such schedule fits, streamed per proof. Times are predicted for
/// witnesses of `witness` ([`ScalarMix::FULL`] when nothing is known of them), and
/// capped by what the `host` supplies where its stages are known (so a schedule that
/// evaluates on the device wins where the host's evaluation would starve it).
#[allow(clippy::too_many_arguments)]
pub fn choose(
    backend: &dyn ProverBackend,
    shape: &ProofShape,
    reduction: Reduction,
    capacity: u64,
    workers: usize,
    matrices: Option<&MatrixSizes>,
    witness: ScalarMix,
    host: Option<&HostStages>,
) -> Result<ScheduleChoice> {
    let plans = candidates(backend, shape, reduction, matrices)
        .into_iter()
        .map(|s| ScheduledPlan::new(backend, shape, reduction, s, matrices, witness))
        .collect::<Result<Vec<_>>>()?;
    let floor_of = |w: usize| {
        plans
            .iter()
            .min_by_key(|p| p.bytes_for(w))
            .cloned()
            .ok_or_else(|| Error::InvalidInput("no schedule for this shape".into()))
    };
    let overlaps = backend.cost_model().overlaps_staging;
    // Matrices are streamed for budgets too small to hold them: only where no schedule
    // that stages them with the key fits.
    let staged_fits = plans
        .iter()
        .any(|p| p.schedule.evaluation == Evaluation::Device && p.bytes_for(1) <= capacity);
    // Each schedule with the most of the workers' proofs that fit beside its key.
    let best = plans
        .iter()
        .filter(|p| {
            !(staged_fits && matches!(p.schedule.evaluation, Evaluation::DeviceStreamed { .. }))
        })
        .filter_map(|p| {
            let fit = (1..=workers.max(1))
                .rev()
                .find(|&w| p.bytes_for(w) <= capacity)?;
            Some((p, fit, p.proofs_per_second(fit, overlaps, host)))
        })
        .max_by(|(a, wa, ra), (b, wb, rb)| {
            ra.total_cmp(rb)
                .then(b.predicted_seconds.total_cmp(&a.predicted_seconds))
                .then(b.bytes_for(*wb).cmp(&a.bytes_for(*wa)))
        });
    match best {
        Some((chosen, fit, rate)) => Ok(ScheduleChoice {
            chosen: chosen.clone(),
            floor: floor_of(fit)?,
            capacity,
            workers: fit,
            proofs_per_second: rate,
        }),
        None => Err(Error::BelowFloor {
            budget: backend.budget().name().to_string(),
            capacity,
            floor: floor_of(1)?.bytes_for(1),
            workers: 1,
        }),
    }
}

/// The memory–time curve of a shape: the schedules that no other beats on both
/// bytes (key plus `workers` proofs) and predicted time, fewest bytes first.
pub fn frontier(
    backend: &dyn ProverBackend,
    shape: &ProofShape,
    reduction: Reduction,
    workers: usize,
    matrices: Option<&MatrixSizes>,
    witness: ScalarMix,
) -> Result<Vec<ScheduledPlan>> {
    let workers = workers.max(1);
    let mut all = candidates(backend, shape, reduction, matrices)
        .into_iter()
        .map(|s| ScheduledPlan::new(backend, shape, reduction, s, matrices, witness))
        .collect::<Result<Vec<_>>>()?;
    all.sort_by(|a, b| {
        a.bytes_for(workers)
            .cmp(&b.bytes_for(workers))
            .then(a.predicted_seconds.total_cmp(&b.predicted_seconds))
    });
    let mut out: Vec<ScheduledPlan> = Vec::new();
    for plan in all {
        if out
            .last()
            .is_none_or(|last| plan.predicted_seconds < last.predicted_seconds)
        {
            out.push(plan);
        }
    }
    Ok(out)
}

/// A one-line summary of a choice, for logs and the CLI.
pub fn describe(choice: &ScheduleChoice) -> String {
    format!(
        "schedule {} ({} for the key and {} per proof, workers: {}; floor {}), predicted {:.1} ms a proof, {:.2} proofs/s",
        choice.chosen.schedule,
        human_bytes(choice.chosen.key.total_bytes()),
        human_bytes(choice.chosen.proof.total_bytes()),
        choice.workers,
        human_bytes(choice.floor_bytes()),
        choice.chosen.predicted_seconds * 1e3,
        choice.proofs_per_second
    )
}
