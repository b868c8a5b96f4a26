//! Random inputs the cases share: scalars, and points drawn cheaply.

use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::PrimeField;
use ark_ff::UniformRand;
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use crucible_core::group::{MsmGroup, ScalarOf};

/// `n` random scalars.
pub fn random_scalars<F: PrimeField>(rng: &mut StdRng, n: usize) -> Vec<F> {
    (0..n).map(|_| F::rand(rng)).collect()
}

/// `n` random points, cheaply: chunks walk from a random start by a random step.
pub fn random_bases<G: MsmGroup>(rng: &mut StdRng, n: usize) -> Vec<G::Affine> {
    const CHUNK: usize = 1024;
    let seeds: Vec<u64> = (0..n.div_ceil(CHUNK)).map(|_| rng.gen()).collect();
    let step = G::Projective::generator() * ScalarOf::<G>::rand(rng);
    let points: Vec<G::Projective> = seeds
        .iter()
        .enumerate()
        .flat_map(|(c, seed)| {
            let mut local = StdRng::seed_from_u64(*seed);
            let mut p = G::Projective::generator() * ScalarOf::<G>::rand(&mut local);
            let len = CHUNK.min(n - c * CHUNK);
            (0..len)
                .map(|_| {
                    p += step;
                    p
                })
                .collect::<Vec<_>>()
        })
        .collect();
    G::Projective::normalize_batch(&points)
}
