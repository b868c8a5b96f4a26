//! The prover engine on the CPU backend: concurrency under a tight budget, fault
//! injection, verification of every proof, bad input, and several devices.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use ark_ff::UniformRand;
use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_backends::cpu::CpuBackend;
use crucible_core::engine::{EngineConfig, Job, Prover};
use crucible_core::fault::{FaultKind, FaultOp, FaultyBackend};
use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::fixtures::key_cache::generate_key;
use crucible_core::groth16::{key_plan, key_shape, proof_plan};
use crucible_core::{Bls12_381, DeviceBudget, Error, Fr, Phase, ProverBackend};

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
    // Proofs were in flight for part of the run, never longer than it.
    let busy = stats.busy_fraction(0);
    assert!(busy > 0.0 && busy <= 1.0, "busy fraction {busy}");
    assert!(stats.devices[0].busy <= stats.wall);
    assert_identical(&pk, seed, 16, &outcomes);
    prover.release().unwrap();
    assert_eq!(backend.budget().in_use(), 0);
}

#[test]
fn stalled_devices_hold_no_more_synthesized_proofs_than_the_threads_and_workers_need() {
    // With the device's budget taken, no proof can start: the pipeline fills and stops
    // drawing jobs. Each synthesis thread then holds one proof, the dispatcher one,
    // and each worker one it waits to prove and one queued: nothing more waits on the
    // host (at 2^26 each is a 2 GiB assignment).
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let backend = cpu_fitting(&pk, 2);
    let (workers, threads, count) = (2, 4, 16);
    let prover = prover(vec![backend.clone()], &pk, workers, threads);
    let budget = backend.budget();
    let taken = budget.acquire(budget.capacity() - budget.in_use()).unwrap();
    let drawn = AtomicUsize::new(0);
    let mut outcomes = Vec::new();
    let held = std::thread::scope(|scope| {
        let run = scope.spawn(|| {
            let jobs = jobs(seed, count).inspect(|_| {
                drawn.fetch_add(1, Ordering::SeqCst);
            });
            prover.run(jobs, |o| outcomes.push(o))
        });
        // Stable for half a second: every thread blocked.
        let (mut last, mut since, deadline) = (0, Instant::now(), Instant::now());
        while since.elapsed() < Duration::from_millis(500) {
            assert!(
                deadline.elapsed() < Duration::from_secs(60),
                "seed {seed}: never stalled"
            );
            std::thread::sleep(Duration::from_millis(20));
            let now = drawn.load(Ordering::SeqCst);
            if now != last {
                (last, since) = (now, Instant::now());
            }
        }
        drop(taken);
        let stats = run.join().unwrap();
        assert_eq!(
            (stats.proofs, stats.failures),
            (count as usize, 0),
            "seed {seed}"
        );
        last
    });
    assert_eq!(
        held,
        threads + 2 * workers + 1,
        "seed {seed}: jobs drawn while no proof could start"
    );
    assert_identical(&pk, seed, count, &outcomes);
    prover.release().unwrap();
    assert_eq!(backend.budget().in_use(), 0);
}

