//! The `ProverBackend` trait: what every backend supplies (memory, NTT, MSM).
//!
//! A proof runs in four explicit phases: **allocate** (a [`Lease`] sized by a
//! [`MemoryPlan`]), **stage** (host to device), **compute** (NTT, pointwise ops, MSM on
//! device-resident buffers) and **release** ([`Lease::release`]). The Groth16 pipeline
//! is written once, in core, against this trait.

use std::sync::Arc;

use ark_ff::Zero;

use crate::{
    Bls12_381, BufferId, CostModel, DeviceBudget, DeviceSync, Domain, Fr, HostPin, Lease,
    MemoryPlan, PairingCurve, PinnedScalars, PlanKey, Result,
};

/// A point in a device's queue (see [`ProverBackend::device_marker`]).
pub trait DeviceMarker: Send {
    /// Device time from `start` (a marker of the same backend, queued earlier) to
    /// this marker; waits until the device has passed this marker.
    fn since(&self, start: &dyn DeviceMarker) -> Result<std::time::Duration>;
    /// For the backend's own downcast of `start`.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// Describes one backend instance (one device).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BackendInfo {
    /// Backend name as users type it: `cpu`, `cuda`, `wgpu`.
    pub name: String,
    /// Device index within the backend (0 for the first GPU).
    pub device_index: usize,
    /// Device name as its driver reports it.
    pub device_name: String,
    /// Driver / API details (e.g. `CUDA driver 13.0, sm_90`, `Vulkan`).
    pub api: String,
    /// Memory the device reports, in bytes.
    pub memory_bytes: u64,
    /// Preference for `auto` selection: the highest available wins, on the scale of
    /// [`crate::priority`] (0, [`crate::priority::UNRANKED`], is never chosen).
    pub priority: u32,
}

impl BackendInfo {
    /// `name:index`, the label used in reports and `--backend`.
    pub fn label(&self) -> String {
        format!("{}:{}", self.name, self.device_index)
    }
}

/// The kinds of element a device buffer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementKind {
    /// Scalar field elements (`Fr`).
    Scalar,
    /// G1 affine points.
    G1,
    /// G2 affine points.
    G2,
    /// 32-bit words: a sparse matrix's row starts and entries ([`SparseMatrixBufs`]).
    Index,
}

macro_rules! buffer_handle {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// Made only by the allocation helpers on `dyn ProverBackend` (its fields are
        /// private), so its length is the allocation's: a backend can trust it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name {
            id: BufferId,
            len: usize,
        }

        impl $name {
            /// The buffer in its lease.
            pub fn id(&self) -> BufferId {
                self.id
            }

            /// Number of elements.
            pub fn len(&self) -> usize {
                self.len
            }

            /// Whether the buffer holds no elements.
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }
        }
    };
}

buffer_handle!(
    /// A device buffer of scalars.
    ScalarBuf
);
buffer_handle!(
    /// A device buffer of G1 affine points.
    G1Buf
);
buffer_handle!(
    /// A device buffer of G2 affine points.
    G2Buf
);
buffer_handle!(
    /// A device buffer of 32-bit words.
    IndexBuf
);

/// One sparse matrix on a device, rows compressed (CSR), staged by core from a
/// [`SparseMatrix`](crate::groth16::SparseMatrix) that checked every index:
/// row `r` holds the entries `row_starts[r]..row_starts[r + 1]`; entry `k` is the two
/// words `entries[2k]` (a column: an index into the assignment) and `entries[2k + 1]`
/// (an index into `coefficients`). `coefficients[0]` is one and `coefficients[1]`
/// minus one, always, so a kernel may add or subtract the assignment's value directly
/// for those two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparseMatrixBufs {
    /// `rows + 1` word offsets (in entries, not words) into `entries`.
    pub row_starts: IndexBuf,
    /// Two words an entry: column, coefficient index.
    pub entries: IndexBuf,
    /// The matrix's distinct coefficients, as scalars.
    pub coefficients: ScalarBuf,
    /// Rows these buffers hold.
    pub rows: usize,
    /// The whole matrix's row that the buffers' row 0 is: 0 for a whole matrix, the
    /// chunk's first row for a chunk of one streamed per proof (its row starts then
    /// count from the chunk's first entry).
    pub first_row: usize,
}

