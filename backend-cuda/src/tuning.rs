//! Tuning overrides from the environment, for measurements (README lists them), read
//! once when a device is opened into one [`CudaTuning`] that every operation of the
//! backend reads. A value out of range or not a number makes the backend unavailable
//! with the reason, so that a sweep never measures the default under another name.
//! Each override is `None` when unset: the module that uses it owns its default.

use std::ops::RangeInclusive;

use crucible_core::{Error, Result};

pub use crate::programs::NvrtcPrograms;

/// One numeric override: its variable and the values it accepts.
struct Var {
    name: &'static str,
    range: RangeInclusive<u32>,
}

/// MSM window bits (msm/cost.rs), for plain bases and for the window planes.
const WINDOW_BITS: Var = Var {
    name: "CRUCIBLE_CUDA_WINDOW_BITS",
    range: 1..=22,
};
/// Sorted entries one thread sums in the MSM bucket sums (msm/layout.rs).
const MSM_CHUNK: Var = Var {
    name: "CRUCIBLE_CUDA_MSM_CHUNK",
    range: 1..=4096,
};
/// log2 of the buckets per segment of the MSM reduction (msm/layout.rs).
const MSM_SEG_BITS: Var = Var {
    name: "CRUCIBLE_CUDA_MSM_SEG_BITS",
    range: 0..=10,
};
/// The most window planes one MSM bases buffer gets (msm/planes.rs; 1: none).
const MSM_PLANES: Var = Var {
    name: "CRUCIBLE_CUDA_MSM_PLANES",
    range: 1..=256,
};
/// The witness-aware MSM (msm/ones.rs): 1 (the default) sums the scalars equal to 1
/// apart and runs Pippenger over the other nonzero ones; 0 runs every scalar through
/// Pippenger, as before, for A/B measurements.
const MSM_ONES: Var = Var {
    name: "CRUCIBLE_CUDA_MSM_ONES",
    range: 0..=1,
};
/// Chunks of sorted entries one thread of the batch-affine bucket sums runs at once
/// (`CRUCIBLE_CUDA_MSM_ACCUMULATE=affine`, msm/layout.rs).
const MSM_AFFINE_LANES: Var = Var {
    name: "CRUCIBLE_CUDA_MSM_AFFINE_LANES",
    range: 1..=256,
};
/// Threads a block of the XYZZ bucket sums (msm/reduce.rs): the sums are
/// register-bound, so another block size can fit another number of warps an SM.
const MSM_SUMS_BLOCK: Var = Var {
    name: "CRUCIBLE_CUDA_MSM_SUMS_BLOCK",
    range: 32..=1024,
};
/// Radix-2 stages per NTT pass (ntt.rs; the kernels go up to 4).
const NTT_PASS_STAGES: Var = Var {
    name: "CRUCIBLE_CUDA_NTT_PASS_STAGES",
    range: 1..=4,
};
/// The MSM reduction (msm/reduce.rs): `tree` or `levels`.
const MSM_REDUCE: &str = "CRUCIBLE_CUDA_MSM_REDUCE";
/// The names of the [`MsmReduce`]s.
const MSM_REDUCES: &[(&str, MsmReduce)] =
    &[("tree", MsmReduce::Tree), ("levels", MsmReduce::Levels)];
