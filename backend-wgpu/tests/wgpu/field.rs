//! Fr, Fq and Fq2 arithmetic in the shaders against arkworks, on random and edge inputs,
//! on both curves.

use crate::common;

use ark_ff::{Field, One, UniformRand, Zero};
use ark_std::rand::Rng;
use crucible_backend_wgpu::field::{from_words, to_words, DeviceCurve, DeviceElement};
use crucible_backend_wgpu::{FieldOp, WgpuBackend};
use crucible_core::ark_ec::CurveConfig;
use crucible_core::PairingCurve;

/// Random elements followed by every pair of the edge values 0, 1, 2, p − 1, p − 2.
fn operands<F: Field + UniformRand>(rng: &mut impl Rng, random: usize) -> (Vec<F>, Vec<F>) {
    let edges = [
        F::zero(),
        F::one(),
        F::one().double(),
        -F::one(),
        -F::one().double(),
    ];
    let mut a: Vec<F> = (0..random).map(|_| F::rand(rng)).collect();
    let mut b: Vec<F> = (0..random).map(|_| F::rand(rng)).collect();
    for x in edges {
        for y in edges {
            a.push(x);
            b.push(y);
        }
    }
    (a, b)
}

/// A device operation and arkworks' version of it.
type Reference<F> = (FieldOp, fn(F, F) -> F);

pub(crate) fn check<E: DeviceCurve, F: Field + DeviceElement + UniformRand>(
    backend: &WgpuBackend<E>,
    rng: &mut impl Rng,
    ops: [Reference<F>; 3],
) {
    let (a, b) = operands::<F>(rng, 64);
    for (op, reference) in ops {
        let out = backend.field_op(op, &to_words(&a), &to_words(&b)).unwrap();
        let got: Vec<F> = from_words(&out).unwrap();
        assert_eq!(got.len(), a.len());
        for i in 0..a.len() {
            assert_eq!(
                got[i],
                reference(a[i], b[i]),
                "{op:?} of {} and {}",
                a[i],
                b[i]
            );
        }
    }
}

/// `E`'s G2 coordinates' field (Fq2).
pub(crate) type Fq2<E> = <<E as PairingCurve>::G2Config as CurveConfig>::BaseField;

/// Fr, Fq and Fq2 sums, differences and products of `E` against arkworks.
fn check_fields<E: DeviceCurve>(backend: &WgpuBackend<E>, rng: &mut impl Rng) {
    check::<E, E::ScalarField>(
        backend,
        rng,
        [
            (FieldOp::FrAdd, |a, b| a + b),
            (FieldOp::FrSub, |a, b| a - b),
            (FieldOp::FrMul, |a, b| a * b),
        ],
    );
    check::<E, E::BaseField>(
        backend,
        rng,
        [
            (FieldOp::FqAdd, |a, b| a + b),
            (FieldOp::FqSub, |a, b| a - b),
            (FieldOp::FqMul, |a, b| a * b),
        ],
    );
    check::<E, Fq2<E>>(
        backend,
        rng,
        [
            (FieldOp::Fq2Add, |a, b| a + b),
            (FieldOp::Fq2Sub, |a, b| a - b),
            (FieldOp::Fq2Mul, |a, b| a * b),
        ],
    );
}

/// Fr out of Montgomery form: the canonical integer's words.
fn check_from_montgomery<E: DeviceCurve>(backend: &WgpuBackend<E>, rng: &mut impl Rng) {
    use ark_ff::PrimeField;
    let (a, _) = operands::<E::ScalarField>(rng, 32);
    let out = backend
        .field_op(FieldOp::FrFromMont, &to_words(&a), &[])
        .unwrap();
    for (x, w) in a.iter().zip(out.chunks_exact(E::ScalarField::WORDS)) {
        let limbs = x.into_bigint();
        let got: Vec<u64> = w
            .chunks_exact(2)
            .map(|p| u64::from(p[0]) | u64::from(p[1]) << 32)
            .collect();
        assert_eq!(got, limbs.as_ref(), "canonical form of {x}");
    }
    assert!(E::ScalarField::zero().is_zero() && E::ScalarField::one().is_one());
}

#[test]
fn fr_fq_fq2_match_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::backend("fr_fq_fq2_match_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    check_fields(backend, &mut rng);
}

#[test]
fn fr_leaves_montgomery_form() {
    let _serial = common::serial();
    let Some(backend) = common::backend("fr_leaves_montgomery_form") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    check_from_montgomery(backend, &mut rng);
}

/// BN254's Fr, Fq (254 bits, 8 words) and Fq2 = Fq[u]/(u² + 1).
#[test]
fn bn254_fr_fq_fq2_match_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::bn254_backend("bn254_fr_fq_fq2_match_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    check_fields(backend, &mut rng);
    check_from_montgomery(backend, &mut rng);
}
