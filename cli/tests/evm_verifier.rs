//! `crucible export-verifier` on a real Ethereum virtual machine: the Solidity source
//! it writes is compiled by solc and run on @ethereumjs/evm (both npm packages pinned
//! in `interop/circom/package.json`, driven by `interop/circom/evm_verify.js`), with
//! BN254 proofs from ark-groth16, from snarkjs and from crucible's own prover. Valid proofs are accepted; proofs
//! with a changed point, coordinate or public input are rejected; and wherever the
//! proof is a valid encoding, the contract's verdict is ark-groth16's.
//!
//! The tools are required: missing ones fail the test with the command that installs
//! them, `(cd interop/circom && npm ci)`, unless `CRUCIBLE_NO_NPM=1` says this
//! environment has no npm, in which case the test prints that it is skipped and why.

use std::path::{Path, PathBuf};
use std::process::Command;

use ark_bn254::{Bn254, Fq, Fr, G1Affine, G1Projective, G2Affine};
use ark_ec::{AffineRepr, CurveGroup, PrimeGroup};
use ark_ff::{BigInteger, PrimeField, UniformRand};
use ark_groth16::{Groth16, Proof, VerifyingKey};
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
use ark_relations::lc;
use ark_serialize::CanonicalSerialize;
use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_files::solidity::{proof_calldata, ProofCalldata, CONTRACT};
use crucible_files::CurveVerifyingKey;
use serde_json::{json, Value};

mod support;
use support::{crucible, text, TempDir};

fn interop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../interop/circom")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../files/tests/fixtures")
        .join(name)
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Knows `a`, `b` with `a·b = product` and `a + b = sum`; `product` and `sum` are the
/// public inputs, or witnesses in the circuit without any.
#[derive(Clone)]
struct ProductAndSum {
    a: Fr,
    b: Fr,
    public: bool,
}

impl ProductAndSum {
    fn inputs(&self) -> Vec<Fr> {
        if self.public {
            vec![self.a * self.b, self.a + self.b]
        } else {
            Vec::new()
        }
    }
}

impl ConstraintSynthesizer<Fr> for ProductAndSum {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let (product, sum) = (self.a * self.b, self.a + self.b);
        let a = cs.new_witness_variable(|| Ok(self.a))?;
        let b = cs.new_witness_variable(|| Ok(self.b))?;
        let (product, sum) = if self.public {
            (
                cs.new_input_variable(|| Ok(product))?,
                cs.new_input_variable(|| Ok(sum))?,
            )
        } else {
            (
                cs.new_witness_variable(|| Ok(product))?,
                cs.new_witness_variable(|| Ok(sum))?,
            )
        };
        cs.enforce_r1cs_constraint(|| lc![a], || lc![b], || lc![product])?;
        cs.enforce_r1cs_constraint(
            || lc![a, b],
            || lc![ark_relations::gr1cs::Variable::one()],
            || lc![sum],
        )?;
        Ok(())
    }
}

/// One call of `verifyProof`: the verdict wanted, and ark-groth16's where the
/// arguments are a proof it can take.
struct Call {
    name: &'static str,
    args: ProofCalldata,
    want: bool,
    ark: Option<bool>,
}

fn ark_verdict(vk: &VerifyingKey<Bn254>, proof: &Proof<Bn254>, inputs: &[Fr]) -> bool {
    let pvk = ark_groth16::prepare_verifying_key(vk);
    Groth16::<Bn254>::verify_proof(&pvk, proof, inputs).unwrap_or(false)
}

/// A call of `proof` on `inputs`, checked against ark-groth16.
fn ark_call(
    name: &'static str,
    vk: &VerifyingKey<Bn254>,
    proof: &Proof<Bn254>,
    inputs: &[Fr],
    want: bool,
) -> Call {
    let ark = ark_verdict(vk, proof, inputs);
    assert_eq!(ark, want, "{name}: ark-groth16 says {ark}");
    Call {
        name,
        args: proof_calldata(proof, inputs),
        want,
        ark: Some(ark),
    }
}

/// `x + 1` as a decimal string (the base field's integer, not reduced).
fn plus_one(x: &str) -> String {
    (x.parse::<Fq>().unwrap() + Fq::from(1u64)).to_string()
}

