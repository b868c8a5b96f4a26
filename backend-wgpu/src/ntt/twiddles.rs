//! The transforms' power tables: the passes' two small twiddle tables (recomputed per
//! transform in the scratch), and the workgroup path's twiddle table and coset powers,
//! built once per domain and kept in the lease.

use crucible_core::{BufferId, Domain, Lease, NttKind, PlanKey, Result};

use crate::device::context::Context;
use crate::field::FR_WORDS;
use crate::wgsl::params::NttParams;

use super::steps::{Kernel, Step, Table};
use crate::field::{fr_words, DeviceScalar};

/// Plan item of the per-transform power tables (the passes' twiddles, the workgroup
/// path's table seeds and its twiddles of stages across chunks).
pub const TWIDDLES_ITEM: PlanKey = PlanKey::new("wgpu", "ntt_twiddles");

/// Plan item of the workgroup path's twiddle table, kept in the lease.
pub const TABLE_ITEM: PlanKey = PlanKey::new("wgpu", "ntt_twiddle_table");

/// Plan items of the coset forward's powers of g and the coset inverse's powers of
/// g^−1 (times 1/n), kept in the lease.
pub const COSET_ITEM: PlanKey = PlanKey::new("wgpu", "ntt_coset_powers");
/// See [`COSET_ITEM`].
pub const COSET_INV_ITEM: PlanKey = PlanKey::new("wgpu", "ntt_coset_inv_powers");

/// log2 of the low twiddle table's length for a transform of 2^log_n points.
pub fn tw_log_lo(log_n: u32) -> u32 {
    log_n / 2
}

/// Entries of both twiddle tables: w^e for e < n/2 = 2^m is lo[e mod 2^h]·hi[e >> h].
pub fn twiddle_entries(log_n: u32) -> usize {
    if log_n == 0 {
        return 0;
    }
    let m = log_n - 1;
    let h = tw_log_lo(log_n);
    (1usize << h) + (1usize << (m - h))
}

/// log2 of the low coset power table's length: g^i for i < 2^log_n is
/// lo[i mod 2^h]·hi[i >> h].
pub fn coset_log_lo(log_n: u32) -> u32 {
    log_n.div_ceil(2)
}

/// Entries of both coset power tables of a domain of 2^log_n points.
pub fn coset_entries(log_n: u32) -> usize {
    let h = coset_log_lo(log_n);
    (1usize << h) + (1usize << (log_n - h))
}

pub fn fr_bytes(entries: usize) -> u64 {
    (entries * FR_WORDS * 4) as u64
}

/// log2 of the points whose transform's stages all lie inside one chunk: the
/// workgroup path's tiles cover those stages, its twiddle table their roots.
pub fn table_log(log_n: u32, chunk_len: usize) -> u32 {
    log_n.min(chunk_len.trailing_zeros())
}

/// The passes' twiddle tables of the transform's direction into the scratch tables.
pub fn twiddle_step<F: DeviceScalar>(domain: &Domain<F>, inverse: bool, base: NttParams) -> Step {
    Step::plain(
        Kernel::Twiddles,
        NttParams {
            count: twiddle_entries(domain.log_size) as u32,
            h: fr_words(if inverse {
                domain.omega_inv
            } else {
                domain.omega
            }),
            ..base
        },
    )
}

/// Which kept tables a workgroup transform reads.
pub struct KeptTables {
    /// The twiddle table (stages inside chunks exist).
    pub twiddles: bool,
    /// The coset powers of the kind (coset transforms).
    pub coset: bool,
}

pub fn kept_tables<F: DeviceScalar>(
    domain: &Domain<F>,
    kind: NttKind,
    chunk_len: usize,
) -> KeptTables {
    KeptTables {
        twiddles: table_log(domain.log_size, chunk_len) > 0,
        coset: matches!(kind, NttKind::CosetForward | NttKind::CosetInverse),
    }
}

