//! The straight-line form of the formulas (opt-in until measured on hardware), forced
//! on whatever adapter there is: Fq, Fq2 arithmetic and G1 addition (projective, mixed
//! with an affine point, doubling) against arkworks through the straight-line test
//! entry points, over the default Fq limb width (the others are checked without a GPU
//! in field_code.rs's unit tests, on the same generated code), and the MSMs of both
//! curves in these forms (G2 in the registers form: a straight G2 addition kernel, about
//! 70 inlined Fq products, compiles for many minutes on llvmpipe; its formula is the same
//! translation as G1's, checked against arkworks without a GPU in straight.rs).

use std::time::Instant;

use crucible_backend_wgpu::field::DeviceCurve;
use crucible_backend_wgpu::{FieldOp, Formulas, LimbBits, PerCurve, WgpuBackend};
use crucible_core::ark_bls12_381::{g1, g2, Bls12_381, Fq2};
use crucible_core::ark_bn254::{self, Bn254};

use crate::common;

#[test]
fn straight_fields_and_additions_match_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::straight_backend("straight_fields_and_additions_match_arkworks")
    else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    // The first call of each entry point compiles its pipeline: the times say what the
    // straight-line form costs the adapter's compiler.
    let started = Instant::now();
    check_fq(backend, &mut rng);
    println!(
        "straight Fq add, sub, mul ({}-bit limbs): {:.1?} with compiling",
        backend.limb_bits().g1.bits(),
        started.elapsed()
    );
    let started = Instant::now();
    crate::curve::check::<g1::Config>(&mut rng, |op, a, b| backend.g1_op(op, a, b));
    println!("straight G1 add: {:.1?} with compiling", started.elapsed());
    print_compiles(backend);
}

/// The straight-line Fq code over wide limbs (u64 columns, `SHADER_INT64`) against
/// arkworks, for each wide width: 32 bits (a carry after every product, R' = 2^384),
/// 30 and 28 (deferred carries, R' = 2^390 and 2^392), and G1's additions over 32-bit
/// limbs; then 15-bit limbs in `u32` arithmetic, the default of adapters without 64-bit
/// integers (the other straight tests run the adapter's default). Adapters without 64-bit
/// integers cannot run it: the test says so and checks that opening fails clearly.
#[test]
fn straight_fq_over_every_default_width_matches_arkworks() {
    let _serial = common::serial();
    let Some(probe) = common::backend("straight_fq_over_every_default_width_matches_arkworks")
    else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    for bits in [32, 30, 28, 15] {
        let opened = common::open_with_limbs::<Bls12_381>(bits);
        if bits > 16 && !probe.has_int64() {
            let e = opened
                .err()
                .expect("wide limbs without SHADER_INT64 must not open");
            assert!(e.contains("SHADER_INT64"), "{e}");
            println!("{bits}-bit limbs skipped: the adapter has no SHADER_INT64 ({e})");
            continue;
        }
        let backend = opened.expect("an adapter with SHADER_INT64 opens wide limbs");
        assert_eq!(
            backend.limb_bits(),
            PerCurve::both(LimbBits::new(bits).unwrap())
        );
        let started = Instant::now();
        check_fq(&backend, &mut rng);
        println!(
            "straight Fq add, sub, mul ({bits}-bit limbs): {:.1?} with compiling",
            started.elapsed()
        );
        if bits == 32 {
            // The curve formulas over the widest limbs, where R' = R: the MSM's form
            // when these limbs are chosen.
            let started = Instant::now();
            crate::curve::check::<g1::Config>(&mut rng, |op, a, b| backend.g1_op(op, a, b));
            println!(
                "straight G1 add ({bits}-bit limbs): {:.1?} with compiling",
                started.elapsed()
            );
        }
    }
}

/// Fq2 arithmetic and G2's addition in G2's registers form, each run twice: the first run's time includes the compilers' (llvmpipe
/// compiles a pipeline at its first dispatch, after `pipeline_compiles` timed its
/// creation), the second is the kernels' alone.
#[test]
fn registers_fq2_and_g2_addition_match_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::straight_backend("registers_fq2_and_g2_addition_match_arkworks")
    else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    for run in ["first run (with compiling)", "second run"] {
        let started = Instant::now();
        crate::field::check::<_, Fq2>(
            backend,
            &mut rng,
            [
                (FieldOp::Fq2Add, |a, b| a + b),
                (FieldOp::Fq2Sub, |a, b| a - b),
                (FieldOp::Fq2Mul, |a, b| a * b),
            ],
        );
        println!(
            "registers Fq2 add, sub, mul, {run}: {:.1?}",
            started.elapsed()
        );
        let started = Instant::now();
        crate::curve::check::<g2::Config>(&mut rng, |op, a, b| backend.g2_op(op, a, b));
        println!("registers G2 add, {run}: {:.1?}", started.elapsed());
    }
    print_compiles(backend);
}

/// Software adapters keep the interpreter for both curves unless told otherwise, and
/// the description names each curve's form.
#[test]
fn software_adapters_default_to_the_interpreter() {
    let _serial = common::serial();
    let Some(backend) = common::backend("software_adapters_default_to_the_interpreter") else {
        return;
    };
    let info = crucible_core::ProverBackend::info(backend);
    println!(
        "{}: {:?} formulas ({})",
        info.device_name,
        backend.formulas(),
        info.api
    );
    if info.device_name.to_lowercase().contains("llvmpipe") {
        assert_eq!(backend.formulas(), PerCurve::both(Formulas::Interpreted));
    }
    assert!(
        info.api.contains(&backend.formulas().describe()),
        "{}",
        info.api
    );
}

