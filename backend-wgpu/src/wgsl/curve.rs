//! What the shader generator needs of a pairing curve, derived from arkworks: the
//! moduli of its two prime fields (Fr for the NTT, Fq for the points) with their limb
//! counts, and the constants of its formulas (G1's 3·b, G2's 3·b' over
//! Fq2 = Fq[u]/(u² + 1)). Every generated module is made from one [`CurveParams`], so
//! a curve is added by naming its arkworks type, never by a copy of the code.
//!
//! # Multiplying by 3b
//!
//! The complete addition (programs.rs) multiplies by 3b twice. Where 3b is a small
//! integer k (BLS12-381's G1: 12, BN254's G1: 9) or k·(1 + u) over Fq2 (BLS12-381's
//! G2: 12 + 12u), the product is a chain of additions; otherwise (BN254's G2:
//! 3b' = 9/(9 + u)) it is Fq products by constants of the curve, the programs'
//! constant table ([`CurveParams::program_constants`]), which each form of the
//! formulas holds in its own Montgomery form.

use ark_ec::short_weierstrass::SWCurveConfig;
use ark_ec::CurveConfig;
use ark_ff::{AdditiveGroup, Field, PrimeField, Zero};
use crucible_core::{ElementKind, PairingCurve};
use num_bigint::BigUint;

use crate::error::WgpuError;
use crate::field::FR_WORDS;

/// A prime field as the generator sees it: its modulus and arkworks' limb count.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldParams {
    modulus: BigUint,
    /// 64-bit limbs of arkworks' `BigInt` (its Montgomery R is 2^(64 · this)).
    u64_limbs: usize,
}

impl FieldParams {
    /// The parameters of arkworks' field `F`.
    pub fn of<F: PrimeField>() -> FieldParams {
        FieldParams {
            modulus: F::MODULUS.into(),
            u64_limbs: F::MODULUS.as_ref().len(),
        }
    }

    /// `x` (below the modulus) as little-endian `u64` limbs, as many as arkworks has.
    pub fn limbs_of(&self, x: &BigUint) -> Vec<u64> {
        let mut limbs = x.to_u64_digits();
        limbs.resize(self.u64_limbs, 0);
        limbs
    }

    /// The modulus, little-endian `u64` limbs.
    pub fn modulus(&self) -> Vec<u64> {
        self.limbs_of(&self.modulus)
    }

    /// Bits of the modulus.
    pub fn modulus_bits(&self) -> u64 {
        self.modulus.bits()
    }

    /// Packed `u32` words of one stored element (arkworks' limbs, halved).
    pub fn packed_words(&self) -> usize {
        2 * self.u64_limbs
    }

    /// arkworks' Montgomery exponent: R = 2^(64 · limbs) = 2^(32 · packed words).
    pub fn ark_r_bits(&self) -> u64 {
        64 * self.u64_limbs as u64
    }

    /// 2^e mod p, as its canonical integer's limbs.
    pub fn pow2(&self, e: u64) -> Vec<u64> {
        self.times_pow2(&BigUint::from(1u32), e)
    }

    /// c·2^e mod p: integer c in Montgomery form with R = 2^e, as limbs.
    pub fn times_pow2(&self, c: &BigUint, e: u64) -> Vec<u64> {
        let x = (c << e) % &self.modulus;
        self.limbs_of(&x)
    }

    /// (a + b) mod p.
    fn add(&self, a: &BigUint, b: &BigUint) -> BigUint {
        (a + b) % &self.modulus
    }
}

/// How a formula multiplies an Fq or Fq2 value by 3b.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum B3 {
    /// By a small integer k, on each coordinate: additions.
    Small(u64),
    /// Over Fq2, by k·(1 + u) with k small: (a0 − a1)·k + (a0 + a1)·k·u, additions.
    SmallOnePlusU(u64),
    /// By a constant of the programs' table: over Fq one product by entry `at`; over
    /// Fq2, c0 + c1·u at `at` and `at + 1`, their sum at `at + 2` (three products).
    Constant(usize),
}

/// Largest k multiplied by additions (about 2·log2(k) of them): beyond, a product.
const SMALL: u64 = 255;

/// `x` as a small integer for [`B3`], if it is one.
fn small(x: &BigUint) -> Option<u64> {
    u64::try_from(x).ok().filter(|k| (2..=SMALL).contains(k))
}

