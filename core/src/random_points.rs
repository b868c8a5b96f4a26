//! Random curve points, cheaply: for benchmark bases and synthetic keys, where only how
//! many points there are matters, not how they relate.

use ark_ec::CurveGroup;
use ark_std::rand::Rng;
use rayon::prelude::*;

use crate::Fr;

/// Points a rayon task makes from one scalar multiplication.
const CHUNK: usize = 1 << 12;

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
    use crate::{G1Affine, G1Projective};
    use ark_std::rand::{rngs::StdRng, SeedableRng};

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
}
