//! A·z, B·z and C·z on the device (kernels/sparse_product.cu): one R1CS matrix, staged
//! once with the key in compressed rows, at the assignment staged for the proof, one
//! thread a row. The matrix's buffers are in the key's lease (or, for a run of a
//! streamed matrix, in the proof's chunk lease), the assignment and the result in the
//! proof's; the kernel runs on the compute stream, after the copies into its buffers
//! on the copy stream (cudarc's buffer events, as for any kernel). A run writes the
//! view of the result from its first row on.

use std::sync::Arc;

use crucible_core::{BufferId, Error, Lease, Result, ScalarBuf, SparseMatrixBufs};
use cudarc::driver::{CudaSlice, CudaStream};

use crate::field::FR_WORDS;
use crate::launch::{self, grid_1d, Dev, Kernels};
use crate::memory::CudaBuffer;

/// The kernel's counts, each a u32 as it takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Counts {
    rows: u32,
    n: u32,
    entry_count: u32,
    coefficient_count: u32,
    z_len: u32,
}

impl Counts {
    /// The counts of a product of `matrix` at `z` into `out` (already checked against
    /// each other), or an error naming the one that does not fit 32 bits.
    fn of(matrix: &SparseMatrixBufs, z: ScalarBuf, out: ScalarBuf) -> Result<Counts> {
        Counts::new(
            matrix.rows,
            out.len() - matrix.first_row,
            matrix.entries.len() / 2,
            matrix.coefficients.len(),
            z.len(),
        )
    }

    /// `rows`, `n` values out, `entries`, `coefficients` and `z_len` as u32s.
    fn new(
        rows: usize,
        n: usize,
        entries: usize,
        coefficients: usize,
        z_len: usize,
    ) -> Result<Counts> {
        let fit = |what: &str, count: usize| {
            u32::try_from(count).map_err(|_| {
                Error::Unsupported(format!(
                    "sparse product: {count} {what} (the kernel counts them with 32 bits)"
                ))
            })
        };
        Ok(Counts {
            rows: fit("rows", rows)?,
            n: fit("values out", n)?,
            entry_count: fit("entries", entries)?,
            coefficient_count: fit("coefficients", coefficients)?,
            z_len: fit("assignment values", z_len)?,
        })
    }
}

/// The device words of buffer `id` of `lease`, checked to hold the `len` elements of
/// `words` words its handle names: what the kernel may read or write there.
fn words_of<'a>(
    lease: &'a Lease,
    id: BufferId,
    len: usize,
    words: usize,
    what: &str,
) -> Result<&'a CudaSlice<u32>> {
    let buf = &lease.get::<CudaBuffer>(id)?.words;
    match len.checked_mul(words) {
        Some(need) if need <= buf.len() => Ok(buf),
        _ => Err(Error::InvalidInput(format!(
            "sparse product: the {what} buffer holds {} words, not the {len} elements of \
             {words} words its handle names",
            buf.len()
        ))),
    }
}

/// `out` from the matrix's first row on = `matrix` · `z`, zero past its rows: the
/// kernel writes the view of `out` that starts there (the rows before it are left as
/// they are, a streamed chunk's).
pub fn sparse_product(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    work: &Lease,
    matrices: &Lease,
    matrix: SparseMatrixBufs,
    z: ScalarBuf,
    out: ScalarBuf,
) -> Result<()> {
    crucible_core::check_sparse_product(&matrix, z, out)?;
    let counts = Counts::of(&matrix, z, out)?;
    let row_starts = words_of(
        matrices,
        matrix.row_starts.id(),
        matrix.row_starts.len(),
        1,
        "row starts",
    )?;
    let entries = words_of(
        matrices,
        matrix.entries.id(),
        matrix.entries.len(),
        1,
        "entries",
    )?;
    let coefficients = words_of(
        matrices,
        matrix.coefficients.id(),
        matrix.coefficients.len(),
        FR_WORDS,
        "coefficients",
    )?;
    let z_words = words_of(work, z.id(), z.len(), FR_WORDS, "assignment")?;
    let out_words = words_of(work, out.id(), out.len(), FR_WORDS, "output")?;
    if counts.n == 0 {
        return Ok(());
    }
    let out_view = out_words.slice(matrix.first_row * FR_WORDS..);
    launch::sparse_product(
        k,
        stream,
        grid_1d(counts.n as usize),
        Dev::view(&out_view),
        Dev::new(row_starts),
        Dev::new(entries),
        Dev::new(coefficients),
        Dev::new(z_words),
        counts.rows,
        counts.n,
        counts.entry_count,
        counts.coefficient_count,
        counts.z_len,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_the_kernels_u32s_and_refuse_what_does_not_fit() {
        assert_eq!(
            Counts::new(100, 1 << 27, 300, 7, 9).unwrap(),
            Counts {
                rows: 100,
                n: 1 << 27,
                entry_count: 300,
                coefficient_count: 7,
                z_len: 9,
            }
        );
        // The most entries a matrix indexes with 32 bits (row starts are u32).
        let max = u32::MAX as usize;
        assert_eq!(Counts::new(1, 1, max, 2, 1).unwrap().entry_count, u32::MAX);
        for (counts, what) in [
            ((1 << 32, 1 << 32, 2, 2, 1), "4294967296 rows"),
            ((1, 1 << 32, 2, 2, 1), "4294967296 values out"),
            ((1, 1, max + 1, 2, 1), "4294967296 entries"),
            ((1, 1, 2, max + 1, 1), "4294967296 coefficients"),
            ((1, 1, 2, 2, max + 1), "4294967296 assignment values"),
        ] {
            let (rows, n, entries, coefficients, z_len) = counts;
            let err = Counts::new(rows, n, entries, coefficients, z_len).unwrap_err();
            assert!(err.to_string().contains(what), "{err}");
        }
    }
}
