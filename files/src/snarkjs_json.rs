//! snarkjs' JSON forms of a Groth16 proof (`proof.json`), its public signals
//! (`public.json`) and verifying key (`verification_key.json`), for BLS12-381:
//! decimal strings; points as projective triples with z = 1 (z = 0 with (0, 1) for
//! the point at infinity), G2 coordinates as `[c0, c1]` pairs.

use ark_ec::pairing::Pairing;
use ark_ec::AffineRepr;
use ark_ff::{BigInt, PrimeField, Zero};
use ark_groth16::VerifyingKey;
use serde_json::{json, Value};

use crucible_core::ark_bls12_381::{Fq12, Fq2, Fq6};
use crucible_core::groth16::Proof;
use crucible_core::{Bls12_381, Fq, Fr, G1Affine, G2Affine, Result};

use crate::binfile::Named;

/// snarkjs' name of the curve.
pub const CURVE: &str = "bls12381";

fn fq2(x: &Fq2) -> Value {
    json!([x.c0.to_string(), x.c1.to_string()])
}

fn g1(p: &G1Affine) -> Value {
    match p.xy() {
        Some((x, y)) => json!([x.to_string(), y.to_string(), "1"]),
        None => json!(["0", "1", "0"]),
    }
}

fn g2(p: &G2Affine) -> Value {
    match p.xy() {
        Some((x, y)) => json!([fq2(&x), fq2(&y), ["1", "0"]]),
        None => json!([["0", "0"], ["1", "0"], ["0", "0"]]),
    }
}

fn fq6(x: &Fq6) -> Value {
    json!([fq2(&x.c0), fq2(&x.c1), fq2(&x.c2)])
}

fn fq12(x: &Fq12) -> Value {
    json!([fq6(&x.c0), fq6(&x.c1)])
}

/// A proof as snarkjs writes `proof.json`.
pub fn proof_to_json(proof: &Proof) -> Value {
    json!({
        "pi_a": g1(&proof.a),
        "pi_b": g2(&proof.b),
        "pi_c": g1(&proof.c),
        "protocol": "groth16",
        "curve": CURVE,
    })
}

/// Public signals as snarkjs writes `public.json`.
pub fn public_to_json(inputs: &[Fr]) -> Value {
    Value::Array(
        inputs
            .iter()
            .map(|x| Value::String(x.to_string()))
            .collect(),
    )
}

/// A verifying key as `snarkjs zkey export verificationkey` writes it.
pub fn vk_to_json(vk: &VerifyingKey<Bls12_381>) -> Value {
    let alphabeta = Bls12_381::pairing(vk.alpha_g1, vk.beta_g2).0;
    json!({
        "protocol": "groth16",
        "curve": CURVE,
        "nPublic": vk.gamma_abc_g1.len().saturating_sub(1),
        "vk_alpha_1": g1(&vk.alpha_g1),
        "vk_beta_2": g2(&vk.beta_g2),
        "vk_gamma_2": g2(&vk.gamma_g2),
        "vk_delta_2": g2(&vk.delta_g2),
        "vk_alphabeta_12": fq12(&alphabeta),
        "IC": vk.gamma_abc_g1.iter().map(g1).collect::<Vec<_>>(),
    })
}

/// Reads snarkjs JSON values, naming the file and the field in every error.
struct Reader<'a> {
    name: &'a Named,
}

