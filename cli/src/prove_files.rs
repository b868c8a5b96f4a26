//! `crucible prove` on the user's own circuit: a snarkjs `.zkey` (snarkjs' reduction)
//! or an arkworks proving key (ark-groth16's), a circom witness, optionally the
//! `.r1cs`; the proof and public signals written in snarkjs' JSON or arkworks' binary
//! form; `--check` against ark-groth16 and the CPU reference, byte for byte.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ark_ff::UniformRand;
use ark_std::rand::{rngs::OsRng, rngs::StdRng, RngCore, SeedableRng};
use clap::Args;
use crucible_conformance::{cross_check, hex, proof_bytes, verify_with_arkworks};
use crucible_core::curve::Curve;
use crucible_core::groth16::{KeyOptions, ProofOutput, ProveOptions, Reduction};
use crucible_core::registry::{select, RegisteredCurve, Selected};
use crucible_core::{Bls12_381, Bn254, ProverBackend};
use crucible_files::artifacts::{write_proof, write_public};
use crucible_files::output::check_outputs;
use crucible_files::snarkjs_json::{proof_to_json, public_to_json};
use crucible_files::{curve_of, FileCurve, KeyAndWitness};
use serde_json::json;

use crate::devices::{select_backend, BackendArgs};
use crate::error::CliError;
use crate::output::{check_writable, count, file_form, load_line, spinner};
use crate::sink::Sink;

/// The user's circuit, key and witness files, and where the proof goes.
#[derive(Args, Clone, Debug, Default)]
pub struct FileInputs {
    /// A snarkjs Groth16 proving key (`snarkjs groth16 setup`, curve bls12381):
    /// proves with snarkjs' reduction, so `snarkjs groth16 verify` accepts the proof.
    #[arg(long, conflicts_with_all = ["pk", "constraints"], requires = "wtns")]
    pub zkey: Option<PathBuf>,
    /// An arkworks `ProvingKey<Bls12_381>` (ark-serialize, compressed or not; `crucible
    /// setup` writes one): proves with ark-groth16's reduction. Needs --r1cs and --wtns.
    #[arg(long, conflicts_with = "constraints", requires_all = ["r1cs", "wtns"])]
    pub pk: Option<PathBuf>,
    /// circom's constraints (`circom --r1cs --prime bls12381`). With --zkey it is
    /// checked against the key, and every constraint is checked before proving.
    #[arg(long)]
    pub r1cs: Option<PathBuf>,
    /// circom's witness (`snarkjs wtns calculate`, or circom's witness generator).
    #[arg(long)]
    pub wtns: Option<PathBuf>,
    /// Write the proof here: snarkjs' `proof.json` form for a `*.json` name, else
    /// arkworks' compressed binary. Required with a key file unless `--json` prints
    /// the proof instead.
    #[arg(long)]
    pub proof: Option<PathBuf>,
    /// Write the public signals here: snarkjs' `public.json` form for `*.json`, else
    /// arkworks' binary `Vec<Fr>`.
    #[arg(long)]
    pub public: Option<PathBuf>,
}

impl FileInputs {
    /// The key file's flag (`--zkey` or `--pk`), when one was given: the user's circuit
    /// instead of the built-in one.
    pub fn key_flag(&self) -> Option<&'static str> {
        if self.zkey.is_some() {
            Some("--zkey")
        } else if self.pk.is_some() {
            Some("--pk")
        } else {
            None
        }
    }

    /// Refuses, before anything is read, a `--proof` or `--public` that names an input
    /// file or the other output, or that cannot be written.
    pub fn check_outputs(&self) -> Result<(), CliError> {
        let inputs = [
            ("--zkey", self.zkey.as_deref()),
            ("--pk", self.pk.as_deref()),
            ("--r1cs", self.r1cs.as_deref()),
            ("--wtns", self.wtns.as_deref()),
        ];
        let outputs = [
            ("--proof", self.proof.as_deref()),
            ("--public", self.public.as_deref()),
        ];
        check_outputs(&inputs, &outputs)?;
        for (flag, path) in outputs {
            if let Some(path) = path {
                check_writable(path, flag)?;
            }
        }
        Ok(())
    }

    /// The flag that only makes sense with a key file, if one was given without it.
    pub fn stray_flag(&self) -> Option<&'static str> {
        [
            ("--r1cs", self.r1cs.is_some()),
            ("--wtns", self.wtns.is_some()),
            ("--proof", self.proof.is_some()),
            ("--public", self.public.is_some()),
        ]
        .into_iter()
        .find_map(|(flag, set)| set.then_some(flag))
    }
}

/// The flags of `crucible prove` that apply to file inputs.
pub struct FileRun<'a> {
    /// Backend, budget cap and tuning file.
    pub backend: &'a BackendArgs,
    /// The files.
    pub files: &'a FileInputs,
    /// `--seed`: r and s from this seed instead of the OS's randomness (tests only).
    pub seed: Option<u64>,
    /// `--check`.
    pub check: bool,
    /// `--no-verify`.
    pub no_verify: bool,
}

