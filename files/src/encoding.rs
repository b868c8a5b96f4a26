//! Field elements and curve points as iden3's files write them: little-endian
//! integers, plain for `.r1cs`/`.wtns` scalars, Montgomery form (`x·2^384 mod q`) for
//! `.zkey` coordinates, the point at infinity as all zero bytes. Every point decoded
//! here is checked to be on its curve and in the prime-order subgroup. A header's
//! primes name the file's [`Curve`].

use std::io::Read;

use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use ark_ec::AffineRepr;
use ark_ff::BigInt;

use crate::binfile::{Named, SectionReader};
use crate::file_curve::{fq_bytes, g1_bytes, FileCurve};
use crucible_core::curve::Curve;
use crucible_core::{Error, Result};

/// Bytes of a scalar (`Fr`, on both curves).
pub const FR_BYTES: usize = 32;

/// The little-endian bytes of a modulus, to compare with a file's prime field.
pub fn modulus_bytes<const N: usize>(m: BigInt<N>) -> Vec<u8> {
    m.0.iter().flat_map(|l| l.to_le_bytes()).collect()
}

/// A point in `.zkey` form on any curve: x, then y, each decoded by `coordinate`; all
/// zero bytes for the point at infinity. Neither on the curve nor in the subgroup yet.
pub fn zkey_point<C: SWCurveConfig>(
    bytes: &[u8],
    coordinate: impl Fn(&[u8]) -> Option<C::BaseField>,
) -> Result<Affine<C>, PointError> {
    if bytes.iter().all(|b| *b == 0) {
        return Ok(Affine::zero());
    }
    let (x, y) = bytes.split_at(bytes.len() / 2);
    let x = coordinate(x).ok_or(PointError::CoordinateOutOfRange)?;
    let y = coordinate(y).ok_or(PointError::CoordinateOutOfRange)?;
    Ok(Affine::new_unchecked(x, y))
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

/// `p`, when it is on its curve and in the prime-order subgroup.
pub fn checked<P: SWCurveConfig>(p: Affine<P>) -> Result<Affine<P>, PointError> {
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

/// A G1 point of `E` in `.zkey` form (Montgomery x, y; all zeros for infinity),
/// validated.
pub fn g1_zkey<E: FileCurve>(bytes: &[u8]) -> Result<E::G1Affine, PointError> {
    checked(g1_zkey_unchecked::<E>(bytes)?)
}

/// A G1 point in `.zkey` form, checked to be on the curve only (its subgroup is
/// checked later, or was before: `subgroup::outside_subgroup`).
pub fn g1_zkey_on_curve<E: FileCurve>(bytes: &[u8]) -> Result<E::G1Affine, PointError> {
    on_curve(g1_zkey_unchecked::<E>(bytes)?)
}

fn g1_zkey_unchecked<E: FileCurve>(bytes: &[u8]) -> Result<E::G1Affine, PointError> {
    zkey_point(&bytes[..g1_bytes::<E>()], E::fq_montgomery)
}

/// Writes a G1 point in `.zkey` form into `out` (its G1 bytes): the inverse of
/// [`g1_zkey`].
pub fn g1_zkey_bytes<E: FileCurve>(p: &E::G1Affine, out: &mut [u8]) {
    let n = fq_bytes::<E>();
    match p.xy() {
        None => out[..2 * n].fill(0),
        Some((x, y)) => {
            E::put_fq_montgomery(&x, &mut out[..n]);
            E::put_fq_montgomery(&y, &mut out[n..2 * n]);
        }
    }
}

/// Writes a G2 point in `.zkey` form into `out` (its G2 bytes): the inverse of
/// [`g2_zkey`].
pub fn g2_zkey_bytes<E: FileCurve>(p: &E::G2Affine, out: &mut [u8]) {
    let n = fq_bytes::<E>();
    match p.xy() {
        None => out[..4 * n].fill(0),
        Some((x, y)) => {
            let [x0, x1] = E::fq2_parts(&x);
            let [y0, y1] = E::fq2_parts(&y);
            for (i, c) in [x0, x1, y0, y1].iter().enumerate() {
                E::put_fq_montgomery(c, &mut out[i * n..(i + 1) * n]);
            }
        }
    }
}

/// A G2 point of `E` in `.zkey` form (Montgomery x.c0, x.c1, y.c0, y.c1), validated.
pub fn g2_zkey<E: FileCurve>(bytes: &[u8]) -> Result<E::G2Affine, PointError> {
    checked(g2_zkey_unchecked::<E>(bytes)?)
}

/// A G2 point in `.zkey` form, checked to be on the curve only.
pub fn g2_zkey_on_curve<E: FileCurve>(bytes: &[u8]) -> Result<E::G2Affine, PointError> {
    on_curve(g2_zkey_unchecked::<E>(bytes)?)
}

fn g2_zkey_unchecked<E: FileCurve>(bytes: &[u8]) -> Result<E::G2Affine, PointError> {
    let n = fq_bytes::<E>();
    zkey_point(&bytes[..4 * n], |c| {
        Some(E::fq2_from_parts(
            E::fq_montgomery(&c[..n])?,
            E::fq_montgomery(&c[n..])?,
        ))
    })
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

/// Which of a curve's two fields a file's prime is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldRole {
    /// The scalar field (r): `.r1cs` and `.wtns` values, a key's coefficients.
    Scalar,
    /// The base field (q): a key's point coordinates.
    Base,
}

impl std::fmt::Display for FieldRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FieldRole::Scalar => "scalar field",
            FieldRole::Base => "base field",
        })
    }
}

