//! The MSM cost model, in one place: what a window size costs over plain bases and
//! over window planes, from which the window bits and the planes are chosen. Counted
//! in quarter additions: 4 per bucket addition (W·n of them), plus a weight per bucket
//! of the bucket windows for their reduction, fitted to measurements on the H200.

use crate::field::Group;
use crate::tuning::CudaTuning;

/// The largest window: 12 windows of 2^21 buckets (the cost model picks it from about
/// 2^27 terms on).
pub const MAX_WINDOW_BITS: u32 = 22;

/// Digit windows of c bits: W = ceil(256 / c).
pub fn windows(c: u32) -> usize {
    256usize.div_ceil(c as usize)
}

/// The model's cost of `n` terms with window bits `c` and `wp` bucket windows, at
/// `quarter_weight` quarter additions per bucket of reduction.
fn model_cost(n: usize, c: u32, wp: usize, quarter_weight: u128) -> u128 {
    4 * windows(c) as u128 * n as u128 + quarter_weight * wp as u128 * (1u128 << (c - 1))
}

/// Window bits for `n` terms over plain bases: the c that minimises
/// W(c) * (n + 4.5 * 2^(c-1)), the bucket-sum additions plus the reduction's cost per
/// bucket, in additions (ties go to the smaller c); 16 from 2^15 to 2^22 terms, 20 for
/// 2^24 to 2^26. The weight 4.5 is the range (3.65, 5.35) in which this model picks
/// the fastest c measured on the H200 at 2^20 (c = 13..17), 2^24 (18..20) and 2^26
/// (20..22): BENCHMARKS.md. Below 2^20 terms the model would pick c = 11 to 14, never
/// measured fast there (c = 16 was, at 2^15 to 2^18), so c = 16 is kept from 2^15
/// terms on.
pub fn window_bits(n: usize) -> u32 {
    // 4.5 additions a bucket, over all W windows.
    let cost = |c: u32| model_cost(n, c, windows(c), 18);
    let model = (1..=MAX_WINDOW_BITS)
        .min_by_key(|&c| (cost(c), c))
        .unwrap_or(1);
    if n >= 1 << 15 {
        model.max(16)
    } else {
        model
    }
}

/// The window bits of `n` terms over plain bases: the tuning override
/// (`CRUCIBLE_CUDA_WINDOW_BITS`) if set, else [`window_bits`].
pub fn chosen_window_bits(n: usize, tuning: &CudaTuning) -> u32 {
    tuning.window_bits.unwrap_or_else(|| window_bits(n))
}

/// The modelled cost of an MSM of `n` terms over `group` with window bits `c` and `wp`
/// bucket windows, as the choice between plain bases and window planes weighs it. Over
/// planes the reduction is bound by its chain of dependent additions more than by its
/// bucket count, so the weights are fitted to the H200 rather than counted
/// (BENCHMARKS.md, fourth session): G1 2^20 ran fastest with c = 20 (10.72 ms;
/// c = 19: 11.32), G1 2^21 with 20 (17.6; c = 22: 21.1), G1 2^24 with 20 (120.2;
/// c = 22: 125.8), which bounds G1's weight to (3.55, 4) additions a bucket; G2 2^20
/// ran fastest with c = 19 (32.3; c = 20: 33.9), a weight above 4.
pub fn cost(group: Group, n: usize, c: u32, wp: usize) -> u128 {
    let quarter_weight = match group {
        Group::G1 => 15,
        Group::G2 => 24,
    };
    model_cost(n, c, wp, quarter_weight)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_bits_never_decreases_and_hits_the_planned_sizes() {
        let mut last = 1;
        let mut n = 1usize;
        while n < 1 << 28 {
            let c = window_bits(n);
            assert!(c >= last, "n={n}: {c} < {last}");
            last = c;
            n += 1 + n / 64;
        }
        assert_eq!(window_bits(1 << 16), 16);
        assert_eq!(window_bits(1 << 20), 16);
        assert_eq!(window_bits(1 << 24), 20);
        assert_eq!(window_bits(1 << 26), 20);
    }

    #[test]
    fn the_override_fixes_the_window() {
        let tuned = CudaTuning {
            window_bits: Some(11),
            ..CudaTuning::default()
        };
        assert_eq!(chosen_window_bits(1 << 20, &tuned), 11);
        assert_eq!(chosen_window_bits(1 << 20, &CudaTuning::default()), 16);
    }
}
