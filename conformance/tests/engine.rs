//! The prover engine on the CPU backend: concurrency under a tight budget, fault
//! injection, verification of every proof, bad input, and a soak run.

use std::sync::Arc;

use ark_ff::UniformRand;
use ark_serialize::CanonicalSerialize;
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use crucible_backend_cpu::CpuBackend;
use crucible_conformance::{proof_bytes, run_seed};
use crucible_core::circuit::BenchCircuit;
use crucible_core::engine::{proofs_that_fit, EngineConfig, Job, JobOutcome, Prover};
use crucible_core::fault::{FaultKind, FaultOp, FaultRule, FaultyBackend};
use crucible_core::groth16::{key_plan, key_shape, proof_plan, ProvingKey};
use crucible_core::key_file::generate_key;
use crucible_core::{Bls12_381, DeviceBudget, Error, Fr, Phase, ProverBackend};

const CONSTRAINTS: usize = 28;
const INPUTS: usize = 2;

fn seed() -> u64 {
    let s = run_seed();
    println!("seed {s} (set CRUCIBLE_SEED to replay)");
    s
}

/// A CPU backend whose budget holds the key plus `proofs` proof plans.
fn cpu_fitting(pk: &ProvingKey, proofs: u64) -> Arc<dyn ProverBackend> {
    cpu_device(pk, proofs, 0)
}

fn jobs(seed: u64, count: u64) -> impl Iterator<Item = Job<BenchCircuit>> + Send {
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
fn assert_identical(pk: &ProvingKey, seed: u64, count: u64, outcomes: &[JobOutcome]) {
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
/// threads, every proof verified.
fn prover(
    devices: Vec<Arc<dyn ProverBackend>>,
    pk: &Arc<ProvingKey>,
    workers: usize,
    synthesis: usize,
) -> Prover {
    let config = EngineConfig {
        workers_per_device: workers,
        synthesis_threads: synthesis,
        verify: true,
        ..EngineConfig::default()
    };
    Prover::new(devices, pk.clone(), config).unwrap()
}

#[test]
fn four_workers_share_a_budget_that_fits_one_proof() {
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let backend = cpu_fitting(&pk, 1);
    let capacity = backend.budget().capacity();
    let prover = prover(vec![backend.clone()], &pk, 4, 2);
    let mut outcomes = Vec::new();
    let stats = prover.run(jobs(seed, 16), |o| outcomes.push(o));
    assert_eq!((stats.proofs, stats.failures), (16, 0), "{outcomes:?}");
    assert!(stats.devices[0].budget.high_water <= capacity);
    assert_eq!(
        stats.devices[0].budget.high_water, capacity,
        "one proof at a time fills the budget exactly"
    );
    assert_identical(&pk, seed, 16, &outcomes);
    prover.release().unwrap();
    assert_eq!(backend.budget().in_use(), 0);
}

fn faulty(pk: &ProvingKey, proofs: u64, rules: Vec<FaultRule>) -> Arc<FaultyBackend> {
    Arc::new(FaultyBackend::new(cpu_fitting(pk, proofs), rules))
}

fn rule(op: FaultOp, first: u64, every: u64, kind: FaultKind) -> FaultRule {
    FaultRule {
        op,
        first,
        every,
        kind,
    }
}

#[test]
fn injected_faults_fail_only_their_proof_name_the_phase_and_leak_nothing() {
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    // Key staging makes 5 stage calls; faults start after it.
    let rules = vec![
        rule(FaultOp::Allocate, 4, 0, FaultKind::Error),
        rule(FaultOp::Alloc, 20, 0, FaultKind::Error),
        rule(FaultOp::Stage, 14, 0, FaultKind::Error),
        rule(FaultOp::Ntt, 30, 0, FaultKind::Error),
        rule(FaultOp::Msm, 23, 0, FaultKind::Error),
        rule(FaultOp::Msm, 41, 0, FaultKind::Panic),
    ];
    let backend = faulty(&pk, 2, rules);
    let prover = prover(vec![backend.clone() as Arc<dyn ProverBackend>], &pk, 4, 1);
    let key_bytes = backend.budget().in_use();
    let mut outcomes = Vec::new();
    let stats = prover.run(jobs(seed, 24), |o| outcomes.push(o));
    assert_eq!(backend.injected(), 6, "every rule fired once");
    assert_eq!(
        stats.failures, 6,
        "exactly the faulted proofs failed: {outcomes:#?}"
    );
    assert_eq!(stats.proofs, 18);
    let phases: Vec<_> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().err())
        .map(|e| e.phase().expect("every failure names its phase"))
        .collect();
    for phase in [Phase::Allocate, Phase::Stage, Phase::Ntt, Phase::Msm] {
        assert!(phases.contains(&phase), "no failure in {phase}: {phases:?}");
    }
    let panicked = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().err())
        .any(|e| e.to_string().contains("panicked"));
    assert!(panicked, "the injected panic is reported as an error");
    assert_eq!(
        backend.budget().in_use(),
        key_bytes,
        "failed proofs returned their budget"
    );
    assert!(backend.budget().take_deferred_errors().is_empty());
    assert_identical(&pk, seed, 24, &outcomes);
    prover.release().unwrap();
    assert_eq!(backend.budget().in_use(), 0);
}

