//! The readers and writers against real snarkjs / circom files (`fixtures/`, made by
//! snarkjs 0.7.6 and circom2 0.2.23 from `interop/circom/multi_public.circom`), and
//! against damaged copies of them.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use ark_ff::{One, UniformRand};
use ark_groth16::r1cs_to_qap::LibsnarkReduction;
use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_conformance::circom_reduction::CircomReduction;
use crucible_conformance::{proof_bytes, run_seed};
use crucible_core::groth16::Proof;
use crucible_core::{Bls12_381, Fr};
use crucible_files::artifacts::{
    read_proof, read_public, read_vk, write_proof, write_public, write_vk,
};
use crucible_files::snarkjs_json::{proof_from_json, proof_to_json, public_from_json, vk_to_json};
use crucible_files::{
    read_witness, read_witness_from, synthesized_from_r1cs, synthesized_from_zkey, R1cs,
    R1csCircuit, Zkey,
};
use serde_json::Value;

use crate::bad_points;
use bad_points::non_subgroup_g1_zkey_bytes;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn json(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(fixture(name)).unwrap()).unwrap()
}

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap()
}

fn row_value(row: &[(Fr, usize)], z: &[Fr]) -> Fr {
    row.iter().map(|(c, w)| *c * z[*w]).sum()
}

fn verifies(vk: &ark_groth16::VerifyingKey<Bls12_381>, public: &[Fr], proof: &Proof) -> bool {
    let pvk = ark_groth16::prepare_verifying_key(vk);
    ark_groth16::Groth16::<Bls12_381>::verify_proof(&pvk, proof, public).unwrap_or(false)
}

#[test]
fn r1cs_and_witness_describe_the_circuit() {
    let r1cs = R1cs::<crucible_core::Bls12_381>::read(&fixture("multi_public.r1cs")).unwrap();
    assert_eq!(
        (
            r1cs.num_wires,
            r1cs.num_public,
            r1cs.num_outputs,
            r1cs.num_private_inputs
        ),
        (10, 5, 2, 2)
    );
    assert_eq!(r1cs.num_constraints(), 4);
    let z = read_witness::<crucible_core::Bls12_381>(&fixture("multi_public.wtns")).unwrap();
    assert_eq!(z.len(), 10);
    assert!(z[0].is_one());
    for i in 0..r1cs.num_constraints() {
        let (a, b, c) = (
            row_value(&r1cs.a[i], &z),
            row_value(&r1cs.b[i], &z),
            row_value(&r1cs.c[i], &z),
        );
        assert_eq!(a * b, c, "constraint {i} not satisfied by the witness");
    }
    // The public signals are wires 1..=5, as snarkjs' public.json lists them.
    let public =
        public_from_json::<crucible_core::Fr>(&json("multi_public.snarkjs-public.json"), "public")
            .unwrap();
    assert_eq!(&z[1..6], public.as_slice());
    assert_eq!(public[0], Fr::from(77u64)); // a·b = 7·11
}

#[test]
fn zkey_matches_its_r1cs_and_snarkjs_verifying_key() {
    let zkey = Zkey::<crucible_core::Bls12_381>::read(&fixture("multi_public.zkey")).unwrap();
    let r1cs = R1cs::<crucible_core::Bls12_381>::read(&fixture("multi_public.r1cs")).unwrap();
    assert_eq!(
        (zkey.num_wires, zkey.num_public, zkey.num_constraints),
        (10, 5, 4)
    );
    assert_eq!(zkey.domain_size, 16);
    assert_eq!(zkey.proving_key.h_query.len(), 16);
    assert_eq!(zkey.proving_key.l_query.len(), 10 - 5 - 1);
    zkey.check_matches(&r1cs, "multi_public.zkey", "multi_public.r1cs")
        .unwrap();
    // Every field, α·β in GT included, as `snarkjs zkey export verificationkey` wrote it.
    assert_eq!(
        vk_to_json(&zkey.proving_key.vk),
        json("multi_public.vk.json")
    );
}

#[test]
fn snarkjs_proof_verifies_with_arkworks_and_round_trips() {
    let zkey = Zkey::<crucible_core::Bls12_381>::read(&fixture("multi_public.zkey")).unwrap();
    let proof_json = json("multi_public.snarkjs-proof.json");
    let proof = proof_from_json::<crucible_core::Bls12_381>(&proof_json, "proof").unwrap();
    let public =
        public_from_json::<crucible_core::Fr>(&json("multi_public.snarkjs-public.json"), "public")
            .unwrap();
    assert!(verifies(&zkey.proving_key.vk, &public, &proof));
    let mut wrong = public.clone();
    wrong[2] += Fr::one();
    assert!(!verifies(&zkey.proving_key.vk, &wrong, &proof));
    // Written back, the JSON is snarkjs' own, field for field.
    assert_eq!(proof_to_json(&proof), proof_json);
}