/// What the generator needs of one pairing curve (see the module's documentation).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CurveParams {
    /// The curve's name (`BLS12-381`), for the generated code's comments.
    pub name: &'static str,
    /// The scalar field.
    pub fr: FieldParams,
    /// The base field.
    pub fq: FieldParams,
    /// 3·b of G1 (y² = x³ + b), an integer below q.
    g1_b3: BigUint,
    /// 3·b' of G2, c0 + c1·u, integers below q.
    g2_b3: [BigUint; 2],
}

impl CurveParams {
    /// The parameters of `E`, or why the generated shaders cannot compute on it: both
    /// groups must be y² = x³ + b (a = 0), G2's coordinates Fq[u]/(u² + 1), Fr stored
    /// in [`FR_WORDS`] words, and each modulus below half its Montgomery R (the 16-bit
    /// loop code's sums and products leave one bit of room).
    pub fn of<E: PairingCurve>() -> Result<CurveParams, WgpuError> {
        let unsupported = |why: String| {
            Err(WgpuError::Unsupported(format!(
                "{}: the WGSL generator cannot compute on it: {why}",
                E::CURVE.name()
            )))
        };
        let fr = FieldParams::of::<E::ScalarField>();
        let fq = FieldParams::of::<E::BaseField>();
        if fr.packed_words() != FR_WORDS {
            return unsupported(format!(
                "Fr takes {} words, the kernels' parameters {FR_WORDS}",
                fr.packed_words()
            ));
        }
        for (name, f) in [("Fr", &fr), ("Fq", &fq)] {
            if f.modulus_bits() >= f.ark_r_bits() {
                return unsupported(format!("{name}'s modulus leaves no spare bit"));
            }
        }
        if !E::G1Config::COEFF_A.is_zero() || !E::G2Config::COEFF_A.is_zero() {
            return unsupported("a curve with a ≠ 0".into());
        }
        type G2Base<E> = <<E as PairingCurve>::G2Config as CurveConfig>::BaseField;
        if G2Base::<E>::extension_degree() != 2 {
            return unsupported("G2's coordinates are not in a quadratic extension".into());
        }
        let canonical =
            |x: &<G2Base<E> as Field>::BasePrimeField| -> BigUint { x.into_bigint().into() };
        let coefficients = |x: G2Base<E>| -> Vec<BigUint> {
            x.to_base_prime_field_elements()
                .map(|c| canonical(&c))
                .collect()
        };
        // u² = −1: the Fq2 product of programs.rs (Karatsuba with u² = −1).
        let zero = <G2Base<E> as Field>::BasePrimeField::ZERO;
        let one = <G2Base<E> as Field>::BasePrimeField::ONE;
        let u = G2Base::<E>::from_base_prime_field_elems([zero, one]);
        let minus_one = &fq.modulus - 1u32;
        if u.map(|u| coefficients(u.square())) != Some(vec![minus_one, BigUint::zero()]) {
            return unsupported("Fq2's non-residue is not −1 (u² + 1)".into());
        }
        let three = |x: BigUint| (x * 3u32) % &fq.modulus;
        let g1_b3 = three(E::G1Config::COEFF_B.into_bigint().into());
        let [c0, c1] = <[BigUint; 2]>::try_from(coefficients(E::G2Config::COEFF_B))
            .map_err(|_| WgpuError::Unsupported("G2's b has two coefficients".into()))?;
        let g2_b3 = [three(c0), three(c1)];
        Ok(CurveParams {
            name: E::CURVE.name(),
            fr,
            fq,
            g1_b3,
            g2_b3,
        })
    }

    /// How G1's (`ext` 1) or G2's (`ext` 2) formulas multiply by 3b, and the constants
    /// of the programs' table: G1's, then G2's.
    fn b3_and_constants(&self) -> ([B3; 2], Vec<BigUint>) {
        let mut constants = Vec::new();
        let g1 = match small(&self.g1_b3) {
            Some(k) => B3::Small(k),
            None => {
                constants.push(self.g1_b3.clone());
                B3::Constant(0)
            }
        };
        let [c0, c1] = &self.g2_b3;
        let g2 = match (small(c0), small(c1)) {
            (Some(k), _) if c1.is_zero() => B3::Small(k),
            (Some(k), Some(k1)) if k == k1 => B3::SmallOnePlusU(k),
            _ => {
                let at = constants.len();
                constants.extend([c0.clone(), c1.clone(), self.fq.add(c0, c1)]);
                B3::Constant(at)
            }
        };
        ([g1, g2], constants)
    }

