//! Steps 1-4 of a batch, curve-independent (shaders/msm_sort.wgsl): every term's
//! scalar out of Montgomery form into signed digits, then a counting sort of the terms
//! by bucket in every window (histogram, scan, scatter), each window's buckets split
//! into tasks of at most [`TASK_SIZE`](super::cost::TASK_SIZE) terms.

use crucible_core::{Lease, Result};

use crate::device::batch::Batch;
use crate::device::context::Context;
use crate::wgsl::params::MsmParams;
use crate::wgsl::{Module, WORKGROUP};

use super::layout::{items, Config, Scratch};

/// The sort's entry points, in dispatch order: the digits, the histogram, the scan,
/// the scatter.
pub const ENTRIES: [&str; 4] = ["signed_digits", "histogram", "scan", "scatter"];

/// Records the sort of a batch of `config.n` terms whose scalars start at
/// `params.scalar_offset` of `scalars`.
pub fn record<'l>(
    ctx: &Context,
    batch: &mut Batch<'l>,
    work: &'l Lease,
    scratch: &Scratch,
    scalars: &'l wgpu::Buffer,
    config: &Config,
    params: MsmParams,
) -> Result<()> {
    let buf = |key| scratch.buffer(work, key);
    let (digits, counts, cursor, task_off, sorted) = (
        buf(items::DIGITS)?,
        buf(items::COUNTS)?,
        buf(items::CURSOR)?,
        buf(items::TASK_OFFSETS)?,
        buf(items::SORTED)?,
    );
    let with_count = |count: usize| MsmParams {
        count: count as u32,
        ..params
    };
    let sort = |entry| ctx.pipeline(Module::MsmSort, entry);
    let [digits_entry, histogram, scan, scatter] = ENTRIES;
    let n = config.n;
    let terms_windows = n * config.windows;
    batch.clear(counts);
    batch.phase("digits");
    batch.dispatch(
        sort(digits_entry)?,
        &with_count(n),
        vec![(1, scalars), (11, digits)],
        n as u32,
    )?;
    batch.phase("histogram");
    batch.dispatch(
        sort(histogram)?,
        &with_count(terms_windows),
        vec![(11, digits), (3, counts)],
        terms_windows as u32,
    )?;
    // One workgroup a window.
    batch.phase("scan");
    batch.dispatch(
        sort(scan)?,
        &with_count(config.windows),
        vec![(3, counts), (4, cursor), (5, task_off)],
        config.windows as u32 * WORKGROUP,
    )?;
    batch.phase("scatter");
    batch.dispatch(
        sort(scatter)?,
        &with_count(terms_windows),
        vec![(11, digits), (4, cursor), (6, sorted)],
        terms_windows as u32,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::cost::{MAX_WINDOW_BITS, SIGNED_BITS};
    use ark_ff::{AdditiveGroup, Field, PrimeField, UniformRand};
    use ark_std::rand::{rngs::StdRng, SeedableRng};
    use crucible_core::Fr;

    /// shaders/msm_sort.wgsl's signed_digits on the host, step for step: (magnitude,
    /// negative) of every window.
    fn signed_digits(scalar: Fr, c: usize, windows: usize) -> Vec<(u32, bool)> {
        let limbs = scalar.into_bigint().0;
        let words: Vec<u32> = limbs
            .iter()
            .flat_map(|l| [*l as u32, (*l >> 32) as u32])
            .collect();
        let full = 1u32 << c;
        let half = full >> 1;
        let mut carry = 0;
        (0..windows)
            .map(|w| {
                let bit = w * c;
                let (q, s) = (bit / 32, bit % 32);
                let mut v = words[q] >> s;
                if s + c > 32 && q + 1 < 8 {
                    v |= words[q + 1] << (32 - s);
                }
                v = (v & (full - 1)) + carry;
                carry = 0;
                if v > half {
                    carry = 1;
                    (full - v, true)
                } else {
                    (v, false)
                }
            })
            .collect()
    }

    #[test]
    fn signed_digits_recompose_the_scalar_with_magnitudes_of_at_most_half_a_window() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut scalars: Vec<Fr> = (0..200).map(|_| Fr::rand(&mut rng)).collect();
        scalars.extend([Fr::ZERO, Fr::ONE, -Fr::ONE, -Fr::from(2u64)]);
        // Windows of all ones (each carries into the next) and the top bit.
        scalars.push(Fr::from(2u64).pow([254]));
        scalars.push(Fr::from_bigint(ark_ff::BigInt([u64::MAX, u64::MAX, u64::MAX, 0])).unwrap());
        for c in 2..=MAX_WINDOW_BITS {
            let windows = SIGNED_BITS.div_ceil(c);
            for s in &scalars {
                let digits = signed_digits(*s, c, windows);
                let mut sum = Fr::ZERO;
                for (w, (m, negative)) in digits.iter().enumerate() {
                    assert!(*m <= 1 << (c - 1), "c {c}: digit {m} (seed {seed})");
                    let term = Fr::from(*m as u64) * Fr::from(2u64).pow([(c * w) as u64]);
                    sum += if *negative { -term } else { term };
                }
                assert_eq!(sum, *s, "c {c}: {} (seed {seed})", s.into_bigint());
            }
        }
    }
}