/// The widest field a known curve has, in bytes (BLS12-381's base field).
const WIDEST_FIELD: usize = 48;

/// Reads a prime field header (`n8`, then the prime) and names the curve whose `role`
/// field has that prime.
pub fn read_curve<R: Read>(section: &mut SectionReader<'_, R>, role: FieldRole) -> Result<Curve> {
    let n8 = section.usize32()?;
    // Wider than any known field: corrupt or unknown, and must not size an allocation.
    if n8 > WIDEST_FIELD {
        return Err(section.name.error(format!(
            "its {role} elements are {n8} bytes: neither BLS12-381 nor BN254, the curves crucible reads"
        )));
    }
    let mut prime = vec![0u8; n8];
    section.bytes(&mut prime)?;
    let curve = match role {
        FieldRole::Scalar => Curve::with_scalar_modulus(&prime),
        FieldRole::Base => Curve::with_base_modulus(&prime),
    };
    curve.ok_or_else(|| {
        section.name.error(format!(
            "its {role} prime ({n8} bytes) is neither BLS12-381's nor BN254's, the curves crucible reads"
        ))
    })
}

/// Refuses a file (`what`: "circuit", "witness", "key") whose curve is not the one
/// being proved (`wanted`: the curve of the key, or of the file read first), naming
/// both.
pub fn check_curve(name: &Named, found: Curve, wanted: Curve, what: &str) -> Result<()> {
    if found == wanted {
        return Ok(());
    }
    Err(Error::InvalidInput(format!(
        "{}: a {found} ({}) {what} where {wanted} ({}) is proved: every file of one proof \
         must be on the same curve (circom `--prime {}`, snarkjs' {} powers of tau)",
        name.0,
        found.circom_name(),
        wanted.circom_name(),
        wanted.circom_name(),
        wanted.circom_name(),
    )))
}

/// A plain scalar decoder for [`read_all`](crate::bulk::read_all).
pub fn fr_plain_checked<E: FileCurve>(bytes: &[u8]) -> Result<E::ScalarField, &'static str> {
    E::fr_plain(bytes).ok_or("value is not below the scalar field's modulus")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::{BigInteger, Field, PrimeField, UniformRand};
    use ark_std::rand::{rngs::StdRng, SeedableRng};
    use crucible_core::{Bls12_381, Fr};

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
                Bls12_381::fr_zkey_coefficient(&bytes),
                Some(s * r_inv_squared),
                "stored {s}, seed {seed}"
            );
        }
        // The modulus itself is not a value.
        assert_eq!(
            Bls12_381::fr_zkey_coefficient(&modulus_bytes(Fr::MODULUS)),
            None
        );
    }
}
