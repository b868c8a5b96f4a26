//! The backend's tuning: the `[wgpu]` table of the tuning file
//! ([`crucible_core::tuning_file`]), read into one [`WgpuTuning`] when adapters are
//! probed. Every key is optional; a key left out takes the default of the adapter's
//! class ([`AdapterClass`]: software or hardware, with or without 64-bit integers in
//! shaders), resolved into a [`Tuned`] when the adapter is opened. A value out of range
//! is an error that names the key and what it allows, and the probe reports the
//! backend unavailable with it.

use crucible_core::tuning_file::TuningFile;
use crucible_core::{Error, Result};
use serde::Deserialize;

use crate::wgsl::field_code::LimbBits;
use crate::wgsl::{Formulas, NttMul, PerCurve};

/// The table's name in the tuning file.
pub const TABLE: &str = "wgpu";

/// MiB of each upload buffer by default: the first piece's conversion, which nothing
/// overlaps, stays near a millisecond, and a piece costs one submission.
pub const DEFAULT_UPLOAD_MIB: u64 = 16;

/// The upload buffers' sizes allowed, in MiB.
const UPLOAD_MIB: std::ops::RangeInclusive<u64> = 1..=1024;

/// The MSM windows allowed, in bits (signed digits: 2^(c−1) + 1 buckets a window).
pub const MSM_WINDOW_BITS: std::ops::RangeInclusive<u32> = 2..=16;

/// The `[wgpu]` table of the tuning file: `None` for a key left out (the adapter
/// class's default).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WgpuTuning {
    /// The device's memory (`"8GiB"`, the grammar of `--memory-limit`), for adapters
    /// whose memory wgpu cannot report. Default: the Vulkan device-local heap, else
    /// the adapter's largest buffer capped at 4 GiB.
    pub memory: Option<String>,
    /// MiB of each of the two upload buffers staging goes through, 1 to 1024; 16 by
    /// default.
    pub upload_mib: Option<u64>,
    /// G1's formulas: `straight` (hardware default) or `interpreted` (software
    /// default).
    pub g1_formulas: Option<Formulas>,
    /// G2's formulas: `registers` (hardware default) or `interpreted` (software
    /// default).
    pub g2_formulas: Option<Formulas>,
    /// The Fq limb width of both curves' non-interpreted formulas, 12 to 16 bits, or 17
    /// to 32 where the adapter has 64-bit integers. Default: 28 bits for G1 and 32 for
    /// G2 with 64-bit integers, else 15 for both.
    pub limb_bits: Option<u32>,
    /// The NTT's Fr product: `loop` (software default), `wide` (hardware with 64-bit
    /// integers) or `unrolled` (hardware without).
    pub ntt_mul: Option<NttMul>,
    /// A fixed MSM window in bits, 2 to 16, instead of the cost model's choice.
    pub msm_window_bits: Option<u32>,
    /// Times every MSM and NTT dispatch on the GPU (timestamp queries, where the
    /// adapter has them) and prints a table per operation to stderr; off by default.
    pub profile: Option<bool>,
    /// Saves compiled pipelines under the cache folder (`$CRUCIBLE_CACHE_DIR/wgpu`);
    /// on by default.
    pub pipeline_cache: Option<bool>,
}

/// What the defaults depend on: the kind of adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdapterClass {
    /// A software adapter (llvmpipe): wgpu's `DeviceType::Cpu`.
    pub software: bool,
    /// The adapter offers 64-bit integers in shaders (`SHADER_INT64`).
    pub int64: bool,
}

/// A [`WgpuTuning`] resolved for one adapter: every choice made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuned {
    /// The device memory in bytes the tuning gives, if it does.
    pub memory_bytes: Option<u64>,
    /// MiB of each upload buffer.
    pub upload_mib: u64,
    /// Each curve's formulas.
    pub formulas: PerCurve<Formulas>,
    /// Each curve's Fq limb width.
    pub limbs: PerCurve<LimbBits>,
    /// The NTT's Fr product.
    pub ntt_mul: NttMul,
    /// A fixed MSM window, if any.
    pub msm_window_bits: Option<u32>,
    /// Whether dispatches are timed.
    pub profile: bool,
    /// Whether compiled pipelines are saved.
    pub pipeline_cache: bool,
}

