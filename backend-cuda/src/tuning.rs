//! Tuning overrides from the environment, for measurements (README lists them). Each
//! is checked when the device is opened: a value out of range or not a number makes
//! the backend unavailable with the reason, so a sweep never measures the default
//! under another name.

use std::ops::RangeInclusive;

use crucible_core::{Error, Result};

/// MSM window bits (msm.rs).
pub const WINDOW_BITS: (&str, RangeInclusive<u32>) = ("CRUCIBLE_CUDA_WINDOW_BITS", 1..=22);
/// Sorted entries one thread sums in the MSM bucket sums (msm.rs).
pub const MSM_CHUNK: (&str, RangeInclusive<u32>) = ("CRUCIBLE_CUDA_MSM_CHUNK", 1..=4096);
/// log2 of the buckets per segment of the MSM reduction (msm.rs).
pub const MSM_SEG_BITS: (&str, RangeInclusive<u32>) = ("CRUCIBLE_CUDA_MSM_SEG_BITS", 0..=10);
/// The most window planes one MSM bases buffer gets (planes.rs; 1: none).
pub const MSM_PLANES: (&str, RangeInclusive<u32>) = ("CRUCIBLE_CUDA_MSM_PLANES", 1..=256);
/// Radix-2 stages per NTT pass (ntt.rs; the kernels go up to 4).
pub const NTT_PASS_STAGES: (&str, RangeInclusive<u32>) = ("CRUCIBLE_CUDA_NTT_PASS_STAGES", 1..=4);

/// Every override, for the check at open.
const ALL: [&(&str, RangeInclusive<u32>); 5] = [
    &WINDOW_BITS,
    &MSM_CHUNK,
    &MSM_SEG_BITS,
    &MSM_PLANES,
    &NTT_PASS_STAGES,
];

/// `value` (the variable's text, if set) as an override of `name` within `range`.
pub fn parse(name: &str, range: &RangeInclusive<u32>, value: Option<&str>) -> Result<Option<u32>> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.trim().parse::<u32>() {
        Ok(v) if range.contains(&v) => Ok(Some(v)),
        _ => Err(Error::InvalidInput(format!(
            "{name}={value:?}: expected a whole number from {} to {} (a tuning override; unset it for the default)",
            range.start(),
            range.end()
        ))),
    }
}

/// The override of `var` from the environment, if set.
pub fn read(var: &(&str, RangeInclusive<u32>)) -> Result<Option<u32>> {
    let (name, range) = var;
    parse(name, range, std::env::var(name).ok().as_deref())
}

/// Checks every override; called when the device is opened.
pub fn check_all() -> Result<()> {
    ALL.iter().try_for_each(|var| read(var).map(drop))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_parse_within_their_range_and_name_themselves_when_wrong() {
        for (name, range) in ALL {
            assert_eq!(parse(name, range, None).unwrap(), None);
            for v in [*range.start(), *range.end()] {
                assert_eq!(
                    parse(name, range, Some(&format!(" {v} "))).unwrap(),
                    Some(v)
                );
            }
            let below = range.start().checked_sub(1).map(|v| v.to_string());
            let above = (range.end() + 1).to_string();
            for bad in [
                below.as_deref(),
                Some(above.as_str()),
                Some("-1"),
                Some("x"),
                Some(""),
            ]
            .into_iter()
            .flatten()
            {
                let err = parse(name, range, Some(bad)).unwrap_err().to_string();
                assert!(
                    err.contains(name) && err.contains("tuning override"),
                    "{err}"
                );
            }
        }
    }
}