/// ark-groth16 with snarkjs' reduction, on the snarkjs key, with fresh r and s: the
/// proof verifies (the reduction's roots, coset and H query are snarkjs').
#[test]
fn circom_reduction_proves_with_the_snarkjs_key() {
    let seed = run_seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let zkey = Zkey::<crucible_core::Bls12_381>::read(&fixture("multi_public.zkey")).unwrap();
    let z = read_witness::<crucible_core::Bls12_381>(&fixture("multi_public.wtns")).unwrap();
    for synthesized in [
        synthesized_from_zkey(&zkey.circuit(), z.clone(), "w").unwrap(),
        synthesized_from_r1cs(
            &R1cs::<crucible_core::Bls12_381>::read(&fixture("multi_public.r1cs")).unwrap(),
            z.clone(),
            "w",
        )
        .unwrap(),
    ] {
        let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
        let matrices = [
            (*synthesized.a).clone(),
            (*synthesized.b).clone(),
            (*synthesized.c).clone(),
        ];
        let shape = synthesized.shape;
        let prove = |reduction_is_circom: bool| -> Proof {
            if reduction_is_circom {
                ark_groth16::Groth16::<Bls12_381, CircomReduction>::create_proof_with_reduction_and_matrices(
                    &zkey.proving_key, r, s, &matrices, shape.num_instance, shape.num_constraints, &z,
                )
            } else {
                ark_groth16::Groth16::<Bls12_381, LibsnarkReduction>::create_proof_with_reduction_and_matrices(
                    &zkey.proving_key, r, s, &matrices, shape.num_instance, shape.num_constraints, &z,
                )
            }
            .unwrap()
        };
        let public = &z[1..6];
        assert!(
            verifies(&zkey.proving_key.vk, public, &prove(true)),
            "seed {seed}"
        );
        // The other reduction's quotient does not fit a snarkjs key.
        assert!(
            !verifies(&zkey.proving_key.vk, public, &prove(false)),
            "seed {seed}"
        );
    }
}

/// A key from ark-groth16's setup over the R1csCircuit, proved with the libsnark
/// reduction from the .r1cs and .wtns.
#[test]
fn arkworks_setup_from_r1cs_proves_the_witness() {
    let seed = run_seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let r1cs = R1cs::<crucible_core::Bls12_381>::read(&fixture("multi_public.r1cs")).unwrap();
    let z = read_witness::<crucible_core::Bls12_381>(&fixture("multi_public.wtns")).unwrap();
    let setup = R1csCircuit {
        r1cs: &r1cs,
        witness: None,
    };
    let pk = ark_groth16::Groth16::<Bls12_381>::generate_random_parameters_with_reduction(
        setup, &mut rng,
    )
    .unwrap();
    let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
    let circuit = R1csCircuit {
        r1cs: &r1cs,
        witness: Some(&z),
    };
    let via_cs =
        ark_groth16::Groth16::<Bls12_381>::create_proof_with_reduction(circuit, &pk, r, s).unwrap();
    let synthesized = synthesized_from_r1cs(&r1cs, z.clone(), "w").unwrap();
    let matrices = [
        (*synthesized.a).clone(),
        (*synthesized.b).clone(),
        (*synthesized.c).clone(),
    ];
    let via_matrices = ark_groth16::Groth16::<Bls12_381>::create_proof_with_reduction_and_matrices(
        &pk, r, s, &matrices, 6, 4, &z,
    )
    .unwrap();
    assert_eq!(
        proof_bytes(&via_cs),
        proof_bytes(&via_matrices),
        "seed {seed}"
    );
    assert!(verifies(&pk.vk, &z[1..6], &via_cs), "seed {seed}");
}

