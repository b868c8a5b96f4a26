//! Valid `.zkey` keys of any size, for tests and load measurements: a circuit of one
//! term per row (A = (i + 1)·wire, B = the constant one) over a domain of 2^k points,
//! every query point a distinct multiple of its group's generator. Not a setup: the
//! points prove nothing, they only have to pass the reader's checks.

// Each test binary and example uses a part of it.
#![allow(dead_code)]

use std::sync::Arc;

use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::{One, UniformRand};
use ark_groth16::VerifyingKey;
use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_core::groth16::ProvingKey;
use crucible_core::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use crucible_files::Zkey;

/// `count` distinct points of G1: `k·g, 2k·g, …` for a `k` drawn from `rng`.
fn g1_run(rng: &mut StdRng, count: usize) -> Vec<G1Affine> {
    let step = G1Projective::generator() * Fr::rand(rng);
    let mut acc = step;
    let points: Vec<G1Projective> = (0..count)
        .map(|_| {
            let p = acc;
            acc += step;
            p
        })
        .collect();
    G1Projective::normalize_batch(&points)
}

/// As [`g1_run`], in G2.
fn g2_run(rng: &mut StdRng, count: usize) -> Vec<G2Affine> {
    let step = G2Projective::generator() * Fr::rand(rng);
    let mut acc = step;
    let points: Vec<G2Projective> = (0..count)
        .map(|_| {
            let p = acc;
            acc += step;
            p
        })
        .collect();
    G2Projective::normalize_batch(&points)
}

/// A key over 2^`log_domain` points with `num_wires` wires (at least 3) and one
/// public signal, its points drawn from `seed`.
pub fn big_zkey(log_domain: u32, num_wires: usize, seed: u64) -> Zkey {
    assert!(
        num_wires >= 3,
        "the constant one, a public signal and a private wire"
    );
    let mut rng = StdRng::seed_from_u64(seed);
    let num_public = 1;
    let domain_size = 1usize << log_domain;
    let num_constraints = domain_size - (num_public + 1);
    let a = (0..num_constraints)
        .map(|i| vec![(Fr::from(i as u64 + 1), 1 + i % (num_wires - 1))])
        .collect();
    let b = (0..num_constraints).map(|_| vec![(Fr::one(), 0)]).collect();
    let one = |rng: &mut StdRng| g1_run(rng, 1)[0];
    let one_g2 = |rng: &mut StdRng| g2_run(rng, 1)[0];
    Zkey {
        proving_key: ProvingKey {
            vk: VerifyingKey {
                alpha_g1: one(&mut rng),
                beta_g2: one_g2(&mut rng),
                gamma_g2: one_g2(&mut rng),
                delta_g2: one_g2(&mut rng),
                gamma_abc_g1: g1_run(&mut rng, num_public + 1),
            },
            beta_g1: one(&mut rng),
            delta_g1: one(&mut rng),
            a_query: g1_run(&mut rng, num_wires),
            b_g1_query: g1_run(&mut rng, num_wires),
            b_g2_query: g2_run(&mut rng, num_wires),
            h_query: g1_run(&mut rng, domain_size),
            l_query: g1_run(&mut rng, num_wires - num_public - 1),
        },
        num_public,
        num_wires,
        num_constraints,
        domain_size,
        a: Arc::new(a),
        b: Arc::new(b),
    }
}

/// `big_zkey`'s file bytes.
pub fn big_zkey_bytes(log_domain: u32, num_wires: usize, seed: u64) -> Vec<u8> {
    let mut out = Vec::new();
    big_zkey(log_domain, num_wires, seed)
        .write_to(&mut out)
        .expect("writing to memory");
    out
}
