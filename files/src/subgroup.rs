//! Whether many curve points all lie in the prime-order subgroup, checked in one
//! batch instead of point by point.
//!
//! A point's own check multiplies it by a 64-bit and then a 128-bit scalar (about
//! 130 doublings, tens of microseconds a point), which bounds the first load of a
//! large key. The batch is a random-subset test: every point gets a fresh random
//! 64-bit mask from the operating system's generator, and for each of the 64 mask
//! bits the sum of the points with that bit set is checked once. The sums are formed
//! as an MSM's windows are: each byte of a mask names one of 255 buckets in that
//! byte's window, so a point costs 8 additions and each bit's sum is added up from
//! its 128 buckets. The whole key then costs 64 single checks.
//!
//! Soundness: a point `P` outside the subgroup has a nonzero component `T` in the
//! cofactor part of the curve's group. For one bit, fix every other point's mask;
//! the bit's sum with `P` in and with `P` out differ by `P`, so at most one of the two
//! has no cofactor component: the bit's check passes with probability at most 1/2.
//! The 64 bits are independent, so a key with any point outside the subgroup passes
//! with probability at most 2^-64, whatever its author chose (the masks are drawn
//! after the key is read). A plain sum would not do: the cofactor part has points of
//! order 3 and 11, whose sums an author can make cancel. When a batch fails, the
//! points are checked one by one to name the first one outside.

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::Zero;
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use rayon::prelude::*;

/// Mask bits: subset sums checked per batch (soundness 2^-BITS).
const BITS: usize = 64;
/// Mask bits a bucket index takes (a window).
const WINDOW_BITS: usize = 8;
/// Windows of a mask.
const WINDOWS: usize = BITS / WINDOW_BITS;
/// Buckets of a window (index 0, no bit set, is never summed).
const BUCKETS: usize = 1 << WINDOW_BITS;
/// Below this many points the batch's fixed cost (its 64 checks and the buckets'
/// sums, some milliseconds) outweighs checking each point.
const BATCH_FROM: usize = 1024;
/// Points a task sums into its own buckets (each task then adds its 2,040 buckets
/// into the total).
const TASK_POINTS: usize = 1 << 14;

/// The lowest index of a point of `points` (each on its curve) outside the
/// prime-order subgroup, over all cores; `None` when every point is inside (with
/// probability at least 1 - 2^-64 for a batch: the module's text says why).
pub fn outside_subgroup<P: SWCurveConfig>(points: &[Affine<P>]) -> Option<usize> {
    if points.len() < BATCH_FROM || !batch_in_subgroup(points, StdRng::from_entropy().gen()) {
        return first_outside(points);
    }
    None
}