/// The key and witness read, and how to name the key.
struct Loaded<E: FileCurve> {
    inputs: KeyAndWitness<E>,
    key_kind: &'static str,
    key_path: PathBuf,
}

fn name(path: &Path) -> String {
    path.display().to_string()
}

fn required<'a>(path: &'a Option<PathBuf>, flag: &str, with: &str) -> Result<&'a Path, CliError> {
    path.as_deref()
        .ok_or_else(|| CliError::usage(format!("{with} needs {flag}")))
}

/// The curve of the key file: a `.zkey` names its primes; an arkworks key is
/// BLS12-381's.
/// The curve to prove on: the `.zkey`'s, or with an arkworks key (which does not name
/// its curve) the `.r1cs`'s.
fn key_curve(files: &FileInputs) -> Result<Curve, CliError> {
    match (&files.zkey, &files.r1cs) {
        (Some(zkey), _) => Ok(curve_of(zkey)?),
        (None, Some(r1cs)) => Ok(curve_of(r1cs)?),
        (None, None) => Ok(Curve::Bls12_381),
    }
}

fn load<E: ProvedCurve>(files: &FileInputs) -> Result<Loaded<E>, CliError> {
    let wtns = required(&files.wtns, "--wtns", "proving a key file")?;
    if let Some(zkey_path) = &files.zkey {
        let inputs = spinner(&format!("reading {}", zkey_path.display()), || {
            KeyAndWitness::<E>::read_zkey(zkey_path, wtns, files.r1cs.as_deref())
        })?;
        return Ok(Loaded {
            inputs,
            key_kind: "snarkjs .zkey",
            key_path: zkey_path.clone(),
        });
    }
    let pk_path = required(&files.pk, "--pk or --zkey", "proving")?;
    let r1cs_path = required(&files.r1cs, "--r1cs", "--pk")?;
    let inputs = spinner(&format!("reading {}", pk_path.display()), || {
        KeyAndWitness::<E>::read_arkworks(pk_path, r1cs_path, wtns)
    })?;
    Ok(Loaded {
        inputs,
        key_kind: "arkworks proving key",
        key_path: pk_path.to_path_buf(),
    })
}

fn reduction_name(reduction: Reduction) -> &'static str {
    match reduction {
        Reduction::Libsnark => "ark-groth16's libsnark reduction",
        Reduction::Circom => "snarkjs' reduction",
    }
}

/// How `--check` came out.
enum CheckResult {
    /// Identical to ark-groth16 and to these backends.
    Identical(Vec<String>),
    /// The lines that differ.
    Mismatch(Vec<String>),
}

fn prove_once<E: ProvedCurve>(
    backend: &dyn ProverBackend<E>,
    loaded: &Loaded<E>,
    r: E::ScalarField,
    s: E::ScalarField,
    verify: bool,
) -> Result<ProofOutput<E>, CliError> {
    Ok(loaded
        .inputs
        .prove(backend, r, s, ProveOptions { verify })?)
}

/// A curve `crucible prove` proves files of.
pub trait ProvedCurve: FileCurve + RegisteredCurve {}
impl<E: FileCurve + RegisteredCurve> ProvedCurve for E {}

/// Proves the files' circuit once, on the curve its key names, saying each step to
/// `sink`; whether the proof was made (and, with `--check`, identical to the
/// references').
pub fn run(args: FileRun<'_>, sink: Sink) -> Result<bool, CliError> {
    args.files.check_outputs()?;
    match key_curve(args.files)? {
        Curve::Bls12_381 => run_on::<Bls12_381>(args, sink),
        Curve::Bn254 => run_on::<Bn254>(args, sink),
    }
}

