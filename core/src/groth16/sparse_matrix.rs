//! The R1CS matrices in the layout a device evaluates them from: compressed rows of
//! 32-bit words, each entry a column and an index into the matrix's distinct
//! coefficients (in real circuits nearly every coefficient is one of a few values,
//! so an entry takes 8 bytes where arkworks' `(Fr, usize)` takes 40). Built once per
//! circuit, in parallel; staged once with the key ([`super::Evaluation::Device`]), or
//! streamed per proof in runs of rows ([`super::Evaluation::DeviceStreamed`]).

use ark_ff::PrimeField;
use std::collections::{HashMap, HashSet};

use ark_relations::utils::matrix::Matrix;
use rayon::prelude::*;

use super::schedule::MatrixSizes;
use super::Evaluations;
use crate::{Error, Fr, ProofShape, Result};

/// Rows handled together by the parallel loops (small enough to balance, large
/// enough that the per-block work dwarfs its scheduling).
const BLOCK_ROWS: usize = 1 << 12;

/// One matrix, rows compressed; every column and coefficient index checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseMatrix<F = Fr> {
    row_starts: Vec<u32>,
    entries: Vec<u32>,
    coefficients: Vec<F>,
}

impl<F: PrimeField> SparseMatrix<F> {
    /// `rows`, then `identity_rows` rows of one entry each (row `rows.len() + i` is
    /// `1 · z[i]`: the instance rows ark-groth16 appends to A), over `columns` columns.
    /// Fails when a column is out of range or the matrix has 2^32 entries or more.
    pub fn new(rows: &[Vec<(F, usize)>], identity_rows: usize, columns: usize) -> Result<Self> {
        let total_rows = rows.len() + identity_rows;
        if identity_rows > columns {
            return Err(Error::InvalidInput(format!(
                "{identity_rows} instance rows over {columns} columns"
            )));
        }
        let row_len = |r: usize| rows.get(r).map_or(1, Vec::len);
        let mut row_starts = Vec::with_capacity(total_rows + 1);
        let mut at = 0u64;
        row_starts.push(0u32);
        for r in 0..total_rows {
            at += row_len(r) as u64;
            let start = u32::try_from(at).map_err(|_| {
                Error::Unsupported(format!(
                    "a matrix of {at} or more entries (the device layout indexes entries with 32 bits)"
                ))
            })?;
            row_starts.push(start);
        }
        if let Some(bad) = rows.par_iter().enumerate().find_map_any(|(r, row)| {
            row.iter()
                .find(|(_, col)| *col >= columns)
                .map(|e| (r, e.1))
        }) {
            return Err(Error::InvalidInput(format!(
                "row {} names variable {} of {columns}",
                bad.0, bad.1
            )));
        }
        let coefficients = distinct_coefficients(rows);
        let index: HashMap<F, u32> = coefficients
            .iter()
            .enumerate()
            .map(|(i, c)| (*c, i as u32))
            .collect();
        let mut entries = vec![0u32; 2 * at as usize];
        // Blocks of rows own disjoint runs of `entries`.
        let mut slices = Vec::with_capacity(total_rows.div_ceil(BLOCK_ROWS));
        let mut rest = entries.as_mut_slice();
        for first in (0..total_rows).step_by(BLOCK_ROWS) {
            let last = (first + BLOCK_ROWS).min(total_rows);
            let words = 2 * (row_starts[last] - row_starts[first]) as usize;
            let (block, tail) = rest.split_at_mut(words);
            slices.push((first, last, block));
            rest = tail;
        }
        slices.into_par_iter().for_each(|(first, last, block)| {
            let mut w = 0;
            for r in first..last {
                match rows.get(r) {
                    Some(row) => {
                        for (coeff, col) in row {
                            block[w] = *col as u32;
                            block[w + 1] = index[coeff];
                            w += 2;
                        }
                    }
                    None => {
                        block[w] = (r - rows.len()) as u32;
                        block[w + 1] = 0;
                        w += 2;
                    }
                }
            }
        });
        Ok(SparseMatrix {
            row_starts,
            entries,
            coefficients,
        })
    }

    /// Rows of the matrix.
    pub fn rows(&self) -> usize {
        self.row_starts.len() - 1
    }

    /// Entries (non-zero coefficients).
    pub fn len(&self) -> usize {
        self.entries.len() / 2
    }

    /// Whether the matrix has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `rows + 1` offsets into the entries.
    pub fn row_starts(&self) -> &[u32] {
        &self.row_starts
    }

    /// Two words an entry: column, coefficient index.
    pub fn entry_words(&self) -> &[u32] {
        &self.entries
    }

    /// The distinct coefficients: one, minus one, then the others.
    pub fn coefficients(&self) -> &[F] {
        &self.coefficients
    }

    /// Entries of the longest row.
    pub fn longest_row(&self) -> usize {
        self.row_starts
            .par_windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .max()
            .unwrap_or(0)
    }

