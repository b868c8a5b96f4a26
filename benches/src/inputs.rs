//! Fresh random inputs: full-width scalars (as a real witness's), and curve points.

use ark_ff::UniformRand;
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use crucible_core::Fr;
use rayon::prelude::*;

const CHUNK: usize = 1 << 12;

/// `len` uniformly random scalars (full 255-bit width), drawn in parallel from `rng`.
pub fn random_scalars(len: usize, rng: &mut impl Rng) -> Vec<Fr> {
    let seeds: Vec<u64> = (0..len.div_ceil(CHUNK)).map(|_| rng.gen()).collect();
    let mut out = vec![Fr::from(0u64); len];
    out.par_chunks_mut(CHUNK)
        .zip(seeds)
        .for_each(|(chunk, seed)| {
            let mut rng = StdRng::seed_from_u64(seed);
            chunk.iter_mut().for_each(|x| *x = Fr::rand(&mut rng));
        });
    out
}

/// Random bases: core's, which synthetic keys share.
pub use crucible_core::random_points::random_bases;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_are_fresh_and_full_width() {
        let mut rng = StdRng::seed_from_u64(7);
        let a = random_scalars(100, &mut rng);
        let b = random_scalars(100, &mut rng);
        assert_ne!(a, b);
        let top_bits = a
            .iter()
            .filter(|x| ark_ff::PrimeField::into_bigint(**x).0[3] >> 60 != 0);
        assert!(top_bits.count() > 50);
    }
}
