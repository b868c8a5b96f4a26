//! A Groth16 verifying key on the curve its file names: read from a snarkjs `.zkey`
//! (its header and IC only, however large the key), snarkjs' `verification_key.json`,
//! or arkworks' binary form. What a verifier export starts from.

use std::io::{Read, Seek};
use std::path::Path;

use ark_ec::pairing::Pairing;
use ark_groth16::VerifyingKey;

use crucible_core::curve::Curve;
use crucible_core::{Bls12_381, Bn254, Error, Result};

use crate::artifacts::{is_json, read_binary, read_json};
use crate::binfile::{self, BinFile};
use crate::bulk::read_all;
use crate::encoding::{g1_zkey, g2_zkey, read_one, PointError};
use crate::snarkjs_json::{json_curve, JsonCurve};
use crate::zkey::{check_groth16, header_curve, GROTH16_HEADER, IC};

/// A verifying key of either curve (boxed: the two curves' keys differ in size).
#[derive(Clone, Debug, PartialEq)]
pub enum CurveVerifyingKey {
    /// A BLS12-381 key.
    Bls12_381(Box<VerifyingKey<Bls12_381>>),
    /// A BN254 key.
    Bn254(Box<VerifyingKey<Bn254>>),
}

impl CurveVerifyingKey {
    /// The key's curve.
    pub fn curve(&self) -> Curve {
        match self {
            CurveVerifyingKey::Bls12_381(_) => Curve::Bls12_381,
            CurveVerifyingKey::Bn254(_) => Curve::Bn254,
        }
    }

    /// Public signals the key verifies (the constant one not counted).
    pub fn num_public(&self) -> usize {
        match self {
            CurveVerifyingKey::Bls12_381(vk) => vk.gamma_abc_g1.len() - 1,
            CurveVerifyingKey::Bn254(vk) => vk.gamma_abc_g1.len() - 1,
        }
    }

    /// The verifying key of a snarkjs Groth16 `.zkey`, every point checked on its
    /// curve and in its subgroup.
    pub fn from_zkey(path: &Path) -> Result<CurveVerifyingKey> {
        Self::from_zkey_bin(binfile::open(path, b"zkey", "snarkjs .zkey", 1)?)
    }

    fn from_zkey_bin<R: Read + Seek>(mut file: BinFile<R>) -> Result<CurveVerifyingKey> {
        check_groth16(&mut file)?;
        let curve = header_curve(&mut file.section(GROTH16_HEADER, "Groth16 header")?)?;
        Ok(match curve {
            Curve::Bls12_381 => CurveVerifyingKey::Bls12_381(Box::new(zkey_vk(
                &mut file,
                curve,
                g1_zkey::<Bls12_381>,
                g2_zkey::<Bls12_381>,
            )?)),
            Curve::Bn254 => CurveVerifyingKey::Bn254(Box::new(zkey_vk(
                &mut file,
                curve,
                g1_zkey::<Bn254>,
                g2_zkey::<Bn254>,
            )?)),
        })
    }

    /// A verifying key file: snarkjs' `verification_key.json` for a `*.json` name (its
    /// `curve` field says which), else arkworks' binary `VerifyingKey` (compressed or
    /// not) of either curve.
    pub fn read(path: &Path) -> Result<CurveVerifyingKey> {
        if is_json(path) {
            let (v, name) = (
                read_json(path, "verifying key")?,
                path.display().to_string(),
            );
            // The curve field read once, its points then read on that curve.
            return Ok(match json_curve(&v, &name)? {
                Curve::Bls12_381 => {
                    CurveVerifyingKey::Bls12_381(Box::new(Bls12_381::vk_points(&v, &name)?))
                }
                Curve::Bn254 => CurveVerifyingKey::Bn254(Box::new(Bn254::vk_points(&v, &name)?)),
            });
        }
        // A BN254 point is 32 bytes compressed, a BLS12-381 one 48: a file of one
        // curve's key does not parse, whole and validated, as the other's.
        let bn254 = read_binary(path, "verifying key", Curve::Bn254);
        let bls = || read_binary(path, "verifying key", Curve::Bls12_381);
        match bn254 {
            Ok(vk) => Ok(CurveVerifyingKey::Bn254(Box::new(vk))),
            Err(bn254) => match bls() {
                Ok(vk) => Ok(CurveVerifyingKey::Bls12_381(Box::new(vk))),
                Err(bls) => Err(Error::InvalidInput(format!("{bn254}; {bls}"))),
            },
        }
    }
}

/// The Groth16 header's points and the IC section of a `curve` key.
fn zkey_vk<R: Read + Seek, E: Pairing>(
    file: &mut BinFile<R>,
    curve: Curve,
    g1: impl Fn(&[u8]) -> Result<E::G1Affine, PointError> + Sync,
    g2: impl Fn(&[u8]) -> Result<E::G2Affine, PointError>,
) -> Result<VerifyingKey<E>> {
    let (g1_bytes, g2_bytes) = (2 * curve.base_bytes(), 4 * curve.base_bytes());
    let mut h = file.section(GROTH16_HEADER, "Groth16 header")?;
    header_curve(&mut h)?;
    let _num_wires = h.u32()?;
    let num_public = h.usize32()?;
    let _domain_size = h.u32()?;
    let alpha_g1 = read_one(&mut h, g1_bytes, "alpha_1", &g1)?;
    let _beta_g1 = read_one(&mut h, g1_bytes, "beta_1", &g1)?;
    let beta_g2 = read_one(&mut h, g2_bytes, "beta_2", &g2)?;
    let gamma_g2 = read_one(&mut h, g2_bytes, "gamma_2", &g2)?;
    let _delta_g1 = read_one(&mut h, g1_bytes, "delta_1", &g1)?;
    let delta_g2 = read_one(&mut h, g2_bytes, "delta_2", &g2)?;
    h.finish()?;
    let mut s = file.section(IC, "IC")?;
    let gamma_abc_g1 = read_all(&mut s, num_public + 1, g1_bytes, g1)?;
    s.finish()?;
    Ok(VerifyingKey {
        alpha_g1,
        beta_g2,
        gamma_g2,
        delta_g2,
        gamma_abc_g1,
    })
}