impl Tuned {
    /// Every default of `class`, nothing overridden.
    pub fn defaults(class: AdapterClass) -> Tuned {
        let (formulas, limbs, ntt_mul) = (
            PerCurve::for_adapter(class.software),
            PerCurve::default_for(class.int64),
            NttMul::for_adapter(class.software, class.int64),
        );
        Tuned {
            memory_bytes: None,
            upload_mib: DEFAULT_UPLOAD_MIB,
            formulas,
            limbs,
            ntt_mul,
            msm_window_bits: None,
            profile: false,
            pipeline_cache: true,
        }
    }
}

/// The allowed forms of each curve: those some class of adapter uses by default.
const G1_FORMS: [Formulas; 2] = [Formulas::Straight, Formulas::Interpreted];
const G2_FORMS: [Formulas; 2] = [Formulas::Registers, Formulas::Interpreted];

fn names(forms: &[Formulas]) -> String {
    forms
        .iter()
        .map(|f| format!("`{}`", f.name()))
        .collect::<Vec<_>>()
        .join(" or ")
}

impl WgpuTuning {
    /// The `[wgpu]` table of `file`, checked ([`WgpuTuning::check`]).
    pub fn from_file(file: &TuningFile) -> Result<WgpuTuning> {
        let tuning: WgpuTuning = file.section(TABLE)?;
        tuning.check(file)?;
        Ok(tuning)
    }

    /// Refuses a value out of range whatever the adapter; `file` names the file in the
    /// error.
    pub fn check(&self, file: &TuningFile) -> Result<()> {
        let invalid = |key: &str, problem: String| Err(file.invalid(TABLE, key, &problem));
        if let Some(memory) = &self.memory {
            if let Err(e) = crucible_core::parse_byte_size(memory) {
                return invalid(
                    "memory",
                    format!("`{memory}`: {}; write a size such as \"8GiB\"", e.root()),
                );
            }
        }
        if let Some(mib) = self.upload_mib {
            if !UPLOAD_MIB.contains(&mib) {
                return invalid(
                    "upload_mib",
                    format!(
                        "{mib}: allowed a whole number of MiB from {} to {}",
                        UPLOAD_MIB.start(),
                        UPLOAD_MIB.end()
                    ),
                );
            }
        }
        for (key, form, allowed) in [
            ("g1_formulas", self.g1_formulas, &G1_FORMS),
            ("g2_formulas", self.g2_formulas, &G2_FORMS),
        ] {
            if let Some(form) = form.filter(|f| !allowed.contains(f)) {
                return invalid(
                    key,
                    format!("`{}`: allowed {}", form.name(), names(allowed)),
                );
            }
        }
        if let Some(bits) = self.limb_bits {
            if LimbBits::new(bits).is_none() {
                return invalid(
                    "limb_bits",
                    format!(
                        "{bits}: allowed {} to {} bits ({} to {} without 64-bit integers)",
                        LimbBits::RANGE.start(),
                        LimbBits::RANGE.end(),
                        LimbBits::RANGE_U32.start(),
                        LimbBits::RANGE_U32.end()
                    ),
                );
            }
        }
        if let Some(bits) = self.msm_window_bits {
            if !MSM_WINDOW_BITS.contains(&bits) {
                return invalid(
                    "msm_window_bits",
                    format!(
                        "{bits}: allowed {} to {} bits",
                        MSM_WINDOW_BITS.start(),
                        MSM_WINDOW_BITS.end()
                    ),
                );
            }
        }
        Ok(())
    }