/// How the MSM sums its buckets (msm/reduce.rs): `xyzz` or `affine`.
const MSM_ACCUMULATE: &str = "CRUCIBLE_CUDA_MSM_ACCUMULATE";
/// The names of the [`MsmAccumulate`]s.
const MSM_ACCUMULATES: &[(&str, MsmAccumulate)] = &[
    ("xyzz", MsmAccumulate::Xyzz),
    ("affine", MsmAccumulate::Affine),
];
/// The MSM's fold of the carries (msm/reduce.rs): `tree` or `levels`.
const MSM_FOLD: &str = "CRUCIBLE_CUDA_MSM_FOLD";
/// The names of the [`MsmFold`]s.
const MSM_FOLDS: &[(&str, MsmFold)] = &[("tree", MsmFold::Tree), ("levels", MsmFold::Levels)];
/// How the witness-aware MSM sums its ones (msm/ones.rs): `overlap`, `groups` or `tree`.
const MSM_ONES_SUM: &str = "CRUCIBLE_CUDA_MSM_ONES_SUM";
/// The names of the [`OnesSum`]s.
const MSM_ONES_SUMS: &[(&str, OnesSum)] = &[
    ("overlap", OnesSum::Overlap),
    ("groups", OnesSum::Groups),
    ("tree", OnesSum::Tree),
];
/// Radix-2 stages per shared-memory NTT tile, log2 of its elements (ntt.rs; the
/// kernel's tile holds up to 2^10).
const NTT_TILE_BITS: Var = Var {
    name: "CRUCIBLE_CUDA_NTT_TILE_BITS",
    range: 4..=10,
};
/// Which NTT kernels run: `shared-e8`, `shared`, `shared-e2`, `shared-w`,
/// `shared-swap` or `passes` (ntt.rs).
const NTT: &str = "CRUCIBLE_CUDA_NTT";
/// The names of the [`NttPath`]s.
const NTT_PATHS: &[(&str, NttPath)] = &[
    ("shared-e8", NttPath::SharedE8),
    ("shared", NttPath::Shared),
    ("shared-e2", NttPath::SharedE2),
    ("shared-w", NttPath::SharedW),
    ("shared-swap", NttPath::SharedSwap),
    ("passes", NttPath::Passes),
];
/// MiB per pinned staging buffer (staging.rs), both directions.
const STAGING_MIB: Var = Var {
    name: "CRUCIBLE_CUDA_STAGING_MIB",
    range: 1..=256,
};
/// Upload staging buffers in cached rather than write-combined host memory (set or
/// not), to measure which the link and the host's conversion prefer.
const STAGING_CACHED: &str = "CRUCIBLE_CUDA_STAGING_CACHED";
/// `read_scalars` through the driver's pageable copy and a one-thread conversion, as
/// before the pinned read-back (set or not): the A/B baseline.
const PAGEABLE_READS: &str = "CRUCIBLE_CUDA_PAGEABLE_READS";
/// `read_scalars` destinations advised to huge pages (set or not): fewer first-touch
/// page faults, which cost more than the copy where memory is fresh.
const READ_HUGE_PAGES: &str = "CRUCIBLE_CUDA_READ_HUGE_PAGES";
/// Plain 64-bit C++ instead of inline-PTX carry chains, to tell a PTX fault from an
/// algorithmic one (set or not).
const PORTABLE_ARITH: &str = "CRUCIBLE_CUDA_PORTABLE_ARITH";
/// Extra NVRTC options, whitespace-separated (e.g. `-DCRU_G1_ACC_MIN_BLOCKS=0`).
const NVRTC_OPTIONS: &str = "CRUCIBLE_CUDA_NVRTC_OPTIONS";
/// Set: the kernels' CUBINs built into the binary are not used (embedded.rs).
const IGNORE_EMBEDDED: &str = "CRUCIBLE_CUDA_IGNORE_EMBEDDED";
/// How the kernels are split into NVRTC programs (kernels.rs): `split` or `one`.
const NVRTC_PROGRAMS: &str = "CRUCIBLE_CUDA_NVRTC_PROGRAMS";

/// When bases buffers build their window planes (msm/planes.rs): `eager`, `paid` or
/// `never`.
const MSM_PLANES_BUILD: &str = "CRUCIBLE_CUDA_MSM_PLANES_BUILD";

/// When a bases buffer's window planes are built (msm/planes.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanesBuild {
    /// When the bases are staged (every MSM over them runs on the planes).
    Eager,
    /// Once the MSMs over the staged bases have saved, by the cost model, what the
    /// planes cost to build (ski rental), before the MSM that gets there.
    Paid,
    /// Never: no room for planes either (as `CRUCIBLE_CUDA_MSM_PLANES=1`).
    Never,
}

