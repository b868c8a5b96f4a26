//! A·z, B·z and C·z on the host's cores: each row of a staged sparse matrix at the
//! staged assignment, in parallel.

use ark_ff::PrimeField;
use crucible_core::groth16::row_value;
use crucible_core::{Lease, Result, ScalarBuf, SparseMatrixBufs};
use rayon::prelude::*;

/// Rows a task evaluates.
const BLOCK_ROWS: usize = 1 << 12;

/// `out` from the matrix's first row on = `matrix` · `z`, zero past its rows; the rows
/// before its first are left as they are (a streamed chunk).
pub fn sparse_product<F: PrimeField>(
    work: &mut Lease,
    matrices: &Lease,
    matrix: SparseMatrixBufs,
    z: ScalarBuf,
    out: ScalarBuf,
) -> Result<()> {
    crucible_core::check_sparse_product(&matrix, z, out)?;
    let row_starts = matrices.get::<Vec<u32>>(matrix.row_starts.id())?;
    let entries = matrices.get::<Vec<u32>>(matrix.entries.id())?;
    let coefficients = matrices.get::<Vec<F>>(matrix.coefficients.id())?;
    let [z, out] = work.get_disjoint_mut::<Vec<F>, 2>([z.id(), out.id()])?;
    let z: &[F] = z;
    out[matrix.first_row..]
        .par_chunks_mut(BLOCK_ROWS)
        .enumerate()
        .for_each(|(block, values)| {
            for (i, v) in values.iter_mut().enumerate() {
                let r = block * BLOCK_ROWS + i;
                *v = if r < matrix.rows {
                    row_value(row_starts, entries, coefficients, r, z)
                } else {
                    F::zero()
                };
            }
        });
    Ok(())
}