#[test]
fn injected_faults_fail_only_their_proof_name_the_phase_and_leak_nothing() {
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    // Key staging makes 1 allocate, 5 alloc and no padded stage call; faults start
    // after it (a proof makes 1 allocate, 4 alloc, 4 padded stage, 4 G1 MSM calls).
    let rules = vec![
        rule(FaultOp::Allocate, 4, 0, FaultKind::Error),
        rule(FaultOp::Alloc, 20, 0, FaultKind::Error),
        rule(FaultOp::StageScalarsPadded, 9, 0, FaultKind::Error),
        rule(FaultOp::Ntt, 30, 0, FaultKind::Error),
        rule(FaultOp::MsmG1, 19, 0, FaultKind::Error),
        rule(FaultOp::MsmG1, 33, 0, FaultKind::Panic),
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
        vec![rule(FaultOp::MsmG1, 6, 0, FaultKind::WrongResult)],
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
    let out = good[0].result.as_ref().expect("the good witness proves");
    // Synthesized and evaluated on the engine's threads, both timed in its report.
    let times = &out.report.times;
    assert!(
        times.synthesize > Duration::ZERO && times.evaluate > Duration::ZERO,
        "{times:?}"
    );
    prover.release().unwrap();
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
        vec![rule(FaultOp::MsmG1, 1, 1, FaultKind::Error)],
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

/// An unbounded CPU backend, and the shape and matrix sizes of a bit-heavy circuit of
/// 2^12 constraints.
fn bit_heavy_on_an_unbounded_cpu() -> (
    CpuBackend,
    crucible_core::ProofShape,
    crucible_core::groth16::MatrixSizes,
) {
    use crucible_core::fixtures::circuit::BitHeavyCircuit;
    let circuit = BitHeavyCircuit {
        constraints: 1 << 12,
        inputs: 1,
        seed: seed(),
        bits_per_mille: 900,
    };
    let shape = BenchCircuit::shape(circuit.constraints, circuit.inputs).unwrap();
    let backend = CpuBackend::with_budget(DeviceBudget::new("cpu:0", u64::MAX));
    (backend, shape, circuit.matrix_sizes())
}

#[test]
fn a_host_that_cannot_keep_up_turns_the_choice_to_device_evaluation() {
    use crucible_core::groth16::schedule_for;
    use crucible_core::groth16::{Evaluation, KeyOptions};
    use crucible_core::host_stages::HostStages;
    let (backend, shape, matrices) = bit_heavy_on_an_unbounded_cpu();
    let options = |host| KeyOptions {
        workers: 2,
        host,
        ..KeyOptions::default()
    };
    // A host so slow that its evaluation of a proof's 12,700 entries (0.27 ms at
    // EVALUATION_NS_PER_ENTRY) supplies about 0.04 proofs/s: evaluating on the device,
    // which leaves the host nothing to evaluate, is chosen instead, and the choice's
    // rate is that of the device, no longer capped by the host.
    let slow = HostStages {
        threads: 1e-5,
        synthesis_seconds: 0.0,
    };
    let host_cap = slow.proofs_per_second(
        matrices.entries[..matrices.staged()]
            .iter()
            .map(|e| *e as u64)
            .sum(),
    );
    assert!(host_cap < 0.05, "{host_cap}");
    let starved = schedule_for(&backend, &shape, &options(Some(slow)), Some(&matrices)).unwrap();
    assert_eq!(starved.chosen.schedule.evaluation, Evaluation::Device);
    assert_eq!(starved.chosen.host_entries, 0);
    assert!(
        starved.proofs_per_second > host_cap,
        "{}",
        starved.proofs_per_second
    );
    // A host that synthesizes slowly caps every schedule's rate at its own.
    let synthesis = HostStages {
        threads: 1.0,
        synthesis_seconds: 100.0,
    };
    let capped =
        schedule_for(&backend, &shape, &options(Some(synthesis)), Some(&matrices)).unwrap();
    assert!(
        capped.proofs_per_second <= 0.01 + 1e-12,
        "{}",
        capped.proofs_per_second
    );
    let free = schedule_for(&backend, &shape, &options(None), Some(&matrices)).unwrap();
    assert!(free.proofs_per_second > capped.proofs_per_second);
}

/// Device evaluation under budgets that cannot hold the matrices beside the key: the
/// chooser streams them (and stages them with the key wherever that fits).
#[test]
fn matrices_stream_only_where_the_budget_cannot_hold_them_with_the_key() {
    use crucible_core::groth16::schedule::MIN_CHUNK;
    use crucible_core::groth16::{
        schedule_for, DomainVectors, Evaluation, KeyOptions, QuerySet, Reduction, Schedule,
        ScheduledPlan,
    };
    use crucible_core::host_stages::HostStages;
    use crucible_core::ScalarMix;
    let (backend, shape, matrices) = bit_heavy_on_an_unbounded_cpu();
    // A host too slow to evaluate: every choice evaluates on the device.
    let slow = HostStages {
        threads: 1e-5,
        synthesis_seconds: 0.0,
    };
    let options = |cap| KeyOptions {
        host: Some(slow),
        schedule_cap: cap,
        ..KeyOptions::default()
    };
    let roomy = schedule_for(&backend, &shape, &options(None), Some(&matrices)).unwrap();
    assert_eq!(roomy.chosen.schedule.evaluation, Evaluation::Device);
    // The smallest schedule that stages the matrices with the key, less a byte.
    let mut smallest_staged = u64::MAX;
    for resident in QuerySet::all_subsets() {
        for domain in [DomainVectors::Resident, DomainVectors::Sequenced] {
            for chunk in [MIN_CHUNK, 2 * MIN_CHUNK] {
                let schedule = Schedule {
                    resident,
                    domain,
                    chunk,
                    evaluation: Evaluation::Device,
                };
                let plan = ScheduledPlan::new(
                    &backend,
                    &shape,
                    Reduction::Libsnark,
                    schedule,
                    Some(&matrices),
                    ScalarMix::FULL,
                )
                .unwrap();
                smallest_staged = smallest_staged.min(plan.bytes_for(1));
            }
        }
    }
    let cap = smallest_staged - 1;
    let tight = schedule_for(&backend, &shape, &options(Some(cap)), Some(&matrices)).unwrap();
    assert!(
        matches!(
            tight.chosen.schedule.evaluation,
            Evaluation::DeviceStreamed { .. }
        ),
        "{}",
        tight.chosen.schedule
    );
    assert!(tight.chosen.bytes_for(1) <= cap);
    assert!(tight.chosen.key.total_bytes() < roomy.chosen.key.total_bytes());
}

#[test]
fn a_proof_that_cannot_fit_beside_its_key_fails_at_once_instead_of_waiting() {
    use crucible_core::groth16::{KeyOptions, Schedule, StagedKey};
    let seed = seed();
    let pk = Arc::new(generate_key::<crucible_core::Bls12_381>(CONSTRAINTS, INPUTS, seed).unwrap());
    let probe =
        CpuBackend::<crucible_core::Bls12_381>::with_budget(DeviceBudget::new("probe", u64::MAX));
    let shape = key_shape(&pk).unwrap();
    let needed = key_plan(&probe, &shape).unwrap().total_bytes()
        + proof_plan(&probe, &shape).unwrap().total_bytes();

    // The resident schedule, fixed, one byte short: refused when the key is staged,
    // naming what it needs, before anything is allocated.
    let backend = CpuBackend::with_budget(DeviceBudget::new("cpu:0", needed - 1));
    let resident = KeyOptions {
        schedule: Some(Schedule::RESIDENT),
        ..KeyOptions::default()
    };
    let err = StagedKey::stage_with(&backend, pk.clone(), &resident)
        .err()
        .expect("the resident proof cannot fit beside the key");
    assert!(
        matches!(err.root(), Error::OutOfBudget { needed: n, .. } if *n == needed),
        "{err}"
    );
    assert_eq!(err.phase(), Some(Phase::Allocate));
    assert_eq!(backend.budget().in_use(), 0);

    // Chosen freely, the same budget runs a smaller schedule instead.
    let key = StagedKey::stage(&backend, pk.clone()).unwrap();
    assert_ne!(key.schedule_choice().chosen.schedule, Schedule::RESIDENT);
    key.release().unwrap();

    // Below the floor of every schedule: BelowFloor at once, nothing allocated.
    let floor = crucible_core::groth16::schedule_for(&probe, &shape, &KeyOptions::default(), None)
        .unwrap()
        .floor_bytes();
    let tiny = CpuBackend::with_budget(DeviceBudget::new("cpu:0", floor - 1));
    let started = std::time::Instant::now();
    let err = StagedKey::stage(&tiny, pk.clone())
        .err()
        .expect("nothing fits below the floor");
    assert!(
        matches!(err.root(), Error::BelowFloor { floor: f, .. } if *f == floor),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(tiny.budget().in_use(), 0);
}

#[test]
fn a_key_whose_gamma_abc_does_not_match_its_instance_count_is_refused_up_front() {
    use crucible_core::groth16::StagedKey;
    let seed = seed();
    let pk = generate_key(CONSTRAINTS, INPUTS, seed).unwrap();
    let mut longer = pk.clone();
    longer.vk.gamma_abc_g1.push(pk.vk.gamma_abc_g1[0]);
    let mut shorter = pk.clone();
    shorter.vk.gamma_abc_g1.pop();
    for (what, bad) in [("one longer", longer), ("one shorter", shorter)] {
        let backend = cpu_fitting(&pk, 1);
        let bad = Arc::new(bad);
        let e = Prover::new(vec![backend.clone()], bad.clone(), EngineConfig::default())
            .err()
            .unwrap_or_else(|| panic!("a key with gamma_abc_g1 {what} was accepted"));
        assert!(e.to_string().contains("gamma_abc"), "{what}: {e}");
        assert!(StagedKey::stage(&*backend, bad).is_err(), "{what}");
        assert_eq!(
            backend.budget().stats().high_water,
            0,
            "{what}: nothing allocated"
        );
    }
}

#[test]
fn prove_turns_a_panic_in_circuit_synthesis_into_an_error() {
    use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
    use crucible_core::groth16::{prove, ProveOptions, StagedKey};
    struct Panics;
    impl ConstraintSynthesizer<Fr> for Panics {
        fn generate_constraints(self, _: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
            panic!("the circuit's own bug")
        }
    }
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let backend = cpu_fitting(&pk, 1);
    let key = StagedKey::stage(&*backend, pk).unwrap();
    let e = prove(
        &*backend,
        &key,
        Panics,
        Fr::from(1u64),
        Fr::from(2u64),
        ProveOptions::default(),
    )
    .expect_err("a panicking circuit is an error");
    assert_eq!(e.phase(), Some(Phase::Synthesize), "{e}");
    assert!(e.to_string().contains("the circuit's own bug"), "{e}");
    key.release().unwrap();
    assert_eq!(backend.budget().in_use(), 0);
}

#[test]
fn engine_counts_are_bounded_with_a_clear_message() {
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    for (workers, synthesis) in [(1 << 40, 1), (0, 1), (1, usize::MAX)] {
        let backend = cpu_fitting(&pk, 1);
        let config = EngineConfig {
            workers_per_device: workers,
            synthesis_threads: synthesis,
            verify: true,
            ..EngineConfig::default()
        };
        let e = Prover::new(vec![backend.clone()], pk.clone(), config)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("must be between 1 and"), "{e}");
        assert_eq!(
            backend.budget().stats().high_water,
            0,
            "refused before staging"
        );
    }
}