/// How the CUDA NTT runs its radix-2 stages (`CRUCIBLE_CUDA_NTT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NttPath {
    /// `shared`: a few `ntt_tile_e4` launches of up to 10 stages each, through shared
    /// memory, the bit reversal fused into them.
    Shared,
    /// `shared-e8`: the launches of `shared` with `ntt_tile_e8` (eight elements a
    /// thread, rounds of three stages: a third fewer barriers and shared-memory round
    /// trips than e4, four independent products a stage, 16 warps an SM at 128
    /// registers); 8 % slower than e4 at 2^20 and 24 % at 2^24 on the H200, kept for
    /// A/B measurements.
    SharedE8,
    /// `shared-e2`: the launches of `shared` with `ntt_tile_e2` (tiles of up to 2^9,
    /// two elements a thread, one stage a round): fewer registers a thread, so more
    /// warps an SM (32 against 24), for one barrier a stage instead of one per two.
    SharedE2,
    /// `shared-w`: the fused plan's paired middle launch by `ntt_tile_e4`, the stages
    /// on each side of it in `ntt_tile_w` launches of up to six stages (a tile of 2^6
    /// a warp, shuffles between stages, no barrier: more warps an SM); three launches
    /// at 2^20, five at 2^24.
    SharedW,
    /// `shared-swap`: a bit-reversal pass, then `ntt_tile_e4` launches on the reversed
    /// data, one fewer at 2^20 (two, against three for `shared`), one more round trip
    /// at 2^24 (four against three).
    SharedSwap,
    /// `passes`: the bit reversal, then global-memory passes of a few stages each
    /// (`ntt_pass_r*`), as before the tiles; kept for A/B measurements.
    Passes,
}

/// How the MSM reduces each window's buckets (kernels/msm.cu steps 6-7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmReduce {
    /// Running sums over segments, then plain sums in blocks of shared memory, a whole
    /// tree in each launch (a few launches in all); the host applies the weights.
    Tree,
    /// Running sums over segments, then a pairwise tree, one level per launch.
    Levels,
}

/// How the MSM sums each chunk's sorted entries into buckets (kernels/msm.cu step 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmAccumulate {
    /// `msm_*_accumulate`: one chunk a thread, each entry a mixed addition into an XYZZ
    /// sum (madd-2008-s, 8 products and 2 squares).
    Xyzz,
    /// `msm_*_accumulate_affine`: lanes of chunks a thread, affine additions (2 products
    /// and a square) whose inversions the block shares by Montgomery's trick (3
    /// products each) and one inversion a round.
    Affine,
}

/// How the MSM sums the carries of buckets that span chunks (kernels/msm.cu step 5b).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmFold {
    /// One launch, the whole tree of each bucket's carries in it (`msm_*_fold_tree`),
    /// and no read-back of the longest span.
    Tree,
    /// A launch per tree level, as many as the longest span (read back after the bucket
    /// sums) needs, as before; kept for A/B measurements.
    Levels,
}

/// How the witness-aware MSM sums the bases of its ones (kernels/ones.cu step 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnesSum {
    /// As [`OnesSum::Groups`], on a stream of its own beside the rest's Pippenger.
    Overlap,
    /// As many leaves as the device holds at once, their trees stopped at groups whose
    /// sums the host adds, on the compute stream after the rest's Pippenger.
    Groups,
    /// 2^16 leaves (G1; 2^15 for G2) and one tree up to a single sum, as before; kept
    /// for A/B measurements.
    Tree,
}

