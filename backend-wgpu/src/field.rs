//! Device layout of field elements and points, and conversion to and from arkworks,
//! for any pairing curve whose fields arkworks builds as Montgomery prime fields and
//! their quadratic extension ([`DeviceCurve`]: BLS12-381 and BN254).
//!
//! # Limbs
//!
//! WGSL has only 32-bit integers and no widening multiply. The loop code therefore
//! works on **16-bit limbs, one per `u32`**: a limb product fits a `u32` exactly, and so
//! does every step of the CIOS Montgomery multiplication, `t + a·b + carry ≤ (2^16 − 1) +
//! (2^16 − 1)² + (2^16 − 1) = 2^32 − 1`, so no step needs a carry test or a split
//! multiply. Fr has 16 limbs on both curves, Fq 24 on BLS12-381 and 16 on BN254.
//! (ZPrize 2023's WebGPU MSM used 13-bit limbs to delay carries over several products;
//! 16-bit limbs do one carry per product but need no bound analysis across products and
//! keep R a power of 2^64.)
//!
//! Elements stay in **Montgomery form with arkworks' own R** (2^(64·limbs): 2^256 for
//! Fr, 2^384 for BLS12-381's Fq, 2^256 for BN254's), so the device representation is
//! arkworks' `BigInt` limbs, split in halves: buffers hold 32-bit words, two packed
//! 16-bit limbs each (8 words per Fr, 12 or 8 per Fq), and the shaders unpack them.
//! Staging and readback are copies, never multiplications.
//!
//! # Points
//!
//! Affine points are `x ‖ y` (Fq2 is `c0 ‖ c1`); the identity is stored as all-zero
//! words, since (0, 0) is on neither curve's groups (b ≠ 0). Points computed on the
//! device are homogeneous projective `X ‖ Y ‖ Z` (x = X/Z), identity (0 : 1 : 0).
//!
//! The formulas computed on these layouts are assembled as Fq instruction lists in
//! crate::wgsl::programs.

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::{AffineRepr, CurveConfig};
use ark_ff::{
    AdditiveGroup, Field, Fp, MontBackend, MontConfig, PrimeField, QuadExtConfig, QuadExtField,
    Zero,
};
use crucible_core::limbs::{limbs_to_words, words_to_limbs};
use crucible_core::PairingCurve;

use crate::error::WgpuError;

/// Packed `u32` words of one Fr element (both curves' Fr have four 64-bit limbs; the
/// kernels' parameter blocks hold Fr constants of this size).
pub const FR_WORDS: usize = 8;

/// A pairing curve whose scalars, coordinates and G2 coordinates have a device layout:
/// every curve arkworks builds from Montgomery prime fields and their quadratic
/// extension (BLS12-381, BN254).
pub trait DeviceCurve:
    PairingCurve<
    ScalarField: DeviceElement,
    BaseField: DeviceElement,
    G2Config: CurveConfig<BaseField: DeviceElement>,
>
{
}

impl<E> DeviceCurve for E where
    E: PairingCurve<
        ScalarField: DeviceElement,
        BaseField: DeviceElement,
        G2Config: CurveConfig<BaseField: DeviceElement>,
    >
{
}

/// A scalar field with a device layout: what the NTT and the pointwise products
/// compute on.
pub trait DeviceScalar: PrimeField + DeviceElement {}

impl<F: PrimeField + DeviceElement> DeviceScalar for F {}

/// A value with a fixed device layout of `WORDS` packed `u32` words.
pub trait DeviceElement: Sized {
    /// Words per value.
    const WORDS: usize;
    /// Writes the device words of `self` into `out` (`WORDS` long).
    fn write_words(&self, out: &mut [u32]);
    /// Reads a value back; fails on words that are not a valid value.
    fn read_words(words: &[u32]) -> Result<Self, WgpuError>;
}

/// A prime field element: arkworks' Montgomery limbs as words.
impl<T: MontConfig<N>, const N: usize> DeviceElement for Fp<MontBackend<T, N>, N> {
    const WORDS: usize = 2 * N;

    fn write_words(&self, out: &mut [u32]) {
        limbs_to_words(&self.0 .0, &mut out[..Self::WORDS]);
    }

    fn read_words(words: &[u32]) -> Result<Self, WgpuError> {
        let mont = words_to_limbs::<N>(&words[..Self::WORDS]);
        // A Montgomery representative is valid only below the modulus.
        if mont >= Self::MODULUS {
            return Err(WgpuError::Corrupt {
                what: "field element",
            });
        }
        Ok(Self::new_unchecked(mont))
    }
}

/// A quadratic extension element (Fq2): `c0 ‖ c1`.
impl<P: QuadExtConfig> DeviceElement for QuadExtField<P>
where
    P::BaseField: DeviceElement,
{
    const WORDS: usize = 2 * P::BaseField::WORDS;

    fn write_words(&self, out: &mut [u32]) {
        let n = P::BaseField::WORDS;
        self.c0.write_words(&mut out[..n]);
        self.c1.write_words(&mut out[n..2 * n]);
    }

    fn read_words(words: &[u32]) -> Result<Self, WgpuError> {
        let n = P::BaseField::WORDS;
        Ok(QuadExtField::new(
            P::BaseField::read_words(&words[..n])?,
            P::BaseField::read_words(&words[n..2 * n])?,
        ))
    }
}