#[test]
fn artifacts_round_trip_in_both_forms() {
    let dir = std::env::temp_dir().join(format!("crucible-files-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let zkey = Zkey::<crucible_core::Bls12_381>::read(&fixture("multi_public.zkey")).unwrap();
    let proof =
        proof_from_json::<crucible_core::Bls12_381>(&json("multi_public.snarkjs-proof.json"), "p")
            .unwrap();
    let public =
        public_from_json::<crucible_core::Fr>(&json("multi_public.snarkjs-public.json"), "p")
            .unwrap();
    for ext in ["json", "bin"] {
        let (p, i, v) = (
            dir.join(format!("proof.{ext}")),
            dir.join(format!("public.{ext}")),
            dir.join(format!("vk.{ext}")),
        );
        write_proof(&p, &proof).unwrap();
        write_public(&i, &public).unwrap();
        write_vk(&v, &zkey.proving_key.vk).unwrap();
        assert_eq!(
            proof_bytes(&read_proof::<crucible_core::Bls12_381>(&p).unwrap()),
            proof_bytes(&proof),
            "{ext}"
        );
        assert_eq!(
            read_public::<crucible_core::Bls12_381>(&i).unwrap(),
            public,
            "{ext}"
        );
        assert_eq!(
            read_vk::<crucible_core::Bls12_381>(&v).unwrap(),
            zkey.proving_key.vk,
            "{ext}"
        );
    }
    // A binary file named .json, and JSON named .bin, are clear errors.
    std::fs::copy(dir.join("proof.bin"), dir.join("wrong.json")).unwrap();
    let e = read_proof::<crucible_core::Bls12_381>(&dir.join("wrong.json"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("wrong.json") && e.contains("not valid JSON"),
        "{e}"
    );
    std::fs::copy(dir.join("proof.json"), dir.join("wrong.bin")).unwrap();
    let e = read_proof::<crucible_core::Bls12_381>(&dir.join("wrong.bin"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("wrong.bin") && e.contains("*.json"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn zkey_error(data: Vec<u8>) -> String {
    Zkey::<crucible_core::Bls12_381>::from_reader(Cursor::new(data), "damaged.zkey")
        .unwrap_err()
        .to_string()
}

/// Byte offset of section `kind`'s body in an iden3 container.
fn section_offset(data: &[u8], kind: u32) -> usize {
    let mut pos = 12;
    loop {
        let k = u32::from_le_bytes(data[pos..pos + 4].try_into().unwrap());
        let size = u64::from_le_bytes(data[pos + 4..pos + 12].try_into().unwrap()) as usize;
        if k == kind {
            return pos + 12;
        }
        pos += 12 + size;
    }
}

#[test]
fn damaged_zkeys_are_clear_errors_naming_the_file() {
    let good = bytes("multi_public.zkey");
    let cut = good[..good.len() - 100].to_vec();
    let e = zkey_error(cut);
    assert!(e.contains("damaged.zkey") && e.contains("truncated"), "{e}");

    let mut magic = good.clone();
    magic[..4].copy_from_slice(b"r1cs");
    let e = zkey_error(magic);
    assert!(e.contains("not a snarkjs .zkey file"), "{e}");

    let mut extra = good.clone();
    extra.extend_from_slice(&[0; 7]);
    let e = zkey_error(extra);
    assert!(e.contains("7 bytes after the last section"), "{e}");

    // Point 1 of the A query (section 5): its x coordinate moved off the curve.
    let mut off_curve = good.clone();
    let at = section_offset(&good, 5) + 96;
    off_curve[at] ^= 1;
    let e = zkey_error(off_curve);
    assert!(
        e.contains("points A") && e.contains("element 1 of 10"),
        "{e}"
    );
    assert!(
        e.contains("not on the curve") || e.contains("not below the field modulus"),
        "{e}"
    );

    // alpha_1 replaced by a point of G1's curve outside the prime-order subgroup.
    let mut outside = good.clone();
    let at = section_offset(&good, 2) + 4 + 48 + 4 + 32 + 12;
    outside[at..at + 96].copy_from_slice(&non_subgroup_g1_zkey_bytes());
    let e = zkey_error(outside);
    assert!(
        e.contains("alpha_1") && e.contains("not in the prime-order subgroup"),
        "{e}"
    );

    // A damaged base-field prime: no curve's (a real BN254 key: tests/curves.rs).
    let mut odd = good.clone();
    let at = section_offset(&good, 2) + 4;
    odd[at] ^= 0xff;
    let e = zkey_error(odd);
    assert!(
        e.contains("its base field prime (48 bytes) is neither BLS12-381's nor BN254's"),
        "{e}"
    );
}

#[test]
fn mismatched_files_are_clear_errors() {
    let zkey = Zkey::<crucible_core::Bls12_381>::read(&fixture("multi_public.zkey")).unwrap();
    let mut r1cs = R1cs::<crucible_core::Bls12_381>::read(&fixture("multi_public.r1cs")).unwrap();
    std::sync::Arc::make_mut(&mut r1cs.b)[2][0].0 += Fr::one();
    let e = zkey
        .check_matches(&r1cs, "a.zkey", "b.r1cs")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("a.zkey was not made for b.r1cs") && e.contains("row 2 of matrix B"),
        "{e}"
    );

    let z = read_witness::<crucible_core::Bls12_381>(&fixture("multi_public.wtns")).unwrap();
    let e = synthesized_from_zkey(&zkey.circuit(), z[..9].to_vec(), "short.wtns")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("short.wtns has 9 values") && e.contains("10 wires"),
        "{e}"
    );

    // A witness whose wire 0 is not the constant one.
    let mut w = bytes("multi_public.wtns");
    let at = section_offset(&w, 2);
    w[at] = 2;
    let e = read_witness_from::<crucible_core::Bls12_381, _>(Cursor::new(w), "bad.wtns")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bad.wtns") && e.contains("wire 0 must be the constant 1"),
        "{e}"
    );

    // An .r1cs constraint naming a wire the circuit does not have.
    let mut c = bytes("multi_public.r1cs");
    let at = section_offset(&c, 2) + 4;
    c[at..at + 4].copy_from_slice(&99u32.to_le_bytes());
    let e = R1cs::<crucible_core::Bls12_381>::from_reader(Cursor::new(c), "bad.r1cs")
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.r1cs") && e.contains("uses wire 99"), "{e}");
}
