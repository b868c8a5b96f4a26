//! The engine under faults in every method of the backend and its device sync, panics
//! in the caller's callback, several devices and workers: every job ends with an
//! outcome, no wrong proof is returned, no byte leaks, nothing hangs, and the engine
//! keeps serving. Ends with a soak bounded in time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use crucible_core::engine::Prover;
use crucible_core::fault::{FaultKind, FaultOp, FaultyBackend};
use crucible_core::fixtures::key_cache::generate_key;
use crucible_core::groth16::{ProvingKey, Query};
use crucible_core::ProverBackend;

const LIMIT: Duration = Duration::from_secs(120);

const KINDS: [FaultKind; 3] = [FaultKind::Error, FaultKind::Panic, FaultKind::WrongResult];

fn engine(devices: &[Arc<FaultyBackend>], pk: &Arc<ProvingKey>, workers: usize) -> Arc<Prover> {
    let devices = devices
        .iter()
        .map(|d| Arc::clone(d) as Arc<dyn ProverBackend>)
        .collect();
    Arc::new(prover(devices, pk, workers, 2))
}

fn in_use(devices: &[Arc<FaultyBackend>]) -> Vec<u64> {
    devices.iter().map(|d| d.budget().in_use()).collect()
}

fn release(prover: Arc<Prover>, devices: &[Arc<FaultyBackend>]) {
    let prover = Arc::into_inner(prover).expect("no run holds the prover any more");
    prover.release().unwrap();
    assert!(in_use(devices).iter().all(|b| *b == 0), "keys released");
}

/// One fault, of each kind, in each method: the faulted job and every other one ends
/// with an outcome, only verified proofs identical to ark-groth16's come back, the
/// budget returns to the staged key, and the next jobs all succeed.
#[test]
fn a_fault_of_any_kind_in_any_method_ends_every_job_and_the_engine_keeps_serving() {
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    for op in FaultOp::ALL {
        for kind in KINDS {
            let device = faulty(&pk, 2, Vec::new());
            let devices = [Arc::clone(&device)];
            let prover = engine(&devices, &pk, 2);
            let key_bytes = in_use(&devices);
            // Armed after the key is staged: the second call from here on faults.
            device.add_rule(rule(op, device.calls(op) + 2, 0, kind));
            let (_, outcomes) = run_bounded(&prover, jobs(seed, 4), LIMIT);
            let case = format!("{op:?} {kind:?} (seed {seed})");
            assert_one_outcome_each(&outcomes, 4);
            assert_identical(&pk, seed, 4, &outcomes);
            assert_eq!(in_use(&devices), key_bytes, "{case}: bytes leaked");
            let (stats, after) = run_bounded(&prover, jobs(seed, 2), LIMIT);
            assert_eq!(
                stats.proofs, 2,
                "{case}: not serving after the fault: {after:#?}"
            );
            assert!(stats.caller_panics.is_empty());
            release(prover, &devices);
        }
    }
}

/// Panics outside the guarded phases (planning scratch, the device sync of a release)
/// on one of two devices with two workers each: no hang, no panic out of `run`, every
/// job an outcome, the device taken out of rotation, its jobs retried on the other.
#[test]
fn panics_outside_the_guarded_phases_take_the_device_out_and_never_hang() {
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    for op in [
        FaultOp::ScratchPlan,
        FaultOp::LeaseSync,
        FaultOp::Info,
        FaultOp::Budget,
    ] {
        let broken = faulty(&pk, 2, Vec::new());
        let good = Arc::new(FaultyBackend::new(cpu_device(&pk, 2, 1), Vec::new()));
        let devices = [Arc::clone(&broken), Arc::clone(&good)];
        let prover = engine(&devices, &pk, 2);
        let key_bytes = in_use(&devices);
        broken.add_rule(rule(op, broken.calls(op) + 1, 1, FaultKind::Panic));
        let (stats, outcomes) = run_bounded(&prover, jobs(seed, 12), LIMIT);
        // The checks below call `budget` and `info` themselves.
        broken.clear_rules();
        assert_one_outcome_each(&outcomes, 12);
        assert_eq!(stats.proofs, 12, "{op:?}: {outcomes:#?}");
        assert!(
            !stats.devices[0].healthy,
            "{op:?}: the panicking device left the rotation"
        );
        assert!(
            stats.devices[0].failures > 0,
            "{op:?}: {:?}",
            stats.devices[0]
        );
        assert!(outcomes
            .iter()
            .any(|o| o.retried_from.as_deref() == Some("cpu:0")));
        assert_identical(&pk, seed, 12, &outcomes);
        assert_eq!(in_use(&devices), key_bytes, "{op:?}: bytes leaked");
        release(prover, &devices);
    }
}

