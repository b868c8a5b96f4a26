//! The shader modules and the assembly of their WGSL source from shaders/*.wgsl.

use crate::field::{fq_wgsl, wgsl_constants, wgsl_programs, Program};
use crate::fq_code::LimbBits;
use crate::straight::{wgsl_formulas, wgsl_msm_curve, wgsl_test_entries};

/// Threads per workgroup in every kernel (`@workgroup_size(64)` in the shaders).
pub const WORKGROUP: u32 = 64;

/// Environment variable choosing the form of the Fq2 and curve formulas:
/// `straight` or `interpreted` (see [`Formulas`]); unset or empty, by adapter type.
pub const FORMULAS_ENV: &str = "CRUCIBLE_WGPU_FORMULAS";

/// Environment variable choosing the straight-line form's Fq limb width in bits
/// (12 to 16, see [`LimbBits`]); unset or empty, [`LimbBits::DEFAULT`].
pub const LIMB_BITS_ENV: &str = "CRUCIBLE_WGPU_LIMB_BITS";

/// How the shaders run the Fq2 and curve formulas (field.rs's programs); both forms
/// come from the same instruction list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Formulas {
    /// Straight-line WGSL on values, one function per formula over loop-free Fq code
    /// (straight.rs, fq_code.rs): points and intermediates can stay in registers, but
    /// llvmpipe takes minutes to compile the MSM with them. Opt-in until measured on
    /// hardware.
    Straight,
    /// One interpreter loop over the formulas as data: one inlined copy of each Fq
    /// operation, so it compiles in seconds everywhere, and runs far slower. The
    /// default.
    Interpreted,
}

impl Formulas {
    /// The default for an adapter: the interpreter, on software and hardware alike
    /// for now. The straight-line form on values has passed the formula tests on
    /// llvmpipe (its full MSM takes llvmpipe too long to compile) and has not yet run
    /// or been timed on a hardware adapter, so it is opt-in (`straight`) until an H200
    /// run shows it correct and faster; then hardware adapters switch to it here.
    pub fn for_adapter(_software: bool) -> Formulas {
        Formulas::Interpreted
    }

    /// Parses [`FORMULAS_ENV`]'s value (`straight` or `interpreted`, any case).
    pub fn parse(s: &str) -> Option<Formulas> {
        match s.trim().to_ascii_lowercase().as_str() {
            "straight" => Some(Formulas::Straight),
            "interpreted" => Some(Formulas::Interpreted),
            _ => None,
        }
    }

    /// The name [`Formulas::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            Formulas::Straight => "straight",
            Formulas::Interpreted => "interpreted",
        }
    }
}

/// A shader module: which WGSL files and generated pieces it is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Module {
    /// NTT stages and pointwise ops over Fr, the workgroup path's products by
    /// fr.wgsl's loop.
    Ntt,
    /// The same kernels, the workgroup path's products unrolled (fr_code.rs).
    NttUnrolled,
    /// MSM scalar conversion and counting sort.
    MsmSort,
    /// MSM bucket accumulation and reduction, G1 and G2, through the interpreter.
    MsmBuckets,
    /// The same kernels in straight-line form over G1 (shaders/msm_values.wgsl).
    MsmG1,
    /// The same kernels in straight-line form over G2.
    MsmG2,
    /// Test entry point for Fr.
    FrTest,
    /// Test entry point for the interpreter's programs (Fq, Fq2, G1, G2).
    ProgramTest,
    /// Test entry points of the straight-line formulas (`program_op_<name>`).
    FormulaTest,
}