/// Every tuning override of the CUDA backend, as read at open.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CudaTuning {
    /// `CRUCIBLE_CUDA_WINDOW_BITS`: the MSM window, 1 to 22.
    pub window_bits: Option<u32>,
    /// `CRUCIBLE_CUDA_MSM_CHUNK`: sorted entries per thread of the bucket sums.
    pub msm_chunk: Option<u32>,
    /// `CRUCIBLE_CUDA_MSM_SEG_BITS`: log2 buckets per reduction segment.
    pub msm_seg_bits: Option<u32>,
    /// `CRUCIBLE_CUDA_MSM_PLANES`: the most window planes a bases buffer gets.
    pub msm_planes: Option<u32>,
    /// `CRUCIBLE_CUDA_MSM_REDUCE`: the MSM reduction, `tree` or `levels`.
    pub msm_reduce: Option<MsmReduce>,
    /// `CRUCIBLE_CUDA_MSM_ONES`: 0 turns the witness-aware MSM off.
    pub msm_ones: Option<u32>,
    /// `CRUCIBLE_CUDA_MSM_FOLD`: the carries' fold, `tree` or `levels`.
    pub msm_fold: Option<MsmFold>,
    /// `CRUCIBLE_CUDA_MSM_ACCUMULATE`: the bucket sums, `xyzz` or `affine`.
    pub msm_accumulate: Option<MsmAccumulate>,
    /// `CRUCIBLE_CUDA_MSM_AFFINE_LANES`: chunks a thread of the `affine` bucket sums.
    pub msm_affine_lanes: Option<u32>,
    /// `CRUCIBLE_CUDA_MSM_SUMS_BLOCK`: threads a block of the XYZZ bucket sums.
    pub msm_sums_block: Option<u32>,
    /// `CRUCIBLE_CUDA_MSM_ONES_SUM`: the ones' sum, `overlap`, `groups` or `tree`.
    pub msm_ones_sum: Option<OnesSum>,
    /// `CRUCIBLE_CUDA_NTT_PASS_STAGES`: radix-2 stages per NTT pass.
    pub ntt_pass_stages: Option<u32>,
    /// `CRUCIBLE_CUDA_NTT`: which NTT kernels run.
    pub ntt_path: Option<NttPath>,
    /// `CRUCIBLE_CUDA_NTT_TILE_BITS`: stages (log2 elements) per shared-memory tile.
    pub ntt_tile_bits: Option<u32>,
    /// `CRUCIBLE_CUDA_STAGING_MIB`: MiB per pinned staging buffer.
    pub staging_mib: Option<u32>,
    /// `CRUCIBLE_CUDA_STAGING_CACHED` is set: upload buffers are not write-combined.
    pub staging_cached: bool,
    /// `CRUCIBLE_CUDA_PAGEABLE_READS` is set: read-backs skip the pinned buffers.
    pub pageable_reads: bool,
    /// `CRUCIBLE_CUDA_READ_HUGE_PAGES` is set: read-back vectors get huge pages.
    pub read_huge_pages: bool,
    /// `CRUCIBLE_CUDA_PORTABLE_ARITH` is set: the kernels use no inline PTX.
    pub portable_arith: bool,
    /// `CRUCIBLE_CUDA_NVRTC_OPTIONS`: extra compiler options (part of the cache key).
    pub nvrtc_options: Vec<String>,
    /// `CRUCIBLE_CUDA_NVRTC_PROGRAMS`: `split` or `one`.
    pub nvrtc_programs: Option<NvrtcPrograms>,
    /// `CRUCIBLE_CUDA_IGNORE_EMBEDDED` is set: the CUBINs built into the binary are
    /// not used (the disk cache or NVRTC instead: a cold compile's measurement).
    pub ignore_embedded: bool,
    /// `CRUCIBLE_CUDA_MSM_PLANES_BUILD`: `eager`, `paid` or `never`.
    pub msm_planes_build: Option<PlanesBuild>,
}

impl CudaTuning {
    /// Whether MSMs sum their 1-scalars apart (msm/ones.rs): unless
    /// `CRUCIBLE_CUDA_MSM_ONES=0`.
    pub fn msm_ones(&self) -> bool {
        self.msm_ones != Some(0)
    }

    /// The overrides in this process's environment.
    pub fn from_env() -> Result<CudaTuning> {
        CudaTuning::from_lookup(|name| std::env::var(name).ok())
    }