    /// The matrix cut into runs of rows of at most `most` rows and `most` entries
    /// each, in order (what a proof streams one at a time where the matrices are not
    /// staged with the key); an error where one row alone has more than `most`.
    pub fn row_chunks(&self, most: usize) -> Result<Vec<std::ops::Range<usize>>> {
        let most = most.max(1);
        let mut chunks = Vec::new();
        let mut first = 0;
        while first < self.rows() {
            let start = self.row_starts[first] as usize;
            let mut end = first;
            while end < self.rows()
                && end - first < most
                && self.row_starts[end + 1] as usize - start <= most
            {
                end += 1;
            }
            if end == first {
                return Err(Error::InvalidInput(format!(
                    "row {first} has {} entries, more than a streamed chunk's {most}",
                    self.row_starts[first + 1] - self.row_starts[first]
                )));
            }
            chunks.push(first..end);
            first = end;
        }
        Ok(chunks)
    }

    /// The row starts of `rows` (a run of [`SparseMatrix::row_chunks`]), counted from
    /// their first entry: `rows.len() + 1` offsets.
    pub fn chunk_row_starts(&self, rows: std::ops::Range<usize>) -> Vec<u32> {
        let base = self.row_starts[rows.start];
        self.row_starts[rows.start..=rows.end]
            .iter()
            .map(|s| s - base)
            .collect()
    }

    /// The entry words of `rows` (a run of [`SparseMatrix::row_chunks`]).
    pub fn chunk_entry_words(&self, rows: std::ops::Range<usize>) -> &[u32] {
        let (start, end) = (self.row_starts[rows.start], self.row_starts[rows.end]);
        &self.entries[2 * start as usize..2 * end as usize]
    }

    /// `out[r]` = row `r` at `z` for every row, in parallel (`out` as long as the
    /// matrix has rows, `z` covering every column).
    pub fn evaluate_into(&self, z: &[F], out: &mut [F]) {
        out.par_chunks_mut(BLOCK_ROWS)
            .enumerate()
            .for_each(|(block, values)| {
                for (i, v) in values.iter_mut().enumerate() {
                    *v = row_value(
                        &self.row_starts,
                        &self.entries,
                        &self.coefficients,
                        block * BLOCK_ROWS + i,
                        z,
                    );
                }
            });
    }
}

/// Row `r` of a matrix in the device layout ([`crate::SparseMatrixBufs`]) at `z`:
/// the host's form of every backend's sparse product.
pub fn row_value<F: PrimeField>(
    row_starts: &[u32],
    entries: &[u32],
    coefficients: &[F],
    r: usize,
    z: &[F],
) -> F {
    let (start, end) = (row_starts[r] as usize, row_starts[r + 1] as usize);
    let mut sum = F::zero();
    for e in entries[2 * start..2 * end].chunks_exact(2) {
        let value = z[e[0] as usize];
        match e[1] {
            0 => sum += value,
            1 => sum -= value,
            i => sum += coefficients[i as usize] * value,
        }
    }
    sum
}

/// One, minus one, then every other coefficient of `rows` once, in a fixed order.
fn distinct_coefficients<F: PrimeField>(rows: &[Vec<(F, usize)>]) -> Vec<F> {
    let (one, minus_one) = (F::ONE, -F::ONE);
    let others: HashSet<F> = rows
        .par_chunks(BLOCK_ROWS)
        .fold(HashSet::new, |mut set, block| {
            for (c, _) in block.iter().flatten() {
                if *c != one && *c != minus_one {
                    set.insert(*c);
                }
            }
            set
        })
        .reduce(HashSet::new, |mut a, b| {
            a.extend(b);
            a
        });
    let mut others: Vec<F> = others.into_iter().collect();
    others.sort_unstable();
    [one, minus_one].into_iter().chain(others).collect()
}

/// A circuit's A, B and C in the device layout, with the sizes they were built for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QapMatrices<F = Fr> {
    /// The circuit's sizes.
    pub shape: ProofShape,
    /// A with the instance rows appended (`constraints + instance` rows), as
    /// ark-groth16's evaluation lays A·z over the domain.
    pub a: SparseMatrix<F>,
    /// B (`constraints` rows).
    pub b: SparseMatrix<F>,
    /// C (`constraints` rows); `None` where C·z is A·z ∘ B·z row by row (snarkjs'
    /// prover takes it so from a `.zkey`, which carries no C).
    pub c: Option<SparseMatrix<F>>,
}

impl<F: PrimeField> QapMatrices<F> {
    /// The layout of `shape`'s matrices `a`, `b` and `c` (each one row a constraint).
    pub fn new(
        shape: ProofShape,
        a: &Matrix<F>,
        b: &Matrix<F>,
        c: Option<&Matrix<F>>,
    ) -> Result<QapMatrices<F>> {
        let m = shape.num_constraints;
        for (name, rows) in [("A", Some(a)), ("B", Some(b)), ("C", c)] {
            if let Some(rows) = rows {
                if rows.len() != m {
                    return Err(Error::InvalidInput(format!(
                        "matrix {name} has {} rows for {m} constraints",
                        rows.len()
                    )));
                }
            }
        }
        let vars = shape.num_variables();
        let (a, (b, c)) = rayon::join(
            || SparseMatrix::new(a, shape.num_instance, vars),
            || {
                rayon::join(
                    || SparseMatrix::new(b, 0, vars),
                    || c.map(|c| SparseMatrix::new(c, 0, vars)).transpose(),
                )
            },
        );
        Ok(QapMatrices {
            shape,
            a: a?,
            b: b?,
            c: c?,
        })
    }

