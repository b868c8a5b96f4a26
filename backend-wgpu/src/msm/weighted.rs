//! The host's part of a batch: each window's sum read back, weighted and added by
//! Horner's rule (a serial chain of doublings, which one CPU core runs far faster than
//! one GPU thread).

use ark_ec::short_weierstrass::{Projective, SWCurveConfig};
use crucible_core::{combine_windows, Result};

use crate::error::WgpuError;
use crate::field::{projective_words, read_projective, DeviceElement};

use super::layout::Config;

/// The batch's sum from each window's last-level pair (A, C), whose C is the window's
/// Σ b·B_b: Σ_w 2^(c·w)·C_w by Horner's rule.
pub fn combine<P: SWCurveConfig>(config: &Config, words: &[u32]) -> Result<Projective<P>>
where
    P::BaseField: DeviceElement,
{
    let pair = 2 * projective_words::<P>();
    let sums = (0..config.windows)
        .map(|w| {
            let c = words
                .get(w * pair + pair / 2..(w + 1) * pair)
                .ok_or(WgpuError::Corrupt {
                    what: "MSM readback",
                })?;
            read_projective::<P>(c)
        })
        .collect::<std::result::Result<Vec<_>, WgpuError>>()?;
    Ok(combine_windows(&sums, config.window_bits as u32))
}
