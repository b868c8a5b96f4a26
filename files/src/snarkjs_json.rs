//! snarkjs' JSON forms of a Groth16 proof (`proof.json`), its public signals
//! (`public.json`) and verifying key (`verification_key.json`), on either curve:
//! decimal strings; points as projective triples with z = 1 (z = 0 with (0, 1) for
//! the point at infinity), G2 coordinates as `[c0, c1]` pairs.

use ark_ec::pairing::Pairing;
use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use ark_ec::AffineRepr;
use ark_ff::{
    Field, Fp, Fp12, Fp12Config, Fp2, Fp2Config, Fp6, Fp6Config, FpConfig, One, PrimeField, Zero,
};
use ark_groth16::VerifyingKey;
use serde_json::{json, Value};

use crucible_core::curve::Curve;
use crucible_core::groth16::Proof;
use crucible_core::{Bls12_381, Bn254, Result};

use crate::binfile::Named;
use crate::file_curve::{FileCurve, Fq2Of};

fn g1<E: FileCurve>(p: &E::G1Affine) -> Value {
    match p.xy() {
        Some((x, y)) => json!([x.to_string(), y.to_string(), "1"]),
        None => json!(["0", "1", "0"]),
    }
}

fn g2<E: FileCurve>(p: &E::G2Affine) -> Value {
    let pair = |c: &Fq2Of<E>| {
        let [c0, c1] = E::fq2_parts(c);
        json!([c0.to_string(), c1.to_string()])
    };
    match p.xy() {
        Some((x, y)) => json!([pair(&x), pair(&y), ["1", "0"]]),
        None => json!([["0", "0"], ["1", "0"], ["0", "0"]]),
    }
}

fn fq2<P: Fp2Config>(x: &Fp2<P>) -> Value {
    json!([x.c0.to_string(), x.c1.to_string()])
}

fn fq6<P: Fp6Config>(x: &Fp6<P>) -> Value {
    json!([fq2(&x.c0), fq2(&x.c1), fq2(&x.c2)])
}

/// An element of the pairing's target field as snarkjs writes `vk_alphabeta_12`: both
/// curves' towers are Fq2[v]/(v³ − ξ), then [w]/(w² − v).
fn fq12<P: Fp12Config>(x: &Fp12<P>) -> Value {
    json!([fq6(&x.c0), fq6(&x.c1)])
}

/// A proof as snarkjs writes `proof.json` (`curve`: `bls12381` or `bn128`).
pub fn proof_to_json<E: FileCurve>(proof: &Proof<E>) -> Value {
    json!({
        "pi_a": g1::<E>(&proof.a),
        "pi_b": g2::<E>(&proof.b),
        "pi_c": g1::<E>(&proof.c),
        "protocol": "groth16",
        "curve": E::CURVE.circom_name(),
    })
}

/// Public signals as snarkjs writes `public.json`.
pub fn public_to_json<F: PrimeField>(inputs: &[F]) -> Value {
    Value::Array(
        inputs
            .iter()
            .map(|x| Value::String(x.to_string()))
            .collect(),
    )
}

/// A verifying key as `snarkjs zkey export verificationkey` writes it.
pub fn vk_to_json<E: JsonCurve>(vk: &VerifyingKey<E>) -> Value {
    json!({
        "protocol": "groth16",
        "curve": E::CURVE.circom_name(),
        "nPublic": vk.gamma_abc_g1.len().saturating_sub(1),
        "vk_alpha_1": g1::<E>(&vk.alpha_g1),
        "vk_beta_2": g2::<E>(&vk.beta_g2),
        "vk_gamma_2": g2::<E>(&vk.gamma_g2),
        "vk_delta_2": g2::<E>(&vk.delta_g2),
        "vk_alphabeta_12": E::alphabeta_json(vk),
        "IC": vk.gamma_abc_g1.iter().map(g1::<E>).collect::<Vec<_>>(),
    })
}