impl Reader<'_> {
    fn field<'v>(&self, v: &'v Value, key: &str) -> Result<&'v Value> {
        v.get(key)
            .ok_or_else(|| self.name.error(format!("missing field `{key}`")))
    }

    fn array<'v>(&self, v: &'v Value, what: &str, len: Option<usize>) -> Result<&'v [Value]> {
        let a = v
            .as_array()
            .ok_or_else(|| self.name.error(format!("{what} is not an array")))?;
        match len {
            Some(n) if a.len() != n => Err(self
                .name
                .error(format!("{what} has {} elements, expected {n}", a.len()))),
            _ => Ok(a),
        }
    }

    fn number<F: PrimeField<BigInt = BigInt<N>>, const N: usize>(
        &self,
        v: &Value,
        what: &str,
    ) -> Result<F> {
        let s = v
            .as_str()
            .ok_or_else(|| self.name.error(format!("{what} is not a decimal string")))?;
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self
                .name
                .error(format!("{what} `{s}` is not a decimal number")));
        }
        s.parse::<BigInt<N>>()
            .ok()
            .and_then(F::from_bigint)
            .ok_or_else(|| {
                self.name
                    .error(format!("{what} `{s}` is not below the field's modulus"))
            })
    }

    fn fq2(&self, v: &Value, what: &str) -> Result<Fq2> {
        let c = self.array(v, what, Some(2))?;
        Ok(Fq2::new(
            self.number(&c[0], what)?,
            self.number(&c[1], what)?,
        ))
    }

    fn point<P: AffineRepr>(
        &self,
        what: &str,
        z: P::BaseField,
        make: impl FnOnce() -> Result<P>,
    ) -> Result<P> {
        if z.is_zero() {
            return Ok(P::zero());
        }
        if z != <P::BaseField as ark_ff::One>::one() {
            return Err(self.name.error(format!(
                "{what} is not affine (z must be 1, or 0 for the point at infinity)"
            )));
        }
        make()
    }

    fn g1(&self, v: &Value, what: &str) -> Result<G1Affine> {
        let c = self.array(v, what, None)?;
        if c.len() != 2 && c.len() != 3 {
            return Err(self
                .name
                .error(format!("{what} must be [x, y] or [x, y, z]")));
        }
        let z = match c.get(2) {
            Some(z) => self.number::<Fq, 6>(z, what)?,
            None => ark_ff::One::one(),
        };
        self.point(what, z, || {
            let p = G1Affine::new_unchecked(self.number(&c[0], what)?, self.number(&c[1], what)?);
            self.valid(
                p.is_on_curve(),
                p.is_in_correct_subgroup_assuming_on_curve(),
                what,
            )?;
            Ok(p)
        })
    }

    fn g2(&self, v: &Value, what: &str) -> Result<G2Affine> {
        let c = self.array(v, what, None)?;
        if c.len() != 2 && c.len() != 3 {
            return Err(self
                .name
                .error(format!("{what} must be [x, y] or [x, y, z]")));
        }
        let z = match c.get(2) {
            Some(z) => self.fq2(z, what)?,
            None => ark_ff::One::one(),
        };
        self.point(what, z, || {
            let p = G2Affine::new_unchecked(self.fq2(&c[0], what)?, self.fq2(&c[1], what)?);
            self.valid(
                p.is_on_curve(),
                p.is_in_correct_subgroup_assuming_on_curve(),
                what,
            )?;
            Ok(p)
        })
    }

    fn valid(&self, on_curve: bool, in_subgroup: bool, what: &str) -> Result<()> {
        if !on_curve {
            return Err(self.name.error(format!("{what} is not on the curve")));
        }
        if !in_subgroup {
            return Err(self
                .name
                .error(format!("{what} is not in the prime-order subgroup")));
        }
        Ok(())
    }

    fn header(&self, v: &Value) -> Result<()> {
        if let Some(p) = v.get("protocol") {
            if p.as_str() != Some("groth16") {
                return Err(self.name.error(format!("protocol is {p}, not \"groth16\"")));
            }
        }
        if let Some(c) = v.get("curve") {
            if c.as_str() != Some(CURVE) {
                return Err(self.name.error(format!(
                    "curve is {c}, not \"{CURVE}\" (crucible proves over BLS12-381 only)"
                )));
            }
        }
        Ok(())
    }
}

/// Reads a snarkjs `proof.json` value (points checked on the curve and in the
/// subgroup); `name` names the file in errors.
pub fn proof_from_json(v: &Value, name: &str) -> Result<Proof> {
    let name = Named(name.to_string());
    let r = Reader { name: &name };
    r.header(v)?;
    Ok(Proof {
        a: r.g1(r.field(v, "pi_a")?, "pi_a")?,
        b: r.g2(r.field(v, "pi_b")?, "pi_b")?,
        c: r.g1(r.field(v, "pi_c")?, "pi_c")?,
    })
}

/// Reads a snarkjs `public.json` value: decimal strings below r.
pub fn public_from_json(v: &Value, name: &str) -> Result<Vec<Fr>> {
    let name = Named(name.to_string());
    let r = Reader { name: &name };
    r.array(v, "the public signals", None)?
        .iter()
        .enumerate()
        .map(|(i, x)| r.number(x, &format!("public signal {i}")))
        .collect()
}

/// Reads a snarkjs `verification_key.json` value (`vk_alphabeta_12` is derived data
/// and not read); `name` names the file in errors.
pub fn vk_from_json(v: &Value, name: &str) -> Result<VerifyingKey<Bls12_381>> {
    let name = Named(name.to_string());
    let r = Reader { name: &name };
    r.header(v)?;
    let ic = r.array(r.field(v, "IC")?, "IC", None)?;
    if ic.is_empty() {
        return Err(name.error("IC is empty"));
    }
    if let Some(n) = v.get("nPublic") {
        if n.as_u64() != Some(ic.len() as u64 - 1) {
            return Err(name.error(format!(
                "nPublic is {n} but IC has {} points (nPublic + 1 expected)",
                ic.len()
            )));
        }
    }
    Ok(VerifyingKey {
        alpha_g1: r.g1(r.field(v, "vk_alpha_1")?, "vk_alpha_1")?,
        beta_g2: r.g2(r.field(v, "vk_beta_2")?, "vk_beta_2")?,
        gamma_g2: r.g2(r.field(v, "vk_gamma_2")?, "vk_gamma_2")?,
        delta_g2: r.g2(r.field(v, "vk_delta_2")?, "vk_delta_2")?,
        gamma_abc_g1: ic
            .iter()
            .enumerate()
            .map(|(i, p)| r.g1(p, &format!("IC[{i}]")))
            .collect::<Result<_>>()?,
    })
}
