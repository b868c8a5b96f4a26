//! The CUDA backend's tuning: the `[cuda]` table of the tuning file
//! (`crucible_core::tuning_file`), read once when a device is opened into one
//! [`CudaTuning`] that every operation of the backend reads. Every key is optional;
//! an unknown key, a word outside its choices or a number outside its range makes the
//! backend unavailable with the key and what it allows named, so that a tuning run
//! never measures the default under another name.
//!
//! An unset key takes its default, chosen per device and per operation where the
//! measurements call for it: the MSM's window, chunk and segments by the MSM's size
//! (msm/cost.rs, msm/layout.rs), its window planes by the device's budget
//! (msm/planes.rs), the ones' sum by the device's resident threads (msm/ones.rs). The
//! fixed defaults ([`DEFAULT_NTT_TILE_BITS`], [`DEFAULT_STAGING_MIB`],
//! [`DEFAULT_SUMS_BLOCK`], [`PlanesBuild::Eager`]) are the same on every device class:
//! each is a kernel's limit or the fastest measured (BENCHMARKS.md#msm-against-the-peers-on-the-h100,
//! BENCHMARKS.md#ntt-against-the-peers-on-the-h100), and no
//! device class has measured faster with another.

use std::ops::RangeInclusive;

use crucible_core::tuning_file::TuningFile;
use crucible_core::Result;
use serde::Deserialize;

/// The table's name in the tuning file.
pub const TABLE: &str = "cuda";

/// log2 elements of the NTT's shared-memory tiles unless tuned: `ntt_tile_e4`'s most
/// (2^10: 33 KiB of static shared memory, 256 threads). A launch costs one global
/// round trip of the data, so fewer, fuller tiles are fewer round trips.
pub const DEFAULT_NTT_TILE_BITS: u32 = 10;

/// MiB per pinned staging buffer unless tuned (staging.rs): the largest chunk a
/// transfer is cut into. Each chunk costs about 0.2 ms of host time beyond its bytes
/// (an event wait, a copy call, the host threads' start), so large transfers want large
/// chunks: on the H200 a one-shot G1 MSM of 2^24 (2.1 GB staged) took 225.7 ms through
/// 8 MiB chunks, 179.6 through 32 and 191.0 through 64.
pub const DEFAULT_STAGING_MIB: u32 = 32;

/// Threads a block of the bucket sums unless tuned: G1's 168 registers fit 12 warps an
/// SM in blocks of 128 or of 32, G2's 255 fit 8 either way.
pub const DEFAULT_SUMS_BLOCK: u32 = 128;

/// When a bases buffer's window planes are built (msm/planes.rs): `msm_planes_build`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanesBuild {
    /// When the bases are staged (every MSM over them runs on the planes): the default,
    /// for a proving key staged once and proved with many times.
    #[default]
    Eager,
    /// Once the MSMs over the staged bases have saved, by the cost model, what the
    /// planes cost to build (ski rental), before the MSM that gets there: a one-shot
    /// MSM never pays for them.
    Paid,
    /// Never: no room for planes either.
    Never,
}

