//! Keys with an empty query on the CPU backend through the public API: staged with
//! `StagedKey::stage` (the chooser's schedule) and proved, and proved by the engine;
//! each proof byte for byte ark-groth16's and accepted by its verifier.

use std::sync::Arc;

use ark_ff::UniformRand;
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use crucible_backends::cpu::CpuBackend;
use crucible_conformance::{proof_bytes, run_seed, verify_with_arkworks, ExactShapeCircuit};
use crucible_core::engine::{EngineConfig, Job, Prover};
use crucible_core::groth16::{prove, ProveOptions, Query, QuerySet, Reduction, StagedKey};
use crucible_core::registry::ProbeOptions;
use crucible_core::{Bls12_381, Fr, ProverBackend};

/// No witness (l empty) on the domain boundaries of 2^3, a domain of one point (h
/// empty) with and without witnesses, and the constant alone (a and b empty).
fn circuits(seed: u64) -> Vec<ExactShapeCircuit> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut shape = |constraints, inputs, witnesses| ExactShapeCircuit {
        constraints,
        inputs,
        witnesses,
        seed: rng.gen(),
    };
    vec![
        shape(4, 2, 0),
        shape(5, 2, 0),
        shape(6, 2, 0),
        shape(0, 0, 0),
        shape(0, 0, 1),
        shape(0, 0, 3),
        shape(1, 0, 0),
    ]
}

/// ark-groth16's proof of `circuit` with `r`, `s`.
fn reference(
    pk: &ark_groth16::ProvingKey<Bls12_381>,
    c: ExactShapeCircuit,
    r: Fr,
    s: Fr,
) -> Vec<u8> {
    let proof = ark_groth16::Groth16::<Bls12_381>::create_proof_with_reduction(c, pk, r, s)
        .expect("ark-groth16 proves the circuit");
    proof_bytes(&proof)
}

#[test]
fn a_staged_key_with_an_empty_query_proves_under_the_chosen_schedule() {
    let seed = run_seed();
    println!("seed {seed} (set CRUCIBLE_SEED to replay)");
    let mut rng = StdRng::seed_from_u64(seed);
    let backend = CpuBackend::new(&ProbeOptions::default());
    for circuit in circuits(seed) {
        let pk = Arc::new(circuit.key(Reduction::Libsnark, rng.gen()).unwrap());
        let key = StagedKey::stage(&backend, Arc::clone(&pk)).unwrap();
        // The chooser's schedule holds the empty queries as resident, never neither.
        let shape = *key.shape();
        for q in Query::ALL {
            if q.msm_terms(&shape, Reduction::Libsnark) == 0 {
                assert!(
                    key.schedule().resident.contains(q),
                    "{circuit:?}: empty query {} not resident in {}",
                    q.name(),
                    key.schedule()
                );
            }
        }
        let empty = Query::ALL
            .into_iter()
            .filter(|q| q.msm_terms(&shape, Reduction::Libsnark) == 0)
            .fold(QuerySet::NONE, QuerySet::with);
        assert_ne!(empty, QuerySet::NONE, "{circuit:?} has an empty query");
        let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
        let out = prove(&backend, &key, circuit, r, s, ProveOptions { verify: true })
            .unwrap_or_else(|e| panic!("{circuit:?} (seed {seed}): {e}"));
        assert_eq!(
            proof_bytes(&out.proof),
            reference(&pk, circuit, r, s),
            "{circuit:?} (seed {seed}) differs from ark-groth16"
        );
        verify_with_arkworks(&pk, &circuit.public_inputs(), &out.proof).unwrap();
        key.release().unwrap();
        assert_eq!(backend.budget().in_use(), 0);
    }
}

#[test]
fn the_engine_proves_keys_with_an_empty_query() {
    let seed = run_seed();
    println!("seed {seed} (set CRUCIBLE_SEED to replay)");
    let mut rng = StdRng::seed_from_u64(seed ^ 1);
    for circuit in circuits(seed) {
        let pk = Arc::new(circuit.key(Reduction::Libsnark, rng.gen()).unwrap());
        let backend: Arc<dyn ProverBackend> = Arc::new(CpuBackend::new(&ProbeOptions::default()));
        let config = EngineConfig {
            workers_per_device: 2,
            verify: true,
            ..EngineConfig::default()
        };
        let prover = Prover::new(vec![backend], Arc::clone(&pk), config).unwrap();
        let jobs: Vec<Job<ExactShapeCircuit>> = (0..3)
            .map(|id| Job {
                id,
                circuit,
                r: Fr::rand(&mut rng),
                s: Fr::rand(&mut rng),
            })
            .collect();
        let want: Vec<Vec<u8>> = jobs
            .iter()
            .map(|j| reference(&pk, circuit, j.r, j.s))
            .collect();
        let mut outcomes = Vec::new();
        let stats = prover.run(jobs, |o| outcomes.push(o));
        assert_eq!(outcomes.len(), 3);
        for o in &outcomes {
            let out = o
                .result
                .as_ref()
                .unwrap_or_else(|e| panic!("{circuit:?} (seed {seed}) job {}: {e}", o.id));
            assert_eq!(
                proof_bytes(&out.proof),
                want[o.id as usize],
                "{circuit:?} (seed {seed}) job {} differs from ark-groth16",
                o.id
            );
        }
        assert_eq!((stats.proofs, stats.failures), (3, 0));
        prover.release().unwrap();
    }
}