    /// The sizes a schedule plans the staged matrices with.
    pub fn sizes(&self) -> MatrixSizes {
        let c = self.c.as_ref();
        MatrixSizes {
            rows: [
                self.a.rows(),
                self.b.rows(),
                c.map_or(0, SparseMatrix::rows),
            ],
            entries: [self.a.len(), self.b.len(), c.map_or(0, SparseMatrix::len)],
            coefficients: [
                self.a.coefficients().len(),
                self.b.coefficients().len(),
                c.map_or(0, |c| c.coefficients().len()),
            ],
            has_c: c.is_some(),
            longest_row: self
                .staged()
                .map(SparseMatrix::longest_row)
                .max()
                .unwrap_or(0),
        }
    }

    /// The staged matrices in order: A, B, then C where there is one.
    pub fn staged(&self) -> impl Iterator<Item = &SparseMatrix<F>> {
        [Some(&self.a), Some(&self.b), self.c.as_ref()]
            .into_iter()
            .flatten()
    }

    /// Entries of the three matrices together (what staging them costs, with the row
    /// starts and coefficients).
    pub fn entries(&self) -> usize {
        self.a.len() + self.b.len() + self.c.as_ref().map_or(0, SparseMatrix::len)
    }

    /// A·z, B·z and C·z on the host, in parallel, laid out as [`super::evaluate`] lays
    /// them; checks every constraint holds (`C·z` taken as `A·z ∘ B·z` has nothing
    /// to check).
    pub fn evaluate(&self, z: &[F]) -> Result<Evaluations<F>> {
        let shape = &self.shape;
        if z.len() != shape.num_variables() {
            return Err(Error::InvalidInput(format!(
                "assignment has {} values for {} variables",
                z.len(),
                shape.num_variables()
            )));
        }
        let m = shape.num_constraints;
        let mut a = vec![F::zero(); self.a.rows()];
        let mut b = vec![F::zero(); m];
        let mut c = vec![F::zero(); m];
        self.a.evaluate_into(z, &mut a);
        self.b.evaluate_into(z, &mut b);
        match &self.c {
            Some(matrix) => {
                matrix.evaluate_into(z, &mut c);
                if let Some(bad) = (0..m).into_par_iter().find_first(|&i| a[i] * b[i] != c[i]) {
                    return Err(Error::InvalidInput(format!(
                        "the witness does not satisfy constraint {bad} of {m}"
                    )));
                }
            }
            None => c
                .par_iter_mut()
                .enumerate()
                .for_each(|(i, c)| *c = a[i] * b[i]),
        }
        Ok(Evaluations { a, b, c })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Fr;
    use ark_ff::Field;

    /// Rows of the given lengths over 3 columns, coefficient one.
    fn matrix(lengths: &[usize]) -> SparseMatrix {
        let rows: Vec<Vec<(Fr, usize)>> = lengths
            .iter()
            .map(|&len| (0..len).map(|i| (Fr::ONE, i % 3)).collect())
            .collect();
        SparseMatrix::new(&rows, 0, 3).unwrap()
    }

    #[test]
    fn runs_cover_every_row_once_in_order_within_their_bounds() {
        let lengths = [0, 2, 5, 1, 0, 0, 0, 0, 3, 4, 1, 1, 1, 0, 2];
        let m = matrix(&lengths);
        for most in [5, 6, 7, 9, 100] {
            let runs = m.row_chunks(most).unwrap();
            let mut next = 0;
            for run in &runs {
                assert_eq!(run.start, next, "most {most}: {runs:?}");
                assert!(
                    !run.is_empty() && run.len() <= most,
                    "most {most}: {runs:?}"
                );
                let entries = m.chunk_entry_words(run.clone()).len() / 2;
                assert!(entries <= most, "most {most}: {runs:?}");
                let starts = m.chunk_row_starts(run.clone());
                assert_eq!(starts.len(), run.len() + 1);
                assert_eq!(starts[0], 0);
                for (i, r) in run.clone().enumerate() {
                    assert_eq!((starts[i + 1] - starts[i]) as usize, lengths[r]);
                }
                next = run.end;
            }
            assert_eq!(next, lengths.len(), "most {most}");
        }
        // Each run as long as the bounds allow: five rows at most.
        assert_eq!(m.row_chunks(5).unwrap()[0], 0..2);
        assert_eq!(m.longest_row(), 5);
    }

    #[test]
    fn a_row_longer_than_a_run_is_refused_and_an_empty_matrix_has_no_run() {
        let err = matrix(&[1, 4, 1]).row_chunks(3).unwrap_err();
        assert!(err.to_string().contains("row 1 has 4 entries"), "{err}");
        assert!(matrix(&[]).row_chunks(4).unwrap().is_empty());
        assert_eq!(matrix(&[]).longest_row(), 0);
    }
}
