//! A Solidity contract that verifies Groth16 proofs of one BN254 verifying key on the
//! Ethereum virtual machine, through its BN254 precompiles: ecAdd (0x06), ecMul (0x07)
//! and ecPairing (0x08). It checks
//! `e(−A, B) · e(α, β) · e(vk_x, γ) · e(C, δ) = 1` with
//! `vk_x = IC₀ + Σ inputᵢ · ICᵢ₊₁`, the equation of ark-groth16's verifier.
//!
//! The entry point takes the calldata snarkjs' verifiers take,
//! `verifyProof(uint256[2] a, uint256[2][2] b, uint256[2] c, uint256[N] input)`, with
//! each G2 coordinate written imaginary part first (`[x.c1, x.c0]`), the order of
//! the pairing precompile ([`proof_calldata`] writes it from an arkworks proof).

use std::fmt::Write;

use ark_bn254::{Bn254, Fq, Fq2, Fr, G1Affine, G2Affine};
use ark_ec::AffineRepr;
use ark_ff::PrimeField;
use ark_groth16::{Proof, VerifyingKey};

use crucible_core::curve::Curve;
use crucible_core::{Error, Result};

use crate::curve_verifying_key::CurveVerifyingKey;

/// The contract's name in the source [`solidity_verifier`] writes.
pub const CONTRACT: &str = "Groth16Verifier";

/// The Solidity verifier of `key`; a BLS12-381 key is refused (`name` names its file).
pub fn export_verifier(key: &CurveVerifyingKey, name: &str) -> Result<String> {
    match key {
        CurveVerifyingKey::Bn254(vk) => Ok(solidity_verifier(vk)),
        CurveVerifyingKey::Bls12_381(_) => Err(Error::Unsupported(format!(
            "{name}: a {} key; the exported verifier runs on the EVM's BN254 precompiles \
             (0x06-0x08) and is written for {} keys only (circom's default prime, snarkjs' \
             bn128); BLS12-381 pairings on the EVM need EIP-2537's precompiles, which this \
             export does not target",
            Curve::Bls12_381,
            Curve::Bn254,
        ))),
    }
}

/// A proof and its public inputs as `verifyProof`'s arguments, decimal: `a`, `b`
/// (G2 coordinates imaginary part first), `c`, `input`.
pub fn proof_calldata(proof: &Proof<Bn254>, inputs: &[Fr]) -> ProofCalldata {
    let g1 = |p: &G1Affine| {
        let (x, y) = xy(p.xy());
        [x.to_string(), y.to_string()]
    };
    let (bx, by) = g2_xy(&proof.b);
    ProofCalldata {
        a: g1(&proof.a),
        b: [imaginary_first(&bx), imaginary_first(&by)],
        c: g1(&proof.c),
        input: inputs.iter().map(|x| x.to_string()).collect(),
    }
}

/// [`proof_calldata`]'s result: the four arguments of `verifyProof`, each number a
/// decimal string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProofCalldata {
    /// A (x, y).
    pub a: [String; 2],
    /// B: `[[x.c1, x.c0], [y.c1, y.c0]]`.
    pub b: [[String; 2]; 2],
    /// C (x, y).
    pub c: [String; 2],
    /// The public inputs.
    pub input: Vec<String>,
}

/// The point at infinity is (0, 0) to the precompiles.
fn xy<F: Default>(p: Option<(F, F)>) -> (F, F) {
    p.unwrap_or_default()
}

fn g2_xy(p: &G2Affine) -> (Fq2, Fq2) {
    xy(p.xy())
}

fn imaginary_first(x: &Fq2) -> [String; 2] {
    [x.c1.to_string(), x.c0.to_string()]
}

/// Declares `NAME_X` and `NAME_Y` for a G1 point.
fn g1_constants(out: &mut String, name: &str, p: &G1Affine) {
    let (x, y) = xy(p.xy());
    constant(out, &format!("{name}_X"), &x);
    constant(out, &format!("{name}_Y"), &y);
}

/// Declares `NAME_X1`, `NAME_X0`, `NAME_Y1`, `NAME_Y0` for a G2 point
/// (`x = X0 + X1·i`).
fn g2_constants(out: &mut String, name: &str, p: &G2Affine) {
    let (x, y) = g2_xy(p);
    constant(out, &format!("{name}_X1"), &x.c1);
    constant(out, &format!("{name}_X0"), &x.c0);
    constant(out, &format!("{name}_Y1"), &y.c1);
    constant(out, &format!("{name}_Y0"), &y.c0);
}

