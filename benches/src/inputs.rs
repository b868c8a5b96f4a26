//! Fresh random inputs: full-width scalars (as a real witness's), and curve points.

use ark_ec::CurveGroup;
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

/// `len` distinct random points of `G`: `p + i·q` for random `p`, `q`, normalized in one
/// batch. Far cheaper than `len` scalar multiplications, and an MSM's cost does not
/// depend on how its bases relate to each other.
pub fn random_bases<G: CurveGroup<ScalarField = Fr>>(
    len: usize,
    rng: &mut impl Rng,
) -> Vec<G::Affine> {
    let start = G::rand(rng);
    let step = G::rand(rng);
    let mut points = vec![G::zero(); len];
    points
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut p = start + step * Fr::from((c * CHUNK) as u64);
            for x in chunk {
                *x = p;
                p += step;
            }
        });
    G::normalize_batch(&points)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crucible_core::{G1Affine, G1Projective};

    #[test]
    fn bases_are_the_progression_and_distinct() {
        let mut rng = StdRng::seed_from_u64(7);
        let n = CHUNK + 3;
        let bases = random_bases::<G1Projective>(n, &mut rng);
        assert_eq!(bases.len(), n);
        let step = G1Projective::from(bases[1]) - bases[0];
        let last = G1Projective::from(bases[0]) + step * Fr::from((n - 1) as u64);
        assert_eq!(G1Affine::from(last), bases[n - 1]);
        assert_ne!(bases[CHUNK], bases[CHUNK - 1]);
    }

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