#[test]
fn a_wrong_result_is_caught_by_verification_and_never_returned() {
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let backend = faulty(
        &pk,
        1,
        vec![rule(FaultOp::Msm, 7, 0, FaultKind::WrongResult)],
    );
    let prover = Prover::new(
        vec![backend.clone() as Arc<dyn ProverBackend>],
        pk.clone(),
        EngineConfig::default(),
    )
    .unwrap();
    let mut outcomes = Vec::new();
    prover.run(jobs(seed, 3), |o| outcomes.push(o));
    let rejected: Vec<_> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().err())
        .collect();
    assert_eq!(rejected.len(), 1, "{outcomes:?}");
    assert!(
        matches!(rejected[0].root(), Error::Verification(_)),
        "{}",
        rejected[0]
    );
    assert_eq!(rejected[0].phase(), Some(Phase::Verify));
    assert_identical(&pk, seed, 3, &outcomes);
    prover.release().unwrap();
}

#[test]
fn bad_input_is_a_clear_error_and_allocates_nothing() {
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let backend = cpu_fitting(&pk, 1);
    let prover = Prover::new(vec![backend.clone()], pk.clone(), EngineConfig::default()).unwrap();
    let key_bytes = backend.budget().in_use();
    let wrong_shape = [
        BenchCircuit {
            constraints: CONSTRAINTS,
            inputs: INPUTS + 1,
            seed,
        },
        BenchCircuit {
            constraints: CONSTRAINTS + 40,
            inputs: INPUTS,
            seed,
        },
    ];
    let mut outcomes = Vec::new();
    let mut rng = StdRng::seed_from_u64(seed);
    let jobs = wrong_shape.into_iter().enumerate().map(|(i, circuit)| Job {
        id: i as u64,
        circuit,
        r: Fr::rand(&mut rng),
        s: Fr::rand(&mut rng),
    });
    let stats = prover.run(jobs, |o| outcomes.push(o));
    assert_eq!(stats.failures, 2);
    for o in &outcomes {
        let e = o.result.as_ref().unwrap_err();
        assert!(e.to_string().contains("does not match the circuit"), "{e}");
    }
    assert_eq!(
        backend.budget().stats().high_water,
        key_bytes,
        "nothing beyond the key was ever allocated"
    );
    prover.release().unwrap();
}

