//! Files name their curve: real circom and snarkjs files of both curves (`fixtures/`
//! for BLS12-381, `fixtures/bn254/` for circom's default prime; see
//! `fixtures/README.md`) are told apart by their headers, each curve's readers read
//! its files and refuse the other's naming both curves, and a BN254 key's verifying key reads the same from its
//! `.zkey` as from snarkjs' own export of it.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use crucible_core::curve::Curve;
use crucible_core::{Bls12_381, Bn254, Error};
use crucible_files::{curve_of, curve_of_reader, read_witness, CurveVerifyingKey, R1cs, Zkey};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

const KINDS: [&str; 3] = ["r1cs", "wtns", "zkey"];

#[test]
fn every_file_names_its_curve() {
    for kind in KINDS {
        let bls = fixture(&format!("multi_public.{kind}"));
        let bn254 = fixture(&format!("bn254/multi_public.{kind}"));
        assert_eq!(curve_of(&bls).unwrap(), Curve::Bls12_381, "{kind}");
        assert_eq!(curve_of(&bn254).unwrap(), Curve::Bn254, "{kind}");
    }
}

/// The refusal a reader of one curve gives a file of the other.
fn assert_refused(err: Error, file: &str, what: &str, found: Curve, wanted: Curve) {
    assert!(matches!(err, Error::InvalidInput(_)), "{err:?}");
    let text = err.to_string();
    let want = format!(
        "{file}: a {found} ({}) {what} where {wanted} ({}) is proved",
        found.circom_name(),
        wanted.circom_name()
    );
    assert!(text.contains(&want), "{text}\nwant: {want}");
    assert!(
        text.contains(&format!("circom `--prime {}`", wanted.circom_name())),
        "{text}"
    );
}

#[test]
fn each_curves_readers_read_its_files_and_refuse_the_others_naming_both() {
    let path = |dir: &str, kind: &str| fixture(&format!("{dir}multi_public.{kind}"));
    let shown = |dir: &str, kind: &str| path(dir, kind).display().to_string();
    // BN254's files read as BN254: the witness is the one snarkjs proved with.
    let r1cs = R1cs::<Bn254>::read(&path("bn254/", "r1cs")).unwrap();
    let witness = read_witness::<Bn254>(&path("bn254/", "wtns")).unwrap();
    let zkey = Zkey::<Bn254>::read(&path("bn254/", "zkey")).unwrap();
    zkey.check_matches(&r1cs, "zkey", "r1cs").unwrap();
    let public: Vec<String> = serde_json::from_slice(
        &std::fs::read(fixture("bn254/multi_public.snarkjs-public.json")).unwrap(),
    )
    .unwrap();
    let ours: Vec<String> = witness[1..=r1cs.num_public]
        .iter()
        .map(|x| x.to_string())
        .collect();
    assert_eq!(ours, public);
    // Each curve's readers refuse the other curve's files.
    for (dir, found, wanted) in [
        ("bn254/", Curve::Bn254, Curve::Bls12_381),
        ("", Curve::Bls12_381, Curve::Bn254),
    ] {
        let refuse = |err: Error, kind: &str, what: &str| {
            assert_refused(err, &shown(dir, kind), what, found, wanted)
        };
        if wanted == Curve::Bls12_381 {
            refuse(
                R1cs::<Bls12_381>::read(&path(dir, "r1cs")).unwrap_err(),
                "r1cs",
                "circuit",
            );
            refuse(
                read_witness::<Bls12_381>(&path(dir, "wtns")).unwrap_err(),
                "wtns",
                "witness",
            );
            refuse(
                Zkey::<Bls12_381>::read(&path(dir, "zkey")).unwrap_err(),
                "zkey",
                "key",
            );
            refuse(
                Zkey::<Bls12_381>::read_header(&path(dir, "zkey")).unwrap_err(),
                "zkey",
                "key",
            );
        } else {
            refuse(
                R1cs::<Bn254>::read(&path(dir, "r1cs")).unwrap_err(),
                "r1cs",
                "circuit",
            );
            refuse(
                read_witness::<Bn254>(&path(dir, "wtns")).unwrap_err(),
                "wtns",
                "witness",
            );
            refuse(
                Zkey::<Bn254>::read(&path(dir, "zkey")).unwrap_err(),
                "zkey",
                "key",
            );
            refuse(
                Zkey::<Bn254>::read_header(&path(dir, "zkey")).unwrap_err(),
                "zkey",
                "key",
            );
        }
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path("bn254/", "vk.json")).unwrap()).unwrap();
    assert_refused(
        crucible_files::snarkjs_json::vk_from_json::<crucible_core::Bls12_381>(&json, "vk.json")
            .unwrap_err(),
        "vk.json",
        "file",
        Curve::Bn254,
        Curve::Bls12_381,
    );
}

/// The `.r1cs` fixture with its header's prime replaced by `prime` (same length).
fn with_prime(prime: &[u8]) -> Vec<u8> {
    let mut bytes = std::fs::read(fixture("bn254/multi_public.r1cs")).unwrap();
    let at = bytes
        .windows(32)
        .position(|w| w == Curve::Bn254.scalar_modulus())
        .expect("the header holds the prime");
    bytes[at..at + 32].copy_from_slice(prime);
    bytes
}