/// The `[cuda]` table of the tuning file: every key optional, `None` for the default.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaTuning {
    /// `window_bits`: the MSM window, 1 to 22, for plain bases and for window planes.
    /// Default: the cost model's choice for each MSM's size (msm/cost.rs).
    pub window_bits: Option<u32>,
    /// `msm_chunk`: sorted entries one thread sums in the bucket sums, 1 to 4096.
    /// Default: 64, 128 from 2^26 entries, fewer (down to 8) for small MSMs.
    pub msm_chunk: Option<u32>,
    /// `msm_seg_bits`: log2 buckets per segment of the reduction, 0 to 10. Default: 3,
    /// fewer where that leaves fewer than 2^15 segments.
    pub msm_seg_bits: Option<u32>,
    /// `msm_planes`: the most window planes a bases buffer gets, 1 (none) to 256.
    /// Default: as many as the model wants within a share of the device's budget.
    pub msm_planes: Option<u32>,
    /// `msm_planes_build`: `eager`, `paid` or `never`. Default `eager`.
    pub msm_planes_build: Option<PlanesBuild>,
    /// `msm_sums_block`: threads a block of the bucket sums, 32 to 1024, a multiple of
    /// 32. Default [`DEFAULT_SUMS_BLOCK`].
    pub msm_sums_block: Option<u32>,
    /// `ntt_tile_bits`: log2 elements per shared-memory NTT tile, 4 to 10. Default
    /// [`DEFAULT_NTT_TILE_BITS`].
    pub ntt_tile_bits: Option<u32>,
    /// `staging_mib`: MiB per pinned staging buffer, both directions, 1 to 256.
    /// Default [`DEFAULT_STAGING_MIB`].
    pub staging_mib: Option<u32>,
}

/// One numeric key and the values it accepts.
struct Range {
    key: &'static str,
    values: RangeInclusive<u32>,
    /// Accepted values are multiples of this.
    step: u32,
}

/// The numeric keys' ranges, in the struct's order.
const RANGES: [Range; 7] = [
    Range {
        key: "window_bits",
        values: 1..=22,
        step: 1,
    },
    Range {
        key: "msm_chunk",
        values: 1..=4096,
        step: 1,
    },
    Range {
        key: "msm_seg_bits",
        values: 0..=10,
        step: 1,
    },
    Range {
        key: "msm_planes",
        values: 1..=256,
        step: 1,
    },
    Range {
        key: "msm_sums_block",
        values: 32..=1024,
        step: 32,
    },
    Range {
        key: "ntt_tile_bits",
        values: 4..=10,
        step: 1,
    },
    Range {
        key: "staging_mib",
        values: 1..=256,
        step: 1,
    },
];

impl CudaTuning {
    /// The `[cuda]` table of `file` (defaults when it has none), range-checked.
    pub fn from_file(file: &TuningFile) -> Result<CudaTuning> {
        let tuning: CudaTuning = file.section(TABLE)?;
        let values = [
            tuning.window_bits,
            tuning.msm_chunk,
            tuning.msm_seg_bits,
            tuning.msm_planes,
            tuning.msm_sums_block,
            tuning.ntt_tile_bits,
            tuning.staging_mib,
        ];
        for (range, value) in RANGES.iter().zip(values) {
            let Some(value) = value else { continue };
            if !range.values.contains(&value) || value % range.step != 0 {
                let multiple = if range.step > 1 {
                    format!(", a multiple of {}", range.step)
                } else {
                    String::new()
                };
                return Err(file.invalid(
                    TABLE,
                    range.key,
                    &format!(
                        "{value} is not allowed: expected a whole number from {} to {}{multiple}",
                        range.values.start(),
                        range.values.end()
                    ),
                ));
            }
        }
        Ok(tuning)
    }

    /// When bases buffers build their window planes.
    pub fn planes_build(&self) -> PlanesBuild {
        self.msm_planes_build.unwrap_or_default()
    }

    /// Threads a block of the bucket sums.
    pub fn sums_block(&self) -> u32 {
        self.msm_sums_block.unwrap_or(DEFAULT_SUMS_BLOCK)
    }

    /// log2 elements per shared-memory NTT tile.
    pub fn ntt_tile_bits(&self) -> u32 {
        self.ntt_tile_bits.unwrap_or(DEFAULT_NTT_TILE_BITS)
    }

