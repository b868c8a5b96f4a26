//! Field elements and curve points as iden3's files write them: little-endian
//! integers, plain for `.r1cs`/`.wtns` scalars, Montgomery form (`x·2^384 mod q`) for
//! `.zkey` coordinates, the point at infinity as all zero bytes. Every point decoded
//! here is checked to be on its curve and in the prime-order subgroup. A header's
//! primes name the file's [`Curve`].

use std::io::Read;

use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use ark_ec::AffineRepr;
use ark_ff::{BigInt, Fp, Fp2, Fp2Config, MontBackend, MontConfig, PrimeField};

use crate::binfile::{Named, SectionReader};
use crucible_core::ark_bls12_381::{Fq2, FqConfig};
use crucible_core::curve::Curve;
use crucible_core::{Error, Fq, Fr, G1Affine, G2Affine, Result};

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

/// A base-field element in `.zkey` form (its Montgomery limbs, little-endian, on any
/// curve); `None` when they are not below the modulus.
pub fn fp_montgomery<P: MontConfig<N>, const N: usize>(
    bytes: &[u8],
) -> Option<Fp<MontBackend<P, N>, N>> {
    let b = bigint::<N>(bytes);
    (b < P::MODULUS).then(|| Fp::new_unchecked(b))
}

fn fq_montgomery(bytes: &[u8]) -> Option<Fq> {
    fp_montgomery::<FqConfig, 6>(bytes)
}

/// A quadratic-extension element in `.zkey` form: c0, then c1, each decoded by `fp`.
pub fn fp2_zkey<P: Fp2Config>(bytes: &[u8], fp: impl Fn(&[u8]) -> Option<P::Fp>) -> Option<Fp2<P>> {
    let (c0, c1) = bytes.split_at(bytes.len() / 2);
    Some(Fp2::new(fp(c0)?, fp(c1)?))
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
    zkey_point(&bytes[..G1_BYTES], fq_montgomery)
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
    zkey_point(&bytes[..G2_BYTES], |c| -> Option<Fq2> {
        fp2_zkey(c, fq_montgomery)
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

/// Refuses a file (`what`: "circuit", "witness", "key") on a curve the backends do
/// not prove, naming both curves and how to make a file crucible proves.
pub fn check_proved(name: &Named, curve: Curve, what: &str) -> Result<()> {
    if curve == Curve::PROVED {
        return Ok(());
    }
    let proved = Curve::PROVED;
    Err(Error::Unsupported(format!(
        "{}: a {curve} ({}) {what}; this build proves {proved} only: compile the circuit with \
         `circom --prime {}` and set it up with snarkjs' {} powers of tau ({curve} keys are read \
         to export Ethereum verifiers: `crucible export-verifier`)",
        name.0,
        curve.circom_name(),
        proved.circom_name(),
        proved.circom_name(),
    )))
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
