//! Your own arkworks circuit, proved on the best available backend: the README's
//! library quick start, as a program (`cargo run --release --example prove_my_circuit`).

// crate-doc-end (the README shows the file from here)
use std::sync::Arc;

use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError, Variable};
use ark_relations::lc;
use ark_std::rand::rngs::OsRng;
use crucible_core::groth16::{self, ProveOptions, StagedKey};
use crucible_core::{registry, Bls12_381, Fr};

// Links the roster's backends (CPU, CUDA, wgpu by default; pick them with its Cargo
// features), or the linker drops their registrations and `select` finds none.
use crucible_backends as _;

/// "I know x with x³ + x + 5 = y" for a public y.
#[derive(Clone, Copy)]
struct Cubic {
    x: Option<Fr>,
}

impl ConstraintSynthesizer<Fr> for Cubic {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let value =
            |f: fn(Fr) -> Fr| move || self.x.map(f).ok_or(SynthesisError::AssignmentMissing);
        let y = cs.new_input_variable(value(|x| x * x * x + x + Fr::from(5u64)))?;
        let x = cs.new_witness_variable(value(|x| x))?;
        let x2 = cs.new_witness_variable(value(|x| x * x))?;
        let x3 = cs.new_witness_variable(value(|x| x * x * x))?;
        cs.enforce_r1cs_constraint(|| lc![x], || lc![x], || lc![x2])?;
        cs.enforce_r1cs_constraint(|| lc![x2], || lc![x], || lc![x3])?;
        let five = Fr::from(5u64);
        cs.enforce_r1cs_constraint(
            || {
                lc![
                    (Fr::from(1u64), x3),
                    (Fr::from(1u64), x),
                    (five, Variable::one())
                ]
            },
            || lc![Variable::one()],
            || lc![y],
        )
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A key for the circuit: ark-groth16's random setup (for tests; not a ceremony).
    let setup = Cubic { x: None };
    let pk = ark_groth16::Groth16::<Bls12_381>::generate_random_parameters_with_reduction(
        setup, &mut OsRng,
    )?;

    let selected = registry::select("auto", &registry::ProbeOptions::default())?;
    println!("{}", selected.reason);
    let backend = selected.backend;
    let key = StagedKey::stage(&*backend, Arc::new(pk))?;

    // r and s are drawn from OsRng: fresh secret randomness for every proof.
    let circuit = Cubic {
        x: Some(Fr::from(3u64)),
    };
    let out = groth16::prove_with_rng(
        &*backend,
        &key,
        circuit,
        &mut OsRng,
        ProveOptions::default(),
    )?;
    // out.proof is an ark_groth16::Proof<Bls12_381>, verified before it was returned;
    // out.report says who made it and how long each phase took.
    println!(
        "proof by {} in {:.1} ms; public input y = {}",
        out.report.backend,
        out.report.times.total().as_secs_f64() * 1e3,
        out.public_inputs[0]
    );
    key.release()?;
    Ok(())
}