/// How a buffer of bases will be used, so that a backend can lay it out for that use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferUse {
    /// Staged once and read by many MSMs (a proving key's resident queries): the
    /// backend may add its own precomputation (CUDA's window planes), which
    /// [`ProverBackend::buffer_bytes`] counts.
    Resident,
    /// Restaged for every chunk of a streamed MSM, and scalars: exactly
    /// `element_bytes × len`, nothing built at staging.
    Plain,
}

/// Which transform an NTT computes (all natural order in and out, as arkworks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttKind {
    /// Coefficients to evaluations on the domain.
    Forward,
    /// Evaluations on the domain to coefficients.
    Inverse,
    /// Coefficients to evaluations on the coset g·H.
    CosetForward,
    /// Evaluations on the coset g·H to coefficients.
    CosetInverse,
}

impl NttKind {
    /// All four kinds.
    pub const ALL: [NttKind; 4] = [
        NttKind::Forward,
        NttKind::Inverse,
        NttKind::CosetForward,
        NttKind::CosetInverse,
    ];
}

/// `len` bases starting at `base_offset`, paired with `len` scalars at `scalar_offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmSpan<B> {
    /// Bases buffer (in the bases lease).
    pub bases: B,
    /// First base used.
    pub base_offset: usize,
    /// Scalars buffer (in the work lease).
    pub scalars: ScalarBuf,
    /// First scalar used.
    pub scalar_offset: usize,
    /// Number of terms.
    pub len: usize,
}

/// The largest operations a lease must have scratch space for. Pointwise operations
/// have no field: every plan [`ProverBackend::scratch_plan`] returns covers them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScratchNeed<F = Fr> {
    /// Largest NTT, if any.
    pub ntt: Option<Domain<F>>,
    /// Largest G1 MSM (terms).
    pub msm_g1: usize,
    /// Largest G2 MSM (terms).
    pub msm_g2: usize,
}

/// A proving backend for one device over the pairing curve `E` (BLS12-381 unless
/// named). Object-safe: used as `&dyn ProverBackend` (or `&dyn ProverBackend<Bn254>`);
/// a backend that proves several curves implements it once per curve.
///
/// Every operation works on buffers of a [`Lease`]; each operation's scratch space
/// is a plan item named by [`ProverBackend::scratch_plan`] and allocated through the
/// lease. Operations may be queued asynchronously; [`ProverBackend::synchronize`]
/// waits for them, and every method that returns host data waits implicitly.
pub trait ProverBackend<E: PairingCurve = Bls12_381>: Send + Sync {
    /// Name, device and memory of this instance.
    fn info(&self) -> &BackendInfo;

    /// The device's budget, shared by every worker on it.
    fn budget(&self) -> &Arc<DeviceBudget>;

    /// What a lease calls to wait for this device before returning its permit.
    fn device_sync(&self) -> Arc<dyn DeviceSync>;

    /// Bytes one element of `kind` occupies on the device.
    fn element_bytes(&self, kind: ElementKind) -> u64;

    /// Scratch items (named, exact bytes) the operations in `need` allocate.
    fn scratch_plan(&self, need: &ScratchNeed<E::ScalarField>) -> MemoryPlan;

    /// Checks a plan before its budget is acquired: a backend with limits on single
    /// buffers (wgpu's binding sizes) refuses here what it could never allocate. The
    /// default accepts every plan.
    fn check_plan(&self, plan: &MemoryPlan) -> Result<()> {
        let _ = plan;
        Ok(())
    }

    /// Allocates a buffer of `len` elements of `kind` laid out for `usage` from plan
    /// item `key`, through [`Lease::allocate`] (never around it), taking exactly
    /// [`Self::buffer_bytes`] bytes. Callers use the typed helpers on
    /// `dyn ProverBackend` ([`alloc_scalars`](trait.ProverBackend.html#method.alloc_scalars)
    /// and the others), which make the buffer handles.
    fn alloc(
        &self,
        lease: &mut Lease,
        key: PlanKey,
        kind: ElementKind,
        len: usize,
        usage: BufferUse,
    ) -> Result<BufferId>;