    /// MiB per pinned staging buffer.
    pub fn staging_mib(&self) -> u32 {
        self.staging_mib.unwrap_or(DEFAULT_STAGING_MIB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<CudaTuning> {
        CudaTuning::from_file(&TuningFile::parse(text, Some("t.toml".into()))?)
    }

    #[test]
    fn every_key_parses_into_its_field() {
        let tuning = parse(
            "[cuda]\nwindow_bits = 18\nmsm_chunk = 128\nmsm_seg_bits = 3\nmsm_planes = 1\n\
             msm_planes_build = \"paid\"\nmsm_sums_block = 64\nntt_tile_bits = 8\n\
             staging_mib = 16\n",
        )
        .unwrap();
        assert_eq!(
            tuning,
            CudaTuning {
                window_bits: Some(18),
                msm_chunk: Some(128),
                msm_seg_bits: Some(3),
                msm_planes: Some(1),
                msm_planes_build: Some(PlanesBuild::Paid),
                msm_sums_block: Some(64),
                ntt_tile_bits: Some(8),
                staging_mib: Some(16),
            }
        );
        assert_eq!(tuning.planes_build(), PlanesBuild::Paid);
        assert_eq!(tuning.sums_block(), 64);
        assert_eq!(tuning.ntt_tile_bits(), 8);
        assert_eq!(tuning.staging_mib(), 16);
        for (word, want) in [
            ("eager", PlanesBuild::Eager),
            ("paid", PlanesBuild::Paid),
            ("never", PlanesBuild::Never),
        ] {
            let tuning = parse(&format!("[cuda]\nmsm_planes_build = \"{word}\"\n")).unwrap();
            assert_eq!(tuning.planes_build(), want);
        }
    }

    /// No file, an empty table and a table for another backend give the documented
    /// defaults, the same on every device class (the module's header).
    #[test]
    fn unset_keys_take_the_documented_defaults() {
        for text in ["", "[cuda]\n", "[wgpu]\nanything = 1\n"] {
            let tuning = parse(text).unwrap();
            assert_eq!(tuning, CudaTuning::default(), "{text:?}");
            assert_eq!(tuning.planes_build(), PlanesBuild::Eager);
            assert_eq!(tuning.sums_block(), 128);
            assert_eq!(tuning.ntt_tile_bits(), 10);
            assert_eq!(tuning.staging_mib(), 32);
            assert_eq!(tuning.window_bits, None, "the cost model's, per MSM size");
            assert_eq!(tuning.msm_planes, None, "the budget's, per device");
        }
    }

    #[test]
    fn numbers_out_of_range_are_refused_naming_the_key_and_the_range() {
        for range in &RANGES {
            let key = range.key;
            for v in [*range.values.start(), *range.values.end()] {
                parse(&format!("[cuda]\n{key} = {v}\n"))
                    .unwrap_or_else(|e| panic!("{key} = {v}: {e}"));
            }
            let below = range.values.start().checked_sub(1);
            let above = Some(range.values.end() + 1);
            for bad in [below, above].into_iter().flatten() {
                let e = parse(&format!("[cuda]\n{key} = {bad}\n"))
                    .unwrap_err()
                    .to_string();
                let allowed = format!("from {} to {}", range.values.start(), range.values.end());
                assert!(
                    e.contains("t.toml") && e.contains("[cuda]") && e.contains(key),
                    "{e}"
                );
                assert!(e.contains(&allowed) && e.contains(&bad.to_string()), "{e}");
            }
            // Not a whole number: serde names the key's type.
            let e = parse(&format!("[cuda]\n{key} = \"x\"\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("[cuda]") && e.contains("u32"), "{e}");
        }
        let e = parse("[cuda]\nmsm_sums_block = 100\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("msm_sums_block") && e.contains("a multiple of 32"),
            "{e}"
        );
    }

    #[test]
    fn bad_words_and_unknown_keys_are_refused_naming_what_is_allowed() {
        let e = parse("[cuda]\nmsm_planes_build = \"lazy\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("lazy")
                && e.contains("`eager`")
                && e.contains("`paid`")
                && e.contains("`never`"),
            "{e}"
        );
        // A knob of a deleted variant is an unknown key, named with the keys there are.
        let e = parse("[cuda]\nntt_path = \"passes\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ntt_path") && e.contains("ntt_tile_bits") && e.contains("window_bits"),
            "{e}"
        );
    }
}
