//! The MSM cost model, in one place: what a window size costs over plain bases and
//! over window planes, from which the window bits and the planes are chosen. Counted
//! in quarter additions: 4 per bucket addition (W·n of them), plus a weight per bucket
//! of the bucket windows for their reduction, fitted to measurements on the H200.

use crate::field::{Group, Which};
use crate::tuning::CudaTuning;

/// The largest window: 12 windows of 2^21 buckets (the cost model picks it from about
/// 2^27 terms on).
pub const MAX_WINDOW_BITS: u32 = 22;

/// The model's cost of `n` terms of `group` with window bits `c` and `wp` bucket
/// windows, at `quarter_weight` quarter additions per bucket of reduction.
fn model_cost(group: Group, n: usize, c: u32, wp: usize, quarter_weight: u128) -> u128 {
    4 * group.windows(c) as u128 * n as u128 + quarter_weight * wp as u128 * (1u128 << (c - 1))
}

/// Window bits for `n` terms of `group` over plain bases: the c that minimises
/// W(c) * (n + 4.5 * 2^(c-1)), the bucket-sum additions plus the reduction's cost per
/// bucket, in additions (ties go to the smaller c), raised to [`window_floor`] where
/// the H200 measured the model's choice slow. The weight 4.5 is the range (3.65, 5.35)
/// in which this model picks the fastest c measured at 2^20 (c = 13..17), 2^24 (18..20)
/// and 2^26 (20..22): d32de65:BENCHMARKS.md.
pub fn window_bits(group: Group, n: usize) -> u32 {
    // 4.5 additions a bucket, over all W windows.
    let cost = |c: u32| model_cost(group, n, c, group.windows(c), 18);
    let model = (1..=MAX_WINDOW_BITS)
        .min_by_key(|&c| (cost(c), c))
        .unwrap_or(1);
    model.max(window_floor(group, n))
}

/// The least window bits for `n` terms of `group` over plain bases: 13 from 2^15 terms,
/// 16 from 2^19 (G1) or 2^18 (G2). From 2^15 to 2^18 terms the model picks 11 or 12,
/// and G1 ran fastest with 13 of 12, 13, 14 and 16 at each of 2^15 to 2^18 (2.14,
/// 2.64, 3.04 and 4.30 ms against 3.34, 3.44, 3.91 and 5.01 with 16;
/// d32de65:BENCHMARKS.md),
/// while 16 ran fastest of 13 to 16 at 2^19 to 2^22. G2 gains 18–36 % from 13 bits at
/// 2^15 to 2^17, but at 2^18 ran 12.15 ms with 16 against 13.05 (13), 14.18 (14) and
/// 14.71 (15), so its floor of 16 starts a size earlier.
fn window_floor(group: Group, n: usize) -> u32 {
    let sixteen_from = match group.which {
        Which::G1 => 1 << 19,
        Which::G2 => 1 << 18,
    };
    if n >= sixteen_from {
        16
    } else if n >= 1 << 15 {
        13
    } else {
        1
    }
}

/// The window bits of `n` terms of `group` over plain bases: the tuning's
/// `window_bits` if set, else [`window_bits`].
pub fn chosen_window_bits(group: Group, n: usize, tuning: &CudaTuning) -> u32 {
    tuning.window_bits.unwrap_or_else(|| window_bits(group, n))
}

/// The modelled cost of an MSM of `n` terms over `group` with window bits `c` and `wp`
/// bucket windows, as the choice between plain bases and window planes weighs it. Over
/// planes the reduction is bound by its chain of dependent additions more than by its
/// bucket count, so the weights are fitted to the H200 rather than counted
/// (d32de65:BENCHMARKS.md): G1 2^20 ran fastest with c = 20 (10.72 ms;
/// c = 19: 11.32), G1 2^21 with 20 (17.6; c = 22: 21.1), G1 2^24 with 20 (120.2;
/// c = 22: 125.8), which bounds G1's weight to (3.55, 4) additions a bucket; G2 2^20
/// ran fastest with c = 19 (32.3; c = 20: 33.9), a weight above 4.
pub fn cost(group: Group, n: usize, c: u32, wp: usize) -> u128 {
    let quarter_weight = match group.which {
        Which::G1 => 15,
        Which::G2 => 24,
    };
    model_cost(group, n, c, wp, quarter_weight)
}

/// Predicted nanoseconds a unit of [`cost`] (a quarter addition) takes on the H200,
/// fitted to what window planes saved (issue 17's table, median of 7): G1 2^20 ran
/// 11.30 ms on plain bases and 10.07 over planes, a model difference of 12.6 M units
/// (0.098 ns a unit); G1 2^24 129.1 against 120.1 ms, 78.6 M units (0.115 ns); so 0.105
/// for G1. G2 2^20 34.4 against 29.7 ms, 14.7 M units: 0.32 ns, 3.0 times G1 (the
/// ratio of the groups' per-term rates in the backend's cost model, 22.8 / 7.49).
fn ns_per_unit(group: Group) -> f64 {
    match group.which {
        Which::G1 => 0.105,
        Which::G2 => 0.32,
    }
}

/// Predicted nanoseconds an MSM of `n` terms over `group` saves with window bits and
/// bucket windows `over` (over planes) instead of `plain` (negative: it loses).
pub fn saving_ns(group: Group, n: usize, plain: (u32, usize), over: (u32, usize)) -> f64 {
    let units = |(c, wp): (u32, usize)| cost(group, n, c, wp) as f64;
    (units(plain) - units(over)) * ns_per_unit(group)
}