    /// Stage phase: copies `src` into the first `src.len()` elements of `dst` (at most
    /// its length; the rest keeps its values, as with bases). The copy may still
    /// be in flight when this returns (`src` is no longer needed by then): every later
    /// operation on `dst` sees the staged values, and a backend may overlap the copy
    /// with operations already queued on other buffers.
    fn stage_scalars(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        src: &[E::ScalarField],
    ) -> Result<()>;

    /// Stage phase: copies `src` into the first `src.len()` elements of `dst` and sets
    /// the rest to zero (`src` at most as long as `dst`), with [`Self::stage_scalars`]'s
    /// ordering. A proof's domain vectors are zero past their constraints' rows, so a
    /// backend that zeroes on the device copies about half the bytes. The default pads
    /// on the host.
    fn stage_scalars_padded(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        src: &[E::ScalarField],
    ) -> Result<()> {
        check_padded(src, dst)?;
        if src.len() == dst.len() {
            return self.stage_scalars(lease, dst, src);
        }
        let mut padded = Vec::with_capacity(dst.len());
        padded.extend_from_slice(src);
        padded.resize(dst.len(), E::ScalarField::zero());
        self.stage_scalars(lease, dst, &padded)
    }

    /// Stage phase: copies G1 bases into the first `src.len()` points of `dst` (at
    /// most `dst.len()`; the rest keeps what it held), with [`Self::stage_scalars`]'s
    /// ordering. A streamed MSM restages one chunk buffer with shorter last chunks.
    fn stage_g1(&self, lease: &mut Lease, dst: G1Buf, src: &[E::G1Affine]) -> Result<()>;

    /// Stage phase: copies G2 bases into the front of `dst`, as [`Self::stage_g1`].
    fn stage_g2(&self, lease: &mut Lease, dst: G2Buf, src: &[E::G2Affine]) -> Result<()>;

    /// Stage phase: copies `src` into the first `src.len()` words of `dst`, with
    /// [`Self::stage_scalars`]'s ordering. Only a backend whose
    /// [`Self::supports_sparse_product`] is true is asked; the default refuses.
    fn stage_indices(&self, lease: &mut Lease, dst: IndexBuf, src: &[u32]) -> Result<()> {
        let _ = (lease, dst, src);
        Err(crate::Error::Unsupported(format!(
            "{} has no index buffers",
            self.info().name
        )))
    }

    /// Whether [`Self::sparse_product`] runs on this backend: the QAP evaluation
    /// (A·z, B·z, C·z) then happens on the device, with the matrices staged once with
    /// the key and only the assignment crossing the bus per proof. The default is
    /// false: the host evaluates and the three vectors are staged.
    fn supports_sparse_product(&self) -> bool {
        false
    }

    /// Compute phase: with `f = matrix.first_row`, `out[f + r] = Σ
    /// coefficients[entries[2k+1]] · z[entries[2k]]` over `k` in
    /// `row_starts[r]..row_starts[r+1]` for `r < matrix.rows`, `out[i] = 0` for
    /// `f + matrix.rows <= i < out.len()` (so `out` is ready for the NTTs whatever it
    /// held), and `out[..f]` left as it is: a matrix's chunks multiplied out in order
    /// of their first rows leave the whole product. The matrix lives in `matrices`
    /// (the staged key's lease, or the proof's chunk lease for a streamed one), `z`
    /// and `out` in `work`; [`check_sparse_product`] has passed. The default refuses.
    fn sparse_product(
        &self,
        work: &mut Lease,
        matrices: &Lease,
        matrix: SparseMatrixBufs,
        z: ScalarBuf,
        out: ScalarBuf,
    ) -> Result<()> {
        let _ = (work, matrices, matrix, z, out);
        Err(crate::Error::Unsupported(format!(
            "{} has no sparse product",
            self.info().name
        )))
    }

    /// Copies scalars back to the host.
    fn read_scalars(&self, lease: &Lease, src: ScalarBuf) -> Result<Vec<E::ScalarField>>;

