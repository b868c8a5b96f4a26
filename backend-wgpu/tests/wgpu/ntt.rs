//! NTTs (all four kinds, 2^0 upward) and the pointwise ops against arkworks, through the
//! `ProverBackend` trait, with the adapter's own limits and with buffers split into
//! chunks by a small binding limit, on both curves' scalar fields.

use crate::common;

use ark_ff::{PrimeField, UniformRand};
use ark_poly::EvaluationDomain;
use ark_std::rand::Rng;
use crucible_core::{
    BufferUse, Domain, ElementKind, Fr, Lease, MemoryPlan, NttKind, PairingCurve, PlanKey,
    ProverBackend, ScalarBuf, ScratchNeed,
};

fn reference<F: PrimeField>(values: &[F], domain: &Domain<F>, kind: NttKind) -> Vec<F> {
    let d = domain.to_ark();
    let mut v = values.to_vec();
    match kind {
        NttKind::Forward => d.fft_in_place(&mut v),
        NttKind::Inverse => d.ifft_in_place(&mut v),
        NttKind::CosetForward => d.get_coset(F::GENERATOR).unwrap().fft_in_place(&mut v),
        NttKind::CosetInverse => d.get_coset(F::GENERATOR).unwrap().ifft_in_place(&mut v),
    }
    v
}

fn plan<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    domain: &Domain<E::ScalarField>,
) -> MemoryPlan {
    let mut plan = MemoryPlan::new("ntt test");
    plan.item(
        PlanKey::new("test", "x"),
        backend
            .buffer_bytes(ElementKind::Scalar, domain.size, BufferUse::Resident)
            .unwrap(),
    )
    .item(
        PlanKey::new("test", "y"),
        backend
            .buffer_bytes(ElementKind::Scalar, domain.size, BufferUse::Resident)
            .unwrap(),
    );
    plan.merge(&backend.scratch_plan(&ScratchNeed {
        ntt: Some(*domain),
        ..ScratchNeed::default()
    }));
    plan
}

/// A lease of [`plan`] over `domain` and its buffer `x` of the domain's size.
fn lease_with_x<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    domain: &Domain<E::ScalarField>,
) -> (Lease, ScalarBuf) {
    let mut lease = backend.allocate(plan(backend, domain)).unwrap();
    let x = backend
        .alloc_scalars(&mut lease, PlanKey::new("test", "x"), domain.size)
        .unwrap();
    (lease, x)
}

fn check_ntts<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    rng: &mut impl Rng,
    log_sizes: std::ops::RangeInclusive<u32>,
) {
    for log in log_sizes {
        let domain = Domain::<E::ScalarField>::with_log_size(log).unwrap();
        let values: Vec<E::ScalarField> = (0..domain.size)
            .map(|_| E::ScalarField::rand(rng))
            .collect();
        let (mut lease, x) = lease_with_x(backend, &domain);
        for kind in NttKind::ALL {
            backend.stage_scalars(&mut lease, x, &values).unwrap();
            backend.ntt(&mut lease, x, &domain, kind).unwrap();
            let got = backend.read_scalars(&lease, x).unwrap();
            assert_eq!(
                got,
                reference(&values, &domain, kind),
                "{kind:?} NTT of 2^{log}"
            );
        }
        // Forward then inverse is the identity.
        backend.stage_scalars(&mut lease, x, &values).unwrap();
        backend
            .ntt(&mut lease, x, &domain, NttKind::CosetForward)
            .unwrap();
        backend
            .ntt(&mut lease, x, &domain, NttKind::CosetInverse)
            .unwrap();
        assert_eq!(
            backend.read_scalars(&lease, x).unwrap(),
            values,
            "coset round trip of 2^{log}"
        );
        lease.release().unwrap();
    }
}

fn check_pointwise<E: PairingCurve>(backend: &dyn ProverBackend<E>, rng: &mut impl Rng, log: u32) {
    let domain = Domain::<E::ScalarField>::with_log_size(log).unwrap();
    let n = domain.size;
    let a: Vec<E::ScalarField> = (0..n).map(|_| E::ScalarField::rand(rng)).collect();
    let b: Vec<E::ScalarField> = (0..n).map(|_| E::ScalarField::rand(rng)).collect();
    let k = E::ScalarField::rand(rng);
    let mut lease = backend.allocate(plan(backend, &domain)).unwrap();
    let x = backend
        .alloc_scalars(&mut lease, PlanKey::new("test", "x"), n)
        .unwrap();
    let y = backend
        .alloc_scalars(&mut lease, PlanKey::new("test", "y"), n)
        .unwrap();
    backend.stage_scalars(&mut lease, x, &a).unwrap();
    backend.stage_scalars(&mut lease, y, &b).unwrap();
    backend.mul_assign(&mut lease, x, y).unwrap();
    let want: Vec<E::ScalarField> = a.iter().zip(&b).map(|(a, b)| *a * b).collect();
    assert_eq!(
        backend.read_scalars(&lease, x).unwrap(),
        want,
        "mul_assign of 2^{log}"
    );
    backend.sub_mul_assign(&mut lease, x, y, k).unwrap();
    let want: Vec<E::ScalarField> = want.iter().zip(&b).map(|(x, b)| (*x - b) * k).collect();
    assert_eq!(
        backend.read_scalars(&lease, x).unwrap(),
        want,
        "sub_mul_assign of 2^{log}"
    );
    lease.release().unwrap();
}