#[test]
fn unsatisfied_witness_is_refused_naming_the_constraint() {
    use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
    use ark_relations::lc;
    #[derive(Clone, Copy)]
    struct Square(Fr, Fr);
    impl ConstraintSynthesizer<Fr> for Square {
        fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
            let y = cs.new_input_variable(|| Ok(self.1))?;
            let x = cs.new_witness_variable(|| Ok(self.0))?;
            cs.enforce_r1cs_constraint(|| lc![x], || lc![x], || lc![y])
        }
    }
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let pk = Arc::new(
        ark_groth16::Groth16::<Bls12_381>::generate_random_parameters_with_reduction(
            Square(Fr::from(3u64), Fr::from(9u64)),
            &mut rng,
        )
        .unwrap(),
    );
    let backend: Arc<dyn ProverBackend> =
        Arc::new(CpuBackend::with_budget(DeviceBudget::new("cpu", 1 << 30)));
    let prover = Prover::new(vec![backend.clone()], pk, EngineConfig::default()).unwrap();
    let key_bytes = backend.budget().in_use();
    let x = Fr::rand(&mut rng);
    let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
    let mut bad = Vec::new();
    prover.run(
        [Job {
            id: 1,
            circuit: Square(x, x * x + Fr::from(1u64)),
            r,
            s,
        }],
        |o| bad.push(o),
    );
    let e = bad[0].result.as_ref().unwrap_err();
    assert!(
        e.to_string().contains("does not satisfy constraint 0"),
        "{e}"
    );
    assert_eq!(e.phase(), Some(Phase::Evaluate));
    assert_eq!(
        backend.budget().stats().high_water,
        key_bytes,
        "the bad witness allocated nothing"
    );
    let mut good = Vec::new();
    prover.run(
        [Job {
            id: 0,
            circuit: Square(x, x * x),
            r,
            s,
        }],
        |o| good.push(o),
    );
    assert!(good[0].result.is_ok(), "{:?}", good[0].result);
    prover.release().unwrap();
}

fn key_file(pk: &ProvingKey) -> (tempdir::Dir, std::path::PathBuf, Vec<u8>) {
    let dir = tempdir::Dir::new();
    let path = dir.0.join("key.bin");
    let mut bytes = Vec::new();
    pk.serialize_uncompressed(&mut bytes).unwrap();
    (dir, path, bytes)
}