/// The MSM's edge cases over G1 with the straight-line formulas, which hardware
/// adapters run by default (the XYZZ accumulation and the merges straight, the
/// reduction in the registers form from G1's second module, over the partials the
/// straight kernels wrote), and 1000 random terms
/// (several reduction levels); prints each pipeline's compile time. Once ignored for
/// llvmpipe's minutes of compiling (631 s with 15-bit limbs in u32); over the wide
/// limbs in u64 it takes about 13 s on the 2-core development machine.
#[test]
fn straight_g1_msm_matches_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::straight_backend("straight_g1_msm_matches_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    let started = Instant::now();
    crate::msm::edge_cases::<g1::Config>(backend, &mut rng);
    crate::msm::random_case::<g1::Config>(backend, &mut rng, "random", 1000);
    println!("straight MSM G1: {:.1?} with compiling", started.elapsed());
    print_compiles(backend);
    // The reduction ran from G1's registers-form module.
    let (module, other) = ("MsmG1Registers", "MsmG1");
    let compiles = backend.pipeline_compiles();
    let reductions: Vec<&str> = compiles
        .iter()
        .filter(|c| c.entry.starts_with("reduce_level"))
        .map(|c| c.module.as_str())
        .collect();
    assert!(reductions.contains(&module), "{reductions:?}");
    assert!(!reductions.contains(&other), "{reductions:?}");
}

/// The MSM's edge cases over G2 in the registers form, as above (about 14 s on
/// llvmpipe over the wide limbs).
#[test]
fn straight_g2_msm_matches_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::straight_backend("straight_g2_msm_matches_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    let started = Instant::now();
    crate::msm::edge_cases::<g2::Config>(backend, &mut rng);
    println!("registers MSM G2: {:.1?} with compiling", started.elapsed());
    print_compiles(backend);
}

/// Fq's add, sub and mul on `backend` against arkworks.
fn check_fq<E: DeviceCurve>(backend: &WgpuBackend<E>, rng: &mut ark_std::rand::rngs::StdRng) {
    crate::field::check::<E, E::BaseField>(
        backend,
        rng,
        [
            (FieldOp::FqAdd, |a, b| a + b),
            (FieldOp::FqSub, |a, b| a - b),
            (FieldOp::FqMul, |a, b| a * b),
        ],
    );
}

/// Every pipeline the backend compiled so far, with its time.
fn print_compiles<E: DeviceCurve>(backend: &WgpuBackend<E>) {
    for c in backend.pipeline_compiles() {
        println!("compiled {}::{} in {:.2?}", c.module, c.entry, c.time);
    }
}

/// BN254 in hardware adapters' forms: Fq and G1's additions straight (G1 y² = x³ + 3:
/// 3b = 9 by additions), Fq2 and G2's additions in the registers form (3b' = 9/(9 + u):
/// products by the program constants), then the MSMs' edge cases and 1000 random G1
/// terms in those forms.
#[test]
fn bn254_straight_forms_match_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::bn254_straight_backend("bn254_straight_forms_match_arkworks")
    else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    let started = Instant::now();
    check_fq(backend, &mut rng);
    crate::curve::check::<ark_bn254::g1::Config>(&mut rng, |op, a, b| backend.g1_op(op, a, b));
    crate::field::check::<Bn254, crate::field::Fq2<Bn254>>(
        backend,
        &mut rng,
        [
            (FieldOp::Fq2Add, |a, b| a + b),
            (FieldOp::Fq2Sub, |a, b| a - b),
            (FieldOp::Fq2Mul, |a, b| a * b),
        ],
    );
    crate::curve::check::<ark_bn254::g2::Config>(&mut rng, |op, a, b| backend.g2_op(op, a, b));
    println!(
        "BN254 straight fields and additions: {:.1?} with compiling",
        started.elapsed()
    );
    let started = Instant::now();
    crate::msm::edge_cases::<ark_bn254::g1::Config>(backend, &mut rng);
    crate::msm::random_case::<ark_bn254::g1::Config>(backend, &mut rng, "random", 1000);
    crate::msm::edge_cases::<ark_bn254::g2::Config>(backend, &mut rng);
    println!(
        "BN254 straight MSMs: {:.1?} with compiling",
        started.elapsed()
    );
    print_compiles(backend);
}

/// BN254's Fq over the wide widths and 15-bit limbs, as for BLS12-381 above: 32 bits
/// (R' = R = 2^256: stored affine points' Z is 1), 30 and 28 (R' = 2^270 and 2^280),
/// with G1's additions over 32 and 28 bits.
#[test]
fn bn254_straight_fq_over_every_default_width_matches_arkworks() {
    let _serial = common::serial();
    let test = "bn254_straight_fq_over_every_default_width_matches_arkworks";
    let Some(probe) = common::bn254_backend(test) else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    for bits in [32, 30, 28, 15] {
        let opened = common::open_with_limbs::<Bn254>(bits);
        if bits > 16 && !probe.has_int64() {
            let e = opened
                .err()
                .expect("wide limbs without SHADER_INT64 must not open");
            assert!(e.contains("SHADER_INT64"), "{e}");
            println!("{bits}-bit limbs skipped: the adapter has no SHADER_INT64 ({e})");
            continue;
        }
        let backend = opened.expect("an adapter with SHADER_INT64 opens wide limbs");
        assert_eq!(
            backend.limb_bits(),
            PerCurve::both(LimbBits::new(bits).unwrap())
        );
        check_fq(&backend, &mut rng);
        if bits == 32 || bits == 28 {
            crate::curve::check::<ark_bn254::g1::Config>(&mut rng, |op, a, b| {
                backend.g1_op(op, a, b)
            });
        }
    }
}