fn constant(out: &mut String, name: &str, value: &impl std::fmt::Display) {
    let _ = writeln!(out, "    uint256 internal constant {name} = {value};");
}

/// The Solidity source of a verifier for `vk`.
pub fn solidity_verifier(vk: &VerifyingKey<Bn254>) -> String {
    let n = vk.gamma_abc_g1.len() - 1;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"// SPDX-License-Identifier: MIT
// A Groth16 verifier for one BN254 verifying key ({n} public inputs), written by
// `crucible export-verifier`. It accepts a proof (A, B, C) of public inputs x when
//   e(-A, B) * e(alpha, beta) * e(vk_x, gamma) * e(C, delta) = 1,
//   vk_x = IC0 + x[0] * IC1 + ... + x[{last}] * IC{n},
// computed with the EVM's BN254 precompiles: ecAdd (0x06), ecMul (0x07) and
// ecPairing (0x08). G2 coordinates are given imaginary part first, as the pairing
// precompile takes them.
pragma solidity >=0.8.4 <0.9.0;

contract {CONTRACT} {{
    // The base field's modulus (coordinates) and the scalar field's (public inputs).
    uint256 internal constant Q = {q};
    uint256 internal constant R = {r};

"#,
        last = n.saturating_sub(1),
        q = Fq::MODULUS,
        r = Fr::MODULUS,
    );
    g1_constants(&mut s, "ALPHA", &vk.alpha_g1);
    g2_constants(&mut s, "BETA", &vk.beta_g2);
    g2_constants(&mut s, "GAMMA", &vk.gamma_g2);
    g2_constants(&mut s, "DELTA", &vk.delta_g2);
    for (i, p) in vk.gamma_abc_g1.iter().enumerate() {
        g1_constants(&mut s, &format!("IC{i}"), p);
    }
    let input_param = if n == 0 {
        String::new()
    } else {
        format!(",\n        uint256[{n}] calldata input")
    };
    let _ = write!(
        s,
        r#"
    /// Whether (a, b, c) is a valid proof of `input` for this key. False, never a
    /// revert, for a coordinate not below Q, a point off the curve (or, in G2, off
    /// the prime-order subgroup), or an input not below R.
    function verifyProof(
        uint256[2] calldata a,
        uint256[2][2] calldata b,
        uint256[2] calldata c{input_param}
    ) external view returns (bool) {{
        if (a[0] >= Q || a[1] >= Q || c[0] >= Q || c[1] >= Q) return false;
        if (b[0][0] >= Q || b[0][1] >= Q || b[1][0] >= Q || b[1][1] >= Q) return false;
        if (!onCurve(a[0], a[1]) || !onCurve(c[0], c[1])) return false;
        uint256[2] memory vkX = [IC0_X, IC0_Y];
"#
    );
    for i in 0..n {
        let _ = writeln!(
            s,
            "        if (input[{i}] >= R || !addMul(vkX, IC{j}_X, IC{j}_Y, input[{i}])) return false;",
            j = i + 1
        );
    }
    s.push_str(
        r#"
        uint256[24] memory pairs;
        pairs[0] = a[0];
        // -A: (x, Q - y), and the point at infinity (0, 0) stays itself.
        pairs[1] = (Q - a[1]) % Q;
        pairs[2] = b[0][0];
        pairs[3] = b[0][1];
        pairs[4] = b[1][0];
        pairs[5] = b[1][1];
        pairs[6] = ALPHA_X;
        pairs[7] = ALPHA_Y;
        pairs[8] = BETA_X1;
        pairs[9] = BETA_X0;
        pairs[10] = BETA_Y1;
        pairs[11] = BETA_Y0;
        pairs[12] = vkX[0];
        pairs[13] = vkX[1];
        pairs[14] = GAMMA_X1;
        pairs[15] = GAMMA_X0;
        pairs[16] = GAMMA_Y1;
        pairs[17] = GAMMA_Y0;
        pairs[18] = c[0];
        pairs[19] = c[1];
        pairs[20] = DELTA_X1;
        pairs[21] = DELTA_X0;
        pairs[22] = DELTA_Y1;
        pairs[23] = DELTA_Y0;
        (bool ok, bytes memory product) = address(0x08).staticcall(abi.encode(pairs));
        return ok && product.length == 32 && abi.decode(product, (uint256)) == 1;
    }

    /// Whether (x, y) is on y^2 = x^3 + 3 or is the point at infinity (0, 0): a G1
    /// point the precompiles refuse would first use up all the gas given to them.
    function onCurve(uint256 x, uint256 y) internal pure returns (bool) {
        if (x == 0 && y == 0) return true;
        return mulmod(y, y, Q) == addmod(mulmod(mulmod(x, x, Q), x, Q), 3, Q);
    }

    /// p += s * (x, y), with ecMul and ecAdd; false when a precompile refuses a point.
    function addMul(uint256[2] memory p, uint256 x, uint256 y, uint256 s) internal view returns (bool) {
        (bool ok, bytes memory product) = address(0x07).staticcall(abi.encode(x, y, s));
        if (!ok || product.length != 64) return false;
        (uint256 px, uint256 py) = abi.decode(product, (uint256, uint256));
        bytes memory sum;
        (ok, sum) = address(0x06).staticcall(abi.encode(p[0], p[1], px, py));
        if (!ok || sum.length != 64) return false;
        (p[0], p[1]) = abi.decode(sum, (uint256, uint256));
        return true;
    }
}
"#,
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::CurveGroup;
    use ark_std::UniformRand;

    fn key(inputs: usize) -> VerifyingKey<Bn254> {
        let mut rng = ark_std::test_rng();
        let mut g2 = || ark_bn254::G2Projective::rand(&mut rng).into_affine();
        let (beta_g2, gamma_g2, delta_g2) = (g2(), g2(), g2());
        let mut g1 = || ark_bn254::G1Projective::rand(&mut rng).into_affine();
        VerifyingKey {
            alpha_g1: g1(),
            beta_g2,
            gamma_g2,
            delta_g2,
            gamma_abc_g1: (0..=inputs).map(|_| g1()).collect(),
        }
    }

    #[test]
    fn the_source_holds_every_point_of_the_key_and_one_input_per_ic_point() {
        let vk = key(3);
        let s = solidity_verifier(&vk);
        let (x, y) = xy(vk.gamma_abc_g1[3].xy());
        assert!(s.contains(&format!("IC3_X = {x};")), "{s}");
        assert!(s.contains(&format!("IC3_Y = {y};")), "{s}");
        assert!(!s.contains("IC4_X"), "{s}");
        let (bx, _) = g2_xy(&vk.beta_g2);
        assert!(s.contains(&format!("BETA_X1 = {};", bx.c1)), "{s}");
        assert!(s.contains(&format!("BETA_X0 = {};", bx.c0)), "{s}");
        assert!(s.contains("uint256[3] calldata input"), "{s}");
        assert!(s.contains("!addMul(vkX, IC3_X, IC3_Y, input[2])"), "{s}");
        assert!(s.contains(&format!("Q = {};", Fq::MODULUS)), "{s}");
    }

    #[test]
    fn a_key_without_public_inputs_takes_no_input_array() {
        let s = solidity_verifier(&key(0));
        assert!(
            !s.contains("calldata input") && !s.contains("input["),
            "{s}"
        );
        assert!(s.contains("uint256[2] calldata c\n    )"), "{s}");
    }

    #[test]
    fn a_bls12_381_key_is_refused_naming_both_curves() {
        let vk = VerifyingKey::<crucible_core::Bls12_381>::default();
        let err = export_verifier(&CurveVerifyingKey::Bls12_381(Box::new(vk)), "bls.zkey")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("bls.zkey: a BLS12-381 key") && err.contains("BN254 keys only"),
            "{err}"
        );
        assert!(err.contains("EIP-2537"), "{err}");
    }

    #[test]
    fn calldata_writes_g2_imaginary_part_first() {
        let mut rng = ark_std::test_rng();
        let proof = Proof::<Bn254> {
            a: ark_bn254::G1Projective::rand(&mut rng).into_affine(),
            b: ark_bn254::G2Projective::rand(&mut rng).into_affine(),
            c: G1Affine::zero(),
        };
        let call = proof_calldata(&proof, &[Fr::from(7u64)]);
        let (bx, by) = g2_xy(&proof.b);
        assert_eq!(call.b[0], [bx.c1.to_string(), bx.c0.to_string()]);
        assert_eq!(call.b[1], [by.c1.to_string(), by.c0.to_string()]);
        assert_eq!(call.c, ["0".to_string(), "0".to_string()]);
        assert_eq!(call.input, vec!["7".to_string()]);
    }
}