#[test]
fn an_unknown_prime_is_refused_as_neither_curve() {
    // BN254's base field prime where its scalar field's belongs.
    let bytes = with_prime(&Curve::Bn254.base_modulus());
    let err = curve_of_reader(Cursor::new(&bytes), "odd.r1cs")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "odd.r1cs: its scalar field prime (32 bytes) is neither BLS12-381's nor BN254's"
        ),
        "{err}"
    );
    let err = R1cs::<Bls12_381>::from_reader(Cursor::new(&bytes), "odd.r1cs")
        .unwrap_err()
        .to_string();
    assert!(err.contains("neither BLS12-381's nor BN254's"), "{err}");
    let same = with_prime(&Curve::Bn254.scalar_modulus());
    assert_eq!(
        curve_of_reader(Cursor::new(&same), "same.r1cs").unwrap(),
        Curve::Bn254
    );
    let err = curve_of_reader(Cursor::new(b"ptau\x01\0\0\0\0\0\0\0"), "x.ptau")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not a circom .r1cs or .wtns nor a snarkjs .zkey"),
        "{err}"
    );
}

#[test]
fn a_verifying_key_reads_the_same_from_the_zkey_as_from_snarkjs_export() {
    for (dir, curve) in [("", Curve::Bls12_381), ("bn254/", Curve::Bn254)] {
        let from_zkey =
            CurveVerifyingKey::from_zkey(&fixture(&format!("{dir}multi_public.zkey"))).unwrap();
        let from_json =
            CurveVerifyingKey::read(&fixture(&format!("{dir}multi_public.vk.json"))).unwrap();
        assert_eq!(from_zkey.curve(), curve);
        assert_eq!(from_zkey.num_public(), 5);
        assert_eq!(from_zkey, from_json, "{curve}");
    }
    // And BLS12-381's as the full reader reads it.
    let full = Zkey::<Bls12_381>::read(&fixture("multi_public.zkey"))
        .unwrap()
        .proving_key
        .vk;
    assert_eq!(
        CurveVerifyingKey::from_zkey(&fixture("multi_public.zkey")).unwrap(),
        CurveVerifyingKey::Bls12_381(Box::new(full))
    );
}

#[test]
fn an_arkworks_verifying_key_is_read_on_its_own_curve() {
    use ark_serialize::CanonicalSerialize;
    let dir = std::env::temp_dir().join(format!("crucible-curves-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let keys = [
        CurveVerifyingKey::from_zkey(&fixture("multi_public.zkey")).unwrap(),
        CurveVerifyingKey::from_zkey(&fixture("bn254/multi_public.zkey")).unwrap(),
    ];
    for key in keys {
        let mut bytes = Vec::new();
        match &key {
            CurveVerifyingKey::Bls12_381(vk) => vk.serialize_compressed(&mut bytes),
            CurveVerifyingKey::Bn254(vk) => vk.serialize_uncompressed(&mut bytes),
        }
        .unwrap();
        let path = dir.join(format!("{}.vk", key.curve()));
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(CurveVerifyingKey::read(&path).unwrap(), key);
        bytes.pop();
        std::fs::write(&path, &bytes).unwrap();
        let err = CurveVerifyingKey::read(&path).unwrap_err().to_string();
        assert!(
            err.contains("for BN254") && err.contains("for BLS12-381"),
            "{err}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bn254_proof_reads_and_verifies_in_both_forms_and_the_other_curves_readers_refuse_it() {
    use ark_groth16::{prepare_verifying_key, Groth16};
    use crucible_files::artifacts::{read_proof, read_public, read_vk, write_proof, write_public};

    let (vk, proof, public) = (
        fixture("bn254/multi_public.vk.json"),
        fixture("bn254/multi_public.snarkjs-proof.json"),
        fixture("bn254/multi_public.snarkjs-public.json"),
    );
    let key = read_vk::<Bn254>(&vk).unwrap();
    assert!(matches!(
        CurveVerifyingKey::read(&vk).unwrap(),
        CurveVerifyingKey::Bn254(k) if *k == key
    ));
    let p = read_proof::<Bn254>(&proof).unwrap();
    let inputs = read_public::<Bn254>(&public).unwrap();
    let pvk = prepare_verifying_key(&key);
    assert!(Groth16::<Bn254>::verify_proof(&pvk, &p, &inputs).unwrap());
    let mut tampered = inputs.clone();
    tampered[0] += crucible_core::ark_bn254::Fr::from(1u64);
    assert!(!Groth16::<Bn254>::verify_proof(&pvk, &p, &tampered).unwrap());

    // arkworks' binary form round-trips on BN254 as snarkjs' JSON does.
    let dir = std::env::temp_dir().join(format!("crucible-curves-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (proof_bin, public_bin) = (dir.join("proof.bin"), dir.join("public.bin"));
    write_proof(&proof_bin, &p).unwrap();
    write_public(&public_bin, &inputs).unwrap();
    assert_eq!(read_proof::<Bn254>(&proof_bin).unwrap(), p);
    assert_eq!(read_public::<Bn254>(&public_bin).unwrap(), inputs);
    // A BLS12-381 reader refuses the BN254 proof, naming both curves.
    let shown = proof.display().to_string();
    assert_refused(
        read_proof::<Bls12_381>(&proof).unwrap_err(),
        &shown,
        "file",
        Curve::Bn254,
        Curve::Bls12_381,
    );
    assert!(read_proof::<Bls12_381>(&proof_bin).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}
