//! The built-in benchmark circuit: exact sizes, a satisfied witness, and its speed.

use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::groth16::{evaluate, synthesize};

#[test]
fn bench_circuit_has_exactly_the_requested_sizes() {
    for (constraints, inputs) in [(1, 0), (2, 1), (1000, 3), (4095, 0), (4096, 17)] {
        let s = synthesize::<crucible_core::Fr, _>(BenchCircuit {
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
    let s = synthesize::<crucible_core::Fr, _>(BenchCircuit {
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
    let s = synthesize::<crucible_core::Fr, _>(BenchCircuit {
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

#[test]
fn a_bit_heavy_circuit_has_its_share_of_bits_and_the_bench_shape() {
    use crucible_core::fixtures::circuit::BitHeavyCircuit;
    for (constraints, inputs, per_mille) in
        [(1000, 1, 900), (1023, 0, 990), (64, 3, 0), (64, 2, 1000)]
    {
        let c = BitHeavyCircuit {
            constraints,
            inputs,
            seed: 5,
            bits_per_mille: per_mille,
        };
        let s = synthesize::<crucible_core::Fr, _>(c).unwrap();
        assert_eq!(s.shape, BenchCircuit::shape(constraints, inputs).unwrap());
        evaluate(&s).expect("the witness satisfies every constraint");
        let witness = &s.assignment[inputs + 1..];
        let bits = witness
            .iter()
            .filter(|v| {
                **v == crucible_core::Fr::from(0u64) || **v == crucible_core::Fr::from(1u64)
            })
            .count();
        let rows = (0..constraints).filter(|&i| c.is_bit_row(i)).count();
        assert_eq!(rows, constraints * per_mille as usize / 1000, "{c:?}");
        // Chain values are full width (0 or 1 only by a 2^-250 chance).
        assert_eq!(bits, rows, "{c:?}");
    }
}

/// The benchmark circuit's values are exactly the chain `v[i+1] = v[i]·(v[i] + u)`
/// drawn as before BitHeavyCircuit took over its synthesis (inputs first, then v[0]),
/// so keys cached by earlier versions still match it.
#[test]
fn the_bench_chain_is_unchanged() {
    use ark_ff::{Field, UniformRand};
    use ark_std::rand::{rngs::StdRng, SeedableRng};
    use crucible_core::Fr;
    for (constraints, inputs, seed) in [(5, 0, 1u64), (17, 3, 99)] {
        let mut rng = StdRng::seed_from_u64(seed);
        let u: Vec<Fr> = (0..inputs).map(|_| Fr::rand(&mut rng)).collect();
        let mut v = Fr::rand(&mut rng);
        let mut want = vec![Fr::ONE];
        want.extend(&u);
        want.push(v);
        for i in 0..constraints {
            v *= v + if u.is_empty() {
                Fr::ONE
            } else {
                u[i % u.len()]
            };
            want.push(v);
        }
        let s = synthesize::<crucible_core::Fr, _>(BenchCircuit {
            constraints,
            inputs,
            seed,
        })
        .unwrap();
        assert_eq!(
            s.assignment, want,
            "{constraints} constraints, {inputs} inputs"
        );
        for (i, row) in s.a.iter().enumerate() {
            assert_eq!(row.len(), 1, "A row {i}: the previous chain value only");
        }
    }
}