    /// The choices on an adapter of `class`: what the table sets, the class's defaults
    /// for the rest. Refuses what the adapter cannot run (limbs or a product that need
    /// 64-bit integers on an adapter without them).
    pub fn resolve(&self, class: AdapterClass, file: &TuningFile) -> Result<Tuned> {
        self.check(file)?;
        let defaults = Tuned::defaults(class);
        let limbs = match self.limb_bits.and_then(LimbBits::new) {
            Some(l) => PerCurve::both(l),
            None => defaults.limbs,
        };
        let no_int64 = |key: &str, value: String, allowed: String| -> Error {
            file.invalid(
                TABLE,
                key,
                &format!(
                    "{value} needs 64-bit integers in shaders (SHADER_INT64), which this \
                     adapter does not offer; allowed here: {allowed}"
                ),
            )
        };
        if limbs.need_int64() && !class.int64 {
            return Err(no_int64(
                "limb_bits",
                limbs.g1.bits().to_string(),
                format!(
                    "{} to {}",
                    LimbBits::RANGE_U32.start(),
                    LimbBits::RANGE_U32.end()
                ),
            ));
        }
        let ntt_mul = self.ntt_mul.unwrap_or(defaults.ntt_mul);
        if ntt_mul == NttMul::Wide && !class.int64 {
            return Err(no_int64(
                "ntt_mul",
                "`wide`".into(),
                "`loop` or `unrolled`".into(),
            ));
        }
        Ok(Tuned {
            memory_bytes: self
                .memory
                .as_deref()
                .map(crucible_core::parse_byte_size)
                .transpose()?,
            upload_mib: self.upload_mib.unwrap_or(defaults.upload_mib),
            formulas: PerCurve {
                g1: self.g1_formulas.unwrap_or(defaults.formulas.g1),
                g2: self.g2_formulas.unwrap_or(defaults.formulas.g2),
            },
            limbs,
            ntt_mul,
            msm_window_bits: self.msm_window_bits,
            profile: self.profile.unwrap_or(defaults.profile),
            pipeline_cache: self.pipeline_cache.unwrap_or(defaults.pipeline_cache),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOFTWARE: AdapterClass = AdapterClass {
        software: true,
        int64: false,
    };
    const HARDWARE: AdapterClass = AdapterClass {
        software: false,
        int64: false,
    };
    const HARDWARE_INT64: AdapterClass = AdapterClass {
        software: false,
        int64: true,
    };

    fn file(text: &str) -> TuningFile {
        TuningFile::parse(text, Some("t.toml".into())).expect("valid TOML")
    }

    #[test]
    fn every_key_parses_and_overrides_the_default() {
        let file = file(
            "[wgpu]\nmemory = \"8GiB\"\nupload_mib = 32\ng1_formulas = \"interpreted\"\n\
             g2_formulas = \"interpreted\"\nlimb_bits = 13\nntt_mul = \"unrolled\"\n\
             msm_window_bits = 12\nprofile = true\npipeline_cache = false\n",
        );
        let tuning = WgpuTuning::from_file(&file).expect("valid table");
        let tuned = tuning.resolve(HARDWARE_INT64, &file).expect("resolves");
        assert_eq!(
            tuned,
            Tuned {
                memory_bytes: Some(8 << 30),
                upload_mib: 32,
                formulas: PerCurve::both(Formulas::Interpreted),
                limbs: PerCurve::both(LimbBits::new(13).unwrap()),
                ntt_mul: NttMul::Unrolled,
                msm_window_bits: Some(12),
                profile: true,
                pipeline_cache: false,
            }
        );
        // No table: the defaults.
        let none = WgpuTuning::from_file(&TuningFile::none()).expect("no file");
        assert_eq!(none, WgpuTuning::default());
    }

    #[test]
    fn defaults_follow_the_adapter_class() {
        let none = TuningFile::none();
        let tuned = |class| WgpuTuning::default().resolve(class, &none).unwrap();
        let software = tuned(SOFTWARE);
        assert_eq!(software.formulas, PerCurve::both(Formulas::Interpreted));
        assert_eq!(software.ntt_mul, NttMul::Loop);
        assert_eq!(software.limbs, PerCurve::both(LimbBits::DEFAULT));
        let hardware = tuned(HARDWARE);
        assert_eq!(
            hardware.formulas,
            PerCurve {
                g1: Formulas::Straight,
                g2: Formulas::Registers
            }
        );
        assert_eq!(hardware.ntt_mul, NttMul::Unrolled);
        assert_eq!(hardware.limbs, PerCurve::both(LimbBits::DEFAULT));
        let wide = tuned(HARDWARE_INT64);
        assert_eq!(wide.formulas, hardware.formulas);
        assert_eq!(wide.ntt_mul, NttMul::Wide);
        assert_eq!(
            wide.limbs,
            PerCurve {
                g1: LimbBits::DEFAULT_INT64_G1,
                g2: LimbBits::DEFAULT_INT64_G2
            }
        );
        for t in [software, hardware, wide] {
            assert_eq!(
                (t.upload_mib, t.profile, t.pipeline_cache, t.memory_bytes),
                (DEFAULT_UPLOAD_MIB, false, true, None)
            );
            assert_eq!(t.msm_window_bits, None);
        }
    }

    /// The error of `text`'s table: from parsing, checking or resolving on `class`.
    fn error(text: &str, class: AdapterClass) -> String {
        let file = file(text);
        let result = WgpuTuning::from_file(&file).and_then(|t| t.resolve(class, &file));
        match result {
            Ok(t) => panic!("{text}: accepted as {t:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn bad_keys_and_values_are_refused_naming_the_key_and_the_allowed_values() {
        let cases: &[(&str, AdapterClass, &[&str])] = &[
            (
                "window_bits = 12",
                HARDWARE,
                &["window_bits", "msm_window_bits"],
            ),
            (
                "msm_window_bits = 17",
                HARDWARE,
                &["msm_window_bits", "2 to 16"],
            ),
            (
                "msm_window_bits = 1",
                HARDWARE,
                &["msm_window_bits", "2 to 16"],
            ),
            ("upload_mib = 0", HARDWARE, &["upload_mib", "1 to 1024"]),
            ("memory = \"lots\"", HARDWARE, &["memory", "lots"]),
            (
                "g1_formulas = \"registers\"",
                HARDWARE,
                &["g1_formulas", "`straight` or `interpreted`"],
            ),
            (
                "g2_formulas = \"straight\"",
                HARDWARE,
                &["g2_formulas", "`registers` or `interpreted`"],
            ),
            (
                "g1_formulas = \"fast\"",
                HARDWARE,
                &["fast", "straight", "interpreted"],
            ),
            ("limb_bits = 40", HARDWARE, &["limb_bits", "12 to 32"]),
            (
                "limb_bits = 28",
                HARDWARE,
                &["limb_bits", "SHADER_INT64", "12 to 16"],
            ),
            (
                "ntt_mul = \"wide\"",
                SOFTWARE,
                &["ntt_mul", "SHADER_INT64", "`loop` or `unrolled`"],
            ),
            (
                "ntt_mul = \"radix2\"",
                HARDWARE,
                &["radix2", "loop", "unrolled", "wide"],
            ),
            // A type error names the type (the TOML parser does not say which key).
            ("profile = 1", HARDWARE, &["boolean", "1"]),
        ];
        for (line, class, wanted) in cases {
            let e = error(&format!("[wgpu]\n{line}\n"), *class);
            assert!(e.contains("t.toml") && e.contains("[wgpu]"), "{line}: {e}");
            for w in *wanted {
                assert!(e.contains(w), "{line}: `{w}` missing from: {e}");
            }
        }
        // Wide limbs and products where the adapter has 64-bit integers.
        let file = file("[wgpu]\nlimb_bits = 28\nntt_mul = \"wide\"\n");
        let tuned = WgpuTuning::from_file(&file)
            .and_then(|t| t.resolve(HARDWARE_INT64, &file))
            .expect("int64 adapter");
        assert_eq!(tuned.limbs, PerCurve::both(LimbBits::new(28).unwrap()));
    }
}
