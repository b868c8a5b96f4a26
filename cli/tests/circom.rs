//! crucible against the real circom and snarkjs (npm packages pinned in
//! `interop/circom/package.json`), on the circuits in `interop/circom/`: crucible's
//! proofs pass `snarkjs groth16 verify`, snarkjs' proofs pass `crucible verify`,
//! tampered proofs, public signals and keys fail both, and `--check` is byte-identical
//! to ark-groth16 with the matching reduction.
//!
//! The artifacts come from `interop/circom/build.sh`: from `$CRUCIBLE_CIRCOM_OUT` when
//! it is set (CI builds them there while cargo compiles), else built now into a
//! temporary folder of this test process (about a minute: the powers of tau from
//! crucible-files' development writer, then snarkjs' setup of each circuit), from any
//! working directory. The tools are required: missing ones fail every test with the
//! command that installs them, `(cd interop/circom && npm ci)`, unless
//! `CRUCIBLE_NO_NPM=1` says this environment has no npm, in which case each test
//! prints that it is skipped and why.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

mod support;
use support::{crucible, text};

const CIRCUITS: [&str; 3] = ["multi_public", "chain", "circomlib_gates"];

/// The circuits built with circom's default prime (BN254), in the artifacts' `bn254/`.
const BN254_CIRCUITS: [&str; 5] = [
    "multi_public",
    "chain",
    "circomlib_gates",
    "poseidon",
    "sha256",
];

fn interop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../interop/circom")
}

fn tool(name: &str) -> PathBuf {
    interop().join("node_modules/.bin").join(name)
}

/// The artifacts folder, or `None` (after saying so) when `CRUCIBLE_NO_NPM` is set;
/// built once per test process (a failed build fails every test with its output).
fn artifacts() -> Option<&'static Path> {
    static DIR: OnceLock<Result<Option<PathBuf>, String>> = OnceLock::new();
    match DIR.get_or_init(build_artifacts) {
        Ok(dir) => dir.as_deref(),
        Err(e) => panic!("{e}"),
    }
}

