//! Device layout of field elements and points, and conversion to and from arkworks.
//!
//! # Limbs
//!
//! WGSL has only 32-bit integers and no widening multiply. The shaders therefore work
//! on **16-bit limbs, one per `u32`**: a limb product fits a `u32` exactly, and so does
//! every step of the CIOS Montgomery multiplication, `t + a·b + carry ≤ (2^16 − 1) +
//! (2^16 − 1)² + (2^16 − 1) = 2^32 − 1`, so no step needs a carry test or a split
//! multiply. Fr has 16 limbs and Fq 24. (ZPrize 2023's WebGPU MSM used 13-bit limbs to
//! delay carries over several products; 16-bit limbs do one carry per product but need
//! no bound analysis across products and keep R a power of 2^64.)
//!
//! Elements stay in **Montgomery form with arkworks' own R** (2^256 for Fr, 2^384 for
//! Fq), so the device representation is arkworks' `BigInt` limbs, split in halves:
//! buffers hold 32-bit words, two packed 16-bit limbs each (8 words per Fr, 12 per Fq),
//! and the shaders unpack them. Staging and readback are copies, never multiplications.
//!
//! # Points
//!
//! Affine points are `x ‖ y` (Fq2 is `c0 ‖ c1`); the identity is stored as all-zero
//! words, since (0, 0) is on neither curve. Points computed on the device are
//! homogeneous projective `X ‖ Y ‖ Z` (x = X/Z), identity (0 : 1 : 0).
//!
//! The formulas computed on these layouts are assembled as Fq instruction lists in
//! crate::wgsl::programs.

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::AffineRepr;
use ark_ff::{AdditiveGroup, Field, PrimeField, Zero};
use crucible_core::ark_bls12_381::{Fq2, G1Affine, G2Affine};
use crucible_core::limbs::{limbs_to_words, words_to_limbs};
use crucible_core::{ElementKind, Fq, Fr};

use crate::error::WgpuError;

/// Packed `u32` words of one Fr element.
pub const FR_WORDS: usize = 8;
/// Packed `u32` words of one Fq element.
pub const FQ_WORDS: usize = 12;

/// Bytes of one element of `kind` in a device buffer.
pub fn element_bytes(kind: ElementKind) -> u64 {
    4 * match kind {
        ElementKind::Scalar => Fr::WORDS,
        ElementKind::G1 => G1Affine::WORDS,
        ElementKind::G2 => G2Affine::WORDS,
        ElementKind::Index => 1,
    } as u64
}

/// A value with a fixed device layout of `WORDS` packed `u32` words.
pub trait DeviceElement: Sized {
    /// Words per value.
    const WORDS: usize;
    /// Writes the device words of `self` into `out` (`WORDS` long).
    fn write_words(&self, out: &mut [u32]);
    /// Reads a value back; fails on words that are not a valid value.
    fn read_words(words: &[u32]) -> Result<Self, WgpuError>;
}

macro_rules! prime_field_element {
    ($field:ty, $limbs:literal, $name:literal) => {
        impl DeviceElement for $field {
            const WORDS: usize = 2 * $limbs;

            fn write_words(&self, out: &mut [u32]) {
                limbs_to_words(&self.0 .0, &mut out[..Self::WORDS]);
            }

            fn read_words(words: &[u32]) -> Result<Self, WgpuError> {
                let mont = words_to_limbs::<$limbs>(&words[..Self::WORDS]);
                // A Montgomery representative is valid only below the modulus.
                if mont >= <$field>::MODULUS {
                    return Err(WgpuError::Corrupt { what: $name });
                }
                Ok(<$field>::new_unchecked(mont))
            }
        }
    };
}

prime_field_element!(Fr, 4, "Fr element");
prime_field_element!(Fq, 6, "Fq element");

impl DeviceElement for Fq2 {
    const WORDS: usize = 2 * FQ_WORDS;

    fn write_words(&self, out: &mut [u32]) {
        self.c0.write_words(&mut out[..FQ_WORDS]);
        self.c1.write_words(&mut out[FQ_WORDS..2 * FQ_WORDS]);
    }

    fn read_words(words: &[u32]) -> Result<Self, WgpuError> {
        Ok(Fq2::new(
            Fq::read_words(&words[..FQ_WORDS])?,
            Fq::read_words(&words[FQ_WORDS..2 * FQ_WORDS])?,
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
pub fn fr_words(x: Fr) -> [u32; FR_WORDS] {
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

    #[test]
    fn words_round_trip() {
        let x = -Fr::from(7u64);
        let mut w = [0u32; FR_WORDS];
        x.write_words(&mut w);
        assert_eq!(Fr::read_words(&w).unwrap(), x);
    }
}
