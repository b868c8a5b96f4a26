//! The built-in benchmark circuit: exact sizes, a satisfied witness, and its speed.

use crucible_core::circuit::BenchCircuit;
use crucible_core::groth16::{evaluate, synthesize};

#[test]
fn bench_circuit_has_exactly_the_requested_sizes() {
    for (constraints, inputs) in [(1, 0), (2, 1), (1000, 3), (4095, 0), (4096, 17)] {
        let s = synthesize(BenchCircuit {
            constraints,
            inputs,
            seed: 9,
        })
        .unwrap();
        assert_eq!(s.shape.num_constraints, constraints);
        assert_eq!(
            s.shape.num_instance,
            inputs + 1,
            "public inputs plus the constant one"
        );
        assert_eq!(s.shape.num_witness, constraints + 1);
        assert_eq!(
            &s.assignment[1..=inputs],
            &BenchCircuit {
                constraints,
                inputs,
                seed: 9
            }
            .public_inputs()[..]
        );
        evaluate(&s).expect("the witness satisfies every constraint");
    }
}

#[test]
fn witness_values_are_full_width() {
    let s = synthesize(BenchCircuit {
        constraints: 256,
        inputs: 2,
        seed: 1,
    })
    .unwrap();
    use ark_ff::{BigInteger, PrimeField};
    let wide = s
        .assignment
        .iter()
        .filter(|v| v.into_bigint().num_bits() > 240)
        .count();
    assert!(
        wide > 240,
        "only {wide} of {} values use more than 240 bits",
        s.assignment.len()
    );
}

#[test]
fn synthesis_rate() {
    let n = 1 << 18;
    let start = std::time::Instant::now();
    let s = synthesize(BenchCircuit {
        constraints: n,
        inputs: 4,
        seed: 2,
    })
    .unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(s.shape.num_constraints, n);
    println!(
        "synthesized {n} constraints in {:.3} s: {:.2} M constraints/s",
        secs,
        n as f64 / secs / 1e6
    );
}
