//! Mutation fuzzing of every file reader (`crucible_conformance::fuzz`): `.zkey`,
//! `.r1cs`, `.wtns`, arkworks binary proofs, public inputs, verifying and proving
//! keys, and snarkjs JSON proofs, public inputs and verifying keys. Seeds are
//! snarkjs' fixtures and files the crate's own writers make; every accepted input
//! must round-trip through the writers or hold the reader's invariants.
//! `CRUCIBLE_FUZZ_SECONDS` sets each test's time, `CRUCIBLE_SEED` replays a run.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ark_serialize::Compress;
use crucible_conformance::fuzz::{fuzz_test, Verdict};
use crucible_conformance::proof_bytes;
use crucible_files::artifacts::{
    read_proof, read_proving_key, read_public, read_vk, write_proof, write_proving_key,
    write_public, write_vk,
};
use crucible_files::{read_witness_from, R1cs, Zkey};

use crate::big_zkey;

/// No input of these small seeds should take near this long.
const PER_INPUT: Duration = Duration::from_secs(10);

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("crucible-fuzz-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(
    name: &str,
    seeds: Vec<Vec<u8>>,
    check: impl Fn(&[u8]) -> Result<Verdict, String> + Send + 'static,
) {
    fuzz_test(name, seeds, PER_INPUT, check);
}

#[test]
fn fuzz_zkey() {
    let mut small = Vec::new();
    big_zkey::big_zkey(3, 5, 1).write_to(&mut small).unwrap();
    run("zkey", vec![fixture("multi_public.zkey"), small], |bytes| {
        let Ok(key) =
            Zkey::<crucible_core::Bls12_381>::from_reader(Cursor::new(bytes), "input.zkey")
        else {
            return Ok(Verdict::Rejected);
        };
        let mut written = Vec::new();
        key.write_to(&mut written).map_err(|e| e.to_string())?;
        let again =
            Zkey::<crucible_core::Bls12_381>::from_reader(Cursor::new(written), "written.zkey")
                .map_err(|e| format!("its rewrite does not read: {e}"))?;
        let same = again.proving_key == key.proving_key
            && again.a == key.a
            && again.b == key.b
            && (again.num_wires, again.num_public, again.domain_size)
                == (key.num_wires, key.num_public, key.domain_size);
        if !same {
            return Err("its rewrite reads as another key".into());
        }
        Ok(Verdict::Accepted)
    });
}

#[test]
fn fuzz_r1cs() {
    run("r1cs", vec![fixture("multi_public.r1cs")], |bytes| {
        let Ok(r1cs) =
            R1cs::<crucible_core::Bls12_381>::from_reader(Cursor::new(bytes), "input.r1cs")
        else {
            return Ok(Verdict::Rejected);
        };
        let rows = [&r1cs.a, &r1cs.b, &r1cs.c];
        if rows.iter().any(|m| m.len() != r1cs.num_constraints()) {
            return Err("matrices of different lengths".into());
        }
        let bad_wire = rows
            .iter()
            .flat_map(|m| m.iter().flatten())
            .any(|(_, w)| *w >= r1cs.num_wires);
        if bad_wire {
            return Err(format!("a term names a wire outside {}", r1cs.num_wires));
        }
        if r1cs.num_wires < 1 + r1cs.num_public + r1cs.num_private_inputs {
            return Err("fewer wires than signals".into());
        }
        // Its shape is a value or an error, never a panic.
        let _ = r1cs.shape();
        Ok(Verdict::Accepted)
    });
}

#[test]
fn fuzz_wtns() {
    run("wtns", vec![fixture("multi_public.wtns")], |bytes| {
        let Ok(values) =
            read_witness_from::<crucible_core::Bls12_381, _>(Cursor::new(bytes), "input.wtns")
        else {
            return Ok(Verdict::Rejected);
        };
        if values.first() != Some(&ark_ff::One::one()) {
            return Err("wire 0 is not the constant one".into());
        }
        if values.len() * 32 > bytes.len() {
            return Err(format!(
                "{} values from {} bytes",
                values.len(),
                bytes.len()
            ));
        }
        Ok(Verdict::Accepted)
    });
}