/// Predicted nanoseconds to build one plane of one G1 point `shift` doublings above
/// the plane below: [`BUILD_POINT_NS`] + [`BUILD_DOUBLING_NS`] · shift, fitted to two
/// figures of the H200: 164 ms for 2^20 points, 12 planes of 20 doublings (ncu;
/// 13.0 ns a point and plane), and the MSM G1 2^24 "+transfers" bench row, 1707 ms
/// with planes against 188 without, 9 ms of it the MSM's own difference: 1528 ms for
/// 2^24 points, 4 planes of 60 doublings (22.8 ns). G2 costs [`G2_BUILD_FACTOR`] times
/// as much (a G2 doubling and inversion are Fq2 arithmetic, about 3 Fq products for one).
const BUILD_POINT_NS: f64 = 8.16;
/// See [`BUILD_POINT_NS`].
const BUILD_DOUBLING_NS: f64 = 0.2435;
/// See [`BUILD_POINT_NS`]: the ratio of the groups' MSM rates (22.8 / 7.49 ns a term).
const G2_BUILD_FACTOR: f64 = 3.04;

/// Predicted nanoseconds to build planes 1 .. `count` of `len` points of `group`,
/// `shift` doublings apart (planes.cu).
pub fn planes_build_ns(group: Group, len: usize, count: u32, shift: u32) -> f64 {
    let per_point_plane = BUILD_POINT_NS + BUILD_DOUBLING_NS * f64::from(shift);
    let factor = match group.which {
        Which::G1 => 1.0,
        Which::G2 => G2_BUILD_FACTOR,
    };
    per_point_plane * factor * len as f64 * f64::from(count.saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::test_groups::{BLS_G1, BLS_G2, BN_G1, BN_G2};

    /// Window bits never decrease as the MSM grows, up to 2^28 terms.
    fn assert_never_decreases(group: Group) {
        let mut last = 1;
        let mut n = 1usize;
        while n < 1 << 28 {
            let c = window_bits(group, n);
            assert!(c >= last, "{group:?} n={n}: {c} < {last}");
            last = c;
            n += 1 + n / 64;
        }
    }

    #[test]
    fn window_bits_never_decreases_and_hits_the_planned_sizes() {
        for group in [BLS_G1, BLS_G2] {
            assert_never_decreases(group);
            for log in 15..18 {
                assert_eq!(window_bits(group, 1 << log), 13, "{group:?} 2^{log}");
            }
            for (log, c) in [(19, 16), (20, 16), (24, 20), (26, 20)] {
                assert_eq!(window_bits(group, 1 << log), c, "{group:?} 2^{log}");
            }
        }
        assert_eq!(window_bits(BLS_G1, 1 << 18), 13);
        assert_eq!(window_bits(BLS_G2, 1 << 18), 16);
    }

    /// BN254's digits cover 255 bits: one window fewer where c divides 255, which
    /// the model counts (17-bit windows from 2^21 terms: 15 windows, against 16 of 16
    /// bits), under the same floors.
    #[test]
    fn bn254_window_bits_count_its_own_windows() {
        for group in [BN_G1, BN_G2] {
            assert_never_decreases(group);
            for (log, c) in [(15, 13), (17, 13), (19, 16), (20, 16), (21, 17), (24, 20)] {
                assert_eq!(window_bits(group, 1 << log), c, "{group:?} 2^{log}");
            }
        }
        assert_eq!(window_bits(BN_G2, 1 << 18), 16);
        assert_eq!(window_bits(BLS_G1, 1 << 21), 16);
        let n = 1 << 20;
        assert_eq!(
            cost(BLS_G1, n, 15, 18) - cost(BN_G1, n, 15, 18),
            4 * n as u128
        );
        assert_eq!(cost(BLS_G2, n, 16, 4), cost(BN_G2, n, 16, 4));
    }

    #[test]
    fn the_planes_terms_reproduce_the_figures_they_were_fitted_to() {
        let ms = |ns: f64| ns / 1e6;
        let close = |got: f64, want: f64, tol: f64| {
            assert!((got - want).abs() <= tol, "{got} against {want}")
        };
        close(ms(planes_build_ns(BLS_G1, 1 << 20, 13, 20)), 164.0, 1.0);
        close(ms(planes_build_ns(BLS_G1, 1 << 24, 5, 60)), 1528.0, 5.0);
        assert_eq!(planes_build_ns(BLS_G1, 1 << 20, 1, 20), 0.0);
        close(
            planes_build_ns(BLS_G2, 1000, 3, 19) / planes_build_ns(BLS_G1, 1000, 3, 19),
            G2_BUILD_FACTOR,
            1e-9,
        );
        // Savings: plain c = 16 (16 windows) against planes c = 20, one bucket window
        // (G1 2^20, measured 1.23 ms), and c = 20 with 3 (G1 2^24, measured 9.0 ms).
        close(
            ms(saving_ns(BLS_G1, 1 << 20, (16, 16), (20, 1))),
            1.23,
            0.12,
        );
        close(ms(saving_ns(BLS_G1, 1 << 24, (20, 13), (20, 3))), 9.0, 0.9);
        close(ms(saving_ns(BLS_G2, 1 << 20, (16, 16), (19, 1))), 4.7, 0.2);
        assert!(saving_ns(BLS_G1, 1 << 20, (20, 1), (16, 16)) < 0.0);
    }

    #[test]
    fn the_override_fixes_the_window() {
        let tuned = CudaTuning {
            window_bits: Some(11),
            ..CudaTuning::default()
        };
        assert_eq!(chosen_window_bits(BLS_G2, 1 << 20, &tuned), 11);
        assert_eq!(
            chosen_window_bits(BLS_G1, 1 << 20, &CudaTuning::default()),
            16
        );
    }
}