    /// The overrides `lookup` gives (a variable's text, if set).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<CudaTuning> {
        let number = |var: &Var| parse(var, lookup(var.name).as_deref());
        Ok(CudaTuning {
            window_bits: number(&WINDOW_BITS)?,
            msm_chunk: number(&MSM_CHUNK)?,
            msm_seg_bits: number(&MSM_SEG_BITS)?,
            msm_planes: number(&MSM_PLANES)?,
            msm_reduce: choice(MSM_REDUCE, lookup(MSM_REDUCE).as_deref(), MSM_REDUCES)?,
            msm_ones: number(&MSM_ONES)?,
            msm_fold: choice(MSM_FOLD, lookup(MSM_FOLD).as_deref(), MSM_FOLDS)?,
            msm_accumulate: choice(
                MSM_ACCUMULATE,
                lookup(MSM_ACCUMULATE).as_deref(),
                MSM_ACCUMULATES,
            )?,
            msm_affine_lanes: number(&MSM_AFFINE_LANES)?,
            msm_sums_block: number(&MSM_SUMS_BLOCK)?,
            msm_ones_sum: choice(MSM_ONES_SUM, lookup(MSM_ONES_SUM).as_deref(), MSM_ONES_SUMS)?,
            ntt_pass_stages: number(&NTT_PASS_STAGES)?,
            ntt_path: choice(NTT, lookup(NTT).as_deref(), NTT_PATHS)?,
            ntt_tile_bits: number(&NTT_TILE_BITS)?,
            staging_mib: number(&STAGING_MIB)?,
            staging_cached: lookup(STAGING_CACHED).is_some(),
            pageable_reads: lookup(PAGEABLE_READS).is_some(),
            read_huge_pages: lookup(READ_HUGE_PAGES).is_some(),
            portable_arith: lookup(PORTABLE_ARITH).is_some(),
            ignore_embedded: lookup(IGNORE_EMBEDDED).is_some(),
            nvrtc_options: lookup(NVRTC_OPTIONS)
                .map(|o| o.split_whitespace().map(String::from).collect())
                .unwrap_or_default(),
            nvrtc_programs: choice(
                NVRTC_PROGRAMS,
                lookup(NVRTC_PROGRAMS).as_deref(),
                &[("split", NvrtcPrograms::Split), ("one", NvrtcPrograms::One)],
            )?,
            msm_planes_build: choice(
                MSM_PLANES_BUILD,
                lookup(MSM_PLANES_BUILD).as_deref(),
                &[
                    ("eager", PlanesBuild::Eager),
                    ("paid", PlanesBuild::Paid),
                    ("never", PlanesBuild::Never),
                ],
            )?,
        })
    }
}

