//! Field elements and curve points as iden3's files write them: little-endian
//! integers, plain for `.r1cs`/`.wtns` scalars, Montgomery form (`x·2^384 mod q`) for
//! `.zkey` coordinates, the point at infinity as all zero bytes. Every point decoded
//! here is checked to be on its curve and in the prime-order subgroup.

use std::io::Read;

use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use ark_ec::AffineRepr;
use ark_ff::{BigInt, PrimeField};

use crate::binfile::SectionReader;
use crucible_core::{Fq, Fr, G1Affine, G2Affine, Result};

/// Bytes of a scalar (`Fr`).
pub const FR_BYTES: usize = 32;
/// Bytes of a base-field element (`Fq`).
pub const FQ_BYTES: usize = 48;
/// Bytes of an affine G1 point (x, y).
pub const G1_BYTES: usize = 2 * FQ_BYTES;
/// Bytes of an affine G2 point (x.c0, x.c1, y.c0, y.c1).
pub const G2_BYTES: usize = 4 * FQ_BYTES;

fn bigint<const N: usize>(bytes: &[u8]) -> BigInt<N> {
    let mut limbs = [0u64; N];
    for (limb, chunk) in limbs.iter_mut().zip(bytes.chunks_exact(8)) {
        *limb = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
    }
    BigInt(limbs)
}

/// The little-endian bytes of a modulus, to compare with a file's prime field.
pub fn modulus_bytes<const N: usize>(m: BigInt<N>) -> Vec<u8> {
    m.0.iter().flat_map(|l| l.to_le_bytes()).collect()
}

/// A scalar written as a plain little-endian integer; `None` when it is not below r.
pub fn fr_plain(bytes: &[u8]) -> Option<Fr> {
    Fr::from_bigint(bigint::<4>(bytes))
}

/// A scalar written as snarkjs writes `.zkey` coefficients: the integer `v·R² mod r`
/// (R = 2^256), so that reading it as a Montgomery form twice gives `v`.
///
/// Taken as Montgomery limbs the integer is the element `v·R`, whose product with
/// the element whose limbs are 1 (`R⁻¹`) is `v`: one multiplication.
pub fn fr_zkey_coefficient(bytes: &[u8]) -> Option<Fr> {
    let stored = bigint::<4>(bytes);
    (stored < Fr::MODULUS)
        .then(|| Fr::new_unchecked(stored) * Fr::new_unchecked(BigInt::from(1u64)))
}

fn fq_montgomery(bytes: &[u8]) -> Option<Fq> {
    let b = bigint::<6>(bytes);
    (b < Fq::MODULUS).then(|| Fq::new_unchecked(b))
}

/// Why a point was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointError {
    /// A coordinate is not below the base field's modulus.
    CoordinateOutOfRange,
    /// `y² ≠ x³ + b`.
    NotOnCurve,
    /// On the curve, outside the prime-order subgroup.
    NotInSubgroup,
}

impl std::fmt::Display for PointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PointError::CoordinateOutOfRange => "a coordinate is not below the field modulus",
            PointError::NotOnCurve => "not on the curve",
            PointError::NotInSubgroup => "not in the prime-order subgroup",
        })
    }
}

fn checked<P: SWCurveConfig>(p: Affine<P>) -> Result<Affine<P>, PointError> {
    let p = on_curve(p)?;
    if !p.is_in_correct_subgroup_assuming_on_curve() {
        return Err(PointError::NotInSubgroup);
    }
    Ok(p)
}

fn on_curve<P: SWCurveConfig>(p: Affine<P>) -> Result<Affine<P>, PointError> {
    if !p.is_zero() && !p.is_on_curve() {
        return Err(PointError::NotOnCurve);
    }
    Ok(p)
}

/// A G1 point in `.zkey` form (Montgomery x, y; all zeros for infinity), validated.
pub fn g1_zkey(bytes: &[u8]) -> Result<G1Affine, PointError> {
    checked(g1_zkey_unchecked(bytes)?)
}

/// A G1 point in `.zkey` form, checked to be on the curve only (its subgroup is
/// checked later, or was before: `subgroup::outside_subgroup`).
pub fn g1_zkey_on_curve(bytes: &[u8]) -> Result<G1Affine, PointError> {
    on_curve(g1_zkey_unchecked(bytes)?)
}

fn g1_zkey_unchecked(bytes: &[u8]) -> Result<G1Affine, PointError> {
    if bytes.iter().all(|b| *b == 0) {
        return Ok(G1Affine::zero());
    }
    let x = fq_montgomery(&bytes[..FQ_BYTES]).ok_or(PointError::CoordinateOutOfRange)?;
    let y = fq_montgomery(&bytes[FQ_BYTES..G1_BYTES]).ok_or(PointError::CoordinateOutOfRange)?;
    Ok(G1Affine::new_unchecked(x, y))
}

/// The `.zkey` form of a base-field element: its Montgomery limbs, little-endian.
fn put_fq_montgomery(x: &Fq, out: &mut [u8]) {
    for (limb, chunk) in x.0 .0.iter().zip(out.chunks_exact_mut(8)) {
        chunk.copy_from_slice(&limb.to_le_bytes());
    }
}