/// The steps that build the twiddle table of `domain`'s transforms over
/// `chunk_len`-element chunks: powers of w' = omega^(n / 2^t), t = table_log, into the
/// scratch tables, then tw[m] = w'^m for m < 2^(t−1).
pub fn twiddle_table_steps<F: DeviceScalar>(domain: &Domain<F>, chunk_len: usize) -> Vec<Step> {
    let t = table_log(domain.log_size, chunk_len);
    let root = domain.omega.pow([1u64 << (domain.log_size - t)]);
    let params = NttParams {
        pow_log_lo: tw_log_lo(t),
        c: fr_words(F::ONE),
        h: fr_words(root),
        ..NttParams::default()
    };
    vec![
        Step::plain(
            Kernel::Powers,
            NttParams {
                count: twiddle_entries(t) as u32,
                ..params
            },
        ),
        Step {
            kernel: Kernel::TwiddleTable,
            params: NttParams {
                count: 1 << (t - 1),
                ..params
            },
            tw: Table::Twiddles,
            pw: Table::Scratch,
        },
    ]
}

/// The root and the factor of the kind's kept coset powers: g for the coset forward,
/// g^−1 times 1/n (premultiplied into the low table) for the coset inverse.
pub fn coset_powers<F: DeviceScalar>(domain: &Domain<F>, kind: NttKind) -> (F, F) {
    if kind == NttKind::CosetInverse {
        (domain.coset_gen_inv, domain.size_inv)
    } else {
        (domain.coset_gen, F::ONE)
    }
}

/// The step that builds the kind's coset powers.
pub fn coset_table_step<F: DeviceScalar>(domain: &Domain<F>, kind: NttKind) -> Step {
    let (root, first) = coset_powers(domain, kind);
    Step {
        kernel: Kernel::Powers,
        params: NttParams {
            count: coset_entries(domain.log_size) as u32,
            pow_log_lo: coset_log_lo(domain.log_size),
            c: fr_words(first),
            h: fr_words(root),
            ..NttParams::default()
        },
        tw: Table::Scratch,
        pw: Table::Coset,
    }
}

/// A table kept in the lease between transforms, and what it holds the powers of (the
/// root's device words): a transform that needs another frees it and builds its own.
pub struct NttTable {
    pub buffer: wgpu::Buffer,
    pub log: u32,
    pub root: [u32; FR_WORDS],
}

/// The kept table of `item` for (log, root) and false if the lease holds it;
/// otherwise a new table of `entries` Fr (another one of the item freed first, which
/// queued transforms may still read: the creation waits for them) and true: the
/// caller builds it.
pub fn kept_table(
    ctx: &Context,
    lease: &mut Lease,
    item: PlanKey,
    (log, root): (u32, [u32; FR_WORDS]),
    entries: usize,
) -> Result<(BufferId, bool)> {
    if let Some(id) = lease.buffer_of(item) {
        let table = lease.get::<NttTable>(id)?;
        if table.log == log && table.root == root {
            return Ok((id, false));
        }
        lease.free(id)?;
    }
    let bytes = fr_bytes(entries);
    let id = lease.allocate(item, bytes, || {
        Ok(NttTable {
            buffer: ctx.create_buffer(item, bytes, wgpu::BufferUsages::STORAGE)?,
            log,
            root,
        })
    })?;
    Ok((id, true))
}

/// The lease's power-table scratch ([`TWIDDLES_ITEM`]) of at least `bytes`, kept
/// between transforms like the tables (its contents are written by the transform that
/// reads them): created at its plan item's size, the largest transform's, unless this
/// one needs more.
pub fn kept_scratch(ctx: &Context, lease: &mut Lease, bytes: u64) -> Result<BufferId> {
    if let Some(id) = lease.buffer_of(TWIDDLES_ITEM) {
        if lease.get::<wgpu::Buffer>(id)?.size() >= bytes {
            return Ok(id);
        }
        lease.free(id)?;
    }
    let planned = lease.plan().bytes_of(TWIDDLES_ITEM);
    let bytes = bytes.max(planned.min(ctx.limits.binding_bytes));
    lease.allocate(TWIDDLES_ITEM, bytes, || {
        Ok(ctx.create_buffer(TWIDDLES_ITEM, bytes, wgpu::BufferUsages::STORAGE)?)
    })
}