/// The names of a proving key's six queries, in the order `gamma_abc_g1`, `a_query`,
/// `b_g1_query`, `l_query`, `h_query`, `b_g2_query` (each file format names them its way).
pub(crate) type QueryNames = [&'static str; 6];

/// The first point of `pk`'s queries (each on its curve) outside the prime-order
/// subgroup: its query's name from `names`, the query's length and the index.
pub(crate) fn key_outside_subgroup<E: crucible_core::PairingCurve>(
    pk: &crucible_core::groth16::ProvingKey<E>,
    names: QueryNames,
) -> Option<(&'static str, usize, usize)> {
    let g1 = [
        &pk.vk.gamma_abc_g1,
        &pk.a_query,
        &pk.b_g1_query,
        &pk.l_query,
        &pk.h_query,
    ];
    g1.into_iter()
        .map(|points| (points.len(), outside_subgroup(points)))
        .chain(std::iter::once((
            pk.b_g2_query.len(),
            outside_subgroup(&pk.b_g2_query),
        )))
        .zip(names)
        .find_map(|((len, at), what)| at.map(|i| (what, len, i)))
}

/// Each point's own check, the first failure by index.
fn first_outside<P: SWCurveConfig>(points: &[Affine<P>]) -> Option<usize> {
    points
        .par_iter()
        .with_min_len(crate::bulk::MIN_CHUNK)
        .position_first(|p| !p.is_zero() && !p.is_in_correct_subgroup_assuming_on_curve())
}

/// The random-subset test with masks drawn from `seed` (task `t`'s masks from its
/// own generator, seeded by the seed and `t`, so the tasks run in any order).
fn batch_in_subgroup<P: SWCurveConfig>(points: &[Affine<P>], seed: [u8; 32]) -> bool {
    let buckets = points
        .par_chunks(TASK_POINTS)
        .enumerate()
        .map(|(task, chunk)| {
            let mut rng = StdRng::from_seed(task_seed(&seed, task));
            let mut buckets = Buckets::<P>::new();
            for p in chunk {
                buckets.add(rng.gen(), p);
            }
            buckets
        })
        .reduce(Buckets::new, Buckets::merge);
    let sums = buckets.bit_sums();
    sums.par_iter().all(|s| {
        let s = s.into_affine();
        s.is_zero() || s.is_in_correct_subgroup_assuming_on_curve()
    })
}

/// Task `task`'s seed: the batch's seed hashed with the task's index.
fn task_seed(seed: &[u8; 32], task: usize) -> [u8; 32] {
    *blake3::keyed_hash(seed, &(task as u64).to_le_bytes()).as_bytes()
}

/// Each window's buckets: bucket `b` of window `w` sums the points whose mask has
/// byte `w` equal to `b`.
struct Buckets<P: SWCurveConfig> {
    sums: Vec<Projective<P>>,
}

impl<P: SWCurveConfig> Buckets<P> {
    fn new() -> Self {
        Buckets {
            sums: vec![Projective::zero(); WINDOWS * BUCKETS],
        }
    }

    fn add(&mut self, mask: u64, p: &Affine<P>) {
        for w in 0..WINDOWS {
            let b = (mask >> (w * WINDOW_BITS)) as usize & (BUCKETS - 1);
            if b != 0 {
                self.sums[w * BUCKETS + b] += p;
            }
        }
    }

    fn merge(mut self, other: Self) -> Self {
        for (a, b) in self.sums.iter_mut().zip(&other.sums) {
            *a += b;
        }
        self
    }

    /// For each mask bit, the sum of the points with that bit set: in its window,
    /// the buckets whose index has the bit.
    fn bit_sums(&self) -> Vec<Projective<P>> {
        (0..BITS)
            .into_par_iter()
            .map(|bit| {
                let (w, j) = (bit / WINDOW_BITS, bit % WINDOW_BITS);
                let window = &self.sums[w * BUCKETS..(w + 1) * BUCKETS];
                window
                    .iter()
                    .enumerate()
                    .filter(|(b, _)| b >> j & 1 == 1)
                    .map(|(_, s)| *s)
                    .sum()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use ark_bls12_381::{g1, g2, Fq, G1Projective, G2Projective};
    use ark_ec::{AdditiveGroup, PrimeGroup};
    use ark_ff::{Field, PrimeField, UniformRand};

    use super::*;

    /// A point of the curve `y^2 = x^3 + 4` with a component of order 3 and nothing
    /// else outside the subgroup: the hardest kind for a plain sum.
    fn order_three_g1(rng: &mut StdRng) -> Affine<g1::Config> {
        // The curve's group has order h·r with 3 | h: multiplying any point by
        // h·r/3 leaves a point of order 1 or 3.
        let r = ark_bls12_381::Fr::MODULUS;
        let h = <g1::Config as ark_ec::CurveConfig>::COFACTOR;
        loop {
            let x = Fq::rand(rng);
            let Some(y) = (x.square() * x + Fq::from(4u64)).sqrt() else {
                continue;
            };
            let p = Affine::<g1::Config>::new_unchecked(x, y).into_group();
            let hr = mul_words(h, r.as_ref());
            let t = double_and_add(p, &div3(&hr)).into_affine();
            if !t.is_zero() {
                assert!(!t.is_in_correct_subgroup_assuming_on_curve());
                return t;
            }
        }
    }

    /// `[k]p` bit by bit (the curve's own multiplication takes scalars below r).
    fn double_and_add(p: G1Projective, k: &[u64]) -> G1Projective {
        let mut acc = G1Projective::zero();
        for i in (0..k.len() * 64).rev() {
            acc.double_in_place();
            if k[i / 64] >> (i % 64) & 1 == 1 {
                acc += p;
            }
        }
        acc
    }

    fn mul_words(a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; a.len() + b.len()];
        for (i, &x) in a.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &y) in b.iter().enumerate() {
                let t = out[i + j] as u128 + x as u128 * y as u128 + carry;
                out[i + j] = t as u64;
                carry = t >> 64;
            }
            out[i + b.len()] = carry as u64;
        }
        out
    }

    fn div3(a: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; a.len()];
        let mut rem = 0u128;
        for i in (0..a.len()).rev() {
            let cur = (rem << 64) | a[i] as u128;
            out[i] = (cur / 3) as u64;
            rem = cur % 3;
        }
        assert_eq!(rem, 0, "h·r is a multiple of 3");
        out
    }

    fn subgroup_g1(n: usize, rng: &mut StdRng) -> Vec<Affine<g1::Config>> {
        let g = G1Projective::rand(rng);
        let mut acc = G1Projective::rand(rng);
        let mut out: Vec<G1Projective> = Vec::with_capacity(n);
        for i in 0..n {
            // A cheap walk through the subgroup, with an identity now and then.
            acc += g;
            out.push(if i % 97 == 5 {
                G1Projective::zero()
            } else {
                acc
            });
        }
        G1Projective::normalize_batch(&out)
    }

    fn seeded() -> (u64, StdRng) {
        let seed = crucible_core::run_seed::run_seed();
        (seed, StdRng::seed_from_u64(seed))
    }

    #[test]
    fn points_in_the_subgroup_pass_and_one_outside_is_named_at_every_size() {
        let (seed, mut rng) = seeded();
        let t = order_three_g1(&mut rng);
        for n in [
            1,
            2,
            BATCH_FROM - 1,
            BATCH_FROM,
            BATCH_FROM + 1,
            TASK_POINTS + 3,
        ] {
            let mut points = subgroup_g1(n, &mut rng);
            assert_eq!(outside_subgroup(&points), None, "seed {seed}, {n} points");
            let at = rng.gen_range(0..n);
            let bad = (points[at].into_group() + t).into_affine();
            assert!(bad.is_on_curve());
            points[at] = bad;
            assert_eq!(
                outside_subgroup(&points),
                Some(at),
                "seed {seed}, {n} points, bad at {at}"
            );
        }
    }

    #[test]
    fn components_of_order_three_that_cancel_in_a_plain_sum_are_caught() {
        let (seed, mut rng) = seeded();
        let t = order_three_g1(&mut rng);
        let n = 3 * BATCH_FROM;
        let mut points = subgroup_g1(n, &mut rng);
        // +T, +T and +T again (3T = 0), and +T, -T: a plain sum of all points, or of
        // any subset taking all or none of them, sees nothing.
        let (a, b, c, d, e) = (7, 1500, n - 1, 40, 2900);
        for &i in &[a, b, c, d] {
            points[i] = (points[i].into_group() + t).into_affine();
        }
        points[e] = (points[e].into_group() - t).into_affine();
        let plain: G1Projective = points.iter().map(|p| p.into_group()).sum();
        assert!(plain
            .into_affine()
            .is_in_correct_subgroup_assuming_on_curve());
        for run in 0..20 {
            let mask_seed: [u8; 32] = rng.gen();
            assert!(
                !batch_in_subgroup(&points, mask_seed),
                "seed {seed}, run {run}: a batch missed the order-3 components"
            );
        }
        assert_eq!(outside_subgroup(&points), Some(a), "seed {seed}");
    }

    #[test]
    fn g2_points_batch_the_same_way() {
        let (seed, mut rng) = seeded();
        let n = BATCH_FROM + 10;
        let g = G2Projective::rand(&mut rng);
        let mut points: Vec<_> = (0..n).map(|i| g.mul_bigint([i as u64 + 2])).collect();
        let mut affine = G2Projective::normalize_batch(&points);
        assert_eq!(outside_subgroup(&affine), None, "seed {seed}");
        // A point of the twist outside the subgroup: x chosen until y exists.
        let bad = loop {
            let x = ark_bls12_381::Fq2::rand(&mut rng);
            if let Some(y) = (x.square() * x + g2::Config::COEFF_B).sqrt() {
                let p = Affine::<g2::Config>::new_unchecked(x, y);
                if !p.is_in_correct_subgroup_assuming_on_curve() {
                    break p;
                }
            }
        };
        let at = n - 3;
        points[at] = bad.into_group();
        affine = G2Projective::normalize_batch(&points);
        assert_eq!(outside_subgroup(&affine), Some(at), "seed {seed}");
    }
}