/// A device whose releases fail: the errors come back with the job's outcome (not
/// left in the budget), and the device leaves the rotation.
#[test]
fn release_errors_are_reported_with_the_job_and_take_the_device_out() {
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let broken = faulty(&pk, 2, Vec::new());
    let good = Arc::new(FaultyBackend::new(cpu_device(&pk, 2, 1), Vec::new()));
    let devices = [Arc::clone(&broken), Arc::clone(&good)];
    let prover = engine(&devices, &pk, 1);
    // A failed MSM drops its lease unreleased; the drop's sync fails too.
    broken.add_rule(rule(
        FaultOp::MsmG1,
        broken.calls(FaultOp::MsmG1) + 1,
        0,
        FaultKind::Error,
    ));
    broken.add_rule(rule(
        FaultOp::LeaseSync,
        broken.calls(FaultOp::LeaseSync) + 1,
        0,
        FaultKind::Error,
    ));
    let (stats, outcomes) = run_bounded(&prover, jobs(seed, 6), LIMIT);
    assert_one_outcome_each(&outcomes, 6);
    assert_eq!(stats.proofs, 6, "{outcomes:#?}");
    let reported: Vec<_> = outcomes.iter().flat_map(|o| &o.release_errors).collect();
    assert_eq!(reported.len(), 1, "{outcomes:#?}");
    assert!(
        reported[0].to_string().contains("LeaseSync"),
        "{}",
        reported[0]
    );
    assert_eq!(stats.devices[0].release_errors, 1);
    assert!(!stats.devices[0].healthy);
    assert!(
        broken.budget().take_deferred_errors().is_empty(),
        "taken by the engine"
    );
    assert_identical(&pk, seed, 6, &outcomes);
    release(prover, &devices);
}

/// Staging a key asks the backend to pin exactly the queries its schedule streams
/// that have terms (none when all are resident); a pin that fails fails the staging
/// with its error and leaves no byte of the budget taken.
#[test]
fn staging_pins_the_streamed_queries_and_a_failed_pin_leaks_nothing() {
    use crucible_core::groth16::{
        DomainVectors, Evaluation, KeyOptions, QuerySet, Schedule, StagedKey,
    };
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let streamed = |resident| KeyOptions {
        schedule: Some(Schedule {
            resident,
            domain: DomainVectors::Sequenced,
            chunk: 100,
            evaluation: Evaluation::Host,
        }),
        ..KeyOptions::default()
    };
    let pins = |d: &FaultyBackend| (d.calls(FaultOp::PinG1Bases), d.calls(FaultOp::PinG2Bases));
    let cases = [
        (QuerySet::NONE, (4, 1)),
        (QuerySet::ALL, (0, 0)),
        (QuerySet::NONE.with(Query::H).with(Query::BG2), (3, 0)),
    ];
    for (resident, want) in cases {
        let device = faulty(&pk, 2, Vec::new());
        let key = StagedKey::stage_with(&*device, Arc::clone(&pk), &streamed(resident)).unwrap();
        assert_eq!(pins(&device), want, "resident {resident:?} (seed {seed})");
        // The CPU backend pins nothing: every query streams as before.
        assert_eq!(key.pinned_queries(), QuerySet::NONE);
        key.release().unwrap();
        assert_eq!(device.budget().in_use(), 0);
    }
    for op in [FaultOp::PinG1Bases, FaultOp::PinG2Bases] {
        let device = faulty(&pk, 2, Vec::new());
        device.add_rule(rule(op, 1, 0, FaultKind::Error));
        let err = StagedKey::stage_with(&*device, Arc::clone(&pk), &streamed(QuerySet::NONE))
            .err()
            .unwrap_or_else(|| panic!("{op:?}: staging succeeded (seed {seed})"));
        assert!(err.to_string().contains("injected fault"), "{op:?}: {err}");
        assert_eq!(device.budget().in_use(), 0, "{op:?}: bytes leaked");
    }
}