/// `$CRUCIBLE_CIRCOM_OUT` when set, else a fresh folder of this process (concurrent
/// test processes never share one) with the powers of tau of both curves from
/// crucible-files' development writer, as CI makes them, and `build.sh`'s artifacts.
fn build_artifacts() -> Result<Option<PathBuf>, String> {
    if std::env::var_os("CRUCIBLE_NO_NPM").is_some_and(|v| v != "0") {
        return Ok(None);
    }
    for t in ["snarkjs", "circom2"] {
        if !tool(t).exists() {
            return Err(format!(
                "{} is missing: run `(cd interop/circom && npm ci)` from the repository \
                 root first (CI's .ci/run does), or set CRUCIBLE_NO_NPM=1 to skip these \
                 tests where there is no npm",
                tool(t).display()
            ));
        }
    }
    if let Some(dir) = std::env::var_os("CRUCIBLE_CIRCOM_OUT") {
        let dir = PathBuf::from(dir);
        if !dir.join("done").exists() {
            return Err(format!(
                "CRUCIBLE_CIRCOM_OUT={} has no finished build (interop/circom/build.sh)",
                dir.display()
            ));
        }
        return Ok(Some(dir));
    }
    let dir = std::env::temp_dir().join(format!("crucible-circom-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    crucible_files::ptau::DevPtau::<crucible_core::Bls12_381>::from_seed(14, 1)
        .and_then(|p| p.write_file(&dir.join("pot14.ptau"), true))
        .map_err(|e| format!("writing the powers of tau: {e}"))?;
    crucible_files::ptau::DevPtau::<crucible_core::Bn254>::from_seed(15, 1)
        .and_then(|p| p.write_file(&dir.join("bn128-pot15.ptau"), true))
        .map_err(|e| format!("writing BN254's powers of tau: {e}"))?;
    let out = Command::new("bash")
        .arg(interop().join("build.sh"))
        .arg(&dir)
        .arg(&dir)
        .output()
        .map_err(|e| format!("running build.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!("interop/circom/build.sh failed: {}", text(&out)));
    }
    Ok(Some(dir))
}

macro_rules! artifacts_or_skip {
    () => {
        match artifacts() {
            Some(dir) => dir,
            None => {
                println!("skipped: CRUCIBLE_NO_NPM is set, so snarkjs and circom are not run");
                return;
            }
        }
    };
}

fn snarkjs_verify(vk: &Path, public: &Path, proof: &Path) -> Output {
    Command::new(tool("snarkjs"))
        .args(["groth16", "verify"])
        .args([vk, public, proof])
        .output()
        .expect("runs snarkjs")
}

/// `crucible verify` of `proof` with `public` under `vk`.
fn verify(vk: &Path, proof: &Path, public: &Path) -> Output {
    crucible(&[
        "verify",
        "--vk",
        path(vk),
        "--proof",
        path(proof),
        "--public",
        path(public),
    ])
}

/// [`verify`] accepts the proof (`what` names the case in a failure).
fn assert_verifies(what: &str, vk: &Path, proof: &Path, public: &Path) {
    let out = verify(vk, proof, public);
    assert!(
        out.status.success() && text(&out).contains("valid:"),
        "{what}: {}",
        text(&out)
    );
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A folder for one test's outputs inside the artifacts folder.
fn work(dir: &Path, test: &str) -> PathBuf {
    let w = dir.join(format!("test-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&w).unwrap();
    w
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn write_json(p: &Path, v: &Value) {
    std::fs::write(p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

/// Whether a backend can run here; `Some(reason)` when it cannot. A backend required
/// by `CRUCIBLE_REQUIRE` must run.
fn unavailable(backend: &str) -> Option<String> {
    let out = crucible(&["backends"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let available = stdout.lines().any(|l| {
        l.starts_with(&format!("{backend}:"))
            && l.contains("available")
            && !l.contains("unavailable")
    });
    let required = crucible_core::registry::is_required(backend);
    if available {
        None
    } else if required {
        panic!("{backend} is required by CRUCIBLE_REQUIRE but unavailable:\n{stdout}");
    } else {
        Some(stdout)
    }
}

#[test]
fn snarkjs_verifies_crucible_proofs_byte_identical_to_the_reference() {
    let dir = artifacts_or_skip!();
    let w = work(dir, "prove");
    let mut runs: Vec<(&str, &str, bool)> = CIRCUITS.iter().map(|c| (*c, "cpu", true)).collect();
    runs.push(("multi_public", "cpu", false));
    match unavailable("wgpu") {
        None => runs.push(("multi_public", "wgpu", true)),
        Some(why) => println!("skipped: wgpu is unavailable here:\n{why}"),
    }
    for (c, backend, with_r1cs) in runs {
        let (proof, public) = (
            w.join(format!("{c}-{backend}-{with_r1cs}.proof.json")),
            w.join(format!("{c}-{backend}-{with_r1cs}.public.json")),
        );
        let (zkey, wtns, r1cs) = (
            dir.join(format!("{c}.zkey")),
            dir.join(format!("{c}.wtns")),
            dir.join(format!("{c}.r1cs")),
        );
        let mut args = vec![
            "prove",
            "--backend",
            backend,
            "--zkey",
            path(&zkey),
            "--wtns",
            path(&wtns),
            "--proof",
            path(&proof),
            "--public",
            path(&public),
            "--check",
        ];
        if with_r1cs {
            args.extend(["--r1cs", path(&r1cs)]);
        }
        let out = crucible(&args);
        let shown = text(&out);
        assert!(out.status.success(), "{c} on {backend}: {shown}");
        assert!(
            shown.contains("check: byte-identical to ark-groth16 (snarkjs' reduction)"),
            "{c} on {backend}: {shown}"
        );
        if backend != "cpu" {
            assert!(shown.contains("and to cpu:0"), "{shown}");
        }
        let v = snarkjs_verify(&dir.join(format!("{c}.vk.json")), &public, &proof);
        assert!(
            v.status.success() && text(&v).contains("OK!"),
            "snarkjs rejects crucible's {c} proof ({backend}): {}",
            text(&v)
        );
        // The public signals are snarkjs' own for the same witness.
        assert_eq!(
            read_json(&public),
            read_json(&dir.join(format!("{c}.snarkjs-public.json"))),
            "{c}"
        );
    }
}

/// circom's default prime: each circuit (circomlib's Poseidon and SHA-256 among them)
/// proves from its `.zkey` and `.wtns` on the curve the key names, byte-identical to
/// ark-groth16 with snarkjs' reduction, `snarkjs groth16 verify` accepts the proof and
/// `crucible verify` both its own and snarkjs', `export-vk` writes snarkjs' verifying
/// key; a key of one curve with a witness of the other is refused naming both.
#[test]
fn bn254_circuits_prove_and_snarkjs_verifies_them() {
    let dir = artifacts_or_skip!();
    let bn = dir.join("bn254");
    let w = work(dir, "prove-bn254");
    for c in BN254_CIRCUITS {
        let (proof, public) = (
            w.join(format!("{c}.proof.json")),
            w.join(format!("{c}.public.json")),
        );
        let (zkey, wtns, r1cs) = (
            bn.join(format!("{c}.zkey")),
            bn.join(format!("{c}.wtns")),
            bn.join(format!("{c}.r1cs")),
        );
        let out = crucible(&[
            "prove",
            "--backend",
            "cpu",
            "--zkey",
            path(&zkey),
            "--wtns",
            path(&wtns),
            "--r1cs",
            path(&r1cs),
            "--proof",
            path(&proof),
            "--public",
            path(&public),
            "--check",
        ]);
        let shown = text(&out);
        assert!(out.status.success(), "{c}: {shown}");
        assert!(
            shown.contains("check: byte-identical to ark-groth16 (snarkjs' reduction)"),
            "{c}: {shown}"
        );
        assert_eq!(read_json(&proof)["curve"], "bn128", "{c}");
        let v = snarkjs_verify(&bn.join(format!("{c}.vk.json")), &public, &proof);
        assert!(
            v.status.success() && text(&v).contains("OK!"),
            "snarkjs rejects crucible's BN254 {c} proof: {}",
            text(&v)
        );
        assert_eq!(
            read_json(&public),
            read_json(&bn.join(format!("{c}.snarkjs-public.json"))),
            "{c}"
        );
        // crucible verifies its own proof and snarkjs' under snarkjs' key, and exports
        // the key snarkjs exported.
        let vk = bn.join(format!("{c}.vk.json"));
        for p in [proof.clone(), bn.join(format!("{c}.snarkjs-proof.json"))] {
            assert_verifies(c, &vk, &p, &public);
        }
        let exported = w.join(format!("{c}.vk.json"));
        let out = crucible(&["export-vk", "--zkey", path(&zkey), "--out", path(&exported)]);
        assert!(out.status.success(), "{c}: {}", text(&out));
        assert_eq!(
            read_json(&exported),
            read_json(&vk),
            "{c}: export-vk differs from snarkjs'"
        );
    }
    // A BN254 key with a BLS12-381 witness of the same circuit.
    let out = crucible(&[
        "prove",
        "--backend",
        "cpu",
        "--zkey",
        path(&bn.join("multi_public.zkey")),
        "--wtns",
        path(&dir.join("multi_public.wtns")),
        "--json",
    ]);
    let shown = text(&out);
    assert!(!out.status.success(), "{shown}");
    assert!(
        shown.contains("a BLS12-381 (bls12381) witness where BN254 (bn128) is proved"),
        "{shown}"
    );
}

#[test]
fn crucible_verifies_snarkjs_proofs_and_exports_snarkjs_verifying_keys() {
    let dir = artifacts_or_skip!();
    let w = work(dir, "verify");
    for c in CIRCUITS {
        let (vk, proof, public) = (
            dir.join(format!("{c}.vk.json")),
            dir.join(format!("{c}.snarkjs-proof.json")),
            dir.join(format!("{c}.snarkjs-public.json")),
        );
        assert_verifies(c, &vk, &proof, &public);
        let (json_vk, bin_vk) = (
            w.join(format!("{c}.vk.json")),
            w.join(format!("{c}.vk.bin")),
        );
        let zkey = dir.join(format!("{c}.zkey"));
        let out = crucible(&[
            "export-vk",
            "--zkey",
            path(&zkey),
            "--out",
            path(&json_vk),
            "--out",
            path(&bin_vk),
        ]);
        assert!(out.status.success(), "{}", text(&out));
        assert_eq!(
            read_json(&json_vk),
            read_json(&vk),
            "{c}: export-vk differs from snarkjs'"
        );
        let out = verify(&bin_vk, &proof, &public);
        assert!(
            out.status.success(),
            "{c} with the binary key: {}",
            text(&out)
        );
    }
}

#[test]
fn tampered_proofs_public_signals_and_keys_fail_both_verifiers() {
    let dir = artifacts_or_skip!();
    let w = work(dir, "tamper");
    let c = "multi_public";
    let (vk, proof, public) = (
        dir.join(format!("{c}.vk.json")),
        dir.join(format!("{c}.snarkjs-proof.json")),
        dir.join(format!("{c}.snarkjs-public.json")),
    );
    // Each tampering keeps every point valid, so both verifiers get to the pairing.
    let mut bad_proof = read_json(&proof);
    bad_proof["pi_c"] = bad_proof["pi_a"].clone();
    let mut bad_public = read_json(&public);
    bad_public[1] = Value::String("12345".into());
    let mut bad_vk = read_json(&vk);
    bad_vk["IC"][2] = bad_vk["IC"][1].clone();
    write_json(&w.join("bad-proof.json"), &bad_proof);
    write_json(&w.join("bad-public.json"), &bad_public);
    write_json(&w.join("bad-vk.json"), &bad_vk);
    let triples = [
        (
            "proof",
            vk.clone(),
            public.clone(),
            w.join("bad-proof.json"),
        ),
        (
            "public signal",
            vk.clone(),
            w.join("bad-public.json"),
            proof.clone(),
        ),
        (
            "verifying key",
            w.join("bad-vk.json"),
            public.clone(),
            proof.clone(),
        ),
    ];
    for (what, vk, public, proof) in &triples {
        let ours = verify(vk, proof, public);
        assert_eq!(
            ours.status.code(),
            Some(1),
            "crucible accepts a tampered {what}: {}",
            text(&ours)
        );
        assert!(text(&ours).contains("INVALID"), "{}", text(&ours));
        let theirs = snarkjs_verify(vk, public, proof);
        assert!(
            !text(&theirs).contains("OK!"),
            "snarkjs accepts a tampered {what}: {}",
            text(&theirs)
        );
    }
    // The untampered files pass both (so the failures above are the tampering's).
    assert!(verify(&vk, &proof, &public).status.success());
    assert!(text(&snarkjs_verify(&vk, &public, &proof)).contains("OK!"));
}

#[test]
fn arkworks_keys_prove_circom_circuits_with_the_libsnark_reduction() {
    let dir = artifacts_or_skip!();
    let w = work(dir, "arkworks");
    for c in ["multi_public", "circomlib_gates"] {
        let (r1cs, wtns) = (dir.join(format!("{c}.r1cs")), dir.join(format!("{c}.wtns")));
        let (pk, vk) = (w.join(format!("{c}.pk")), w.join(format!("{c}.vk.json")));
        let out = crucible(&[
            "setup",
            "--r1cs",
            path(&r1cs),
            "--out",
            path(&pk),
            "--vk",
            path(&vk),
        ]);
        assert!(out.status.success(), "{}", text(&out));
        assert!(text(&out).contains("not a ceremony"), "{}", text(&out));
        for ext in ["json", "bin"] {
            let (proof, public) = (
                w.join(format!("{c}.proof.{ext}")),
                w.join(format!("{c}.public.{ext}")),
            );
            let out = crucible(&[
                "prove",
                "--backend",
                "cpu",
                "--pk",
                path(&pk),
                "--r1cs",
                path(&r1cs),
                "--wtns",
                path(&wtns),
                "--proof",
                path(&proof),
                "--public",
                path(&public),
                "--check",
            ]);
            assert!(out.status.success(), "{}", text(&out));
            assert!(
                text(&out).contains(
                    "check: byte-identical to ark-groth16 (ark-groth16's libsnark reduction)"
                ),
                "{}",
                text(&out)
            );
            let ok = verify(&vk, &proof, &public);
            assert!(ok.status.success(), "{}", text(&ok));
            if ext == "json" {
                // snarkjs' verifier does not care which reduction made the proof.
                let v = snarkjs_verify(&vk, &public, &proof);
                assert!(text(&v).contains("OK!"), "{}", text(&v));
            }
        }
    }
}

#[test]
fn mismatched_or_damaged_files_are_clear_errors() {
    let dir = artifacts_or_skip!();
    let w = work(dir, "errors");
    let f = |c: &str, ext: &str| dir.join(format!("{c}.{ext}"));
    let cases: Vec<(Vec<PathBuf>, &str)> = vec![
        (
            vec![f("multi_public", "zkey"), f("chain", "wtns")],
            "a witness of another circuit?",
        ),
        (
            vec![
                f("multi_public", "zkey"),
                f("multi_public", "wtns"),
                f("chain", "r1cs"),
            ],
            "was not made for",
        ),
    ];
    for (files, message) in cases {
        // `--json`: the proof would be printed; the files are refused before that.
        let mut args = vec![
            "prove".to_string(),
            "--backend".into(),
            "cpu".into(),
            "--json".into(),
        ];
        for (flag, file) in ["--zkey", "--wtns", "--r1cs"].iter().zip(&files) {
            args.push(flag.to_string());
            args.push(path(file).into());
        }
        let out = Command::new(env!("CARGO_BIN_EXE_crucible"))
            .args(&args)
            .output()
            .unwrap();
        let shown = text(&out);
        // Exit 3: a file is not what it should be.
        assert_eq!(out.status.code(), Some(3), "{shown}");
        assert!(
            shown.contains(message) && !shown.contains("panicked"),
            "{shown}"
        );
    }
    let cut = w.join("cut.zkey");
    let bytes = std::fs::read(f("chain", "zkey")).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = crucible(&[
        "prove",
        "--backend",
        "cpu",
        "--zkey",
        path(&cut),
        "--wtns",
        path(&f("chain", "wtns")),
        "--json",
    ]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(3), "{shown}");
    assert!(
        shown.contains("cut.zkey") && shown.contains("truncated") && !shown.contains("panicked"),
        "{shown}"
    );
}
