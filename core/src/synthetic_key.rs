//! A proving key with the benchmark circuit's shape and pseudo-random points: for
//! timing proofs at sizes where a real setup is out of reach.
//!
//! ark-groth16's setup costs one fixed-base scalar multiplication per key point (five
//! G1 queries and one G2 query of 2^24 to 2^25 points for 2^24 constraints): on a
//! 16-core host about 10 minutes, extrapolated from 36 s at 2^20, most of it in those
//! multiplications. A proof's device work
//! depends on how many bases there are, not on which points they are (no kernel
//! branches on a base's value except for infinity and equal points, which random
//! points hit with negligible probability), so `crucible bench --op prove
//! --synthetic-key` times proofs with a key of the same shape built here in seconds.
//! Its proofs are well-formed group elements but do not verify: nothing ties the
//! points to a secret evaluation point.

use ark_ec::CurveGroup;
use ark_groth16::VerifyingKey;
use ark_std::rand::{rngs::StdRng, SeedableRng};

use crate::groth16::ProvingKey;
use crate::random_points::random_bases;
use crate::{Bls12_381, ProofShape, Result};

/// `len` pseudo-random points of `G` drawn from `seed`.
fn random_points<G: CurveGroup<ScalarField = crate::Fr>>(len: usize, seed: u64) -> Vec<G::Affine> {
    random_bases::<G>(len, &mut StdRng::seed_from_u64(seed))
}

/// A key shaped like ark-groth16's for `BenchCircuit { constraints, inputs }` (same
/// query lengths, hence the same [`ProofShape`]), with pseudo-random points from
/// `seed`.
pub fn synthetic_key(constraints: usize, inputs: usize, seed: u64) -> Result<ProvingKey> {
    // The benchmark circuit: the constant one and the inputs; witnesses w_0 ..= w_n.
    let shape = ProofShape::new(constraints, inputs + 1, constraints + 1)?;
    let vars = shape.num_variables();
    // Each query from its own seed, so no two share points.
    let g1 = |len: usize, i: u64| random_points::<crate::G1Projective>(len, seed ^ (i << 56));
    let g2 = |len: usize, i: u64| random_points::<crate::G2Projective>(len, seed ^ (i << 56));
    let one = |i: u64| g1(1, i)[0];
    let g2_point = |i: u64| g2(1, i)[0];
    let vk = VerifyingKey::<Bls12_381> {
        alpha_g1: one(1),
        beta_g2: g2_point(2),
        gamma_g2: g2_point(3),
        delta_g2: g2_point(4),
        gamma_abc_g1: g1(shape.num_instance, 5),
    };
    Ok(ProvingKey {
        vk,
        beta_g1: one(6),
        delta_g1: one(7),
        a_query: g1(vars, 8),
        b_g1_query: g1(vars, 9),
        b_g2_query: g2(vars, 10),
        h_query: g1(shape.h_len(), 11),
        l_query: g1(shape.num_witness, 12),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groth16::key_shape;
    use ark_ec::AffineRepr;

    #[test]
    fn has_the_real_keys_shape_and_distinct_points() {
        for (constraints, inputs) in [(1usize, 0usize), (7, 3), (100, 1), (5000, 2)] {
            let real = crate::key_file::generate_key(constraints, inputs, 1).unwrap();
            let fake = synthetic_key(constraints, inputs, 1).unwrap();
            assert_eq!(key_shape(&fake).unwrap(), key_shape(&real).unwrap());
            assert_eq!(fake.vk.gamma_abc_g1.len(), real.vk.gamma_abc_g1.len());
            let mut xs: Vec<_> = fake
                .a_query
                .iter()
                .chain(&fake.h_query)
                .map(|p| p.x)
                .collect();
            let all = xs.len();
            xs.sort_unstable();
            xs.dedup();
            assert_eq!(xs.len(), all, "{constraints} constraints: repeated points");
            assert!(fake.h_query.iter().all(|p| p.is_on_curve() && !p.is_zero()));
        }
    }
}