mod tempdir {
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

#[test]
fn untrusted_key_files_are_validated() {
    use ark_ff::{Field, One};
    use ark_serialize::Compress;
    use crucible_core::key_file::load_untrusted_key;
    use crucible_core::{Fq, G1Affine};

    let seed = seed();
    let pk = generate_key(CONSTRAINTS, INPUTS, seed).unwrap();
    let (_dir, path, bytes) = key_file(&pk);

    std::fs::write(&path, &bytes).unwrap();
    let loaded = load_untrusted_key(&path, Compress::No).unwrap();
    assert_eq!(loaded, pk, "a valid key round-trips");

    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let e = load_untrusted_key(&path, Compress::No).unwrap_err();
    assert!(e.to_string().contains("invalid"), "truncated: {e}");

    // A point whose x is moved by one is (with overwhelming probability) off the curve.
    let mut off_curve = pk.clone();
    let p = off_curve.a_query[1];
    off_curve.a_query[1] = G1Affine::new_unchecked(p.x + Fq::one(), p.y);
    let mut b = Vec::new();
    off_curve.serialize_uncompressed(&mut b).unwrap();
    std::fs::write(&path, &b).unwrap();
    assert!(
        load_untrusted_key(&path, Compress::No).is_err(),
        "off-curve point accepted"
    );

    // A point on the curve outside the prime-order subgroup (G1's cofactor is large).
    let mut x = Fq::from(seed % 1000 + 5);
    let outside = loop {
        if let Some(y) = (x * x * x + Fq::from(4u64)).sqrt() {
            let q = G1Affine::new_unchecked(x, y);
            if q.is_on_curve() && !q.is_in_correct_subgroup_assuming_on_curve() {
                break q;
            }
        }
        x += Fq::one();
    };
    let mut bad_subgroup = pk.clone();
    bad_subgroup.h_query[0] = outside;
    let mut b = Vec::new();
    bad_subgroup.serialize_uncompressed(&mut b).unwrap();
    std::fs::write(&path, &b).unwrap();
    assert!(
        load_untrusted_key(&path, Compress::No).is_err(),
        "point outside the subgroup accepted"
    );

    assert!(load_untrusted_key(&path.with_extension("missing"), Compress::No).is_err());
}

#[test]
fn corrupt_key_cache_is_regenerated_never_used() {
    use crucible_core::key_file::{KeyCache, KeySource};
    let dir = tempdir::Dir::new();
    let cache = KeyCache::new(&dir.0);
    let (pk, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 3, &mut |_| {})
        .unwrap();
    assert_eq!(source, KeySource::Generated);
    let (again, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 3, &mut |_| {})
        .unwrap();
    assert_eq!((source, &again), (KeySource::Cached, &pk));
    let path = cache.path(CONSTRAINTS, INPUTS, 3);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let (fixed, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 3, &mut |_| {})
        .unwrap();
    assert_eq!(
        (source, &fixed),
        (KeySource::Regenerated, &pk),
        "same seed, same key"
    );
    std::fs::write(&path, &bytes[..100]).unwrap();
    let (_, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 3, &mut |_| {})
        .unwrap();
    assert_eq!(source, KeySource::Regenerated);
}

/// 1,000 small proofs, 4 workers, a budget that fits 2 proofs, faults injected on some:
/// zero wrong proofs, zero leaked bytes, every fault reported.
#[test]
fn soak_thousand_proofs_with_faults() {
    let seed = seed();
    let count = std::env::var("CRUCIBLE_SOAK_PROOFS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000u64);
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let rules = vec![
        rule(FaultOp::Msm, 50, 97, FaultKind::Error),
        rule(FaultOp::Ntt, 70, 301, FaultKind::Error),
        rule(FaultOp::Stage, 90, 401, FaultKind::Panic),
        rule(FaultOp::Msm, 133, 499, FaultKind::WrongResult),
    ];
    let backend = faulty(&pk, 2, rules);
    assert_eq!(
        proofs_that_fit(&*backend, &key_shape(&pk).unwrap()).unwrap(),
        2
    );
    let prover = prover(vec![backend.clone() as Arc<dyn ProverBackend>], &pk, 4, 2);
    let key_bytes = backend.budget().in_use();
    let mut outcomes = Vec::new();
    let stats = prover.run(jobs(seed, count), |o| outcomes.push(o));
    let injected = backend.injected() as usize;
    println!(
        "soak: {} proofs, {} failures, {injected} faults injected, {:.1} proofs/s, high water {} of {}",
        stats.proofs, stats.failures, stats.proofs_per_second(), stats.devices[0].budget.high_water, backend.budget().capacity()
    );
    assert!(injected > 10, "faults were injected");
    assert_eq!(
        stats.failures, injected,
        "every fault is reported, and only faults fail"
    );
    assert_eq!(stats.proofs + stats.failures, count as usize);
    assert!(stats.devices[0].budget.high_water <= backend.budget().capacity());
    assert_eq!(backend.budget().in_use(), key_bytes, "zero leaked bytes");
    assert_identical(&pk, seed, count, &outcomes);
    prover.release().unwrap();
    assert_eq!(backend.budget().in_use(), 0);
}

/// A CPU "device" with its own budget, reporting itself as logical device `index`.
fn cpu_device(pk: &ProvingKey, proofs: u64, index: usize) -> Arc<dyn ProverBackend> {
    let probe = CpuBackend::with_budget(DeviceBudget::new("probe", u64::MAX));
    let shape = key_shape(pk).unwrap();
    let capacity = key_plan(&probe, &shape).unwrap().total_bytes()
        + proofs * proof_plan(&probe, &shape).unwrap().total_bytes();
    Arc::new(CpuBackend::with_budget_and_index(
        DeviceBudget::new(format!("cpu:{index}"), capacity),
        index,
    ))
}

#[test]
fn jobs_spread_over_devices_each_within_its_own_budget() {
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let small = cpu_device(&pk, 1, 0);
    let large = cpu_device(&pk, 3, 1);
    let prover = prover(vec![small.clone(), large.clone()], &pk, 3, 2);
    let mut outcomes = Vec::new();
    let stats = prover.run(jobs(seed, 24), |o| outcomes.push(o));
    assert_eq!((stats.proofs, stats.failures), (24, 0), "{outcomes:?}");
    for (d, backend) in stats.devices.iter().zip([&small, &large]) {
        assert!(
            d.proofs > 0,
            "{} made no proof: placement ignored it",
            d.label
        );
        assert!(
            d.budget.high_water <= backend.budget().capacity(),
            "{} over budget",
            d.label
        );
    }
    for o in &outcomes {
        let report = &o.result.as_ref().unwrap().report;
        assert_eq!(
            report.backend, o.device,
            "each report names the device that made it"
        );
        assert!(o.retried_from.is_none());
    }
    assert_identical(&pk, seed, 24, &outcomes);
    prover.release().unwrap();
    assert_eq!((small.budget().in_use(), large.budget().in_use()), (0, 0));
}

#[test]
fn a_failing_device_leaves_the_rotation_and_its_job_is_retried_elsewhere() {
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let broken: Arc<dyn ProverBackend> = Arc::new(FaultyBackend::new(
        cpu_device(&pk, 2, 0),
        vec![rule(FaultOp::Msm, 1, 1, FaultKind::Error)],
    ));
    let good = cpu_device(&pk, 2, 1);
    let prover = prover(vec![broken.clone(), good.clone()], &pk, 1, 1);
    let mut outcomes = Vec::new();
    let stats = prover.run(jobs(seed, 10), |o| outcomes.push(o));
    assert_eq!((stats.proofs, stats.failures), (10, 0), "{outcomes:#?}");
    assert!(
        !stats.devices[0].healthy,
        "the failing device left the rotation"
    );
    assert!(stats.devices[0].failures >= 1);
    let retried: Vec<_> = outcomes
        .iter()
        .filter(|o| o.retried_from.is_some())
        .collect();
    assert!(!retried.is_empty(), "the failed job was retried");
    for o in &retried {
        assert_eq!(o.retried_from.as_deref(), Some("cpu:0"));
        assert_eq!(o.device, "cpu:1");
    }
    assert_identical(&pk, seed, 10, &outcomes);
    prover.release().unwrap();
    assert_eq!((broken.budget().in_use(), good.budget().in_use()), (0, 0));
}

#[test]
fn a_proof_that_cannot_fit_beside_its_key_fails_at_once_instead_of_waiting() {
    use crucible_core::groth16::{prove, ProveOptions, StagedKey};
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let probe = CpuBackend::with_budget(DeviceBudget::new("probe", u64::MAX));
    let shape = key_shape(&pk).unwrap();
    let needed = key_plan(&probe, &shape).unwrap().total_bytes()
        + proof_plan(&probe, &shape).unwrap().total_bytes();
    let backend = CpuBackend::with_budget(DeviceBudget::new("cpu:0", needed - 1));
    let key = StagedKey::stage(&backend, pk.clone()).unwrap();
    let circuit = BenchCircuit {
        constraints: CONSTRAINTS,
        inputs: INPUTS,
        seed,
    };
    let err = prove(
        &backend,
        &key,
        circuit,
        Fr::from(2u64),
        Fr::from(3u64),
        ProveOptions::default(),
    )
    .expect_err("the proof cannot fit beside the key");
    assert!(
        matches!(err.root(), Error::OutOfBudget { needed: n, .. } if *n == needed),
        "{err}"
    );
    assert_eq!(err.phase(), Some(Phase::Allocate));
    key.release().unwrap();
    assert_eq!(backend.budget().in_use(), 0);
}
