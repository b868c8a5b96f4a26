//! The warm-up: staging a key creates every pipeline its proofs run (beside the
//! key's copies), so that a proof afterwards creates none, and the proof is still
//! byte-identical to ark-groth16, on both curves.

use std::sync::Arc;

use ark_std::rand::rngs::StdRng;
use ark_std::rand::{Rng, SeedableRng};
use crucible_backend_wgpu::field::DeviceCurve;
use crucible_backend_wgpu::WgpuBackend;
use crucible_conformance::compare_with_arkworks;
use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::groth16::StagedKey;

use crate::common;

#[test]
fn staging_a_key_creates_every_pipeline_its_proofs_run() {
    let _serial = common::serial();
    let Some(backend) = common::backend("staging_a_key_creates_every_pipeline_its_proofs_run")
    else {
        return;
    };
    check_warm_up(backend);
}

/// The same in hardware adapters' forms (G1 straight, its reduction from G1's
/// registers-form module; G2 registers), on whatever adapter there is: the warm-up
/// lists the reduction's module, not G1's own. The straight MSM tests of this binary
/// share the backend and its compiled pipelines.
#[test]
fn staging_a_key_in_the_straight_forms_creates_every_pipeline_its_proofs_run() {
    let _serial = common::serial();
    let Some(backend) = common::straight_backend(
        "staging_a_key_in_the_straight_forms_creates_every_pipeline_its_proofs_run",
    ) else {
        return;
    };
    check_warm_up(backend);
}

/// The same over BN254, in the adapter's own forms and in hardware adapters' (the
/// straight G1 formulas over BN254's Fq, G2's registers form with its products by the
/// constants of 3b').
#[test]
fn bn254_staging_a_key_creates_every_pipeline_its_proofs_run() {
    let _serial = common::serial();
    let test = "bn254_staging_a_key_creates_every_pipeline_its_proofs_run";
    if let Some(backend) = common::bn254_backend(test) {
        check_warm_up(backend);
    }
    if let Some(backend) = common::bn254_straight_backend(test) {
        check_warm_up(backend);
    }
}

/// Stages a key on `backend` (its warm-up), then proves against ark-groth16 and
/// checks that the proof created no pipeline.
fn check_warm_up<E: DeviceCurve>(backend: &WgpuBackend<E>) {
    let (mut rng, _seed) = common::rng();
    let seed: u64 = rng.gen();
    let circuit = |seed| BenchCircuit {
        constraints: 60,
        inputs: 2,
        seed,
    };
    let pk = ark_groth16::Groth16::<E>::generate_random_parameters_with_reduction(
        circuit(seed),
        &mut StdRng::seed_from_u64(seed),
    )
    .expect("setup");
    let pk = Arc::new(pk);
    let staged = StagedKey::stage(backend, Arc::clone(&pk)).expect("the key stages");
    drop(staged);
    let warmed = backend.pipeline_compiles();
    assert!(!warmed.is_empty(), "staging a key created no pipeline");
    compare_with_arkworks(backend, pk, circuit(seed.wrapping_add(1)), &mut rng)
        .expect("the proof is byte-identical to ark-groth16");
    let after = backend.pipeline_compiles();
    let created: Vec<String> = after[warmed.len()..]
        .iter()
        .map(|c| format!("{}::{}", c.module, c.entry))
        .collect();
    assert!(
        created.is_empty(),
        "the proof created pipelines the warm-up missed: {created:?}"
    );
}