/// Every input is tried as each of the four arkworks files; what reads is written
/// back and must read as the same value.
#[test]
fn fuzz_arkworks_binary() {
    let dir = scratch("arkworks");
    let key = Zkey::<crucible_core::Bls12_381>::from_reader(
        Cursor::new(fixture("multi_public.zkey")),
        "f",
    )
    .unwrap();
    let proof = crucible_files::snarkjs_json::proof_from_json::<crucible_core::Bls12_381>(
        &serde_json::from_slice(&fixture("multi_public.snarkjs-proof.json")).unwrap(),
        "p",
    )
    .unwrap();
    let public = crucible_files::snarkjs_json::public_from_json::<crucible_core::Fr>(
        &serde_json::from_slice(&fixture("multi_public.snarkjs-public.json")).unwrap(),
        "p",
    )
    .unwrap();
    let seed_path = |n: &str| dir.join(n);
    write_proof(&seed_path("proof.bin"), &proof).unwrap();
    write_public(&seed_path("public.bin"), &public).unwrap();
    write_vk(&seed_path("vk.bin"), &key.proving_key.vk).unwrap();
    write_proving_key(&seed_path("pk.bin"), &key.proving_key, Compress::Yes).unwrap();
    write_proving_key(&seed_path("pk-full.bin"), &key.proving_key, Compress::No).unwrap();
    let seeds = ["proof.bin", "public.bin", "vk.bin", "pk.bin", "pk-full.bin"]
        .iter()
        .map(|n| std::fs::read(seed_path(n)).unwrap())
        .collect();
    let input = dir.join("input.bin");
    let out = dir.join("out.bin");
    run("arkworks", seeds, move |bytes| {
        readers_round_trip(bytes, &input, &out)
    });
}

/// snarkjs' JSON proof, public inputs and verifying key; each input is tried as all
/// three.
#[test]
fn fuzz_snarkjs_json() {
    let dir = scratch("json");
    let seeds = vec![
        fixture("multi_public.snarkjs-proof.json"),
        fixture("multi_public.snarkjs-public.json"),
        fixture("multi_public.vk.json"),
    ];
    let input = dir.join("input.json");
    let out = dir.join("out.json");
    run("json", seeds, move |bytes| {
        readers_round_trip(bytes, &input, &out)
    });
}

/// Reads `bytes` (written to `input`) as a proof, public inputs, a verifying key and,
/// for binary files, a proving key; each value read is written to `out` and read back.
fn readers_round_trip(bytes: &[u8], input: &Path, out: &Path) -> Result<Verdict, String> {
    std::fs::write(input, bytes).map_err(|e| e.to_string())?;
    let mut verdict = Verdict::Rejected;
    let fail = |what: &str, e: crucible_core::Error| format!("{what}: {e}");
    if let Ok(proof) = read_proof::<crucible_core::Bls12_381>(input) {
        write_proof(out, &proof).map_err(|e| fail("writing the proof", e))?;
        let again = read_proof::<crucible_core::Bls12_381>(out)
            .map_err(|e| fail("the written proof", e))?;
        if proof_bytes(&again) != proof_bytes(&proof) {
            return Err("the proof reads back differently".into());
        }
        verdict = Verdict::Accepted;
    }
    if let Ok(public) = read_public::<crucible_core::Bls12_381>(input) {
        write_public(out, &public).map_err(|e| fail("writing the inputs", e))?;
        if read_public::<crucible_core::Bls12_381>(out)
            .map_err(|e| fail("the written inputs", e))?
            != public
        {
            return Err("the public inputs read back differently".into());
        }
        verdict = Verdict::Accepted;
    }
    if let Ok(vk) = read_vk::<crucible_core::Bls12_381>(input) {
        write_vk(out, &vk).map_err(|e| fail("writing the key", e))?;
        if read_vk::<crucible_core::Bls12_381>(out).map_err(|e| fail("the written key", e))? != vk {
            return Err("the verifying key reads back differently".into());
        }
        verdict = Verdict::Accepted;
    }
    let is_binary = input.extension().is_some_and(|e| e == "bin");
    if is_binary {
        if let Ok(pk) = read_proving_key::<crucible_core::Bls12_381>(input) {
            write_proving_key(out, &pk, Compress::Yes).map_err(|e| fail("writing the key", e))?;
            if read_proving_key(out).map_err(|e| fail("the written key", e))? != pk {
                return Err("the proving key reads back differently".into());
            }
            verdict = Verdict::Accepted;
        }
    }
    Ok(verdict)
}