    /// How the formulas over Fq^`ext` multiply by 3b.
    pub(crate) fn b3(&self, ext: usize) -> B3 {
        self.b3_and_constants().0[ext - 1]
    }

    /// Bytes of one element of `kind` in a device buffer (field.rs's layout: a scalar,
    /// an affine point's two coordinates of one or two Fq, a 32-bit index).
    pub fn element_bytes(&self, kind: ElementKind) -> u64 {
        4 * match kind {
            ElementKind::Scalar => self.fr.packed_words(),
            ElementKind::G1 => 2 * self.fq.packed_words(),
            ElementKind::G2 => 4 * self.fq.packed_words(),
            ElementKind::Index => 1,
        } as u64
    }

    /// The Fq constants the programs multiply by (canonical integers below q), in the
    /// order of the programs' constant indices: empty where every 3b is small.
    pub fn program_constants(&self) -> Vec<BigUint> {
        self.b3_and_constants().1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crucible_core::{ark_bn254, Bls12_381, Bn254};

    #[test]
    fn both_curves_are_described_from_arkworks() {
        let bls = CurveParams::of::<Bls12_381>().unwrap();
        assert_eq!((bls.fr.packed_words(), bls.fq.packed_words()), (8, 12));
        assert_eq!(bls.b3(1), B3::Small(12));
        assert_eq!(bls.b3(2), B3::SmallOnePlusU(12));
        assert!(bls.program_constants().is_empty());

        let bn = CurveParams::of::<Bn254>().unwrap();
        assert_eq!((bn.fr.packed_words(), bn.fq.packed_words()), (8, 8));
        assert_eq!((bn.fr.modulus_bits(), bn.fq.modulus_bits()), (254, 254));
        assert_eq!(bn.b3(1), B3::Small(9));
        assert_eq!(bn.b3(2), B3::Constant(0));
        // 3·b' = 9/(9 + u), and the third constant is the sum of the first two.
        let b3 = ark_bn254::g2::Config::COEFF_B * ark_bn254::Fq2::from(3u64);
        let k = bn.program_constants();
        let fq = |x: &BigUint| ark_bn254::Fq::from(x.clone());
        assert_eq!(ark_bn254::Fq2::new(fq(&k[0]), fq(&k[1])), b3);
        assert_eq!(fq(&k[2]), b3.c0 + b3.c1);
        assert_eq!(
            b3 * ark_bn254::Fq2::new(9u64.into(), 1u64.into()),
            ark_bn254::Fq2::from(9u64)
        );
    }

    /// field.rs's layout of arkworks' types, for each curve: BN254's G1 affine point
    /// is 2 × 32 bytes of coordinates, G2's 4 × 32; BLS12-381's 2 × 48 and 4 × 48;
    /// scalars 32 bytes on both.
    #[test]
    fn element_bytes_are_the_device_layout() {
        fn check<E: crate::field::DeviceCurve>(sizes: [u64; 3]) {
            use crate::field::DeviceElement;
            let curve = CurveParams::of::<E>().unwrap();
            let kinds = [ElementKind::Scalar, ElementKind::G1, ElementKind::G2];
            assert_eq!(kinds.map(|k| curve.element_bytes(k)), sizes);
            let words = [
                E::ScalarField::WORDS,
                E::G1Affine::WORDS,
                E::G2Affine::WORDS,
            ];
            assert_eq!(words.map(|w| 4 * w as u64), sizes);
            assert_eq!(curve.element_bytes(ElementKind::Index), 4);
        }
        check::<Bls12_381>([32, 96, 192]);
        check::<Bn254>([32, 64, 128]);
    }

    #[test]
    fn powers_of_two_are_arkworks_montgomery_constants() {
        let bls = CurveParams::of::<Bls12_381>().unwrap();
        assert_eq!(bls.fq.pow2(384), crucible_core::Fq::ONE.0 .0.to_vec());
        let bn = CurveParams::of::<Bn254>().unwrap();
        assert_eq!(bn.fr.pow2(256), ark_bn254::Fr::ONE.0 .0.to_vec());
        assert_eq!(bn.fq.modulus(), ark_bn254::Fq::MODULUS.0.to_vec());
    }
}