/// Reads snarkjs JSON values, naming the file and the field in every error.
pub(crate) struct Reader<'a> {
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

    fn number<F: PrimeField>(&self, v: &Value, what: &str) -> Result<F> {
        let s = v
            .as_str()
            .ok_or_else(|| self.name.error(format!("{what} is not a decimal string")))?;
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self
                .name
                .error(format!("{what} `{s}` is not a decimal number")));
        }
        s.parse::<F::BigInt>()
            .ok()
            .and_then(F::from_bigint)
            .ok_or_else(|| {
                self.name
                    .error(format!("{what} `{s}` is not below the field's modulus"))
            })
    }

    /// A point as `[x, y]` or `[x, y, z]` with z = 1 (z = 0 for the point at
    /// infinity), on its curve and in its prime-order subgroup.
    fn point<C: SWCurveConfig>(&self, v: &Value, what: &str) -> Result<Affine<C>>
    where
        C::BaseField: Coordinate,
    {
        let c = self.array(v, what, None)?;
        if c.len() != 2 && c.len() != 3 {
            return Err(self
                .name
                .error(format!("{what} must be [x, y] or [x, y, z]")));
        }
        let z = match c.get(2) {
            Some(z) => C::BaseField::read(self, z, what)?,
            None => C::BaseField::one(),
        };
        if z.is_zero() {
            return Ok(Affine::zero());
        }
        if !z.is_one() {
            return Err(self.name.error(format!(
                "{what} is not affine (z must be 1, or 0 for the point at infinity)"
            )));
        }
        let p = Affine::<C>::new_unchecked(
            C::BaseField::read(self, &c[0], what)?,
            C::BaseField::read(self, &c[1], what)?,
        );
        self.valid(
            p.is_on_curve(),
            p.is_in_correct_subgroup_assuming_on_curve(),
            what,
        )?;
        Ok(p)
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

    /// Checks the protocol, and names the file's curve (`curve`, BLS12-381 when the
    /// field is absent).
    fn header(&self, v: &Value) -> Result<Curve> {
        if let Some(p) = v.get("protocol") {
            if p.as_str() != Some("groth16") {
                return Err(self.name.error(format!("protocol is {p}, not \"groth16\"")));
            }
        }
        match v.get("curve") {
            None => Ok(Curve::Bls12_381),
            Some(c) => c.as_str().and_then(|c| c.parse().ok()).ok_or_else(|| {
                self.name.error(format!(
                    "curve is {c}, neither \"bls12381\" nor \"bn128\" (BN254)"
                ))
            }),
        }
    }

    /// [`Reader::header`], refusing a curve other than `wanted`.
    fn header_of(&self, v: &Value, wanted: Curve) -> Result<()> {
        crate::encoding::check_curve(self.name, self.header(v)?, wanted, "file")
    }
}