impl<P: SWCurveConfig> DeviceElement for Affine<P>
where
    P::BaseField: DeviceElement,
{
    const WORDS: usize = 2 * P::BaseField::WORDS;

    fn write_words(&self, out: &mut [u32]) {
        let n = P::BaseField::WORDS;
        match self.xy() {
            Some((x, y)) => {
                x.write_words(&mut out[..n]);
                y.write_words(&mut out[n..2 * n]);
            }
            None => out[..2 * n].fill(0),
        }
    }

    fn read_words(words: &[u32]) -> Result<Self, WgpuError> {
        let n = P::BaseField::WORDS;
        if words[..2 * n].iter().all(|w| *w == 0) {
            return Ok(Self::identity());
        }
        let x = P::BaseField::read_words(&words[..n])?;
        let y = P::BaseField::read_words(&words[n..2 * n])?;
        Ok(Affine::new_unchecked(x, y))
    }
}

/// A sparse matrix's index words (row starts, entries) are stored as they are.
impl DeviceElement for u32 {
    const WORDS: usize = 1;

    fn write_words(&self, out: &mut [u32]) {
        out[0] = *self;
    }

    fn read_words(words: &[u32]) -> Result<Self, WgpuError> {
        Ok(words[0])
    }
}

/// Words of one homogeneous projective point over `P`'s base field.
pub const fn projective_words<P: SWCurveConfig>() -> usize
where
    P::BaseField: DeviceElement,
{
    3 * P::BaseField::WORDS
}

/// Writes arkworks' Jacobian `p` as the device's homogeneous (X : Y : Z).
pub fn write_projective<P: SWCurveConfig>(p: &Projective<P>, out: &mut [u32])
where
    P::BaseField: DeviceElement,
{
    let n = P::BaseField::WORDS;
    // Jacobian (X, Y, Z) is x = X/Z², y = Y/Z³; homogeneous (X·Z, Y, Z³) is the same point.
    let (x, y, z) = if p.z.is_zero() {
        (P::BaseField::ZERO, P::BaseField::ONE, P::BaseField::ZERO)
    } else {
        (p.x * p.z, p.y, p.z.square() * p.z)
    };
    x.write_words(&mut out[..n]);
    y.write_words(&mut out[n..2 * n]);
    z.write_words(&mut out[2 * n..3 * n]);
}

/// Reads the device's homogeneous (X : Y : Z) as arkworks' Jacobian point.
pub fn read_projective<P: SWCurveConfig>(words: &[u32]) -> Result<Projective<P>, WgpuError>
where
    P::BaseField: DeviceElement,
{
    let n = P::BaseField::WORDS;
    let x = P::BaseField::read_words(&words[..n])?;
    let y = P::BaseField::read_words(&words[n..2 * n])?;
    let z = P::BaseField::read_words(&words[2 * n..3 * n])?;
    if z.is_zero() {
        return Ok(Projective::zero());
    }
    // x = X/Z, y = Y/Z is Jacobian (X·Z, Y·Z², Z): (XZ)/Z² = X/Z, (YZ²)/Z³ = Y/Z.
    Ok(Projective::new_unchecked(x * z, y * z.square(), z))
}

/// `x` as the device's words (arkworks' Montgomery form), for a kernel's parameters.
pub fn fr_words<F: DeviceElement>(x: F) -> [u32; FR_WORDS] {
    let mut w = [0u32; FR_WORDS];
    x.write_words(&mut w);
    w
}

/// Packs a slice of values into device words.
pub fn to_words<T: DeviceElement>(values: &[T]) -> Vec<u32> {
    let mut words = vec![0u32; values.len() * T::WORDS];
    for (v, out) in values.iter().zip(words.chunks_exact_mut(T::WORDS)) {
        v.write_words(out);
    }
    words
}

/// Unpacks device words into values.
pub fn from_words<T: DeviceElement>(words: &[u32]) -> Result<Vec<T>, WgpuError> {
    words.chunks_exact(T::WORDS).map(T::read_words).collect()
}
#[cfg(test)]
mod tests {
    use super::*;

    use crucible_core::ark_bn254;
    use crucible_core::Fr;

    #[test]
    fn words_round_trip() {
        let x = -Fr::from(7u64);
        let mut w = [0u32; FR_WORDS];
        x.write_words(&mut w);
        assert_eq!(Fr::read_words(&w).unwrap(), x);
        let y = ark_bn254::Fq2::new((-3i64).into(), 5u64.into());
        let mut w = [0u32; 16];
        y.write_words(&mut w);
        assert_eq!(ark_bn254::Fq2::read_words(&w).unwrap(), y);
        assert!(ark_bn254::Fq::read_words(&[u32::MAX; 8]).is_err());
    }
}