/// One piece of a module's source.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The 16-bit field constants (FR_P, FQ_P, ...) of fr.wgsl's code.
    FieldConstants,
    /// A shader file.
    Wgsl(&'static str),
    /// Fq's field code (made from fr.wgsl by [`fq_wgsl`]).
    Fq,
    /// The interpreter and its programs.
    Interpreter,
    /// The loop-free Fq code, the value types and these programs' straight-line
    /// functions (straight.rs).
    Formulas(&'static [Program]),
    /// The curve head of a straight-line MSM module, by its addition program.
    MsmCurve(Program),
    /// The straight-line test entry points.
    FormulaTests,
    /// Fr's product without loops, for the NTT (fr_code.rs).
    FrMulUnrolled,
}

const FR: &str = include_str!("../shaders/fr.wgsl");
const PROGRAM: &str = include_str!("../shaders/program.wgsl");
const INTERPRETER: &str = include_str!("../shaders/interpreter.wgsl");
const NTT: &str = include_str!("../shaders/ntt.wgsl");
const NTT_MUL_LOOP: &str = include_str!("../shaders/ntt_mul_loop.wgsl");
const NTT_MUL_UNROLLED: &str = include_str!("../shaders/ntt_mul_unrolled.wgsl");
const MSM_COMMON: &str = include_str!("../shaders/msm_common.wgsl");
const MSM_SORT: &str = include_str!("../shaders/msm_sort.wgsl");
const MSM: &str = include_str!("../shaders/msm.wgsl");
const MSM_VALUES: &str = include_str!("../shaders/msm_values.wgsl");
const FR_TEST: &str = include_str!("../shaders/fr_test.wgsl");
const PROGRAM_TEST_PARAMS: &str = include_str!("../shaders/program_test_params.wgsl");
const PROGRAM_TEST: &str = include_str!("../shaders/program_test.wgsl");

/// The formulas the straight-line test entry points run.
const TESTED_FORMULAS: &[Program] = &[
    Program::Fq2Add,
    Program::Fq2Sub,
    Program::Fq2Mul,
    Program::G1Add,
    Program::G2Add,
];

impl Module {
    /// Every module, in the order of [`Module::index`].
    pub const ALL: [Module; 9] = [
        Module::Ntt,
        Module::NttUnrolled,
        Module::MsmSort,
        Module::MsmBuckets,
        Module::MsmG1,
        Module::MsmG2,
        Module::FrTest,
        Module::ProgramTest,
        Module::FormulaTest,
    ];

    /// The module's pieces in order.
    fn parts(self) -> &'static [Part] {
        use Part::*;
        match self {
            Module::Ntt => &[FieldConstants, Wgsl(FR), Wgsl(NTT_MUL_LOOP), Wgsl(NTT)],
            Module::NttUnrolled => &[
                FieldConstants,
                Wgsl(FR),
                FrMulUnrolled,
                Wgsl(NTT_MUL_UNROLLED),
                Wgsl(NTT),
            ],
            Module::MsmSort => &[FieldConstants, Wgsl(FR), Wgsl(MSM_COMMON), Wgsl(MSM_SORT)],
            Module::MsmBuckets => &[
                FieldConstants,
                Fq,
                Wgsl(PROGRAM),
                Interpreter,
                Wgsl(MSM_COMMON),
                Wgsl(MSM),
            ],
            Module::MsmG1 => &[
                Formulas(&[Program::G1Add]),
                MsmCurve(Program::G1Add),
                Wgsl(MSM_COMMON),
                Wgsl(MSM_VALUES),
            ],
            Module::MsmG2 => &[
                Formulas(&[Program::G2Add]),
                MsmCurve(Program::G2Add),
                Wgsl(MSM_COMMON),
                Wgsl(MSM_VALUES),
            ],
            Module::FrTest => &[FieldConstants, Wgsl(FR), Wgsl(FR_TEST)],
            Module::ProgramTest => &[
                FieldConstants,
                Fq,
                Wgsl(PROGRAM),
                Interpreter,
                Wgsl(PROGRAM_TEST_PARAMS),
                Wgsl(PROGRAM_TEST),
            ],
            Module::FormulaTest => &[
                Formulas(TESTED_FORMULAS),
                Wgsl(PROGRAM_TEST_PARAMS),
                FormulaTests,
            ],
        }
    }

    /// The module's position in [`Module::ALL`]: a slot in a per-module table.
    pub fn index(self) -> usize {
        Module::ALL.iter().position(|m| *m == self).unwrap_or(0)
    }

    /// The module's full WGSL source; straight-line Fq code over `limbs`-bit limbs.
    pub fn source(self, limbs: LimbBits) -> String {
        let mut s = String::new();
        for part in self.parts() {
            if !s.is_empty() {
                s.push('\n');
            }
            match *part {
                Part::FieldConstants => s.push_str(&wgsl_constants()),
                Part::Wgsl(text) => s.push_str(text),
                Part::Fq => s.push_str(&fq_wgsl(FR)),
                Part::Interpreter => {
                    s.push_str(&wgsl_programs());
                    s.push('\n');
                    s.push_str(INTERPRETER);
                }
                Part::Formulas(programs) => s.push_str(&wgsl_formulas(limbs, programs)),
                Part::MsmCurve(add) => s.push_str(&wgsl_msm_curve(add)),
                Part::FormulaTests => s.push_str(&wgsl_test_entries()),
                Part::FrMulUnrolled => s.push_str(&crate::fr_code::wgsl_fr_mul_unrolled()),
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validate(module: Module, limbs: LimbBits) -> naga::Module {
        let source = module.source(limbs);
        let at = format!("{module:?} ({} bits)", limbs.bits());
        let parsed = naga::front::wgsl::parse_str(&source).unwrap_or_else(|e| {
            panic!(
                "{at}: {}",
                e.emit_to_string_with_path(&source, "module.wgsl")
            )
        });
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&parsed)
        .unwrap_or_else(|e| {
            panic!(
                "{at}: {}",
                e.emit_to_string_with_path(&source, "module.wgsl")
            )
        });
        parsed
    }

    fn entries(module: &naga::Module) -> Vec<&str> {
        module
            .entry_points
            .iter()
            .map(|e| e.name.as_str())
            .collect()
    }

    /// Every module is valid WGSL as wgpu's own front end and validator see it (what
    /// `create_shader_module` checks), without a device; the straight-line ones for
    /// every limb width.
    #[test]
    fn every_module_parses_and_validates() {
        for module in Module::ALL {
            let straight = module
                .parts()
                .iter()
                .any(|p| matches!(p, Part::Formulas(_)));
            let widths: Vec<u32> = if straight {
                LimbBits::RANGE.collect()
            } else {
                vec![LimbBits::DEFAULT.bits()]
            };
            for bits in widths {
                let parsed = validate(module, LimbBits::new(bits).expect("in range"));
                let names = entries(&parsed);
                match module {
                    Module::ProgramTest => assert_eq!(names, ["program_op"]),
                    Module::FormulaTest => {
                        for p in Program::ALL {
                            assert!(names.contains(&p.straight_entry()), "{p:?}: {names:?}");
                        }
                    }
                    Module::MsmG1 | Module::MsmG2 | Module::MsmBuckets => {
                        assert_eq!(names, ["accumulate", "merge_tasks", "reduce_level"])
                    }
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn formulas_parse() {
        assert_eq!(Formulas::parse(" Straight\n"), Some(Formulas::Straight));
        assert_eq!(Formulas::parse("interpreted"), Some(Formulas::Interpreted));
        assert_eq!(Formulas::parse("fast"), None);
        for f in [Formulas::Straight, Formulas::Interpreted] {
            assert_eq!(Formulas::parse(f.name()), Some(f));
        }
        assert_eq!(Formulas::for_adapter(true), Formulas::Interpreted);
        assert_eq!(
            Formulas::for_adapter(false),
            Formulas::Interpreted,
            "opt-in until measured"
        );
    }

    /// The straight-line MSM modules carry their own curve's additions only, and no
    /// register file or interpreter; the interpreted one no straight-line code.
    #[test]
    fn msm_modules_emit_only_their_formulas() {
        let g1 = Module::MsmG1.source(LimbBits::DEFAULT);
        assert!(g1.contains("fn g1_add_affine(p: G1P, q: G1A) -> G1P {"));
        assert!(!g1.contains("fn g2_add("));
        let g2 = Module::MsmG2.source(LimbBits::DEFAULT);
        assert!(g2.contains("fn g2_add(p: G2P, q: G2P) -> G2P {"));
        assert!(!g2.contains("fn g1_add("));
        for s in [&g1, &g2] {
            assert!(!s.contains("regs") && !s.contains("var<private>"));
        }
        let interpreted = Module::MsmBuckets.source(LimbBits::DEFAULT);
        assert!(!interpreted.contains("fn g1_add"));
        assert!(interpreted.contains("var<private> program:"));
    }
}