/// A coordinate as snarkjs' JSON writes it: a decimal string, or `[c0, c1]` in G2.
pub(crate) trait Coordinate: Field {
    fn read(r: &Reader<'_>, v: &Value, what: &str) -> Result<Self>;
}

impl<P: FpConfig<N>, const N: usize> Coordinate for Fp<P, N> {
    fn read(r: &Reader<'_>, v: &Value, what: &str) -> Result<Self> {
        r.number(v, what)
    }
}

impl<P: Fp2Config> Coordinate for Fp2<P>
where
    P::Fp: Coordinate,
{
    fn read(r: &Reader<'_>, v: &Value, what: &str) -> Result<Self> {
        let c = r.array(v, what, Some(2))?;
        Ok(Fp2::new(
            P::Fp::read(r, &c[0], what)?,
            P::Fp::read(r, &c[1], what)?,
        ))
    }
}

/// A curve whose points snarkjs' JSON forms carry (BLS12-381 and BN254): reads a
/// proof's and a verifying key's points on it.
pub trait JsonCurve: FileCurve {
    /// The points of a `proof.json` value (each checked on the curve and in its
    /// subgroup), whatever its `curve` field says; `name` names the file in errors.
    fn proof_points(v: &Value, name: &str) -> Result<Proof<Self>>;
    /// The points of a `verification_key.json` value, whatever its `curve` field says.
    fn vk_points(v: &Value, name: &str) -> Result<VerifyingKey<Self>>;
    /// `vk_alphabeta_12`: the pairing of the key's alpha and beta, as snarkjs writes it.
    fn alphabeta_json(vk: &VerifyingKey<Self>) -> Value;
}

macro_rules! json_curve {
    ($curve:ty) => {
        impl JsonCurve for $curve {
            fn proof_points(v: &Value, name: &str) -> Result<Proof<Self>> {
                let name = Named(name.to_string());
                let r = Reader { name: &name };
                Ok(Proof {
                    a: r.point(r.field(v, "pi_a")?, "pi_a")?,
                    b: r.point(r.field(v, "pi_b")?, "pi_b")?,
                    c: r.point(r.field(v, "pi_c")?, "pi_c")?,
                })
            }

            fn vk_points(v: &Value, name: &str) -> Result<VerifyingKey<Self>> {
                let name = Named(name.to_string());
                verifying_key(&Reader { name: &name }, v)
            }

            fn alphabeta_json(vk: &VerifyingKey<Self>) -> Value {
                fq12(&Self::pairing(vk.alpha_g1, vk.beta_g2).0)
            }
        }
    };
}

json_curve!(Bls12_381);
json_curve!(Bn254);

/// Reads a snarkjs `proof.json` value of curve `E` (points checked on the curve and in
/// the subgroup; a file naming the other curve is refused naming both); `name` names
/// the file in errors.
pub fn proof_from_json<E: JsonCurve>(v: &Value, name: &str) -> Result<Proof<E>> {
    let named = Named(name.to_string());
    Reader { name: &named }.header_of(v, E::CURVE)?;
    E::proof_points(v, name)
}

/// Reads a snarkjs `public.json` value: decimal strings below the scalar field's r.
pub fn public_from_json<F: PrimeField>(v: &Value, name: &str) -> Result<Vec<F>> {
    let name = Named(name.to_string());
    let r = Reader { name: &name };
    r.array(v, "the public signals", None)?
        .iter()
        .enumerate()
        .map(|(i, x)| r.number(x, &format!("public signal {i}")))
        .collect()
}

/// Reads a snarkjs `verification_key.json` value of curve `E` (`vk_alphabeta_12` is
/// derived data and not read; a file naming the other curve is refused naming both);
/// `name` names the file in errors.
pub fn vk_from_json<E: JsonCurve>(v: &Value, name: &str) -> Result<VerifyingKey<E>> {
    let named = Named(name.to_string());
    Reader { name: &named }.header_of(v, E::CURVE)?;
    E::vk_points(v, name)
}

/// The curve a snarkjs JSON value names in its `curve` field (BLS12-381 when it has
/// none); `name` names the file in errors.
pub(crate) fn json_curve(v: &Value, name: &str) -> Result<Curve> {
    let name = Named(name.to_string());
    Reader { name: &name }.header(v)
}

/// The points of a verifying key, on the curve of `E`.
fn verifying_key<E, G1, G2>(r: &Reader<'_>, v: &Value) -> Result<VerifyingKey<E>>
where
    E: Pairing<G1Affine = Affine<G1>, G2Affine = Affine<G2>>,
    G1: SWCurveConfig,
    G2: SWCurveConfig,
    G1::BaseField: Coordinate,
    G2::BaseField: Coordinate,
{
    let ic = r.array(r.field(v, "IC")?, "IC", None)?;
    if ic.is_empty() {
        return Err(r.name.error("IC is empty"));
    }
    if let Some(n) = v.get("nPublic") {
        if n.as_u64() != Some(ic.len() as u64 - 1) {
            return Err(r.name.error(format!(
                "nPublic is {n} but IC has {} points (nPublic + 1 expected)",
                ic.len()
            )));
        }
    }
    Ok(VerifyingKey {
        alpha_g1: r.point(r.field(v, "vk_alpha_1")?, "vk_alpha_1")?,
        beta_g2: r.point(r.field(v, "vk_beta_2")?, "vk_beta_2")?,
        gamma_g2: r.point(r.field(v, "vk_gamma_2")?, "vk_gamma_2")?,
        delta_g2: r.point(r.field(v, "vk_delta_2")?, "vk_delta_2")?,
        gamma_abc_g1: ic
            .iter()
            .enumerate()
            .map(|(i, p)| r.point(p, &format!("IC[{i}]")))
            .collect::<Result<_>>()?,
    })
}
