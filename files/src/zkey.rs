//! snarkjs' Groth16 `.zkey` proving keys (iden3 format, version 1), as arkworks'
//! `ProvingKey` plus the A and B matrices the key carries.
//!
//! Sections: 1 protocol (1 = Groth16), 2 the Groth16 header (primes, sizes, α, β, γ,
//! δ), 3 IC (the verifying key's input points), 4 the A and B coefficients, 5–9 the
//! queries (A, B in G1, B in G2, C = arkworks' `l_query`, H), 10 the ceremony's
//! contributions (not needed to prove). snarkjs appends one row per public signal
//! (and the constant one) to A, as arkworks' reductions do; they are checked here and
//! left out of the matrices.

use std::io::{Read, Seek};
use std::path::Path;
use std::sync::Arc;

use ark_ff::One;
use ark_groth16::VerifyingKey;
use ark_relations::utils::matrix::Matrix;

use crate::binfile::{self, BinFile, SectionReader, Stoppable};
use crate::bulk::read_all;
use crate::encoding::{
    check_curve, g1_zkey, g1_zkey_on_curve, g2_zkey, g2_zkey_on_curve, read_curve, read_one,
    FieldRole, PointError, FR_BYTES,
};
use crate::file_curve::{g1_bytes, g2_bytes, FileCurve};
use crate::subgroup::{key_outside_subgroup, QueryNames};
use crate::validated_keys::{Digesting, ValidatedKeys};
use crate::R1cs;
use crucible_core::curve::Curve;
use crucible_core::groth16::ProvingKey;
use crucible_core::{Bls12_381, Domain, Error, ProofShape, Result};

pub(crate) const PROTOCOL: u32 = 1;
pub(crate) const GROTH16_HEADER: u32 = 2;
pub(crate) const IC: u32 = 3;
pub(crate) const COEFFICIENTS: u32 = 4;
pub(crate) const POINTS_A: u32 = 5;
pub(crate) const POINTS_B1: u32 = 6;
pub(crate) const POINTS_B2: u32 = 7;
pub(crate) const POINTS_C: u32 = 8;
pub(crate) const POINTS_H: u32 = 9;

/// snarkjs' protocol id for Groth16.
pub(crate) const GROTH16: u32 = 1;

/// Whether a read ran the points' subgroup checks ([`Zkey::read_remembering`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubgroupChecks {
    /// They ran, and passed.
    Ran,
    /// The bytes read had passed them before: they were skipped.
    Remembered,
}

/// A `.zkey`'s proving key and the constraint matrices it carries.
///
/// The key's `h_query` has one point per domain element (the circom reduction's
/// quotient is evaluated on the whole odd coset), not the domain size − 1 of an
/// arkworks key. The file has no C matrix: snarkjs' prover takes `C·z = A·z ∘ B·z`.
#[derive(Clone, Debug)]
pub struct Zkey<E: FileCurve = Bls12_381> {
    /// The key, arkworks' own type.
    pub proving_key: ProvingKey<E>,
    /// Public signals (the constant one not counted).
    pub num_public: usize,
    /// Wires, the constant one included.
    pub num_wires: usize,
    /// Constraints of the circuit (without the public-input rows snarkjs appends).
    pub num_constraints: usize,
    /// The evaluation domain's size.
    pub domain_size: usize,
    /// Matrix A, `num_constraints` rows (shared by every proof of the circuit).
    pub a: Arc<Matrix<E::ScalarField>>,
    /// Matrix B, `num_constraints` rows.
    pub b: Arc<Matrix<E::ScalarField>>,
}

/// A `.zkey`'s sizes, read from its header alone: what a server plans a key's memory
/// from before reading the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZkeyHeader {
    /// Wires, the constant one included.
    pub num_wires: usize,
    /// Public signals (the constant one not counted).
    pub num_public: usize,
    /// The evaluation domain's size (a power of two).
    pub domain_size: usize,
    /// The file's length in bytes.
    pub file_bytes: u64,
}

impl ZkeyHeader {
    /// The proof's sizes this key implies: the most constraints its domain holds,
    /// the constant one plus the public signals as instance, the rest as witness.
    pub fn shape(&self) -> Result<ProofShape> {
        let instance = self.num_public + 1;
        ProofShape::new(
            self.domain_size.saturating_sub(instance).max(1),
            instance,
            self.num_wires - instance,
        )
    }
}

