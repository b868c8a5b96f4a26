//! The shader modules and the assembly of their WGSL source from shaders/*.wgsl.

use crate::field::{
    fq_wgsl, wgsl_constants, wgsl_programs, wgsl_straight, wgsl_straight_test_entries, Program,
};

/// Threads per workgroup in every kernel (`@workgroup_size(64)` in the shaders).
pub const WORKGROUP: u32 = 64;

/// Environment variable choosing the form of the Fq2 and curve formulas:
/// `straight` or `interpreted` (see [`Formulas`]); unset or empty, by adapter type.
pub const FORMULAS_ENV: &str = "CRUCIBLE_WGPU_FORMULAS";

/// How the shaders run the Fq2 and curve formulas (field.rs's programs); both forms
/// come from the same instruction list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Formulas {
    /// Straight-line WGSL functions, one per formula: faster code, but llvmpipe takes
    /// minutes to compile the MSM with them. Opt-in until measured on hardware.
    Straight,
    /// One interpreter loop over the formulas as data: one inlined copy of each Fq
    /// operation, so it compiles in seconds everywhere, and runs far slower. The
    /// default.
    Interpreted,
}

impl Formulas {
    /// The default for an adapter: the interpreter, on software and hardware alike
    /// for now. The straight-line MSM has passed only the small-kernel tests on
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

/// A shader module: which WGSL files it is made of, in order, after the constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Module {
    /// NTT stages and pointwise ops over Fr.
    Ntt,
    /// MSM scalar conversion and counting sort.
    MsmSort,
    /// MSM bucket accumulation and reduction, G1 and G2.
    MsmBuckets,
    /// Test entry point for Fr.
    FrTest,
    /// Test entry point for the interpreter's programs (Fq, Fq2, G1, G2).
    ProgramTest,
}

/// One piece of a module's source.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// A shader file.
    Wgsl(&'static str),
    /// Fq's field code (made from fr.wgsl by [`fq_wgsl`]).
    Fq,
    /// `run_program` for these programs, in the module's [`Formulas`].
    Programs(&'static [Program]),
    /// Straight-line test entry points of every program (nothing when interpreted).
    TestEntries,
}

const FR: &str = include_str!("../shaders/fr.wgsl");
const PROGRAM: &str = include_str!("../shaders/program.wgsl");
const INTERPRETER: &str = include_str!("../shaders/interpreter.wgsl");
const NTT: &str = include_str!("../shaders/ntt.wgsl");
const MSM_COMMON: &str = include_str!("../shaders/msm_common.wgsl");
const MSM_SORT: &str = include_str!("../shaders/msm_sort.wgsl");
const MSM: &str = include_str!("../shaders/msm.wgsl");
const FR_TEST: &str = include_str!("../shaders/fr_test.wgsl");
const PROGRAM_TEST: &str = include_str!("../shaders/program_test.wgsl");

/// The MSM runs only the point additions: the straight-line form emits no others.
const MSM_PROGRAMS: &[Program] = &[Program::G1Add, Program::G2Add];

impl Module {
    /// Every module, in the order of [`Module::index`].
    pub const ALL: [Module; 5] = [
        Module::Ntt,
        Module::MsmSort,
        Module::MsmBuckets,
        Module::FrTest,
        Module::ProgramTest,
    ];

    /// The module's pieces in order.
    fn parts(self) -> &'static [Part] {
        use Part::*;
        match self {
            Module::Ntt => &[Wgsl(FR), Wgsl(NTT)],
            Module::MsmSort => &[Wgsl(FR), Wgsl(MSM_COMMON), Wgsl(MSM_SORT)],
            Module::MsmBuckets => &[
                Fq,
                Wgsl(PROGRAM),
                Programs(MSM_PROGRAMS),
                Wgsl(MSM_COMMON),
                Wgsl(MSM),
            ],
            Module::FrTest => &[Wgsl(FR), Wgsl(FR_TEST)],
            Module::ProgramTest => &[
                Fq,
                Wgsl(PROGRAM),
                Programs(&Program::ALL),
                Wgsl(PROGRAM_TEST),
                TestEntries,
            ],
        }
    }

    /// The module's position in [`Module::ALL`]: a slot in a per-module table.
    pub fn index(self) -> usize {
        Module::ALL.iter().position(|m| *m == self).unwrap_or(0)
    }

    /// The module's full WGSL source, its formulas (if any) in `formulas`' form.
    pub fn source(self, formulas: Formulas) -> String {
        let mut s = wgsl_constants();
        if self.parts().contains(&Part::Wgsl(PROGRAM)) {
            s.push_str(&wgsl_programs());
        }
        for part in self.parts() {
            s.push('\n');
            match (part, formulas) {
                (Part::Wgsl(text), _) => s.push_str(text),
                (Part::Fq, _) => s.push_str(&fq_wgsl(FR)),
                (Part::Programs(_), Formulas::Interpreted) => s.push_str(INTERPRETER),
                (Part::Programs(programs), Formulas::Straight) => {
                    s.push_str(&wgsl_straight(programs))
                }
                (Part::TestEntries, Formulas::Interpreted) => {}
                (Part::TestEntries, Formulas::Straight) => {
                    s.push_str(&wgsl_straight_test_entries(&Program::ALL))
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every module in both forms is valid WGSL as wgpu's own front end and validator
    /// see it (what `create_shader_module` checks), without a device.
    #[test]
    fn every_module_parses_and_validates_in_both_forms() {
        for formulas in [Formulas::Interpreted, Formulas::Straight] {
            for module in Module::ALL {
                let source = module.source(formulas);
                let parsed = naga::front::wgsl::parse_str(&source).unwrap_or_else(|e| {
                    panic!(
                        "{module:?} ({formulas:?}): {}",
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
                        "{module:?} ({formulas:?}): {}",
                        e.emit_to_string_with_path(&source, "module.wgsl")
                    )
                });
                let entries: Vec<&str> = parsed
                    .entry_points
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect();
                if module == Module::ProgramTest {
                    assert!(entries.contains(&"program_op"));
                    for p in Program::ALL {
                        assert_eq!(
                            entries.contains(&p.straight_entry()),
                            formulas == Formulas::Straight,
                            "{p:?} ({formulas:?})"
                        );
                    }
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

    /// The MSM's straight-line form carries the point additions only, and its
    /// interpreted form no straight-line code at all.
    #[test]
    fn msm_module_emits_only_its_programs() {
        let straight = Module::MsmBuckets.source(Formulas::Straight);
        assert!(straight.contains("fn straight_g2_add() {"));
        assert!(!straight.contains("fn straight_fq2_mul() {"));
        assert!(!straight.contains("var<private> program:"));
        let interpreted = Module::MsmBuckets.source(Formulas::Interpreted);
        assert!(!interpreted.contains("straight_"));
        assert!(interpreted.contains("var<private> program:"));
    }
}
