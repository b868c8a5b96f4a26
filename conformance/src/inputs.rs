//! Random inputs the cases share: scalars, and points drawn cheaply.

use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::UniformRand;
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use crucible_core::group::MsmGroup;
use crucible_core::Fr;

/// `n` random scalars.
pub fn random_scalars(rng: &mut StdRng, n: usize) -> Vec<Fr> {
    (0..n).map(|_| Fr::rand(rng)).collect()
}

/// `n` random points, cheaply: chunks walk from a random start by a random step.
pub fn random_bases<G: MsmGroup<Curve = crucible_core::Bls12_381>>(
    rng: &mut StdRng,
    n: usize,
) -> Vec<G::Affine> {
    const CHUNK: usize = 1024;
    let seeds: Vec<u64> = (0..n.div_ceil(CHUNK)).map(|_| rng.gen()).collect();
    let step = G::Projective::generator() * Fr::rand(rng);
    let points: Vec<G::Projective> = seeds
        .iter()
        .enumerate()
        .flat_map(|(c, seed)| {
            let mut local = StdRng::seed_from_u64(*seed);
            let mut p = G::Projective::generator() * Fr::rand(&mut local);
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