/// Writes a G1 point in `.zkey` form into `out` (`G1_BYTES`): the inverse of [`g1_zkey`].
pub fn g1_zkey_bytes(p: &G1Affine, out: &mut [u8]) {
    match p.xy() {
        None => out[..G1_BYTES].fill(0),
        Some((x, y)) => {
            put_fq_montgomery(&x, &mut out[..FQ_BYTES]);
            put_fq_montgomery(&y, &mut out[FQ_BYTES..G1_BYTES]);
        }
    }
}

/// Writes a G2 point in `.zkey` form into `out` (`G2_BYTES`): the inverse of [`g2_zkey`].
pub fn g2_zkey_bytes(p: &G2Affine, out: &mut [u8]) {
    match p.xy() {
        None => out[..G2_BYTES].fill(0),
        Some((x, y)) => {
            for (i, c) in [x.c0, x.c1, y.c0, y.c1].iter().enumerate() {
                put_fq_montgomery(c, &mut out[i * FQ_BYTES..(i + 1) * FQ_BYTES]);
            }
        }
    }
}

/// A G2 point in `.zkey` form (Montgomery x.c0, x.c1, y.c0, y.c1), validated.
pub fn g2_zkey(bytes: &[u8]) -> Result<G2Affine, PointError> {
    checked(g2_zkey_unchecked(bytes)?)
}

/// A G2 point in `.zkey` form, checked to be on the curve only.
pub fn g2_zkey_on_curve(bytes: &[u8]) -> Result<G2Affine, PointError> {
    on_curve(g2_zkey_unchecked(bytes)?)
}

fn g2_zkey_unchecked(bytes: &[u8]) -> Result<G2Affine, PointError> {
    if bytes.iter().all(|b| *b == 0) {
        return Ok(G2Affine::zero());
    }
    let c = |i: usize| {
        fq_montgomery(&bytes[i * FQ_BYTES..(i + 1) * FQ_BYTES])
            .ok_or(PointError::CoordinateOutOfRange)
    };
    let x = crucible_core::ark_bls12_381::Fq2::new(c(0)?, c(1)?);
    let y = crucible_core::ark_bls12_381::Fq2::new(c(2)?, c(3)?);
    Ok(G2Affine::new_unchecked(x, y))
}

/// Reads one element of `size` bytes from a section and decodes it.
pub fn read_one<R: Read, T, E: std::fmt::Display>(
    section: &mut SectionReader<'_, R>,
    size: usize,
    what: &str,
    decode: impl Fn(&[u8]) -> Result<T, E>,
) -> Result<T> {
    let mut buf = vec![0u8; size];
    section.bytes(&mut buf)?;
    decode(&buf).map_err(|e| section.name.error(format!("{what}: {e}")))
}

/// Checks a prime field header (`n8`, then the prime) against the modulus `want`.
pub fn check_prime<R: Read>(
    section: &mut SectionReader<'_, R>,
    want: &[u8],
    field: &str,
) -> Result<()> {
    let n8 = section.usize32()?;
    if n8 != want.len() {
        return Err(section.name.error(format!(
            "its {field} elements are {n8} bytes, BLS12-381's are {} (compile with `circom --prime bls12381`, or use snarkjs' bls12381 curve)",
            want.len()
        )));
    }
    let mut prime = vec![0u8; n8];
    section.bytes(&mut prime)?;
    if prime != want {
        return Err(section.name.error(format!(
            "its {field} is not BLS12-381's (compile with `circom --prime bls12381`, or use snarkjs' bls12381 curve)"
        )));
    }
    Ok(())
}

/// A plain scalar decoder for [`read_all`].
pub fn fr_plain_checked(bytes: &[u8]) -> Result<Fr, &'static str> {
    fr_plain(bytes).ok_or("value is not below the scalar field's modulus")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::{BigInteger, Field, UniformRand};
    use ark_std::rand::{rngs::StdRng, SeedableRng};

    /// The coefficient decoder against the definition: the stored integer times
    /// R⁻² (R = 2^256), for edge values and random ones.
    #[test]
    fn zkey_coefficients_are_the_stored_integer_over_r_squared() {
        let r_inv_squared = Fr::from(2u64).pow([256]).inverse().unwrap().square();
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut stored: Vec<Fr> = vec![Fr::from(0u64), Fr::from(1u64), -Fr::from(1u64)];
        stored.extend((0..200).map(|_| Fr::rand(&mut rng)));
        for s in stored {
            let mut bytes = s.into_bigint().to_bytes_le();
            bytes.resize(FR_BYTES, 0);
            assert_eq!(
                fr_zkey_coefficient(&bytes),
                Some(s * r_inv_squared),
                "stored {s}, seed {seed}"
            );
        }
        // The modulus itself is not a value.
        assert_eq!(fr_zkey_coefficient(&modulus_bytes(Fr::MODULUS)), None);
    }
}