fn run_on<E: ProvedCurve>(args: FileRun<'_>, sink: Sink) -> Result<bool, CliError> {
    let say = |line: String| sink.say(line);
    let loaded = load::<E>(args.files)?;
    let Selected { backend, reason } = select_backend::<E>(
        args.backend.backend_or("auto"),
        &args.backend.probe_options()?,
    )?;
    say(reason.clone());
    let shape = loaded.inputs.synthesized.shape;
    say(format!(
        "circuit: {}, {}, domain 2^{}; key: {} {} ({})",
        count(shape.num_constraints as u64, "constraint"),
        count((shape.num_instance - 1) as u64, "public signal"),
        shape.log_domain,
        loaded.key_kind,
        loaded.key_path.display(),
        reduction_name(loaded.inputs.reduction)
    ));
    let load_seconds = loaded.inputs.key_load_time.as_secs_f64();
    say(load_line(&loaded.key_path, load_seconds));

    let mut rng: Box<dyn RngCore> = match args.seed {
        Some(seed) => Box::new(StdRng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15)),
        None => Box::new(OsRng),
    };
    let (r, s) = (
        E::ScalarField::rand(&mut rng),
        E::ScalarField::rand(&mut rng),
    );
    let verify = !args.no_verify;
    let started = Instant::now();
    let (out, check) = if args.check {
        check_run(&*backend, &loaded, r, s, verify)?
    } else {
        (prove_once(&*backend, &loaded, r, s, verify)?, None)
    };
    let wall = started.elapsed();
    let public = &out.public_inputs;
    if let Some(path) = &args.files.proof {
        write_proof(path, &out.proof)?;
    }
    if let Some(path) = &args.files.public {
        write_public(path, public)?;
    }

    let failed = matches!(check, Some(CheckResult::Mismatch(_)));
    if sink.json() {
        let bytes = proof_bytes(&out.proof);
        let (check_name, mismatches) = match &check {
            None => (None, Vec::new()),
            Some(CheckResult::Identical(_)) => (Some("byte-identical"), Vec::new()),
            Some(CheckResult::Mismatch(lines)) => (Some("mismatch"), lines.clone()),
        };
        let value = json!({
            "selection": reason,
            "key": { "path": name(&loaded.key_path), "kind": loaded.key_kind, "reduction": reduction_name(loaded.inputs.reduction), "load_seconds": load_seconds },
            "circuit": { "constraints": shape.num_constraints, "public_signals": shape.num_instance - 1, "log_domain": shape.log_domain },
            "proof": hex(&bytes),
            "proof_json": proof_to_json(&out.proof),
            "public_signals": public_to_json(public),
            "report": out.report,
            "verified": verify,
            "check": check_name,
            "mismatches": mismatches,
            "proof_file": args.files.proof.as_deref().map(name),
            "public_file": args.files.public.as_deref().map(name),
        });
        sink.document(&value)?;
    } else {
        say(format!(
            "proof: {} on {}, {:.1} ms ({:.1} ms with the files' key staged and released)",
            if verify {
                "verified"
            } else {
                "not verified (--no-verify)"
            },
            out.report.backend,
            out.report.times.total().as_secs_f64() * 1e3,
            wall.as_secs_f64() * 1e3
        ));
        match &check {
            None => {}
            Some(CheckResult::Identical(others)) => say(format!(
                "check: byte-identical to ark-groth16 ({}){}",
                reduction_name(loaded.inputs.reduction),
                if others.is_empty() {
                    String::new()
                } else {
                    format!(" and to {}", others.join(", "))
                }
            )),
            Some(CheckResult::Mismatch(lines)) => {
                say("check: MISMATCH".into());
                for line in lines {
                    say(format!("  {line}"));
                }
            }
        }
        for (path, what) in [
            (&args.files.proof, "proof"),
            (&args.files.public, "public signals"),
        ] {
            if let Some(path) = path {
                say(format!(
                    "wrote {what} to {} ({})",
                    path.display(),
                    file_form(path)
                ));
            }
        }
    }
    Ok(!failed)
}

/// Proves on the chosen backend and the CPU reference and with ark-groth16, all with
/// the same r and s; the chosen backend's proof is the one returned.
fn check_run<E: ProvedCurve>(
    backend: &dyn ProverBackend<E>,
    loaded: &Loaded<E>,
    r: E::ScalarField,
    s: E::ScalarField,
    verify: bool,
) -> Result<(ProofOutput<E>, Option<CheckResult>), CliError> {
    let out = prove_once(backend, loaded, r, s, verify)?;
    let cpu = if backend.info().name == "cpu" {
        None
    } else {
        Some(select::<E>("cpu", &Default::default())?.backend)
    };
    let others: Vec<&dyn ProverBackend<E>> = cpu.iter().map(|b| &**b).collect();
    let check = spinner("checking against ark-groth16 and the CPU reference", || {
        let key_options = KeyOptions {
            reduction: loaded.inputs.reduction,
            ..KeyOptions::default()
        };
        Ok::<_, CliError>(cross_check(
            &others,
            &loaded.inputs.proving_key,
            &loaded.inputs.synthesized,
            &key_options,
            r,
            s,
        ))
    })?;
    let mut mismatches = check.mismatches();
    if let Ok(reference) = &check.reference {
        if proof_bytes(reference) != proof_bytes(&out.proof) {
            mismatches.push(format!(
                "{} differs from ark-groth16: got {}, want {}",
                out.report.backend,
                hex(&proof_bytes(&out.proof)),
                hex(&proof_bytes(reference))
            ));
        }
        if let Err(e) =
            verify_with_arkworks(&loaded.inputs.proving_key, &out.public_inputs, reference)
        {
            mismatches.push(format!("ark-groth16's own proof: {e}"));
        }
    }
    let result = if mismatches.is_empty() {
        CheckResult::Identical(check.backends.iter().map(|b| b.backend.clone()).collect())
    } else {
        CheckResult::Mismatch(mismatches)
    };
    Ok((out, Some(result)))
}
