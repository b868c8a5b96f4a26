//! A sparse matrix times the assignment on the device (`ProverBackend::sparse_product`,
//! the QAP's A·z, B·z and C·z): one thread a row over the compressed rows
//! (shaders/sparse_product.wgsl), in one submission.
//!
//! A buffer larger than one binding is split into chunks (memory.rs), and a column or
//! a coefficient may be anywhere in its buffer, so each chunk of `out` takes one pass
//! per chunk triple of `z`, the coefficients and the entries, each pass adding the
//! entries that fall in its triple (the shader says how each entry is counted once).
//! Where everything fits one binding (the usual case: on the H200 a binding holds 2^26
//! scalars) that is one dispatch per `out` chunk.

use crucible_core::{
    check_sparse_product, ElementKind, Lease, Result, ScalarBuf, SparseMatrixBufs,
};

use crate::device::batch::{Batch, ParamsBuffer};
use crate::device::context::Context;
use crate::error::WgpuError;
use crate::memory::{check_kind, finish, DeviceBuffer};
use crate::wgsl::params::SparseParams;
use crate::wgsl::{Module, NttMul};

/// The kernel's entry point.
pub const ENTRY: &str = "sparse_product";

/// The module the product runs in: the wide Fr code where the NTT's product is the
/// wide one (the adapter's 64-bit integers, the tuning's `ntt_mul`), else fr.wgsl's
/// 16-bit limbs (most entries are ±1, an addition: the product's form matters less
/// than the NTT's).
pub fn module(ctx: &Context) -> Module {
    if ctx.int64 && ctx.tuned.ntt_mul == NttMul::Wide {
        Module::SparseProductWide
    } else {
        Module::SparseProduct
    }
}

/// The pipelines the product runs, for a warm-up.
pub fn pipelines(ctx: &Context) -> Vec<(Module, &'static str)> {
    vec![(module(ctx), ENTRY)]
}

/// The buffers of one product, their kinds checked.
struct Operands<'a> {
    row_starts: &'a DeviceBuffer,
    entries: &'a DeviceBuffer,
    coefficients: &'a DeviceBuffer,
    z: &'a DeviceBuffer,
    out: &'a DeviceBuffer,
}

impl<'a> Operands<'a> {
    fn get(
        work: &'a Lease,
        matrices: &'a Lease,
        matrix: &SparseMatrixBufs,
        z: ScalarBuf,
        out: ScalarBuf,
    ) -> Result<Operands<'a>> {
        let ops = Operands {
            row_starts: matrices.get::<DeviceBuffer>(matrix.row_starts.id())?,
            entries: matrices.get::<DeviceBuffer>(matrix.entries.id())?,
            coefficients: matrices.get::<DeviceBuffer>(matrix.coefficients.id())?,
            z: work.get::<DeviceBuffer>(z.id())?,
            out: work.get::<DeviceBuffer>(out.id())?,
        };
        check_kind(ops.row_starts, ElementKind::Index)?;
        check_kind(ops.entries, ElementKind::Index)?;
        check_kind(ops.coefficients, ElementKind::Scalar)?;
        check_kind(ops.z, ElementKind::Scalar)?;
        check_kind(ops.out, ElementKind::Scalar)?;
        Ok(ops)
    }
}

/// `out` = `matrix` · `z`, zero past the matrix's rows; the dispatches stay queued.
pub fn sparse_product(
    ctx: &Context,
    work: &mut Lease,
    matrices: &Lease,
    matrix: SparseMatrixBufs,
    z: ScalarBuf,
    out: ScalarBuf,
) -> Result<()> {
    check_sparse_product(&matrix, z, out)?;
    if out.is_empty() {
        return Ok(());
    }
    let params = ParamsBuffer::kept(ctx, work)?;
    let result = (|| -> Result<()> {
        let work: &Lease = work;
        let ops = Operands::get(work, matrices, &matrix, z, out)?;
        let mut batch = Batch::new(ctx, Some(work.get::<ParamsBuffer>(params)?), ENTRY);
        record(ctx, &mut batch, &ops, (matrix.first_row, matrix.rows))?;
        batch.submit()?;
        Ok(())
    })();
    match result {
        // The product stays queued; the parameters stay in the lease.
        Ok(()) => Ok(()),
        Err(e) => finish(ctx, work, Err(e), &[params]),
    }
}

/// `value` as a shader index, or why it cannot be one.
fn index(value: usize, what: &str) -> Result<u32, WgpuError> {
    u32::try_from(value).map_err(|_| {
        WgpuError::Unsupported(format!(
            "sparse product: {what} {value} is beyond the shader's 32-bit indices"
        ))
    })
}

