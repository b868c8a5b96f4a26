//! What a job hands the engine to synthesize: a circuit of a fixed shape gives the same
//! matrices (shared, not rebuilt) and the same assignment as a full synthesis.

use std::sync::Arc;
use std::time::Instant;

use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::groth16::{synthesize, CircuitMatrices, FixedShape, Synthesize};
use crucible_core::{Error, Fr};

use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};

fn seed() -> u64 {
    let seed = crucible_core::run_seed::run_seed();
    println!("seed {seed} (CRUCIBLE_SEED={seed} repeats it)");
    seed
}

#[test]
fn a_fixed_shape_gives_the_full_synthesis_with_the_matrices_shared() {
    let seed = seed();
    for (constraints, inputs) in [(1, 0), (2, 1), (1023, 3), (1024, 0), (1025, 5)] {
        let circuit = |s| BenchCircuit {
            constraints,
            inputs,
            seed: s,
        };
        let matrices = CircuitMatrices::<crucible_core::Fr>::of(circuit(seed)).unwrap();
        let other = seed.wrapping_add(1);
        let want = synthesize(circuit(other)).unwrap();
        let got = FixedShape {
            matrices: matrices.clone(),
            circuit: circuit(other),
        }
        .synthesize()
        .unwrap();
        let case = format!("seed {seed}, {constraints} constraints, {inputs} inputs");
        assert_eq!(got.shape, want.shape, "{case}");
        assert_eq!(got.assignment, want.assignment, "{case}");
        assert_eq!(*got.a, *want.a, "{case}");
        assert_eq!(*got.b, *want.b, "{case}");
        assert_eq!(*got.c, *want.c, "{case}");
        let again = FixedShape {
            matrices: matrices.clone(),
            circuit: circuit(other),
        }
        .synthesize()
        .unwrap();
        assert!(Arc::ptr_eq(&got.a, &again.a), "{case}: matrices rebuilt");
        assert!(Arc::ptr_eq(&got.c, &again.c), "{case}: matrices rebuilt");
    }
}

#[test]
fn the_assignment_is_arkworks_instance_then_witness() {
    use ark_relations::gr1cs::{ConstraintSystem, OptimizationGoal, SynthesisMode};
    let seed = seed();
    for (constraints, inputs) in [(1, 0), (3, 1), (1024, 7)] {
        let circuit = BenchCircuit {
            constraints,
            inputs,
            seed,
        };
        let cs = ConstraintSystem::<Fr>::new_ref();
        cs.set_optimization_goal(OptimizationGoal::Constraints);
        cs.set_mode(SynthesisMode::Prove {
            construct_matrices: false,
            generate_lc_assignments: false,
        });
        circuit.generate_constraints(cs.clone()).unwrap();
        cs.finalize();
        let want = [
            cs.instance_assignment().unwrap(),
            cs.witness_assignment().unwrap(),
        ]
        .concat();
        let case = format!("seed {seed}, {constraints} constraints, {inputs} inputs");
        let matrices = CircuitMatrices::<crucible_core::Fr>::of(circuit).unwrap();
        let fixed = FixedShape { matrices, circuit }.synthesize().unwrap();
        assert_eq!(fixed.assignment, want, "{case}: fixed shape");
        assert_eq!(
            synthesize::<crucible_core::Fr, _>(circuit)
                .unwrap()
                .assignment,
            want,
            "{case}: full synthesis"
        );
    }
}

#[test]
fn a_fixed_shape_refuses_an_instance_of_another_size() {
    let matrices = CircuitMatrices::<crucible_core::Fr>::of(BenchCircuit {
        constraints: 64,
        inputs: 1,
        seed: 3,
    })
    .unwrap();
    let err = FixedShape {
        matrices,
        circuit: BenchCircuit {
            constraints: 65,
            inputs: 1,
            seed: 3,
        },
    }
    .synthesize()
    .err()
    .expect("an instance of another circuit");
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    assert!(err.to_string().contains("another circuit"), "{err}");
}

/// A circuit whose witness code panics.
struct Panics;

impl ConstraintSynthesizer<Fr> for Panics {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        cs.new_witness_variable(|| panic!("the witness generator broke"))
            .map(|_| ())
    }
}

#[test]
fn a_panicking_fixed_shape_circuit_is_an_error() {
    let matrices = CircuitMatrices::of(BenchCircuit {
        constraints: 4,
        inputs: 0,
        seed: 1,
    })
    .unwrap();
    let err = FixedShape {
        matrices,
        circuit: Panics,
    }
    .synthesize()
    .err()
    .expect("the panic is an error");
    assert!(
        err.to_string().contains("the witness generator broke"),
        "{err}"
    );
}

/// Prints what skipping the matrices saves (the engine's synthesis threads do this
/// once per proof); asserts only that both give the same assignment.
#[test]
fn assignment_only_synthesis_rate() {
    let n = 1 << 16;
    let circuit = |seed| BenchCircuit {
        constraints: n,
        inputs: 1,
        seed,
    };
    let t = Instant::now();
    let full = synthesize::<crucible_core::Fr, _>(circuit(5)).unwrap();
    let full_time = t.elapsed();
    let matrices = CircuitMatrices::from(&full);
    let t = Instant::now();
    let fixed = FixedShape {
        matrices,
        circuit: circuit(5),
    }
    .synthesize()
    .unwrap();
    let fixed_time = t.elapsed();
    assert_eq!(fixed.assignment, full.assignment);
    println!(
        "2^16 constraints: full synthesis {:.1} ms, assignment only {:.1} ms",
        full_time.as_secs_f64() * 1e3,
        fixed_time.as_secs_f64() * 1e3
    );
}