    /// Copies scalars back into the caller's `dst` (exactly `src.len()` long): for a
    /// caller that reads often, a reused destination saves the page faults of a fresh
    /// vector, which cost more than the copy itself. The default reads a vector and
    /// copies it; backends override it to write `dst` directly.
    fn read_scalars_into(
        &self,
        lease: &Lease,
        src: ScalarBuf,
        dst: &mut [E::ScalarField],
    ) -> Result<()> {
        check_read_len(src, dst)?;
        dst.copy_from_slice(&self.read_scalars(lease, src)?);
        Ok(())
    }

    /// Page-locks the caller's `scalars` for this backend's copies while the returned
    /// value lives: [`Self::stage_scalars`] from it and [`Self::read_scalars_into`]
    /// into it then copy straight between the caller's memory and the device, at the
    /// link's full speed, without staging buffers (`crate::pinned` says when that
    /// pays). The default pins nothing (a backend whose copies gain nothing from it:
    /// the CPU, wgpu): the scalars are used the same way, unpinned.
    fn pin_scalars<'a>(
        &self,
        scalars: &'a mut [E::ScalarField],
    ) -> Result<PinnedScalars<'a, E::ScalarField>> {
        Ok(PinnedScalars::unpinned(scalars))
    }

    /// Page-locks a host copy of G1 bases that proofs stream (a proving key's streamed
    /// queries) for every device of this backend in the process, until the returned
    /// pin drops: [`Self::stage_g1`] of any part of them into a streamed chunk's buffer
    /// then copies the points as they lie in host memory, with no conversion on the
    /// host. Pinning the same memory again (another device, another staged copy of the
    /// key) shares the one pin. `None`: nothing pinned (the default, for a backend
    /// whose copies gain nothing from it), and the bases are staged as any others.
    fn pin_g1_bases(&self, bases: &[E::G1Affine]) -> Result<Option<Box<dyn HostPin>>> {
        let _ = bases;
        Ok(None)
    }

    /// [`Self::pin_g1_bases`] for G2 bases (`b_g2_query`), staged by [`Self::stage_g2`].
    fn pin_g2_bases(&self, bases: &[E::G2Affine]) -> Result<Option<Box<dyn HostPin>>> {
        let _ = bases;
        Ok(None)
    }

    /// In-place NTT of `buf` (length `domain.size`), natural order in and out.
    fn ntt(
        &self,
        lease: &mut Lease,
        buf: ScalarBuf,
        domain: &Domain<E::ScalarField>,
        kind: NttKind,
    ) -> Result<()>;

    /// `dst[i] *= rhs[i]`. `dst` and `rhs` may be the same buffer: it is squared.
    fn mul_assign(&self, lease: &mut Lease, dst: ScalarBuf, rhs: ScalarBuf) -> Result<()>;

    /// `dst[i] = (dst[i] - rhs[i]) * k`. `dst` and `rhs` may be the same buffer: it
    /// is zeroed.
    fn sub_mul_assign(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        rhs: ScalarBuf,
        k: E::ScalarField,
    ) -> Result<()>;

    /// `Σ scalars[i]·bases[i]` over G1; scratch comes from `work`.
    fn msm_g1(&self, work: &mut Lease, bases: &Lease, span: MsmSpan<G1Buf>) -> Result<E::G1>;

    /// `Σ scalars[i]·bases[i]` over G2; scratch comes from `work`.
    fn msm_g2(&self, work: &mut Lease, bases: &Lease, span: MsmSpan<G2Buf>) -> Result<E::G2>;

    /// Waits for every queued operation (used at phase boundaries for timing).
    fn synchronize(&self) -> Result<()> {
        self.device_sync().synchronize()
    }

    /// A marker queued now on the device's compute queue, for timing a region on the
    /// device's own clock ([`DeviceMarker::since`]); `None` when the backend has no
    /// device clock (the CPU backend), and the caller times on the host.
    fn device_marker(&self) -> Result<Option<Box<dyn DeviceMarker>>> {
        Ok(None)
    }

    /// Bytes of a buffer of `len` elements of `kind` laid out for `usage` (a plan
    /// item's size). The default is `element_bytes × len`; a backend that adds its
    /// own precomputation to resident bases counts it here. A size that overflows is
    /// [`Error::InvalidInput`](crate::Error::InvalidInput).
    fn buffer_bytes(&self, kind: ElementKind, len: usize, usage: BufferUse) -> Result<u64> {
        let _ = usage;
        plain_bytes(self.element_bytes(kind), len)
    }

    /// Makes ready, ahead of a key's first proof, every kernel the proofs over `domain`
    /// run (both curves' MSMs, the domain's NTTs and pointwise products), so that the
    /// first proof does not pay for compiling them. [`StagedKey`] calls it once per
    /// key on a thread of its own, beside the key's staging. The default does nothing
    /// (a backend whose kernels are ready when it opens).
    ///
    /// [`StagedKey`]: crate::groth16::StagedKey
    fn warm_up(&self, domain: &Domain<E::ScalarField>) -> Result<()> {
        let _ = domain;
        Ok(())
    }

    /// Free and total memory of the device as its driver reports them now, where the
    /// backend can ask (CUDA: `cuMemGetInfo`), for watching real usage beside the
    /// budget. `None` when the backend cannot say.
    fn device_memory(&self) -> Result<Option<DeviceMemory>> {
        Ok(None)
    }

    /// The rates the schedule chooser predicts this backend's proofs with. The
    /// default is the CPU reference's fit; a backend measures its own (`crucible
    /// plan` prints the predicted time it leads to).
    fn cost_model(&self) -> CostModel {
        CostModel::default()
    }
}

