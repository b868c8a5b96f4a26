//! Staging through upload buffers smaller than the data (1 MiB each), so that every
//! copy alternates between the two buffers and waits for each one's map to come back,
//! with pieces that do not line up with the buffer chunks (bindings of 3 MiB): scalars
//! staged plain and padded (the tail zeroed on the device) and read back, G1 and G2
//! bases checked through an MSM against arkworks, and the budget back at zero; on both
//! curves (BN254's points are smaller: more a piece and a chunk).

use crate::common;
use crate::msm;

use ark_ff::{UniformRand, Zero};
use crucible_backend_wgpu::field::DeviceCurve;
use crucible_backend_wgpu::{WgpuBackend, WgpuOptions, WgpuTuning};
use crucible_core::ark_bls12_381::{g1, g2, Bls12_381};
use crucible_core::ark_bn254::{self, Bn254};
use crucible_core::registry::ProbeOptions;
use crucible_core::{BufferUse, ElementKind, MemoryPlan, PlanKey, ProverBackend};

/// Upload buffers of 1 MiB: 32 768 scalars, 10 922 G1 or 5 461 G2 points a piece.
const UPLOAD_MIB: u64 = 1;
/// Bindings of 3 MiB: chunks of 65 536 scalars, 32 768 G1 or 16 384 G2 points.
const BINDING_BYTES: u64 = 3 << 20;

#[test]
fn staging_through_small_upload_buffers_keeps_every_value() {
    let _serial = common::serial();
    let Some(backend) = open::<Bls12_381>() else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    check_scalars(&backend, &mut rng);
    // Bases: two or three pieces each, checked by an MSM over all of them.
    msm::random_case::<g1::Config>(&backend, &mut rng, "G1 bases in 3 pieces", 30_000);
    msm::random_case::<g2::Config>(&backend, &mut rng, "G2 bases in 2 pieces", 6_000);
    assert_eq!(backend.budget().in_use(), 0, "every lease released");
}

/// BN254: 16 384 G1 or 8 192 G2 points a piece, chunks of 32 768 G1 or 16 384 G2
/// points (the powers of two that fit 3 MiB); the same scalars as BLS12-381's (32
/// bytes on both).
#[test]
fn bn254_staging_through_small_upload_buffers_keeps_every_value() {
    let _serial = common::serial();
    let Some(backend) = open::<Bn254>() else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    check_scalars(&backend, &mut rng);
    msm::random_case::<ark_bn254::g1::Config>(&backend, &mut rng, "G1 bases in 3 pieces", 40_000);
    msm::random_case::<ark_bn254::g2::Config>(&backend, &mut rng, "G2 bases in 2 pieces", 9_000);
    assert_eq!(backend.budget().in_use(), 0, "every lease released");
}

/// A backend over `E` with 1 MiB upload buffers and 3 MiB bindings, or `None` (said
/// why) where wgpu is unavailable and not required.
fn open<E: DeviceCurve>() -> Option<WgpuBackend<E>> {
    let options = WgpuOptions {
        tuning: WgpuTuning {
            upload_mib: Some(UPLOAD_MIB),
            ..WgpuTuning::default()
        },
        max_binding_bytes: Some(BINDING_BYTES),
        ..WgpuOptions::default()
    };
    match WgpuBackend::<E>::open(&ProbeOptions::default(), &options) {
        Ok(b) => Some(b),
        Err(e) => {
            assert!(
                !common::wgpu_required(),
                "wgpu is required but unavailable: {e}"
            );
            println!("skipped, wgpu unavailable: {e}");
            None
        }
    }
}

/// Scalars staged plain and padded through the small upload buffers, read back.
fn check_scalars<E: DeviceCurve>(
    backend: &dyn ProverBackend<E>,
    rng: &mut impl ark_std::rand::Rng,
) {
    // 131 077 scalars: three chunks, five pieces.
    let len = (1 << 17) + 5;
    let mut plan = MemoryPlan::new("staging test");
    let key = PlanKey::new("test", "scalars");
    plan.item(
        key,
        backend
            .buffer_bytes(ElementKind::Scalar, len, BufferUse::Plain)
            .unwrap(),
    );
    let mut lease = backend.allocate(plan).unwrap();
    let buf = backend.alloc_scalars(&mut lease, key, len).unwrap();
    for (case, src_len) in [
        ("full", len),
        ("padded, ends inside the second chunk", 100_003),
        ("padded, ends at a chunk's end", 1 << 16),
        ("padded, nothing staged", 0),
        ("full again", len),
    ] {
        let src: Vec<E::ScalarField> = (0..src_len).map(|_| E::ScalarField::rand(rng)).collect();
        if src_len == len {
            backend.stage_scalars(&mut lease, buf, &src).unwrap();
        } else {
            backend.stage_scalars_padded(&mut lease, buf, &src).unwrap();
        }
        let got = backend.read_scalars(&lease, buf).unwrap();
        assert_eq!(got.len(), len, "{case}");
        let zero = E::ScalarField::zero();
        if let Some(i) = (0..len).find(|&i| got[i] != src.get(i).copied().unwrap_or(zero)) {
            panic!("{case}: element {i} of {len} differs (staged {src_len})");
        }
    }
    lease.release().unwrap();
}