/// The arkworks key's calls: two valid proofs and their tamperings.
fn arkworks_calls(vk: &VerifyingKey<Bn254>, proofs: &[(Proof<Bn254>, Vec<Fr>)]) -> Vec<Call> {
    let (p, x) = &proofs[0];
    let (q, y) = &proofs[1];
    let g = G1Projective::generator();
    let mut calls = vec![
        ark_call("valid", vk, p, x, true),
        ark_call("second valid", vk, q, y, true),
        ark_call("another proof's inputs", vk, p, y, false),
        ark_call("input + 1", vk, p, &[x[0] + Fr::from(1u64), x[1]], false),
        ark_call(
            "A + G",
            vk,
            &Proof {
                a: (p.a + g).into_affine(),
                ..p.clone()
            },
            x,
            false,
        ),
        ark_call(
            "-A",
            vk,
            &Proof {
                a: -p.a,
                ..p.clone()
            },
            x,
            false,
        ),
        ark_call(
            "C + G",
            vk,
            &Proof {
                c: (p.c + g).into_affine(),
                ..p.clone()
            },
            x,
            false,
        ),
        ark_call(
            "another proof's B",
            vk,
            &Proof {
                b: q.b,
                ..p.clone()
            },
            x,
            false,
        ),
        ark_call(
            "A at infinity",
            vk,
            &Proof {
                a: G1Affine::zero(),
                ..p.clone()
            },
            x,
            false,
        ),
    ];
    // Arguments no arkworks proof has: the contract alone must refuse them.
    let valid = proof_calldata(p, x);
    let mut off_curve = valid.clone();
    off_curve.a[0] = plus_one(&off_curve.a[0]);
    let mut b_real_first = valid.clone();
    b_real_first.b = [
        [valid.b[0][1].clone(), valid.b[0][0].clone()],
        [valid.b[1][1].clone(), valid.b[1][0].clone()],
    ];
    let mut input_plus_r = valid.clone();
    let mut unreduced = x[0].into_bigint();
    unreduced.add_with_carry(&Fr::MODULUS);
    input_plus_r.input[0] = unreduced.to_string();
    let mut coordinate_plus_q = valid.clone();
    let mut unreduced = p.c.x().unwrap().into_bigint();
    unreduced.add_with_carry(&Fq::MODULUS);
    coordinate_plus_q.c[0] = unreduced.to_string();
    for (name, args) in [
        ("A off the curve", off_curve),
        ("B real part first", b_real_first),
        ("input + r", input_plus_r),
        ("C.x + q", coordinate_plus_q),
    ] {
        calls.push(Call {
            name,
            args,
            want: false,
            ark: None,
        });
    }
    calls
}

/// A `proof.json` and `public.json` pair in snarkjs' form (snarkjs' own or crucible's)
/// as arkworks' proof and `verifyProof`'s arguments.
fn proof_from_json(proof: &Path, public: &Path) -> (Proof<Bn254>, Vec<Fr>) {
    let read = |p: &Path| -> Value { serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap() };
    let (proof, public) = (read(proof), read(public));
    let fq = |v: &Value| v.as_str().unwrap().parse::<Fq>().unwrap();
    let g1 = |v: &Value| G1Affine::new(fq(&v[0]), fq(&v[1]));
    let fq2 = |v: &Value| ark_bn254::Fq2::new(fq(&v[0]), fq(&v[1]));
    let b = G2Affine::new(fq2(&proof["pi_b"][0]), fq2(&proof["pi_b"][1]));
    let inputs = public
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().parse::<Fr>().unwrap())
        .collect();
    (
        Proof {
            a: g1(&proof["pi_a"]),
            b,
            c: g1(&proof["pi_c"]),
        },
        inputs,
    )
}

