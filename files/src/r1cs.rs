//! circom's `.r1cs` constraint files (iden3 format, version 1): the header (prime,
//! wire and signal counts), the constraints (three sparse linear combinations each)
//! and the wire-to-label map, which a prover does not need.

use std::io::{Read, Seek};
use std::path::Path;
use std::sync::Arc;

use ark_relations::utils::matrix::Matrix;

use crate::binfile::{self, BinFile, SectionReader};
use crate::encoding::{check_curve, read_curve, FieldRole, FR_BYTES};
use crate::file_curve::FileCurve;
use crucible_core::{Bls12_381, Error, ProofShape, Result};

const HEADER: u32 = 1;
const CONSTRAINTS: u32 = 2;
const CUSTOM_GATES_LIST: u32 = 4;
const CUSTOM_GATES_USES: u32 = 5;

/// A circom circuit's constraints `A·z ∘ B·z = C·z` over the wires `z`.
///
/// Wire 0 is the constant one, wires `1..=num_public` the public signals (outputs,
/// then public inputs: the order of snarkjs' `public.json`), the rest private.
#[derive(Clone, Debug, PartialEq)]
pub struct R1cs<E: FileCurve = Bls12_381> {
    /// Wires, the constant one included.
    pub num_wires: usize,
    /// Public signals: outputs plus public inputs (the constant one not counted).
    pub num_public: usize,
    /// Public outputs (the first `num_outputs` public signals).
    pub num_outputs: usize,
    /// Private inputs.
    pub num_private_inputs: usize,
    /// Matrix A: one row per constraint, `(coefficient, wire)` pairs (shared by every
    /// proof of the circuit).
    pub a: Arc<Matrix<E::ScalarField>>,
    /// Matrix B.
    pub b: Arc<Matrix<E::ScalarField>>,
    /// Matrix C.
    pub c: Arc<Matrix<E::ScalarField>>,
}

impl<E: FileCurve> R1cs<E> {
    /// Reads and validates an `.r1cs` file.
    pub fn read(path: &Path) -> Result<R1cs<E>> {
        Self::from_bin(binfile::open(path, b"r1cs", "circom .r1cs", 1)?)
    }

    /// Reads an `.r1cs` from any seekable reader; `name` is used in error messages.
    pub fn from_reader<R: Read + Seek>(reader: R, name: &str) -> Result<R1cs<E>> {
        Self::from_bin(BinFile::new(
            reader,
            binfile::Named(name.to_string()),
            b"r1cs",
            "circom .r1cs",
            1,
        )?)
    }

    fn from_bin<R: Read + Seek>(mut file: BinFile<R>) -> Result<R1cs<E>> {
        if file.has(CUSTOM_GATES_LIST) || file.has(CUSTOM_GATES_USES) {
            return Err(Error::Unsupported(format!(
                "{}: the circuit uses custom gates (circom's PLONK extension); Groth16 needs plain R1CS",
                file.name.0
            )));
        }
        let mut h = file.section(HEADER, "header")?;
        let curve = read_curve(&mut h, FieldRole::Scalar)?;
        check_curve(h.name, curve, E::CURVE, "circuit")?;
        let num_wires = h.usize32()?;
        let num_outputs = h.usize32()?;
        let num_public_inputs = h.usize32()?;
        let num_private_inputs = h.usize32()?;
        let _labels = h.u64()?;
        let num_constraints = h.usize32()?;
        h.finish()?;
        let num_public = num_outputs + num_public_inputs;
        if num_wires < 1 + num_public + num_private_inputs {
            return Err(file.name.error(format!(
                "{num_wires} wires cannot hold the constant one, {num_public} public signals and {num_private_inputs} private inputs"
            )));
        }
        let mut s = file.section(CONSTRAINTS, "constraints")?;
        // Each constraint takes at least its three term counts: a count beyond the
        // section is corrupt, and must not size an allocation.
        if (num_constraints as u64).saturating_mul(12) > s.remaining() {
            return Err(s.name.error(format!(
                "the header claims {num_constraints} constraints, more than the constraints section's {} bytes hold",
                s.remaining()
            )));
        }
        let (mut a, mut b, mut c) = (
            Vec::with_capacity(num_constraints),
            Vec::with_capacity(num_constraints),
            Vec::with_capacity(num_constraints),
        );
        for row in 0..num_constraints {
            a.push(linear_combination::<E, _>(&mut s, row, num_wires)?);
            b.push(linear_combination::<E, _>(&mut s, row, num_wires)?);
            c.push(linear_combination::<E, _>(&mut s, row, num_wires)?);
        }
        s.finish()?;
        Ok(R1cs {
            num_wires,
            num_public,
            num_outputs,
            num_private_inputs,
            a: Arc::new(a),
            b: Arc::new(b),
            c: Arc::new(c),
        })
    }