#[test]
fn ntt_and_pointwise_match_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::backend("ntt_and_pointwise_match_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    check_ntts(backend, &mut rng, 0..=7);
    check_pointwise(backend, &mut rng, 5);
}

#[test]
fn chunked_ntt_and_pointwise_match_arkworks() {
    let _serial = common::serial();
    // 1 KiB bindings: 32 scalars per chunk, so 2^7 and 2^8 span 4 and 8 chunks.
    let Some(backend) =
        common::small_binding_backend("chunked_ntt_and_pointwise_match_arkworks", 1024)
    else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    let domain = Domain::<Fr>::with_log_size(8).unwrap();
    let printed = plan::<crucible_core::Bls12_381>(backend, &domain).to_string();
    assert!(
        printed.contains("8 chunks"),
        "the plan says how it is chunked:\n{printed}"
    );
    check_ntts(backend, &mut rng, 4..=8);
    check_pointwise(backend, &mut rng, 7);
}

/// A transform repeated on a lease creates no buffer, makes one submission and uploads
/// no parameters (the bytes already queued are its own); so does a repeated pointwise
/// product. Each kind three times on fresh random inputs, against arkworks: the first
/// builds its tables (in its one submission), the second uploads its parameters
/// without the table builds', the third is checked; 2^10 takes two tile dispatches.
#[test]
fn repeated_ntt_creates_nothing() {
    let _serial = common::serial();
    let Some(backend) = common::backend("repeated_ntt_creates_nothing") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    let domain = Domain::<Fr>::with_log_size(10).unwrap();
    let (mut lease, x) = lease_with_x::<crucible_core::Bls12_381>(backend, &domain);
    let y = (backend as &dyn ProverBackend)
        .alloc_scalars(&mut lease, PlanKey::new("test", "y"), domain.size)
        .unwrap();
    let repeat = |what: &str, op: &mut dyn FnMut()| {
        let before = backend.activity();
        op();
        let after = backend.activity();
        assert_eq!(after.buffers, before.buffers, "{what}: buffers created");
        assert_eq!(
            after.submissions,
            before.submissions + 1,
            "{what}: submissions"
        );
        assert_eq!(after.param_writes, before.param_writes, "{what}: uploads");
    };
    for kind in NttKind::ALL {
        let values: Vec<Fr> = (0..domain.size).map(|_| Fr::rand(&mut rng)).collect();
        backend.stage_scalars(&mut lease, x, &values).unwrap();
        backend.ntt(&mut lease, x, &domain, kind).unwrap();
        backend.ntt(&mut lease, x, &domain, kind).unwrap();
        repeat(&format!("{kind:?} NTT"), &mut || {
            backend.ntt(&mut lease, x, &domain, kind).unwrap()
        });
        let mut want = values;
        for _ in 0..3 {
            want = reference(&want, &domain, kind);
        }
        assert_eq!(
            backend.read_scalars(&lease, x).unwrap(),
            want,
            "{kind:?} NTT of 2^10, three times"
        );
    }
    let values: Vec<Fr> = (0..domain.size).map(|_| Fr::rand(&mut rng)).collect();
    backend.stage_scalars(&mut lease, x, &values).unwrap();
    backend.stage_scalars(&mut lease, y, &values).unwrap();
    backend.mul_assign(&mut lease, x, y).unwrap();
    repeat("mul_assign", &mut || {
        backend.mul_assign(&mut lease, x, y).unwrap()
    });
    let cubes: Vec<Fr> = values.iter().map(|v| v * v * v).collect();
    assert_eq!(backend.read_scalars(&lease, x).unwrap(), cubes, "x·y·y");
    lease.release().unwrap();
    assert_eq!(backend.budget().in_use(), 0);
}

/// BN254's scalar field (two-adicity 28) on buffers of 32-scalar chunks: every kind
/// and the pointwise products (the adapter's own limits are the conformance suite's
/// `bn254/ntt` cases).
#[test]
fn bn254_ntt_and_pointwise_match_arkworks() {
    let _serial = common::serial();
    let (mut rng, _seed) = common::rng();
    let Some(chunked) =
        common::bn254_small_binding_backend("bn254_ntt_and_pointwise_match_arkworks", 1024)
    else {
        return;
    };
    check_ntts(chunked, &mut rng, 4..=8);
    check_pointwise(chunked, &mut rng, 7);
    assert_eq!(chunked.budget().in_use(), 0);
}
