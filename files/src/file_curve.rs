//! Each proved curve's field elements as iden3's files write them, behind one trait so
//! that the `.zkey`, `.wtns` and `.r1cs` readers are written once for every curve.

use ark_ec::CurveConfig;
use ark_ff::{BigInt, Fp, Fp2, PrimeField};

use crucible_core::{Bls12_381, Bn254, PairingCurve};

/// G2's coordinate field of the curve `E` (the quadratic extension of its base field).
pub type Fq2Of<E> = <<E as PairingCurve>::G2Config as CurveConfig>::BaseField;

/// A curve whose files crucible reads and writes: the decoders of its scalars and of
/// its base-field elements in `.zkey` form.
pub trait FileCurve: PairingCurve {
    /// A base-field element in `.zkey` form (its Montgomery limbs, little-endian);
    /// `None` when they are not below the modulus.
    fn fq_montgomery(bytes: &[u8]) -> Option<Self::BaseField>;
    /// Writes a base-field element in `.zkey` form into `out` (its base bytes).
    fn put_fq_montgomery(x: &Self::BaseField, out: &mut [u8]);
    /// G2's coordinate field as (c0, c1).
    fn fq2_parts(x: &Fq2Of<Self>) -> [Self::BaseField; 2];
    /// G2's coordinate from (c0, c1).
    fn fq2_from_parts(c0: Self::BaseField, c1: Self::BaseField) -> Fq2Of<Self>;
    /// A scalar written as a plain little-endian integer; `None` when it is not below r.
    fn fr_plain(bytes: &[u8]) -> Option<Self::ScalarField>;
    /// A scalar as snarkjs writes `.zkey` coefficients: the integer `v·R² mod r` (R =
    /// 2^256), so that reading it as a Montgomery form twice gives `v`.
    fn fr_zkey_coefficient(bytes: &[u8]) -> Option<Self::ScalarField>;
}

/// Bytes of a base-field element of `E` in its files (48 for BLS12-381, 32 for BN254).
pub fn fq_bytes<E: FileCurve>() -> usize {
    E::CURVE.base_bytes()
}

/// Bytes of an affine G1 point of `E` (x, y).
pub fn g1_bytes<E: FileCurve>() -> usize {
    2 * fq_bytes::<E>()
}

/// Bytes of an affine G2 point of `E` (x.c0, x.c1, y.c0, y.c1).
pub fn g2_bytes<E: FileCurve>() -> usize {
    4 * fq_bytes::<E>()
}

fn bigint<const N: usize>(bytes: &[u8]) -> BigInt<N> {
    let mut limbs = [0u64; N];
    for (limb, chunk) in limbs.iter_mut().zip(bytes.chunks_exact(8)) {
        *limb = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
    }
    BigInt(limbs)
}

macro_rules! file_curve {
    ($curve:ty, $fq:ty, $fq_limbs:literal, $fr:ty) => {
        impl FileCurve for $curve {
            fn fq_montgomery(bytes: &[u8]) -> Option<Self::BaseField> {
                let b = bigint::<$fq_limbs>(bytes);
                (b < <$fq>::MODULUS).then(|| Fp::new_unchecked(b))
            }

            fn put_fq_montgomery(x: &Self::BaseField, out: &mut [u8]) {
                for (limb, chunk) in x.0 .0.iter().zip(out.chunks_exact_mut(8)) {
                    chunk.copy_from_slice(&limb.to_le_bytes());
                }
            }

            fn fq2_parts(x: &Fq2Of<Self>) -> [Self::BaseField; 2] {
                [x.c0, x.c1]
            }

            fn fq2_from_parts(c0: Self::BaseField, c1: Self::BaseField) -> Fq2Of<Self> {
                Fp2::new(c0, c1)
            }

            fn fr_plain(bytes: &[u8]) -> Option<Self::ScalarField> {
                <$fr>::from_bigint(bigint::<4>(bytes))
            }

            // Taken as Montgomery limbs the integer is the element `v·R`, whose product
            // with the element whose limbs are 1 (`R⁻¹`) is `v`: one multiplication.
            fn fr_zkey_coefficient(bytes: &[u8]) -> Option<Self::ScalarField> {
                let stored = bigint::<4>(bytes);
                (stored < <$fr>::MODULUS).then(|| {
                    <$fr>::new_unchecked(stored) * <$fr>::new_unchecked(BigInt::from(1u64))
                })
            }
        }
    };
}

file_curve!(
    Bls12_381,
    crucible_core::ark_bls12_381::Fq,
    6,
    crucible_core::ark_bls12_381::Fr
);
file_curve!(
    Bn254,
    crucible_core::ark_bn254::Fq,
    4,
    crucible_core::ark_bn254::Fr
);