/// `value` (the variable's text, if set) as one of `choices`, by name.
fn choice<T: Copy>(name: &str, value: Option<&str>, choices: &[(&str, T)]) -> Result<Option<T>> {
    let Some(value) = value else {
        return Ok(None);
    };
    match choices.iter().find(|(word, _)| *word == value.trim()) {
        Some((_, v)) => Ok(Some(*v)),
        None => Err(Error::InvalidInput(format!(
            "{name}={value:?}: expected one of {} (a tuning override; unset it for the default)",
            choices
                .iter()
                .map(|(word, _)| *word)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// `value` (the variable's text, if set) as an override within `var`'s range.
fn parse(var: &Var, value: Option<&str>) -> Result<Option<u32>> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.trim().parse::<u32>() {
        Ok(v) if var.range.contains(&v) => Ok(Some(v)),
        _ => Err(Error::InvalidInput(format!(
            "{}={value:?}: expected a whole number from {} to {} (a tuning override; unset it for the default)",
            var.name,
            var.range.start(),
            var.range.end()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NUMBERS: [&Var; 10] = [
        &WINDOW_BITS,
        &MSM_CHUNK,
        &MSM_AFFINE_LANES,
        &MSM_SUMS_BLOCK,
        &MSM_SEG_BITS,
        &MSM_PLANES,
        &MSM_ONES,
        &NTT_PASS_STAGES,
        &NTT_TILE_BITS,
        &STAGING_MIB,
    ];

    #[test]
    fn the_ntt_path_is_one_of_six_names() {
        let ntt_path = |value| choice(NTT, value, NTT_PATHS);
        assert_eq!(ntt_path(None).unwrap(), None);
        assert_eq!(ntt_path(Some(" shared")).unwrap(), Some(NttPath::Shared));
        assert_eq!(ntt_path(Some("passes")).unwrap(), Some(NttPath::Passes));
        assert_eq!(
            ntt_path(Some("shared-swap")).unwrap(),
            Some(NttPath::SharedSwap)
        );
        assert_eq!(
            ntt_path(Some("shared-e2")).unwrap(),
            Some(NttPath::SharedE2)
        );
        assert_eq!(
            ntt_path(Some("shared-e8")).unwrap(),
            Some(NttPath::SharedE8)
        );
        assert_eq!(ntt_path(Some("shared-w")).unwrap(), Some(NttPath::SharedW));
        for bad in ["", "Shared", "tiles"] {
            let err = ntt_path(Some(bad)).unwrap_err().to_string();
            assert!(err.contains(NTT) && err.contains("shared-swap"), "{err}");
        }
    }

    #[test]
    fn overrides_parse_within_their_range_and_name_themselves_when_wrong() {
        for var in NUMBERS {
            assert_eq!(parse(var, None).unwrap(), None);
            for v in [*var.range.start(), *var.range.end()] {
                assert_eq!(parse(var, Some(&format!(" {v} "))).unwrap(), Some(v));
            }
            let below = var.range.start().checked_sub(1).map(|v| v.to_string());
            let above = (var.range.end() + 1).to_string();
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
                let err = parse(var, Some(bad)).unwrap_err().to_string();
                assert!(
                    err.contains(var.name) && err.contains("tuning override"),
                    "{err}"
                );
            }
        }
    }

    /// An environment of one variable.
    fn env_owned(name: &'static str, value: &'static str) -> impl Fn(&str) -> Option<String> {
        move |asked: &str| (asked == name).then(|| value.to_string())
    }

    #[test]
    fn every_variable_lands_in_its_field_and_one_bad_value_refuses_them_all() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            CudaTuning::from_lookup(env(&[])).unwrap(),
            CudaTuning::default()
        );
        let tuning = CudaTuning::from_lookup(env(&[
            ("CRUCIBLE_CUDA_WINDOW_BITS", "18"),
            ("CRUCIBLE_CUDA_MSM_CHUNK", "128"),
            ("CRUCIBLE_CUDA_MSM_SEG_BITS", "3"),
            ("CRUCIBLE_CUDA_MSM_PLANES", "1"),
            ("CRUCIBLE_CUDA_MSM_REDUCE", " levels "),
            ("CRUCIBLE_CUDA_MSM_ONES", "0"),
            ("CRUCIBLE_CUDA_MSM_FOLD", "levels"),
            ("CRUCIBLE_CUDA_MSM_ACCUMULATE", " affine"),
            ("CRUCIBLE_CUDA_MSM_AFFINE_LANES", "32"),
            ("CRUCIBLE_CUDA_MSM_SUMS_BLOCK", "64"),
            ("CRUCIBLE_CUDA_MSM_ONES_SUM", " tree"),
            ("CRUCIBLE_CUDA_NTT_PASS_STAGES", "4"),
            ("CRUCIBLE_CUDA_NTT", "passes"),
            ("CRUCIBLE_CUDA_NTT_TILE_BITS", "8"),
            ("CRUCIBLE_CUDA_STAGING_MIB", "16"),
            ("CRUCIBLE_CUDA_STAGING_CACHED", ""),
            ("CRUCIBLE_CUDA_PAGEABLE_READS", "1"),
            ("CRUCIBLE_CUDA_READ_HUGE_PAGES", "1"),
            ("CRUCIBLE_CUDA_PORTABLE_ARITH", ""),
            ("CRUCIBLE_CUDA_NVRTC_OPTIONS", " -DA=1  -DB "),
            ("CRUCIBLE_CUDA_NVRTC_PROGRAMS", "one"),
            ("CRUCIBLE_CUDA_MSM_PLANES_BUILD", " never "),
            ("CRUCIBLE_CUDA_IGNORE_EMBEDDED", "1"),
        ]))
        .unwrap();
        assert_eq!(
            tuning,
            CudaTuning {
                window_bits: Some(18),
                msm_chunk: Some(128),
                msm_seg_bits: Some(3),
                msm_planes: Some(1),
                msm_reduce: Some(MsmReduce::Levels),
                msm_ones: Some(0),
                msm_fold: Some(MsmFold::Levels),
                msm_accumulate: Some(MsmAccumulate::Affine),
                msm_affine_lanes: Some(32),
                msm_sums_block: Some(64),
                msm_ones_sum: Some(OnesSum::Tree),
                ntt_pass_stages: Some(4),
                ntt_path: Some(NttPath::Passes),
                ntt_tile_bits: Some(8),
                staging_mib: Some(16),
                staging_cached: true,
                pageable_reads: true,
                read_huge_pages: true,
                portable_arith: true,
                nvrtc_options: vec!["-DA=1".into(), "-DB".into()],
                nvrtc_programs: Some(NvrtcPrograms::One),
                ignore_embedded: true,
                msm_planes_build: Some(PlanesBuild::Never),
            }
        );
        assert!(!tuning.msm_ones() && CudaTuning::default().msm_ones());
        for (word, policy) in [("eager", PlanesBuild::Eager), ("paid", PlanesBuild::Paid)] {
            let tuning =
                CudaTuning::from_lookup(env_owned("CRUCIBLE_CUDA_MSM_PLANES_BUILD", word)).unwrap();
            assert_eq!(tuning.msm_planes_build, Some(policy));
        }
        let bad = CudaTuning::from_lookup(env_owned("CRUCIBLE_CUDA_MSM_PLANES_BUILD", "lazy"));
        let err = bad.unwrap_err().to_string();
        assert!(err.contains("eager, paid, never"), "{err}");
        let bad = CudaTuning::from_lookup(env(&[("CRUCIBLE_CUDA_NVRTC_PROGRAMS", "two")]));
        let err = bad.unwrap_err().to_string();
        assert!(
            err.contains("CRUCIBLE_CUDA_NVRTC_PROGRAMS") && err.contains("split, one"),
            "{err}"
        );
        let bad = CudaTuning::from_lookup(env(&[
            ("CRUCIBLE_CUDA_WINDOW_BITS", "18"),
            ("CRUCIBLE_CUDA_MSM_SEG_BITS", "11"),
        ]));
        assert!(bad
            .unwrap_err()
            .to_string()
            .contains("CRUCIBLE_CUDA_MSM_SEG_BITS"));
        let reduction = |value| choice(MSM_REDUCE, value, MSM_REDUCES);
        for (value, want) in [("tree", MsmReduce::Tree), ("levels", MsmReduce::Levels)] {
            assert_eq!(reduction(Some(value)).unwrap(), Some(want));
        }
        for (var, choices, names) in [
            (
                MSM_FOLD,
                MSM_FOLDS.iter().map(|c| c.0).collect::<Vec<_>>(),
                "tree, levels",
            ),
            (
                MSM_ONES_SUM,
                MSM_ONES_SUMS.iter().map(|c| c.0).collect(),
                "overlap, groups, tree",
            ),
            (
                MSM_ACCUMULATE,
                MSM_ACCUMULATES.iter().map(|c| c.0).collect(),
                "xyzz, affine",
            ),
        ] {
            let err = CudaTuning::from_lookup(env_owned(var, "other"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(var) && err.contains(names),
                "{err} {choices:?}"
            );
        }
        let err = reduction(Some("pairs")).unwrap_err().to_string();
        assert!(
            err.contains("CRUCIBLE_CUDA_MSM_REDUCE") && err.contains("tree, levels"),
            "{err}"
        );
    }
}