impl<E: FileCurve> Zkey<E> {
    /// Reads only the protocol and the Groth16 header of a `.zkey` (a few hundred
    /// bytes): its sizes, checked against each other and against the sections the
    /// file holds, nothing allocated from them.
    pub fn read_header(path: &Path) -> Result<ZkeyHeader> {
        let mut file = binfile::open(path, b"zkey", "snarkjs .zkey", 1)?;
        let file_bytes = file.len();
        let ((num_wires, num_public, domain_size), _) = Self::header(&mut file)?;
        // Every point of the queries is in the file: a header claiming more is corrupt.
        let points = (num_wires as u64)
            .saturating_mul(3 * g1_bytes::<E>() as u64 + g2_bytes::<E>() as u64)
            .saturating_add((domain_size as u64).saturating_mul(g1_bytes::<E>() as u64));
        if points > file_bytes {
            return Err(file.name.error(format!(
                "the header claims {num_wires} wires and a domain of {domain_size}, more points than the file's {file_bytes} bytes hold"
            )));
        }
        Ok(ZkeyHeader {
            num_wires,
            num_public,
            domain_size,
            file_bytes,
        })
    }

    /// The protocol check and the header's sizes (wires, public signals, domain),
    /// checked against each other; the header's reader is left at its points.
    fn header<R: Read + Seek>(
        file: &mut BinFile<R>,
    ) -> Result<((usize, usize, usize), SectionReader<'_, R>)> {
        check_groth16(file)?;
        let name = file.name.clone();
        let mut h = file.section(GROTH16_HEADER, "Groth16 header")?;
        check_curve(h.name, header_curve(&mut h)?, E::CURVE, "key")?;
        let num_wires = h.usize32()?;
        let num_public = h.usize32()?;
        let domain_size = h.usize32()?;
        if num_public + 1 > num_wires {
            return Err(name.error(format!(
                "{num_public} public signals do not fit in {num_wires} wires"
            )));
        }
        if !domain_size.is_power_of_two() {
            return Err(name.error(format!("domain size {domain_size} is not a power of two")));
        }
        Ok(((num_wires, num_public, domain_size), h))
    }

    /// Reads and validates a `.zkey` (every point on its curve and in the subgroup,
    /// every length consistent with the header). The subgroup checks are skipped for
    /// bytes that passed them before, remembered in the cache directory
    /// ([`ValidatedKeys::in_cache`]; see [`Zkey::read_remembering`]).
    pub fn read(path: &Path) -> Result<Zkey<E>> {
        Self::read_remembering(path, &ValidatedKeys::in_cache()).map(|(key, _)| key)
    }

    /// [`Zkey::read`] with the digests of checked keys in `validated`: when the bytes
    /// read digest to one there, the points' subgroup checks (most of the load time)
    /// are skipped; otherwise they run and, passed, the digest is remembered (where
    /// `validated` cannot be written, the checks simply run again next time). Says
    /// which.
    pub fn read_remembering(
        path: &Path,
        validated: &ValidatedKeys,
    ) -> Result<(Zkey<E>, SubgroupChecks)> {
        Self::read_stoppable(path, validated, &|| false)
    }