/// The caller's callback panics on some outcomes: the run goes on, every outcome is
/// still delivered, and the panics are reported in the stats.
#[test]
fn a_panicking_callback_loses_no_outcome_and_never_hangs() {
    let seed = seed();
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let device = faulty(&pk, 1, Vec::new());
    let devices = [Arc::clone(&device)];
    let prover = engine(&devices, &pk, 2);
    let (tx, rx) = std::sync::mpsc::channel();
    let runner = Arc::clone(&prover);
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        let stats = runner.run(jobs(seed, 10), |o| {
            seen.push(o.id);
            if seen.len() % 3 == 1 {
                panic!("the caller's callback panicked on job {}", o.id);
            }
        });
        drop(runner);
        let _ = tx.send((stats, seen));
    });
    let (stats, mut seen) = rx.recv_timeout(LIMIT).expect("the engine hung");
    seen.sort_unstable();
    assert_eq!(
        seen,
        (0..10).collect::<Vec<_>>(),
        "every outcome was delivered"
    );
    assert_eq!(stats.proofs, 10);
    assert_eq!(stats.caller_panics.len(), 4, "{:?}", stats.caller_panics);
    assert!(stats.caller_panics[0].contains("on_done callback panicked"));
    release(prover, &devices);
}

/// Many proofs for a bounded time (`CRUCIBLE_SOAK_SECONDS`, default 6: about 400 jobs and
/// 65 faults on two cores, each proof then checked against arkworks), three devices
/// (as `CRUCIBLE_CPU_DEVICES=3` makes them) with two workers each and budgets that fit
/// one proof beside the key, faults of every kind recurring in every method: every job
/// ends with an outcome, zero wrong proofs, zero leaked bytes, and once the faults stop
/// the engine still serves.
#[test]
fn soak_with_faults_everywhere_on_several_devices() {
    let seed = seed();
    let seconds = std::env::var("CRUCIBLE_SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6u64);
    let pk = Arc::new(generate_key(CONSTRAINTS, INPUTS, seed).unwrap());
    let devices: Vec<Arc<FaultyBackend>> = (0..3)
        .map(|i| Arc::new(FaultyBackend::new(cpu_device(&pk, 1, i), Vec::new())))
        .collect();
    let prover = engine(&devices, &pk, 2);
    let key_bytes = in_use(&devices);
    // Periods differ per method and device, so faults land on every phase over time.
    for (d, device) in devices.iter().enumerate() {
        for (i, op) in FaultOp::ALL.into_iter().enumerate() {
            let kind = KINDS[(i + d) % KINDS.len()];
            let every = 61 + 17 * i as u64 + 29 * d as u64;
            device.add_rule(rule(op, device.calls(op) + every / 2, every, kind));
        }
    }
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let submitted = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&submitted);
    let timed_jobs = jobs(seed, u64::MAX)
        .take_while(move |_| Instant::now() < deadline)
        .inspect(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        });
    let (stats, outcomes) = run_bounded(&prover, timed_jobs, Duration::from_secs(seconds) + LIMIT);
    // The checks below call `budget` themselves: a recurring Budget fault would fire there.
    for device in &devices {
        device.clear_rules();
    }
    let count = submitted.load(Ordering::SeqCst);
    let injected: u64 = devices.iter().map(|d| d.injected()).sum();
    println!(
        "soak: {count} jobs in {seconds} s, {} proofs, {} failures, {injected} faults injected, \
         {:.1} proofs/s, devices healthy {:?}",
        stats.proofs,
        stats.failures,
        stats.proofs_per_second(),
        stats.devices.iter().map(|d| d.healthy).collect::<Vec<_>>()
    );
    assert!(count >= 50, "too few jobs to soak: {count}");
    assert!(injected > 10, "faults were injected: {injected}");
    assert_one_outcome_each(&outcomes, count);
    assert_identical(&pk, seed, count, &outcomes);
    for (d, stat) in stats.devices.iter().enumerate() {
        assert!(
            stat.budget.high_water <= devices[d].budget().capacity(),
            "{} over budget",
            stat.label
        );
    }
    assert_eq!(in_use(&devices), key_bytes, "zero leaked bytes");
    let (after, _) = run_bounded(&prover, jobs(seed, 6), LIMIT);
    assert_eq!(
        after.proofs, 6,
        "the engine still serves once the faults stop"
    );
    release(prover, &devices);
}