    /// Number of constraints.
    pub fn num_constraints(&self) -> usize {
        self.a.len()
    }

    /// The proof's sizes: instance = the constant one plus the public signals.
    pub fn shape(&self) -> Result<ProofShape> {
        ProofShape::new(
            self.num_constraints(),
            self.num_public + 1,
            self.num_wires - self.num_public - 1,
        )
    }
}

/// One sparse linear combination: a term count, then (wire u32, coefficient) pairs.
fn linear_combination<E: FileCurve, R: Read>(
    s: &mut SectionReader<'_, R>,
    row: usize,
    num_wires: usize,
) -> Result<Vec<(E::ScalarField, usize)>> {
    let terms = s.usize32()?;
    // Each term takes 36 bytes: a count beyond the section is corrupt, and must not
    // size an allocation.
    if (terms as u64).saturating_mul(4 + FR_BYTES as u64) > s.remaining() {
        return Err(s.name.error(format!(
            "constraint {row} claims {terms} terms, more than the section holds"
        )));
    }
    let mut lc = Vec::with_capacity(terms);
    let mut coeff = [0u8; FR_BYTES];
    for _ in 0..terms {
        let wire = s.usize32()?;
        s.bytes(&mut coeff)?;
        if wire >= num_wires {
            return Err(s.name.error(format!(
                "constraint {row} uses wire {wire}, the circuit has {num_wires}"
            )));
        }
        let value = E::fr_plain(&coeff).ok_or_else(|| {
            s.name.error(format!(
                "constraint {row}: a coefficient of wire {wire} is not below the field's modulus"
            ))
        })?;
        lc.push((value, wire));
    }
    Ok(lc)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `.r1cs` whose header claims `constraints` constraints over an empty
    /// constraints section.
    fn claiming(constraints: u32) -> Vec<u8> {
        let prime = crucible_core::curve::Curve::Bls12_381.scalar_modulus();
        let mut header = (prime.len() as u32).to_le_bytes().to_vec();
        header.extend_from_slice(&prime);
        for count in [2u32, 0, 1, 0] {
            header.extend_from_slice(&count.to_le_bytes()); // wires, outputs, public, private
        }
        header.extend_from_slice(&0u64.to_le_bytes()); // labels
        header.extend_from_slice(&constraints.to_le_bytes());
        let mut file = b"r1cs".to_vec();
        file.extend_from_slice(&1u32.to_le_bytes());
        file.extend_from_slice(&2u32.to_le_bytes());
        file.extend_from_slice(&HEADER.to_le_bytes());
        file.extend_from_slice(&(header.len() as u64).to_le_bytes());
        file.extend_from_slice(&header);
        file.extend_from_slice(&CONSTRAINTS.to_le_bytes());
        file.extend_from_slice(&0u64.to_le_bytes());
        file
    }

    #[test]
    fn a_header_claiming_more_constraints_than_the_file_holds_is_refused_before_allocating() {
        let err = R1cs::<crucible_core::Bls12_381>::from_reader(
            std::io::Cursor::new(claiming(u32::MAX)),
            "huge.r1cs",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("claims 4294967295 constraints"), "{err}");
        let empty = R1cs::<crucible_core::Bls12_381>::from_reader(
            std::io::Cursor::new(claiming(0)),
            "empty.r1cs",
        )
        .unwrap();
        assert_eq!(empty.num_constraints(), 0);
    }

    #[test]
    fn special_files_are_refused_by_kind() {
        let err = R1cs::<crucible_core::Bls12_381>::read(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("a device"), "{err}");
        let err = R1cs::<crucible_core::Bls12_381>::read(&std::env::temp_dir())
            .unwrap_err()
            .to_string();
        assert!(err.contains("a directory"), "{err}");
    }
}