/// Records the passes of every `out` chunk from row `first_row` on into `batch`: the
/// matrix's `rows` rows there, zeros after them.
fn record<'a>(
    ctx: &Context,
    batch: &mut Batch<'a>,
    ops: &Operands<'a>,
    (first_row, rows): (usize, usize),
) -> Result<(), WgpuError> {
    let Operands {
        row_starts: starts,
        entries,
        coefficients,
        z,
        out,
    } = *ops;
    if entries.chunks.is_empty() && first_row == 0 {
        // No entry anywhere: every row is zero.
        out.chunks.iter().for_each(|c| batch.clear(c));
        return Ok(());
    }
    // An entry's two words share a chunk, and an `out` chunk's row starts span at most
    // two chunks: true of every binding size a scalar fits in (index chunks hold 8
    // times the elements of scalar chunks), checked all the same.
    if entries.chunk_len < 2 || starts.chunk_len < out.chunk_len {
        return Err(WgpuError::Unsupported(format!(
            "sparse product: index chunks of {} words against scalar chunks of {}",
            entries.chunk_len.min(starts.chunk_len),
            out.chunk_len
        )));
    }
    let pipeline = ctx.pipeline(module(ctx), ENTRY)?;
    let entry_chunk = entries.chunk_len / 2;
    // Each entries chunk: its first entry, its entries and its binding. Without
    // entries (a streamed run of empty rows), one pass of none still writes the rows'
    // zeros from `first_row` on, a row starts chunk standing in for the binding.
    let entry_passes = if entries.chunks.is_empty() {
        vec![(0, 0, &starts.chunks[0])]
    } else {
        entries
            .chunks
            .iter()
            .enumerate()
            .map(|(ec, words)| {
                let base = index(ec * entry_chunk, "entry")?;
                Ok((
                    base,
                    index(entries.chunk_elems(ec) / 2, "entries in a chunk")?,
                    words,
                ))
            })
            .collect::<Result<Vec<_>, WgpuError>>()?
    };
    for (c, out_chunk) in out.chunks.iter().enumerate() {
        let first = c * out.chunk_len;
        let count = out.chunk_elems(c);
        if first + count <= first_row {
            // Before the matrix's rows: another chunk's.
            continue;
        }
        if first >= first_row + rows {
            // Past the matrix: zero, whatever it held.
            batch.clear(out_chunk);
            continue;
        }
        // The matrix's rows in this chunk, from..last, read the starts from..=last.
        let from = first.max(first_row) - first_row;
        let last = (first + count).min(first_row + rows) - first_row;
        let (lo, _) = starts.locate(from);
        let (hi, _) = starts.locate(last);
        let starts_chunk = |i: usize| {
            starts.chunks.get(i).ok_or_else(|| WgpuError::Length {
                what: "sparse product's row starts",
                expected: rows + 1,
                got: starts.len,
            })
        };
        let (starts_lo, starts_hi) = (starts_chunk(lo)?, starts_chunk(hi)?);
        let mut p = SparseParams {
            count: index(count, "rows in a chunk")?,
            base: index(first, "row")?,
            rows: index(rows, "rows")?,
            starts_lo_base: index(lo * starts.chunk_len, "row start")?,
            starts_lo_len: index(starts.chunk_elems(lo), "row starts in a chunk")?,
            starts_hi_base: index(hi * starts.chunk_len, "row start")?,
            first_row: index(first_row, "row")?,
            ..SparseParams::default()
        };
        for (zc, z_chunk) in z.chunks.iter().enumerate() {
            p.z_base = index(zc * z.chunk_len, "column")?;
            p.z_count = index(z.chunk_elems(zc), "columns in a chunk")?;
            for (cc, coeff_chunk) in coefficients.chunks.iter().enumerate() {
                p.coeff_base = index(cc * coefficients.chunk_len, "coefficient")?;
                p.coeff_count = index(coefficients.chunk_elems(cc), "coefficients in a chunk")?;
                p.signs = u32::from(cc == 0);
                for &(entry_base, entry_count, entry_words) in &entry_passes {
                    p.entry_base = entry_base;
                    p.entry_count = entry_count;
                    batch.dispatch(
                        pipeline.clone(),
                        &p,
                        vec![
                            (1, out_chunk),
                            (2, z_chunk),
                            (3, coeff_chunk),
                            (4, entry_words),
                            (5, starts_lo),
                            (6, starts_hi),
                        ],
                        p.count,
                    )?;
                    p.accumulate = 1;
                }
            }
        }
    }
    Ok(())
}
