//! G1 and G2 addition and doubling in the shaders against arkworks, on both curves:
//! random points and the edge cases P + P, P + (−P), P + O, O + P, O + O, 2·O.

use crate::common;

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::{AdditiveGroup, UniformRand, Zero};
use ark_std::rand::Rng;
use crucible_backend_wgpu::field::{read_projective, to_words, write_projective, DeviceElement};
use crucible_backend_wgpu::{CurveOp, WgpuBackend};
use crucible_core::ark_bls12_381::{g1, g2};
use crucible_core::ark_bn254;

/// Pairs (a, b) covering random points and every edge case.
fn pairs<P: SWCurveConfig>(rng: &mut impl Rng) -> Vec<(Projective<P>, Projective<P>)> {
    let mut out = Vec::new();
    for _ in 0..16 {
        out.push((Projective::<P>::rand(rng), Projective::<P>::rand(rng)));
    }
    let p = Projective::<P>::rand(rng);
    let g = Projective::<P>::generator();
    let o = Projective::<P>::zero();
    out.extend([
        (p, p),
        (p, -p),
        (p, o),
        (o, p),
        (o, o),
        (g, g),
        (g, -g),
        (g, g.double()),
    ]);
    // A point with Z ≠ 1 on the device side: the sum of two others.
    out.push((p + g, p - g));
    out
}

fn words_of<P: SWCurveConfig>(points: &[Projective<P>]) -> Vec<u32>
where
    P::BaseField: DeviceElement,
{
    let n = 3 * P::BaseField::WORDS;
    let mut w = vec![0u32; points.len() * n];
    for (p, out) in points.iter().zip(w.chunks_exact_mut(n)) {
        write_projective(p, out);
    }
    w
}

pub(crate) fn check<P: SWCurveConfig>(
    rng: &mut impl Rng,
    run: impl Fn(CurveOp, &[u32], &[u32]) -> crucible_core::Result<Vec<u32>>,
) where
    P::BaseField: DeviceElement,
{
    let pairs = pairs::<P>(rng);
    let a: Vec<_> = pairs.iter().map(|(a, _)| *a).collect();
    let b: Vec<_> = pairs.iter().map(|(_, b)| *b).collect();
    let b_affine: Vec<Affine<P>> = b.iter().map(|p| p.into_affine()).collect();
    let n = 3 * P::BaseField::WORDS;
    let cases = [
        (CurveOp::Add, words_of(&b)),
        (CurveOp::AddAffine, to_words(&b_affine)),
        (CurveOp::Double, Vec::new()),
    ];
    for (op, b_words) in cases {
        let out = run(op, &words_of(&a), &b_words).unwrap();
        for (i, w) in out.chunks_exact(n).enumerate() {
            let got = read_projective::<P>(w).unwrap();
            let want = match op {
                CurveOp::Double => a[i].double(),
                _ => a[i] + b[i],
            };
            assert_eq!(got, want, "{op:?} of pair {i}: {} and {}", a[i], b[i]);
        }
    }
}

fn backend(test: &str) -> Option<&'static WgpuBackend> {
    common::backend(test)
}

#[test]
fn g1_add_and_double_match_arkworks() {
    let _serial = common::serial();
    let Some(backend) = backend("g1_add_and_double_match_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    check::<g1::Config>(&mut rng, |op, a, b| backend.g1_op(op, a, b));
}

#[test]
fn g2_add_and_double_match_arkworks() {
    let _serial = common::serial();
    let Some(backend) = backend("g2_add_and_double_match_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    check::<g2::Config>(&mut rng, |op, a, b| backend.g2_op(op, a, b));
}

/// BN254's G1 (y² = x³ + 3) and G2 (b' = 3/(9 + u): its formula multiplies by
/// constants).
#[test]
fn bn254_g1_g2_add_and_double_match_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::bn254_backend("bn254_g1_g2_add_and_double_match_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    check::<ark_bn254::g1::Config>(&mut rng, |op, a, b| backend.g1_op(op, a, b));
    check::<ark_bn254::g2::Config>(&mut rng, |op, a, b| backend.g2_op(op, a, b));
}
