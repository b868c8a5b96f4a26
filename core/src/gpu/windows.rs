//! The last step of a bucket (Pippenger) MSM, on the host: window sums combined by
//! Horner's rule. Its chain of doublings is serial, and one CPU core runs it far faster
//! than one GPU thread, so the GPU backends read back one point per window.

use ark_ec::CurveGroup;

/// `Σ_w 2^(c·w) · sums[w]` for window bits `c` (window 0 first), by Horner's rule from
/// the top window: `c` doublings per window.
pub fn combine_windows<P: CurveGroup>(sums: &[P], c: u32) -> P {
    let mut acc = P::zero();
    for s in sums.iter().rev() {
        for _ in 0..c {
            acc.double_in_place();
        }
        acc += s;
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fr, G1Projective};
    use ark_ec::PrimeGroup;

    #[test]
    fn combine_is_horner_over_windows() {
        let g = G1Projective::generator();
        let sums: Vec<G1Projective> = (1..=5u64).map(|i| g * Fr::from(i)).collect();
        // Σ_w 2^(3w) (w + 1) g
        let want: u64 = (0..5u64).map(|w| (w + 1) << (3 * w)).sum();
        assert_eq!(combine_windows(&sums, 3), g * Fr::from(want));
        assert_eq!(
            combine_windows::<G1Projective>(&[], 3),
            G1Projective::default()
        );
    }
}
