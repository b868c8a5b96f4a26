//! Errors instead of panics, and the budget back at zero after every path: registry
//! probing, adapter selection, plans that cannot fit, allocations outside the plan,
//! bad lengths and kinds, scratch missing from the plan.
//!
//! One test (so nothing else shares the budget while it is checked).

use crate::common;

use ark_ff::UniformRand;
use crucible_backend_wgpu::{probe_with, WgpuOptions};
use crucible_core::priority;
use crucible_core::registry::{registrations, Probe, ProbeOptions};
use crucible_core::tuning_file::TuningFile;
use crucible_core::{
    BufferUse, Domain, ElementKind, Error, Fr, MemoryPlan, MsmSpan, NttKind, PlanKey,
    ProverBackend, ScratchNeed,
};
use std::sync::Arc;

#[test]
fn errors_are_reported_and_budget_returns() {
    let _serial = common::serial();
    // The registration is linked in and its probe never panics.
    let registration = registrations()
        .into_iter()
        .find(|r| r.name == "wgpu")
        .expect("crucible-backend-wgpu registers `wgpu`");
    for probe in (registration.probe)(&ProbeOptions::default()) {
        match probe {
            Probe::Available(b) => {
                let info = b.info();
                assert_eq!(info.name, "wgpu");
                assert!(
                    [priority::SOFTWARE_ADAPTER, priority::PORTABLE_GPU].contains(&info.priority),
                    "{info:?}"
                );
                println!(
                    "probed {} ({}, {} bytes): {}",
                    info.label(),
                    info.device_name,
                    info.memory_bytes,
                    info.api
                );
            }
            Probe::Unavailable { reason } => println!("probed: unavailable: {reason}"),
        }
    }
    // An invalid [wgpu] table makes the backend unavailable, naming the key and what
    // it allows (before any adapter is looked for).
    let file = TuningFile::parse("[wgpu]\nntt_mul = \"radix2\"\n", None).expect("TOML");
    let tuned = ProbeOptions {
        tuning: Arc::new(file),
        ..ProbeOptions::default()
    };
    let refused = (registration.probe)(&tuned);
    assert!(
        matches!(&refused[..], [Probe::Unavailable { reason }]
            if reason.contains("[wgpu]") && reason.contains("radix2") && reason.contains("wide")),
        "{}",
        reasons(&refused)
    );
    // A selection that matches nothing says so, listing the adapters (or, where there
    // is none at all, that there is none).
    let none = probe_with(
        &ProbeOptions::default(),
        &WgpuOptions {
            adapter: Some("no-such-adapter".into()),
            ..WgpuOptions::default()
        },
    );
    let Some(backend) = common::backend("errors_are_reported_and_budget_returns") else {
        assert!(
            matches!(&none[..], [Probe::Unavailable { reason }] if reason.contains("adapter")),
            "{}",
            reasons(&none)
        );
        return;
    };
    assert!(
        matches!(&none[..], [Probe::Unavailable { reason }] if reason.contains("no-such-adapter")),
        "{}",
        reasons(&none)
    );
    let (mut rng, _seed) = common::rng();
    let budget = backend.budget();

    // A plan larger than the budget fails at once.
    let mut plan = MemoryPlan::new("too big");
    plan.item(PlanKey::new("test", "huge"), budget.capacity() + 1);
    assert!(matches!(
        (backend as &dyn ProverBackend).allocate(plan),
        Err(Error::OutOfBudget { .. })
    ));

    let domain = Domain::with_log_size(4).unwrap();
    let values: Vec<Fr> = (0..domain.size).map(|_| Fr::rand(&mut rng)).collect();

    // An NTT whose lease lacks the scratch items: LeaseExceeded naming the item.
    let mut plan = MemoryPlan::new("no scratch");
    plan.item(
        PlanKey::new("test", "x"),
        backend
            .buffer_bytes(ElementKind::Scalar, domain.size, BufferUse::Resident)
            .unwrap(),
    );
    let mut lease = (backend as &dyn ProverBackend).allocate(plan).unwrap();
    let x = (backend as &dyn ProverBackend)
        .alloc_scalars(&mut lease, PlanKey::new("test", "x"), domain.size)
        .unwrap();
    backend.stage_scalars(&mut lease, x, &values).unwrap();
    match backend.ntt(&mut lease, x, &domain, NttKind::Forward) {
        Err(Error::LeaseExceeded { buffer, .. }) => {
            assert!(buffer.starts_with("wgpu."), "{buffer}")
        }
        other => panic!("expected LeaseExceeded, got {other:?}"),
    }
    // Wrong lengths and kinds are input errors: more values than the buffer holds
    // (fewer write its front, as with bases).
    let longer: Vec<Fr> = values.iter().chain(&values[..1]).copied().collect();
    assert!(matches!(
        backend.stage_scalars(&mut lease, x, &longer),
        Err(Error::InvalidInput(_))
    ));
    let wrong = Domain::with_log_size(3).unwrap();
    assert!(matches!(
        backend.ntt(&mut lease, x, &wrong, NttKind::Forward),
        Err(Error::InvalidInput(_))
    ));
    // A scalar buffer cannot be passed as bases: handles are made only by the
    // allocation helpers, so that case no longer compiles.
    // Allocations outside the plan are refused.
    assert!(matches!(
        (backend as &dyn ProverBackend).alloc_scalars(&mut lease, PlanKey::new("test", "x"), 1),
        Err(Error::LeaseExceeded { .. })
    ));
    lease.release().unwrap();
    assert_eq!(budget.in_use(), 0, "after the failed NTT");

    // Dropped mid-way (no release): the budget still returns.
    let mut plan = MemoryPlan::new("dropped");
    plan.item(
        PlanKey::new("test", "x"),
        backend
            .buffer_bytes(ElementKind::Scalar, domain.size, BufferUse::Resident)
            .unwrap(),
    );
    plan.merge(&backend.scratch_plan(&ScratchNeed {
        ntt: Some(domain),
        ..ScratchNeed::default()
    }));
    let mut lease = (backend as &dyn ProverBackend).allocate(plan).unwrap();
    let x = (backend as &dyn ProverBackend)
        .alloc_scalars(&mut lease, PlanKey::new("test", "x"), domain.size)
        .unwrap();
    backend.stage_scalars(&mut lease, x, &values).unwrap();
    backend
        .ntt(&mut lease, x, &domain, NttKind::CosetForward)
        .unwrap();
    drop(lease);
    assert_eq!(budget.in_use(), 0, "after dropping a lease");
    assert!(budget.take_deferred_errors().is_empty());

    // An MSM span out of range is an error, and so is one whose scratch is missing.
    let mut key_plan = MemoryPlan::new("bases");
    key_plan.item(
        PlanKey::new("test", "bases"),
        backend
            .buffer_bytes(ElementKind::G1, 4, BufferUse::Resident)
            .unwrap(),
    );
    let mut key = (backend as &dyn ProverBackend).allocate(key_plan).unwrap();
    let bases = (backend as &dyn ProverBackend)
        .alloc_g1(
            &mut key,
            PlanKey::new("test", "bases"),
            4,
            BufferUse::Resident,
        )
        .unwrap();
    let mut plan = MemoryPlan::new("msm");
    plan.item(
        PlanKey::new("test", "s"),
        backend
            .buffer_bytes(ElementKind::Scalar, 4, BufferUse::Resident)
            .unwrap(),
    );
    let mut work = (backend as &dyn ProverBackend).allocate(plan).unwrap();
    let s = (backend as &dyn ProverBackend)
        .alloc_scalars(&mut work, PlanKey::new("test", "s"), 4)
        .unwrap();
    let span = |base_offset, len| MsmSpan {
        bases,
        base_offset,
        scalars: s,
        scalar_offset: 0,
        len,
    };
    assert!(matches!(
        backend.msm_g1(&mut work, &key, span(1, 4)),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        backend.msm_g1(&mut work, &key, span(0, 4)),
        Err(Error::LeaseExceeded { .. })
    ));
    work.release().unwrap();
    key.release().unwrap();
    assert_eq!(budget.in_use(), 0, "after the failed MSMs");
}

/// What each probe says: its backend's label or why it is unavailable.
fn reasons(probes: &[Probe]) -> String {
    probes
        .iter()
        .map(|p| match p {
            Probe::Available(b) => b.info().label(),
            Probe::Unavailable { reason } => reason.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}
