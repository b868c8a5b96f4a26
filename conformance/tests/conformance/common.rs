//! Helpers shared by the engine, fault and key-cache tests (each test file uses some).
#![allow(dead_code)]

use std::sync::mpsc::channel;
use std::sync::Arc;
use std::time::Duration;

use ark_ff::UniformRand;
use ark_serialize::CanonicalSerialize;
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use crucible_backends::cpu::CpuBackend;
use crucible_conformance::{proof_bytes, run_seed};
use crucible_core::engine::{EngineConfig, EngineStats, Job, JobOutcome, Prover};
use crucible_core::fault::{FaultKind, FaultOp, FaultRule, FaultyBackend};
use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::groth16::{key_plan, key_shape, proof_plan, ProvingKey, Schedule};
use crucible_core::{Bls12_381, DeviceBudget, Fr, ProverBackend};

pub const CONSTRAINTS: usize = 28;
pub const INPUTS: usize = 2;

pub fn seed() -> u64 {
    let s = run_seed();
    println!("seed {s} (set CRUCIBLE_SEED to replay)");
    s
}

/// A CPU backend whose budget holds the key plus `proofs` proof plans.
pub fn cpu_fitting(pk: &ProvingKey, proofs: u64) -> Arc<dyn ProverBackend> {
    cpu_device(pk, proofs, 0)
}

pub fn jobs(seed: u64, count: u64) -> impl Iterator<Item = Job<BenchCircuit>> + Send {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count).map(move |id| Job {
        id,
        circuit: BenchCircuit {
            constraints: CONSTRAINTS,
            inputs: INPUTS,
            seed: rng.gen(),
        },
        r: Fr::rand(&mut rng),
        s: Fr::rand(&mut rng),
    })
}

/// Checks every successful outcome against ark-groth16 with the same r, s.
pub fn assert_identical(pk: &ProvingKey, seed: u64, count: u64, outcomes: &[JobOutcome]) {
    let expected: Vec<_> = jobs(seed, count).collect();
    for o in outcomes {
        let Ok(out) = &o.result else { continue };
        let job = &expected[o.id as usize];
        let want = ark_groth16::Groth16::<Bls12_381>::create_proof_with_reduction(
            job.circuit,
            pk,
            job.r,
            job.s,
        )
        .unwrap();
        assert_eq!(
            proof_bytes(&out.proof),
            proof_bytes(&want),
            "job {} (seed {seed}) differs from ark-groth16",
            o.id
        );
    }
}

/// An engine over `devices` with `workers` workers a device, `synthesis` synthesis
/// threads, every proof verified, on the resident schedule: these tests size their
/// budgets in resident proofs (`cpu_fitting`) and count the calls one resident proof
/// makes, so the chooser must not trade the budget for a streamed schedule.
pub fn prover(
    devices: Vec<Arc<dyn ProverBackend>>,
    pk: &Arc<ProvingKey>,
    workers: usize,
    synthesis: usize,
) -> Prover {
    let config = EngineConfig {
        workers_per_device: workers,
        synthesis_threads: synthesis,
        verify: true,
        schedule: Some(Schedule::RESIDENT),
        ..EngineConfig::default()
    };
    Prover::new(devices, pk.clone(), config).unwrap()
}

pub fn faulty(pk: &ProvingKey, proofs: u64, rules: Vec<FaultRule>) -> Arc<FaultyBackend> {
    Arc::new(FaultyBackend::new(cpu_fitting(pk, proofs), rules))
}

pub fn rule(op: FaultOp, first: u64, every: u64, kind: FaultKind) -> FaultRule {
    FaultRule {
        op,
        first,
        every,
        kind,
    }
}

/// A CPU "device" with its own budget, reporting itself as logical device `index`.
pub fn cpu_device(pk: &ProvingKey, proofs: u64, index: usize) -> Arc<dyn ProverBackend> {
    let probe =
        CpuBackend::<crucible_core::Bls12_381>::with_budget(DeviceBudget::new("probe", u64::MAX));
    let shape = key_shape(pk).unwrap();
    let capacity = key_plan(&probe, &shape).unwrap().total_bytes()
        + proofs * proof_plan(&probe, &shape).unwrap().total_bytes();
    Arc::new(CpuBackend::with_budget_and_index(
        DeviceBudget::new(format!("cpu:{index}"), capacity),
        index,
    ))
}

/// Runs `jobs` through `prover` on another thread, failing (instead of hanging the test
/// run) when the run takes longer than `limit`.
pub fn run_bounded(
    prover: &Arc<Prover>,
    jobs: impl Iterator<Item = Job<BenchCircuit>> + Send + 'static,
    limit: Duration,
) -> (EngineStats, Vec<JobOutcome>) {
    let (tx, rx) = channel();
    let prover = Arc::clone(prover);
    std::thread::spawn(move || {
        let mut outcomes = Vec::new();
        let stats = prover.run(jobs, |o| outcomes.push(o));
        // Let go of the prover first: the caller may release it once it has the results.
        drop(prover);
        let _ = tx.send((stats, outcomes));
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("the engine did not finish within {limit:?}: it hung"))
}

/// Asserts that `outcomes` hold exactly one outcome for each id in `0..count`.
pub fn assert_one_outcome_each(outcomes: &[JobOutcome], count: u64) {
    let mut ids: Vec<u64> = outcomes.iter().map(|o| o.id).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        (0..count).collect::<Vec<_>>(),
        "every job ends with exactly one outcome"
    );
}

pub fn key_file(pk: &ProvingKey) -> (tempdir::Dir, std::path::PathBuf, Vec<u8>) {
    let dir = tempdir::Dir::new();
    let path = dir.0.join("key.bin");
    let mut bytes = Vec::new();
    pk.serialize_uncompressed(&mut bytes).unwrap();
    (dir, path, bytes)
}

pub mod tempdir {
    /// A temporary directory removed on drop.
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Self {
            let p = std::env::temp_dir().join(format!(
                "crucible-test-{}-{}",
                std::process::id(),
                crucible_conformance::run_seed()
            ));
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