/// Free and total bytes of a device, as its driver reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DeviceMemory {
    /// Bytes free now (all processes counted).
    pub free: u64,
    /// Bytes the device has.
    pub total: u64,
}

/// `element_bytes × len`, or an error naming the overflow.
pub fn plain_bytes(element_bytes: u64, len: usize) -> Result<u64> {
    element_bytes.checked_mul(len as u64).ok_or_else(|| {
        crate::Error::InvalidInput(format!(
            "a buffer of {len} elements of {element_bytes} bytes overflows 64 bits"
        ))
    })
}

/// The allocation phase, written once for every backend: not methods of the trait,
/// so that no backend can override them and go around the budget.
impl<E: PairingCurve> dyn ProverBackend<E> + '_ {
    /// Allocate phase: reserves `plan` from the budget (waiting for room) and returns
    /// the lease every buffer is then allocated through.
    pub fn allocate(&self, plan: MemoryPlan) -> Result<Lease> {
        self.check_plan(&plan)?;
        let permit = self.budget().acquire(plan.total_bytes())?;
        Lease::new(plan, permit, self.device_sync())
    }

    /// Allocates several leases by one budget acquisition (so that the caller never
    /// holds some of them while it waits for room for the rest), one per plan in order.
    pub fn allocate_together(&self, plans: Vec<MemoryPlan>) -> Result<Vec<Lease>> {
        let mut total = 0u64;
        for plan in &plans {
            self.check_plan(plan)?;
            total = total.checked_add(plan.total_bytes()).ok_or_else(|| {
                crate::Error::InvalidInput("plans allocated together overflow u64 bytes".into())
            })?;
        }
        let mut permit = self.budget().acquire(total)?;
        // Each lease owns its share of the permit; a failure drops the leases made so
        // far, which hand their shares back.
        plans
            .into_iter()
            .map(|plan| {
                let share = permit.split_off(plan.total_bytes())?;
                Lease::new(plan, share, self.device_sync())
            })
            .collect()
    }

    /// Allocates `len` scalars from plan item `key`.
    pub fn alloc_scalars(&self, lease: &mut Lease, key: PlanKey, len: usize) -> Result<ScalarBuf> {
        let id = self.alloc(lease, key, ElementKind::Scalar, len, BufferUse::Plain)?;
        Ok(ScalarBuf { id, len })
    }

    /// Allocates `len` 32-bit words from plan item `key`.
    pub fn alloc_indices(&self, lease: &mut Lease, key: PlanKey, len: usize) -> Result<IndexBuf> {
        let id = self.alloc(lease, key, ElementKind::Index, len, BufferUse::Plain)?;
        Ok(IndexBuf { id, len })
    }

    /// Allocates `len` G1 bases laid out for `usage` from plan item `key`.
    pub fn alloc_g1(
        &self,
        lease: &mut Lease,
        key: PlanKey,
        len: usize,
        usage: BufferUse,
    ) -> Result<G1Buf> {
        let id = self.alloc(lease, key, ElementKind::G1, len, usage)?;
        Ok(G1Buf { id, len })
    }

    /// Allocates `len` G2 bases laid out for `usage` from plan item `key`.
    pub fn alloc_g2(
        &self,
        lease: &mut Lease,
        key: PlanKey,
        len: usize,
        usage: BufferUse,
    ) -> Result<G2Buf> {
        let id = self.alloc(lease, key, ElementKind::G2, len, usage)?;
        Ok(G2Buf { id, len })
    }
}

