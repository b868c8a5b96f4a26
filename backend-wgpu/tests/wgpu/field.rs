//! Fr, Fq and Fq2 arithmetic in the shaders against arkworks, on random and edge inputs.

use crate::common;

use ark_ff::{Field, One, UniformRand, Zero};
use ark_std::rand::Rng;
use crucible_backend_wgpu::field::{from_words, to_words, DeviceElement};
use crucible_backend_wgpu::{FieldOp, WgpuBackend};
use crucible_core::ark_bls12_381::Fq2;
use crucible_core::{Fq, Fr};

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

pub(crate) fn check<F: Field + DeviceElement + UniformRand>(
    backend: &WgpuBackend,
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

#[test]
fn fr_fq_fq2_match_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::backend("fr_fq_fq2_match_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    check::<Fr>(
        backend,
        &mut rng,
        [
            (FieldOp::FrAdd, |a, b| a + b),
            (FieldOp::FrSub, |a, b| a - b),
            (FieldOp::FrMul, |a, b| a * b),
        ],
    );
    check::<Fq>(
        backend,
        &mut rng,
        [
            (FieldOp::FqAdd, |a, b| a + b),
            (FieldOp::FqSub, |a, b| a - b),
            (FieldOp::FqMul, |a, b| a * b),
        ],
    );
    check::<Fq2>(
        backend,
        &mut rng,
        [
            (FieldOp::Fq2Add, |a, b| a + b),
            (FieldOp::Fq2Sub, |a, b| a - b),
            (FieldOp::Fq2Mul, |a, b| a * b),
        ],
    );
}

#[test]
fn fr_leaves_montgomery_form() {
    let _serial = common::serial();
    let Some(backend) = common::backend("fr_leaves_montgomery_form") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    let (a, _) = operands::<Fr>(&mut rng, 32);
    let out = backend
        .field_op(FieldOp::FrFromMont, &to_words(&a), &[])
        .unwrap();
    for (x, w) in a.iter().zip(out.chunks_exact(Fr::WORDS)) {
        use ark_ff::PrimeField;
        let limbs = x.into_bigint().0;
        let got: Vec<u64> = w
            .chunks_exact(2)
            .map(|p| u64::from(p[0]) | u64::from(p[1]) << 32)
            .collect();
        assert_eq!(got, limbs, "canonical form of {x}");
    }
    assert!(Fr::zero().is_zero() && Fr::one().is_one());
}
