//! The sizes of a circuit's matrices in the device layout: what staging them with the
//! key, or streaming them per proof, costs.

/// The sizes of a circuit's matrices in the device layout
/// ([`QapMatrices`](crate::groth16::QapMatrices)), what a schedule that evaluates on the device
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

#[cfg(test)]
mod tests {
    use super::super::fixtures::matrices as sizes;

    #[test]
    fn without_c_a_is_read_twice() {
        assert_eq!(sizes(true).staged(), 3);
        assert_eq!(sizes(true).products(), [0, 1, 2]);
        assert_eq!(sizes(true).product_entries(), 4500);
        assert_eq!(sizes(false).staged(), 2);
        assert_eq!(sizes(false).products(), [0, 1, 0]);
        assert_eq!(sizes(false).product_entries(), 5500);
    }

    #[test]
    fn run_buffers_hold_any_run_of_any_matrix() {
        assert_eq!(sizes(true).run_buffers(512), (513, 1024, 5));
        // A chunk longer than every matrix: the longest matrix whole.
        assert_eq!(sizes(true).run_buffers(1 << 20), (1004, 4000, 5));
    }

    #[test]
    fn streamed_bytes_count_every_run_start_entry_and_coefficient() {
        // A: 2 + 4 runs, B: 2 + 3, C: 2 + 2 (of 512 rows and 512 entries).
        let a = 4 * (1003 + 6) + 8 * 2000 + 32 * 5;
        let b = 4 * (1000 + 5) + 8 * 1500 + 32 * 4;
        let c = 4 * (1000 + 4) + 8 * 1000 + 32 * 3;
        assert_eq!(sizes(true).streamed_bytes(512, 32), a + b + c);
        assert_eq!(sizes(false).streamed_bytes(512, 32), 2 * a + b);
    }
}