    /// [`Zkey::read_remembering`] that can be called off: `stop` is asked before every
    /// read from the file (a large section is read in blocks of 64 MiB) and before the
    /// subgroup checks; once it says true (and it must go on saying so) the read ends
    /// with `Ok(None)`, holding nothing. A daemon whose client left does not read on
    /// through gigabytes of key.
    pub fn read_remembering_until(
        path: &Path,
        validated: &ValidatedKeys,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<(Zkey<E>, SubgroupChecks)>> {
        match Self::read_stoppable(path, validated, stop) {
            Err(_) if stop() => Ok(None),
            read => read.map(Some),
        }
    }

    fn read_stoppable(
        path: &Path,
        validated: &ValidatedKeys,
        stop: &dyn Fn() -> bool,
    ) -> Result<(Zkey<E>, SubgroupChecks)> {
        let stoppable = |reader| Digesting::new(Stoppable::new(reader, stop));
        let mut bin = binfile::open_with(path, b"zkey", "snarkjs .zkey", 1, stoppable)?;
        let key = Self::from_bin(&mut bin)?;
        let name = bin.name.clone();
        let digest = bin.into_reader().digest();
        if validated.contains(&digest) {
            return Ok((key, SubgroupChecks::Remembered));
        }
        if stop() {
            return Err(name.error("called off before the subgroup checks"));
        }
        key.check_subgroups(&name)?;
        let _ = validated.remember(&digest);
        Ok((key, SubgroupChecks::Ran))
    }

    /// Reads and validates a `.zkey` from any seekable reader; `name` is used in error
    /// messages.
    pub fn from_reader<R: Read + Seek>(reader: R, name: &str) -> Result<Zkey<E>> {
        let mut bin = BinFile::new(
            reader,
            binfile::Named(name.to_string()),
            b"zkey",
            "snarkjs .zkey",
            1,
        )?;
        let key = Self::from_bin(&mut bin)?;
        key.check_subgroups(&bin.name)?;
        Ok(key)
    }

    /// Every query point in the prime-order subgroup (the header's points were
    /// checked as they were read); the first one outside is named by its section
    /// and index.
    fn check_subgroups(&self, name: &binfile::Named) -> Result<()> {
        const SECTIONS: QueryNames = [
            "IC",
            "points A",
            "points B1",
            "points C",
            "points H",
            "points B2",
        ];
        match key_outside_subgroup(&self.proving_key, SECTIONS) {
            None => Ok(()),
            Some((what, len, i)) => Err(name.error(format!(
                "section `{what}`, element {i} of {len}: {}",
                PointError::NotInSubgroup
            ))),
        }
    }

    /// The key's sections, every point checked to be on its curve (the queries'
    /// subgroups are the caller's to check: [`Zkey::check_subgroups`]).
    fn from_bin<R: Read + Seek>(file: &mut BinFile<R>) -> Result<Zkey<E>> {
        let ((num_wires, num_public, domain_size), mut h) = Self::header(file)?;
        let (g1_len, g2_len) = (g1_bytes::<E>(), g2_bytes::<E>());
        let g1 = |h: &mut SectionReader<'_, R>, what| read_one(h, g1_len, what, g1_zkey::<E>);
        let g2 = |h: &mut SectionReader<'_, R>, what| read_one(h, g2_len, what, g2_zkey::<E>);
        let alpha_g1 = g1(&mut h, "alpha_1")?;
        let beta_g1 = g1(&mut h, "beta_1")?;
        let beta_g2 = g2(&mut h, "beta_2")?;
        let gamma_g2 = g2(&mut h, "gamma_2")?;
        let delta_g1 = g1(&mut h, "delta_1")?;
        let delta_g2 = g2(&mut h, "delta_2")?;
        h.finish()?;

        let points_g1 = |file: &mut BinFile<R>, kind, what, count| -> Result<Vec<E::G1Affine>> {
            let mut s = file.section(kind, what)?;
            let points = read_all(&mut s, count, g1_len, g1_zkey_on_curve::<E>)?;
            s.finish()?;
            Ok(points)
        };
        let gamma_abc_g1 = points_g1(file, IC, "IC", num_public + 1)?;
        let a_query = points_g1(file, POINTS_A, "points A", num_wires)?;
        let b_g1_query = points_g1(file, POINTS_B1, "points B1", num_wires)?;
        let l_query = points_g1(file, POINTS_C, "points C", num_wires - num_public - 1)?;
        let h_query = points_g1(file, POINTS_H, "points H", domain_size)?;
        let mut s = file.section(POINTS_B2, "points B2")?;
        let b_g2_query = read_all(&mut s, num_wires, g2_len, g2_zkey_on_curve::<E>)?;
        s.finish()?;

        let [a, b] = coefficients::<E, _>(file, num_wires, num_public, domain_size)?;
        let num_constraints = a.len();
        let want = Domain::<E::ScalarField>::for_circuit(num_constraints, num_public + 1)?.size;
        if want != domain_size {
            return Err(file.name.error(format!(
                "domain of {domain_size} points for {num_constraints} constraints and {num_public} public signals, which need {want}"
            )));
        }
        Ok(Zkey {
            proving_key: ProvingKey {
                vk: VerifyingKey {
                    alpha_g1,
                    beta_g2,
                    gamma_g2,
                    delta_g2,
                    gamma_abc_g1,
                },
                beta_g1,
                delta_g1,
                a_query,
                b_g1_query,
                b_g2_query,
                h_query,
                l_query,
            },
            num_public,
            num_wires,
            num_constraints,
            domain_size,
            a: Arc::new(a),
            b: Arc::new(b),
        })
    }

    /// Checks that `r1cs` is the circuit this key was made for: the same wires,
    /// public signals and constraints, and the same A and B coefficients row by row.
    /// `zkey_name` and `r1cs_name` name the files in the error.
    pub fn check_matches(&self, r1cs: &R1cs<E>, zkey_name: &str, r1cs_name: &str) -> Result<()> {
        let differ = |what: String| {
            Err(Error::InvalidInput(format!(
                "{zkey_name} was not made for {r1cs_name}: {what}"
            )))
        };
        let counts = [
            ("wires", self.num_wires, r1cs.num_wires),
            ("public signals", self.num_public, r1cs.num_public),
            ("constraints", self.num_constraints, r1cs.num_constraints()),
        ];
        for (what, key, circuit) in counts {
            if key != circuit {
                return differ(format!("the key has {key} {what}, the circuit {circuit}"));
            }
        }
        for (name, key, circuit) in [("A", &self.a, &r1cs.a), ("B", &self.b, &r1cs.b)] {
            if let Some(row) = (0..key.len()).find(|&i| !same_row(&key[i], &circuit[i])) {
                return differ(format!("row {row} of matrix {name} differs"));
            }
        }
        Ok(())
    }
}

/// Refuses a key of another snarkjs protocol than Groth16.
pub(crate) fn check_groth16<R: Read + Seek>(file: &mut BinFile<R>) -> Result<()> {
    let mut s = file.section(PROTOCOL, "protocol")?;
    let protocol = s.u32()?;
    s.finish()?;
    if protocol != GROTH16 {
        return Err(Error::Unsupported(format!(
            "{}: the key is for snarkjs protocol {protocol}, not Groth16 ({GROTH16}): PLONK and FFLONK keys cannot be proved here",
            file.name.0
        )));
    }
    Ok(())
}

/// The curve of a Groth16 header's two primes (the base field's, then the scalar
/// field's), which must be the same curve's.
pub(crate) fn header_curve<R: Read>(h: &mut SectionReader<'_, R>) -> Result<Curve> {
    let base = read_curve(h, FieldRole::Base)?;
    let scalar = read_curve(h, FieldRole::Scalar)?;
    if base != scalar {
        return Err(h.name.error(format!(
            "its base field is {base}'s and its scalar field {scalar}'s: no curve has both"
        )));
    }
    Ok(base)
}

/// The same linear combination, whatever the order of its terms (zero terms ignored).
fn same_row<F: ark_ff::PrimeField>(x: &[(F, usize)], y: &[(F, usize)]) -> bool {
    let sorted = |r: &[(F, usize)]| {
        let mut v: Vec<(usize, F)> = r
            .iter()
            .filter(|(c, _)| !ark_ff::Zero::is_zero(c))
            .map(|&(c, w)| (w, c))
            .collect();
        v.sort_by_key(|(w, _)| *w);
        v
    };
    sorted(x) == sorted(y)
}

/// The coefficient section: `(matrix, row, wire, value)` entries for A (0) and B (1),
/// the public-input rows of A last.
fn coefficients<E: FileCurve, R: Read + Seek>(
    file: &mut BinFile<R>,
    num_wires: usize,
    num_public: usize,
    domain_size: usize,
) -> Result<[Matrix<E::ScalarField>; 2]> {
    let mut s = file.section(COEFFICIENTS, "coefficients")?;
    let count = s.usize32()?;
    let entry = 12 + FR_BYTES;
    if s.remaining() != (count * entry) as u64 {
        return Err(s.name.error(format!(
            "{count} coefficients need {} bytes, the section has {}",
            count * entry,
            s.remaining()
        )));
    }
    let entries = read_all(&mut s, count, entry, |e| {
        let word =
            |i: usize| u32::from_le_bytes(e[4 * i..4 * i + 4].try_into().expect("4")) as usize;
        let (matrix, row, wire) = (word(0), word(1), word(2));
        if matrix > 1 {
            return Err(format!("matrix {matrix} (only A = 0 and B = 1 exist)"));
        }
        if row >= domain_size {
            return Err(format!("row {row} outside the domain of {domain_size}"));
        }
        if wire >= num_wires {
            return Err(format!("wire {wire}, the circuit has {num_wires}"));
        }
        let value = E::fr_zkey_coefficient(&e[12..])
            .ok_or_else(|| "a value not below the field's modulus".to_string())?;
        Ok((matrix, row, wire, value))
    })?;
    s.finish()?;
    let rows = entries.iter().map(|e| e.1 + 1).max().unwrap_or(0);
    let Some(num_constraints) = rows.checked_sub(num_public + 1) else {
        return Err(file.name.error(format!(
            "{rows} coefficient rows cannot end with the {} public-input rows",
            num_public + 1
        )));
    };
    let mut a = vec![Vec::new(); rows];
    let mut b = vec![Vec::new(); rows];
    for (matrix, row, wire, value) in entries {
        let m = if matrix == 0 { &mut a } else { &mut b };
        m[row].push((value, wire));
    }
    for (i, (a_row, b_row)) in a[num_constraints..]
        .iter()
        .zip(&b[num_constraints..])
        .enumerate()
    {
        let is_input_row = matches!(a_row.as_slice(), [(one, wire)] if one.is_one() && *wire == i);
        if !is_input_row || !b_row.is_empty() {
            return Err(file.name.error(format!(
                "row {} should be public signal {i}'s row (A = 1 on wire {i}, nothing in B)",
                num_constraints + i
            )));
        }
    }
    a.truncate(num_constraints);
    b.truncate(num_constraints);
    Ok([a, b])
}