/// Checks that `src` fits the front of `dst` (every `stage_scalars_padded` calls this
/// first).
pub fn check_padded<T>(src: &[T], dst: ScalarBuf) -> Result<()> {
    if src.len() <= dst.len() {
        Ok(())
    } else {
        Err(crate::Error::InvalidInput(format!(
            "staging {} scalars into a buffer of {}",
            src.len(),
            dst.len()
        )))
    }
}

/// Checks that `src_len` elements fit the front of a buffer of `dst_len` (staging
/// bases calls this first).
pub fn check_front(what: &str, src_len: usize, dst_len: usize) -> Result<()> {
    if src_len <= dst_len {
        Ok(())
    } else {
        Err(crate::Error::InvalidInput(format!(
            "staging {src_len} {what} into a buffer of {dst_len}"
        )))
    }
}

/// Checks an [`MsmSpan`] against its buffers' lengths (backends call this first).
pub fn check_span<B>(span: &MsmSpan<B>, bases_len: usize) -> Result<()> {
    let ok = span
        .base_offset
        .checked_add(span.len)
        .is_some_and(|e| e <= bases_len)
        && span
            .scalar_offset
            .checked_add(span.len)
            .is_some_and(|e| e <= span.scalars.len());
    if ok {
        Ok(())
    } else {
        Err(crate::Error::InvalidInput(format!(
            "MSM span out of range: bases {}..+{} of {}, scalars {}..+{} of {}",
            span.base_offset,
            span.len,
            bases_len,
            span.scalar_offset,
            span.len,
            span.scalars.len()
        )))
    }
}

/// Checks a [`ProverBackend::sparse_product`]'s buffers against each other (core
/// calls it before every product; a backend may call it again).
pub fn check_sparse_product(matrix: &SparseMatrixBufs, z: ScalarBuf, out: ScalarBuf) -> Result<()> {
    // A streamed chunk's buffers are sized for the largest chunk: they may hold more
    // row starts than its rows use.
    let ok = matrix
        .first_row
        .checked_add(matrix.rows)
        .is_some_and(|end| end <= out.len())
        && matrix.row_starts.len() > matrix.rows
        && matrix.entries.len() % 2 == 0
        && matrix.coefficients.len() >= 2
        && !z.is_empty()
        && z.id() != out.id();
    if ok {
        Ok(())
    } else {
        Err(crate::Error::InvalidInput(format!(
            "sparse product: {} rows from row {} ({} row starts, {} entry words, {} \
             coefficients) into {} values from an assignment of {}",
            matrix.rows,
            matrix.first_row,
            matrix.row_starts.len(),
            matrix.entries.len(),
            matrix.coefficients.len(),
            out.len(),
            z.len()
        )))
    }
}

/// [`ProverBackend::read_scalars_into`]'s destination must be as long as its source.
pub fn check_read_len<T>(src: ScalarBuf, dst: &[T]) -> Result<()> {
    if dst.len() != src.len() {
        return Err(crate::Error::InvalidInput(format!(
            "read_scalars_into: the destination holds {} scalars, the buffer {}",
            dst.len(),
            src.len()
        )));
    }
    Ok(())
}
