//! An MSM's result as the device leaves it: a few points, each with a weight 2^e,
//! summed on the host by one double-and-add chain (Horner over the exponents). One CPU
//! core runs such a chain in microseconds where one GPU thread takes about 20-80 µs a
//! step, so the device stops at plain sums and the host applies every weight: the
//! windows' 2^(c v) and, for the "tree" reduction, the segment bits' 2^(seg_bits + k).

use ark_ec::CurveGroup;

/// The weighted points of an MSM and the sum of its ones, read back from the device:
/// the result is ones + sum 2^e · point over the points.
pub struct WindowSums {
    /// XYZZ words of each point (none when no term went through Pippenger).
    pub words: Vec<u32>,
    /// Each point's weight as a power of two (in the order of `words`); `None` for a
    /// point read along but not added.
    pub exponents: Vec<Option<u32>>,
    /// XYZZ words of the sum of the bases whose scalar is 1 (witness-aware MSMs; none
    /// when those went through Pippenger too, or there were none).
    pub ones: Vec<u32>,
}

impl WindowSums {
    /// The sum of nothing.
    pub fn empty() -> WindowSums {
        WindowSums {
            words: Vec::new(),
            exponents: Vec::new(),
            ones: Vec::new(),
        }
    }

    /// The MSM's result: each point's XYZZ words (`words_per` each) read by `point`,
    /// weighted and summed on the host, plus the ones' sum.
    pub fn combine<P: CurveGroup>(&self, words_per: usize, point: fn(&[u32]) -> P) -> P {
        let mut terms: Vec<(u32, P)> = self
            .words
            .chunks_exact(words_per)
            .zip(&self.exponents)
            .filter_map(|(words, e)| e.map(|e| (e, point(words))))
            .collect();
        let ones: P = self.ones.chunks_exact(words_per).map(point).sum();
        weighted_sum(&mut terms) + ones
    }
}

/// sum 2^e · P over `terms` (reordered), by Horner from the largest exponent down: as
/// many doublings as that exponent, one addition per term.
fn weighted_sum<P: CurveGroup>(terms: &mut [(u32, P)]) -> P {
    terms.sort_by_key(|t| std::cmp::Reverse(t.0));
    let mut acc = P::zero();
    let mut at = terms.first().map_or(0, |t| t.0);
    for (e, p) in terms.iter() {
        for _ in *e..at {
            acc.double_in_place();
        }
        at = *e;
        acc += p;
    }
    for _ in 0..at {
        acc.double_in_place();
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::PrimeGroup;
    use ark_ff::UniformRand;
    use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
    use crucible_core::run_seed::run_seed;
    use crucible_core::{Fr, G1Projective};

    #[test]
    fn weighted_sum_is_the_sum_of_each_point_times_its_power_of_two() {
        let seed = run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        for count in [0usize, 1, 2, 5, 17] {
            let mut terms: Vec<(u32, G1Projective)> = (0..count)
                .map(|_| (rng.gen_range(0..40), G1Projective::rand(&mut rng)))
                .collect();
            // Repeated exponents and exponent 0, as the windows and bits give them.
            if count >= 2 {
                terms[1].0 = terms[0].0;
                terms[count - 1].0 = 0;
            }
            let want: G1Projective = terms.iter().map(|(e, p)| *p * Fr::from(1u64 << e)).sum();
            assert_eq!(weighted_sum(&mut terms), want, "seed {seed}, {count} terms");
        }
    }

    #[test]
    fn combine_reads_each_point_skips_the_unweighted_and_adds_the_ones() {
        let g = G1Projective::generator();
        // Points encoded as one word: k, read as k·g.
        let sums = WindowSums {
            words: vec![3, 5, 7, 11],
            exponents: vec![Some(0), None, Some(4), Some(4)],
            ones: vec![13],
        };
        let point = |w: &[u32]| G1Projective::generator() * Fr::from(u64::from(w[0]));
        assert_eq!(
            sums.combine(1, point),
            g * Fr::from(3 + (7 + 11) * 16u64 + 13)
        );
        let only_ones = WindowSums {
            ones: vec![13],
            ..WindowSums::empty()
        };
        assert_eq!(only_ones.combine(1, point), g * Fr::from(13u64));
        assert_eq!(
            WindowSums::empty().combine(1, point),
            G1Projective::default()
        );
    }
}
