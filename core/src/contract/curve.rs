//! The pairing curves crucible's files can name: a circom `.r1cs`/`.wtns` or a snarkjs
//! `.zkey` carries its field primes, and [`Curve`] says whose they are: the value a
//! command dispatches on to the type-level curve ([`PairingCurve`](crate::PairingCurve))
//! it proves or verifies over, and what an error names when a file of one curve meets
//! a key of the other.

use std::fmt;
use std::str::FromStr;

use ark_ff::{BigInt, PrimeField};

/// A pairing-friendly curve named by the files crucible reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Curve {
    /// BLS12-381 (circom `--prime bls12381`, snarkjs' `bls12381`).
    Bls12_381,
    /// BN254, also alt_bn128 (circom's default prime and snarkjs' `bn128`; the curve
    /// of Ethereum's precompiles 0x06–0x08).
    Bn254,
}

impl Curve {
    /// Every curve the files name.
    pub const ALL: [Curve; 2] = [Curve::Bls12_381, Curve::Bn254];

    /// The curve's usual name (`BLS12-381`, `BN254`).
    pub fn name(self) -> &'static str {
        match self {
            Curve::Bls12_381 => "BLS12-381",
            Curve::Bn254 => "BN254",
        }
    }

    /// circom's `--prime` and snarkjs' name for it (`bls12381`, `bn128`).
    pub fn circom_name(self) -> &'static str {
        match self {
            Curve::Bls12_381 => "bls12381",
            Curve::Bn254 => "bn128",
        }
    }

    /// The scalar field's modulus r, little-endian bytes (the order of G1 and G2).
    pub fn scalar_modulus(self) -> Vec<u8> {
        match self {
            Curve::Bls12_381 => le_bytes(ark_bls12_381::Fr::MODULUS),
            Curve::Bn254 => le_bytes(ark_bn254::Fr::MODULUS),
        }
    }

    /// The base field's modulus q, little-endian bytes (the points' coordinates).
    pub fn base_modulus(self) -> Vec<u8> {
        match self {
            Curve::Bls12_381 => le_bytes(ark_bls12_381::Fq::MODULUS),
            Curve::Bn254 => le_bytes(ark_bn254::Fq::MODULUS),
        }
    }

    /// The largest NTT the scalar field has: 2^this (its two-adicity, as
    /// [`Domain::max_log_size`](crate::Domain::max_log_size)).
    pub fn max_log_size(self) -> u32 {
        match self {
            Curve::Bls12_381 => crate::Domain::<ark_bls12_381::Fr>::max_log_size(),
            Curve::Bn254 => crate::Domain::<ark_bn254::Fr>::max_log_size(),
        }
    }

    /// Bytes of a scalar as the files write it (32 on both curves).
    pub fn scalar_bytes(self) -> usize {
        self.scalar_modulus().len()
    }

    /// Bytes of a base-field element as the files write it (48 for BLS12-381, 32 for
    /// BN254).
    pub fn base_bytes(self) -> usize {
        self.base_modulus().len()
    }

    /// The curve whose scalar field has this modulus (little-endian bytes).
    pub fn with_scalar_modulus(le: &[u8]) -> Option<Curve> {
        Curve::ALL.into_iter().find(|c| c.scalar_modulus() == le)
    }

    /// The curve whose base field has this modulus (little-endian bytes).
    pub fn with_base_modulus(le: &[u8]) -> Option<Curve> {
        Curve::ALL.into_iter().find(|c| c.base_modulus() == le)
    }
}

fn le_bytes<const N: usize>(m: BigInt<N>) -> Vec<u8> {
    m.0.iter().flat_map(|limb| limb.to_le_bytes()).collect()
}

impl fmt::Display for Curve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Curve {
    type Err = String;

    /// The usual names and snarkjs' (`bls12-381`, `bls12381`, `bn254`, `bn128`,
    /// `alt_bn128`), in any case.
    fn from_str(s: &str) -> Result<Curve, String> {
        match s.to_ascii_lowercase().as_str() {
            "bls12-381" | "bls12381" | "bls12_381" => Ok(Curve::Bls12_381),
            "bn254" | "bn128" | "alt_bn128" => Ok(Curve::Bn254),
            _ => Err(format!(
                "unknown curve `{s}` (bls12-381 or bn254; snarkjs' bls12381 or bn128)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The moduli against their published decimal values, so a wrong field cannot
    /// hide behind the arkworks constant it came from.
    #[test]
    fn moduli_are_the_published_primes() {
        let decimal = |le: Vec<u8>| {
            let limbs: Vec<u64> = le
                .chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            match limbs.len() {
                4 => BigInt::<4>(limbs.try_into().unwrap()).to_string(),
                6 => BigInt::<6>(limbs.try_into().unwrap()).to_string(),
                n => panic!("{n} limbs"),
            }
        };
        assert_eq!(
            decimal(Curve::Bn254.scalar_modulus()),
            "21888242871839275222246405745257275088548364400416034343698204186575808495617"
        );
        assert_eq!(
            decimal(Curve::Bn254.base_modulus()),
            "21888242871839275222246405745257275088696311157297823662689037894645226208583"
        );
        assert_eq!(
            decimal(Curve::Bls12_381.scalar_modulus()),
            "52435875175126190479447740508185965837690552500527637822603658699938581184513"
        );
        assert_eq!(
            decimal(Curve::Bls12_381.base_modulus()),
            "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629129015664037894272559787"
        );
        assert_eq!(
            (Curve::Bls12_381.base_bytes(), Curve::Bn254.base_bytes()),
            (48, 32)
        );
        assert_eq!(
            (Curve::Bls12_381.scalar_bytes(), Curve::Bn254.scalar_bytes()),
            (32, 32)
        );
    }

    #[test]
    fn each_modulus_names_its_curve_and_no_other() {
        for curve in Curve::ALL {
            assert_eq!(
                Curve::with_scalar_modulus(&curve.scalar_modulus()),
                Some(curve)
            );
            assert_eq!(Curve::with_base_modulus(&curve.base_modulus()), Some(curve));
            // A base modulus is no curve's scalar modulus, and the other way round.
            assert_eq!(Curve::with_scalar_modulus(&curve.base_modulus()), None);
            assert_eq!(Curve::with_base_modulus(&curve.scalar_modulus()), None);
        }
        let mut off_by_one = Curve::Bn254.scalar_modulus();
        off_by_one[0] ^= 1;
        assert_eq!(Curve::with_scalar_modulus(&off_by_one), None);
    }

    #[test]
    fn names_parse_back_to_their_curve() {
        for curve in Curve::ALL {
            assert_eq!(curve.name().parse::<Curve>(), Ok(curve));
            assert_eq!(curve.circom_name().parse::<Curve>(), Ok(curve));
        }
        assert_eq!("alt_bn128".parse::<Curve>(), Ok(Curve::Bn254));
        let err = "secp256k1".parse::<Curve>().unwrap_err();
        assert!(err.contains("secp256k1") && err.contains("bn128"), "{err}");
    }
}