/// Runs `evm_verify.js` on the contracts and their calls; its JSON report.
fn run_on_evm(dir: &Path, contracts: &[(String, &[Call])]) -> Value {
    let cases: Vec<Value> = contracts
        .iter()
        .map(|(source, calls)| {
            json!({
                "source": source,
                "contract": CONTRACT,
                "calls": calls.iter().map(|c| json!({
                    "name": c.name,
                    "a": c.args.a,
                    "b": c.args.b,
                    "c": c.args.c,
                    "input": c.args.input,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let file = dir.join("cases.json");
    std::fs::write(&file, serde_json::to_vec(&cases).unwrap()).unwrap();
    let out = Command::new("node")
        .arg(interop().join("evm_verify.js"))
        .arg(&file)
        .output()
        .expect("runs node");
    assert!(out.status.success(), "evm_verify.js: {}", text(&out));
    serde_json::from_slice(&out.stdout).expect("evm_verify.js prints JSON")
}

/// Whether the tools are here: `Some(false)` when `CRUCIBLE_NO_NPM` says to skip,
/// a panic with the command that installs them when they are missing.
fn tools_present() -> bool {
    if std::env::var_os("CRUCIBLE_NO_NPM").is_some_and(|v| v != "0") {
        return false;
    }
    for package in ["solc", "@ethereumjs/evm", "@ethereumjs/util"] {
        let dir = interop().join("node_modules").join(package);
        assert!(
            dir.join("package.json").exists(),
            "{} is missing: run `(cd interop/circom && npm ci)` from the repository root \
             first (CI's .ci/run does), or set CRUCIBLE_NO_NPM=1 to skip this test where \
             there is no npm",
            dir.display()
        );
    }
    true
}

#[test]
fn exported_verifiers_accept_valid_proofs_and_reject_tampered_ones_on_the_evm() {
    if !tools_present() {
        println!("skipped: CRUCIBLE_NO_NPM is set, so solc and the EVM are not run");
        return;
    }
    let temp = TempDir::new("evm-verifier");
    let dir = &temp.0;
    let mut rng = StdRng::seed_from_u64(48);

    // An arkworks key with two public inputs, exported from its binary verifying key.
    let circuit = |a: Fr, b: Fr, public| ProductAndSum { a, b, public };
    let pk = Groth16::<Bn254>::generate_random_parameters_with_reduction(
        circuit(Fr::from(0u64), Fr::from(0u64), true),
        &mut rng,
    )
    .unwrap();
    let proofs: Vec<(Proof<Bn254>, Vec<Fr>)> = [
        circuit(Fr::from(3u64), Fr::from(5u64), true),
        circuit(Fr::rand(&mut rng), Fr::rand(&mut rng), true),
    ]
    .into_iter()
    .map(|c| {
        let inputs = c.inputs();
        let proof = Groth16::<Bn254>::create_random_proof_with_reduction(c, &pk, &mut rng).unwrap();
        (proof, inputs)
    })
    .collect();
    let vk_bin = dir.join("vk.bin");
    let mut bytes = Vec::new();
    pk.vk.serialize_compressed(&mut bytes).unwrap();
    std::fs::write(&vk_bin, bytes).unwrap();
    let sol = dir.join("Arkworks.sol");
    let out = crucible(&[
        "export-verifier",
        "--vk",
        path(&vk_bin),
        "--out",
        path(&sol),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("2 public inputs"),
        "{}",
        text(&out)
    );
    let arkworks = arkworks_calls(&pk.vk, &proofs);

    // A key without public inputs: the contract takes no input array.
    let pk0 = Groth16::<Bn254>::generate_random_parameters_with_reduction(
        circuit(Fr::from(0u64), Fr::from(0u64), false),
        &mut rng,
    )
    .unwrap();
    let proof0 = Groth16::<Bn254>::create_random_proof_with_reduction(
        circuit(Fr::from(6u64), Fr::from(7u64), false),
        &pk0,
        &mut rng,
    )
    .unwrap();
    let no_inputs = [
        ark_call("valid", &pk0.vk, &proof0, &[], true),
        ark_call("another key's proof", &pk0.vk, &proofs[0].0, &[], false),
    ];
    let source0 = crucible_files::solidity::solidity_verifier(&pk0.vk);

    // snarkjs' key and proof for the circom circuit on the default prime, exported
    // from the .zkey; its verification_key.json gives the same contract.
    let zkey = fixture("bn254/multi_public.zkey");
    let from_zkey = dir.join("FromZkey.sol");
    let out = crucible(&[
        "export-verifier",
        "--zkey",
        path(&zkey),
        "--out",
        path(&from_zkey),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let from_json = dir.join("FromJson.sol");
    let vk_json = fixture("bn254/multi_public.vk.json");
    let out = crucible(&[
        "export-verifier",
        "--vk",
        path(&vk_json),
        "--out",
        path(&from_json),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let snarkjs_source = std::fs::read_to_string(&from_zkey).unwrap();
    assert_eq!(snarkjs_source, std::fs::read_to_string(&from_json).unwrap());
    let CurveVerifyingKey::Bn254(snarkjs_vk) = CurveVerifyingKey::from_zkey(&zkey).unwrap() else {
        panic!("the fixture is a BN254 key");
    };
    let (sp, sx) = proof_from_json(
        &fixture("bn254/multi_public.snarkjs-proof.json"),
        &fixture("bn254/multi_public.snarkjs-public.json"),
    );
    // crucible's own proof of the same circom circuit, from the .zkey and the .wtns.
    let (cp_path, cx_path) = (
        dir.join("crucible-proof.json"),
        dir.join("crucible-public.json"),
    );
    let out = crucible(&[
        "prove",
        "--backend",
        "cpu",
        "--zkey",
        path(&zkey),
        "--wtns",
        path(&fixture("bn254/multi_public.wtns")),
        "--proof",
        path(&cp_path),
        "--public",
        path(&cx_path),
        "--check",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let (cp, cx) = proof_from_json(&cp_path, &cx_path);
    assert_eq!(cx, sx, "crucible's public signals are snarkjs' own");
    let mut changed = sx.clone();
    changed[4] += Fr::from(1u64);
    let snarkjs = [
        ark_call("snarkjs' proof", &snarkjs_vk, &sp, &sx, true),
        ark_call("crucible's proof", &snarkjs_vk, &cp, &cx, true),
        ark_call(
            "crucible's proof, C negated",
            &snarkjs_vk,
            &Proof {
                c: (-cp.c.into_group()).into_affine(),
                ..cp
            },
            &cx,
            false,
        ),
        ark_call(
            "snarkjs' proof, last input + 1",
            &snarkjs_vk,
            &sp,
            &changed,
            false,
        ),
        ark_call(
            "snarkjs' proof, A and C swapped",
            &snarkjs_vk,
            &Proof {
                a: sp.c,
                c: sp.a,
                ..sp
            },
            &sx,
            false,
        ),
    ];

    let contracts = [
        (std::fs::read_to_string(&sol).unwrap(), &arkworks[..]),
        (source0, &no_inputs[..]),
        (snarkjs_source, &snarkjs[..]),
    ];
    let report = run_on_evm(dir, &contracts);
    println!("{report}");
    for ((_, calls), result) in contracts
        .iter()
        .zip(report["contracts"].as_array().unwrap())
    {
        assert_eq!(result["warnings"], json!([]), "solc warns: {result}");
        let verdicts = result["calls"].as_array().unwrap();
        assert_eq!(verdicts.len(), calls.len());
        for (call, got) in calls.iter().zip(verdicts) {
            assert_eq!(got["name"], call.name);
            // A revert is never a verdict: the contract answers false.
            assert_eq!(got["verdict"], json!(call.want), "{}: {got}", call.name);
            // A G1 point off the curve is refused by the contract itself, before a
            // precompile would take all the gas the call gives it.
            if call.name == "A off the curve" {
                assert!(got["gas"].as_u64().unwrap() < 100_000, "{got}");
            }
            if let Some(ark) = call.ark {
                assert_eq!(
                    got["verdict"],
                    json!(ark),
                    "{}: ark-groth16 disagrees",
                    call.name
                );
            }
        }
    }
}

#[test]
fn a_bls12_381_key_is_refused_naming_both_curves() {
    let temp = TempDir::new("evm-refusal");
    let dir = &temp.0;
    let sol = dir.join("Verifier.sol");
    let zkey = fixture("multi_public.zkey");
    let out = crucible(&[
        "export-verifier",
        "--zkey",
        path(&zkey),
        "--out",
        path(&sol),
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a BLS12-381 key") && err.contains("BN254 keys only"),
        "{}",
        text(&out)
    );
    assert!(!sol.exists(), "nothing is written for a refused key");
}

/// `crucible prove` proves a BN254 key (circom's default prime) on the curve it
/// names, choosing a backend that proves BN254 by itself; a witness of the other curve
/// is a file's fault (exit 3), both curves named, before any work.
#[test]
fn a_bn254_key_proves_on_its_curve_and_a_witness_of_the_other_is_refused() {
    let zkey = fixture("bn254/multi_public.zkey");
    let temp = TempDir::new("bn254-prove");
    let dir = &temp.0;
    let (proof, public) = (dir.join("proof.json"), dir.join("public.json"));
    let zkey = path(&zkey);
    let wtns = fixture("bn254/multi_public.wtns");
    let out = crucible(&[
        "prove",
        "--zkey",
        zkey,
        "--wtns",
        path(&wtns),
        "--proof",
        path(&proof),
        "--public",
        path(&public),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let written: Value = serde_json::from_slice(&std::fs::read(&proof).unwrap()).unwrap();
    assert_eq!(written["curve"], "bn128");
    let theirs: Value = serde_json::from_slice(
        &std::fs::read(fixture("bn254/multi_public.snarkjs-public.json")).unwrap(),
    )
    .unwrap();
    let ours: Value = serde_json::from_slice(&std::fs::read(&public).unwrap()).unwrap();
    assert_eq!(ours, theirs);

    let bls_wtns = fixture("multi_public.wtns");
    let out = crucible(&["prove", "--zkey", zkey, "--wtns", path(&bls_wtns), "--json"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        text(&out).contains("a BLS12-381 (bls12381) witness where BN254 (bn128) is proved"),
        "{}",
        text(&out)
    );
}
