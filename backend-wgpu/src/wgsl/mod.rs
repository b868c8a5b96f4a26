//! The shader modules and the assembly of their WGSL source from shaders/*.wgsl and
//! the code generated here, for the pairing curve `curve` describes (its fields and
//! constants, from arkworks): `field16` (the 16-bit loop code's constants, Fq's code as
//! Fr's renamed), `field_code` and `fr_code` (loop-free field arithmetic over b-bit
//! limbs), `programs` (the Fq2 and curve formulas as Fq instruction lists) and
//! `straight` (those lists as straight-line or register-file WGSL functions), `params`
//! (the kernels' parameter blocks, a Rust and a WGSL struct from one definition).

pub mod curve;
pub mod field16;
pub mod field_code;
pub mod fr_code;
pub mod params;
pub mod programs;
pub mod straight;

use std::sync::Arc;

use curve::CurveParams;
use field16::{fq_wgsl, wgsl_constants};
use field_code::LimbBits;
use programs::{wgsl_interpreter, wgsl_programs, Program};
use straight::{wgsl_formulas, wgsl_msm_curve, wgsl_test_entries, FormulaCode};

/// Threads per workgroup in every kernel (`@workgroup_size(64)` in the shaders).
pub const WORKGROUP: u32 = 64;

/// How the shaders run one curve's Fq2 and curve formulas (programs.rs's programs);
/// every form comes from the same instruction list. Each form is some adapter class's
/// default for some curve ([`PerCurve::for_adapter`]); the tuning file's
/// `g1_formulas` and `g2_formulas` name them in lower case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Formulas {
    /// Straight-line WGSL on values, one function per formula over loop-free Fq code
    /// (straight.rs, field_code.rs): points and intermediates can stay in registers. The
    /// fastest form (MSM G1 2^20 on the H200 220 ms against 914 interpreted), and the
    /// most code: a G2 addition is about 45 unrolled Fq products of 4000 operations,
    /// which NVIDIA's Vulkan driver did not finish compiling in 150 s.
    Straight,
    /// The loop-free Fq code, each formula's instructions run by a loop over a private
    /// register file (straight.rs's `wgsl_register_formulas`): a kernel holds one copy
    /// of fq_mul, fq_add and fq_sub per formula call instead of one per instruction (a
    /// twelfth of the straight G2 kernels' code), for a register-file load and store
    /// per Fq operation.
    Registers,
    /// One interpreter loop over the formulas as data: one inlined copy of each Fq
    /// operation, so it compiles in seconds everywhere, and runs far slower. The
    /// form of software adapters (llvmpipe compiles the others for minutes).
    Interpreted,
}

impl Formulas {
    /// Every form.
    pub const ALL: [Formulas; 3] = [
        Formulas::Straight,
        Formulas::Registers,
        Formulas::Interpreted,
    ];

    /// The form's name, as the tuning file writes it.
    pub fn name(self) -> &'static str {
        match self {
            Formulas::Straight => "straight",
            Formulas::Registers => "registers",
            Formulas::Interpreted => "interpreted",
        }
    }

    /// The form a curve in this form runs its MSM reduction in: the registers form for
    /// a straight curve (faster to compile and to run on the H200: msm/reduce.rs), its
    /// own otherwise (the interpreter's scratch holds 16-bit Montgomery form, which the
    /// values-form kernels do not read).
    pub fn reduction(self) -> Formulas {
        match self {
            Formulas::Straight => Formulas::Registers,
            other => other,
        }
    }

    /// How the formula functions of the straight-line modules are written in this form.
    fn formula_code(self) -> FormulaCode {
        match self {
            Formulas::Registers => FormulaCode::Registers,
            _ => FormulaCode::Straight,
        }
    }
}

/// One value per curve: G1's (over Fq) and G2's (over Fq2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PerCurve<T> {
    /// G1's, which also runs the Fq programs.
    pub g1: T,
    /// G2's, which also runs the Fq2 programs.
    pub g2: T,
}

impl<T: Copy> PerCurve<T> {
    /// `value` for both curves.
    pub fn both(value: T) -> Self {
        PerCurve {
            g1: value,
            g2: value,
        }
    }

    /// The value of the curve `program` belongs to (by its extension degree).
    pub fn of(&self, program: Program) -> T {
        if program.ext() == 1 {
            self.g1
        } else {
            self.g2
        }
    }
}

impl PerCurve<LimbBits> {
    /// The default for an adapter with (or without) 64-bit integers in shaders: each
    /// curve's measured fastest wide width ([`LimbBits::DEFAULT_INT64_G1`],
    /// [`LimbBits::DEFAULT_INT64_G2`]), else [`LimbBits::DEFAULT`] for both.
    pub fn default_for(int64: bool) -> PerCurve<LimbBits> {
        if int64 {
            PerCurve {
                g1: LimbBits::DEFAULT_INT64_G1,
                g2: LimbBits::DEFAULT_INT64_G2,
            }
        } else {
            PerCurve::both(LimbBits::DEFAULT)
        }
    }

    /// How the backend's description names the widths: `28-bit (u64) for g1, 32-bit
    /// (u64) for g2`, or one width for both.
    pub fn describe(&self) -> String {
        let one = |l: LimbBits| {
            format!(
                "{}-bit Fq limbs in {}",
                l.bits(),
                if l.needs_int64() { "u64" } else { "u32" }
            )
        };
        if self.g1 == self.g2 {
            one(self.g1)
        } else {
            format!("g1 {}, g2 {}", one(self.g1), one(self.g2))
        }
    }

    /// Whether either curve's limbs need 64-bit integers.
    pub fn need_int64(&self) -> bool {
        self.g1.needs_int64() || self.g2.needs_int64()
    }
}

impl PerCurve<Formulas> {
    /// The default for an adapter. Software adapters: the interpreter for both curves
    /// (llvmpipe compiles the other forms for minutes, and CI runs on it). Hardware:
    /// G1 straight, G2 registers. Measured on the H200's Vulkan driver (d32de65:BENCHMARKS.md):
    /// G1 straight MSM 2^20 in 105 ms against the interpreter's 914;
    /// G2's straight kernels did not finish compiling in 150 s, while its registers
    /// kernels compiled in 1.3, 1.2 and 5.4 s (cold, no driver cache) and ran the G2
    /// MSM 2^20 in 565 ms against the interpreter's 2554 (30 of 30 G2 conformance cases).
    /// G1's MSM reduces in the registers form all the same (msm/reduce.rs): faster to
    /// compile and to run there.
    pub fn for_adapter(software: bool) -> Self {
        if software {
            PerCurve::both(Formulas::Interpreted)
        } else {
            PerCurve {
                g1: Formulas::Straight,
                g2: Formulas::Registers,
            }
        }
    }

    /// How the backend's description names the forms: `g1 straight, g2 registers`.
    pub fn describe(&self) -> String {
        format!("g1 {}, g2 {}", self.g1.name(), self.g2.name())
    }

    /// Whether a curve runs a straight-line form (the Fq limb width matters).
    pub fn any_straight(&self) -> bool {
        [self.g1, self.g2]
            .iter()
            .any(|f| *f != Formulas::Interpreted)
    }
}

/// The form of the NTT's Fr products on the workgroup path (the passes keep fr.wgsl's
/// loop); the tuning file's `ntt_mul` names them in lower case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NttMul {
    /// The loop written out, every limb a named value (fr_code.rs).
    Unrolled,
    /// fr.wgsl's CIOS loop over an accumulator array.
    Loop,
    /// Eight 32-bit limbs, each product a widening multiply-add into a `u64` column
    /// (fr_code.rs's wide code); only where the device has `SHADER_INT64`.
    Wide,
}

impl NttMul {
    /// The default for an adapter: the loop on software adapters (llvmpipe: 2^10 in
    /// 10.2 ms against the unrolled form's 22.3, and shorter compiles; the unrolled
    /// form wins from about 2^14, 359 ms against 604); on hardware the wide form
    /// where the device has 64-bit integers, else the unrolled one.
    pub fn for_adapter(software: bool, int64: bool) -> NttMul {
        if software {
            NttMul::Loop
        } else if int64 {
            NttMul::Wide
        } else {
            NttMul::Unrolled
        }
    }
}

/// What a module's generated source depends on besides its files.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ShaderConfig {
    /// The pairing curve the code computes on.
    pub curve: Arc<CurveParams>,
    /// The straight-line Fq code's limb width of each curve.
    pub limbs: PerCurve<LimbBits>,
    /// Each curve's form.
    pub formulas: PerCurve<Formulas>,
    /// Whether the device has 64-bit integers in shaders (`SHADER_INT64`).
    pub int64: bool,
}

impl ShaderConfig {
    /// A hardware adapter's defaults without 64-bit integers, over BLS12-381 (for
    /// tests of the generated sources: the validator runs without the capability).
    #[cfg(test)]
    pub fn hardware_default() -> ShaderConfig {
        ShaderConfig {
            curve: Arc::new(CurveParams::of::<crucible_core::Bls12_381>().expect("supported")),
            limbs: PerCurve::both(LimbBits::DEFAULT),
            formulas: PerCurve::for_adapter(false),
            int64: false,
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
    /// The same kernels over Fr in eight 32-bit limbs with 64-bit products
    /// (fr_code.rs's wide code: `SHADER_INT64`), every Fr operation loop-free.
    NttWide,
    /// MSM scalar conversion and counting sort.
    MsmSort,
    /// MSM bucket accumulation and reduction, G1 and G2, through the interpreter.
    MsmBuckets,
    /// The same kernels in G1's non-interpreted form (shaders/msm_values.wgsl), and
    /// the bucket accumulation in XYZZ coordinates (shaders/msm_xyzz.wgsl).
    MsmG1,
    /// The same kernels in G2's registers form.
    MsmG2,
    /// G1's kernels of [`Module::MsmG1`] (less the XYZZ accumulation) in the registers
    /// form, over G1's limbs: a straight G1 MSM reduces from here (msm/reduce.rs),
    /// reading the partials its own module's accumulation and merges wrote (the same Fq
    /// limbs, R' and packing, the same msm_values.wgsl layout).
    MsmG1Registers,
    /// Test entry point for Fr.
    FrTest,
    /// Test entry point for the interpreter's programs (Fq, Fq2, G1, G2).
    ProgramTest,
    /// Test entry points (`program_op_<name>`) of the Fq operations and G1's addition
    /// in G1's straight-line form.
    FormulaTestG1,
    /// Test entry points of the Fq2 operations and G2's addition in G2's form.
    FormulaTestG2,
    /// A sparse matrix times the assignment (A·z, B·z, C·z), over fr.wgsl's 16-bit
    /// limbs.
    SparseProduct,
    /// The same kernel over the wide Fr code (fr_code.rs: `SHADER_INT64`), where the
    /// NTT's product is the wide one.
    SparseProductWide,
}

/// A parameter block whose WGSL struct params.rs generates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ParamsBlock {
    Ntt,
    Msm,
    FrTest,
    ProgramTest,
    Sparse,
}

impl ParamsBlock {
    fn wgsl(self) -> String {
        use params::{
            FrTestParams, MsmParams, NttParams, ProgramTestParams, SparseParams, WgslStruct,
        };
        match self {
            ParamsBlock::Ntt => NttParams::wgsl(),
            ParamsBlock::Msm => MsmParams::wgsl(),
            ParamsBlock::FrTest => FrTestParams::wgsl(),
            ParamsBlock::ProgramTest => ProgramTestParams::wgsl(),
            ParamsBlock::Sparse => SparseParams::wgsl(),
        }
    }
}

/// One piece of a module's source.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The struct of a parameter block (generated from params.rs).
    Params(ParamsBlock),
    /// The 16-bit field constants (FR_P, FQ_P, ...) of fr.wgsl's code.
    FieldConstants,
    /// A shader file.
    Wgsl(&'static str),
    /// Fq's field code (made from fr.wgsl by [`fq_wgsl`]).
    Fq,
    /// The interpreter and its programs.
    Interpreter,
    /// The generated Fq code (its product in the form of these programs' curve), the
    /// value types and these programs' straight-line functions (straight.rs); the
    /// registers form's programs run the instructions these parameters name (start,
    /// length).
    Formulas(&'static [Program], [&'static str; 2]),
    /// The same in the registers form, whatever the curve's form.
    RegisterFormulas(&'static [Program], [&'static str; 2]),
    /// The curve head of a straight-line MSM module, by its addition program.
    MsmCurve(Program),
    /// The straight-line test entry points of these programs.
    FormulaTests(&'static [Program]),
    /// Fr's product without loops, for the NTT (fr_code.rs).
    FrMulUnrolled,
    /// Fr's whole arithmetic over 32-bit limbs in 64-bit integers (fr_code.rs).
    FrWide,
    /// The tile kernels' flags, from core's tile planner ([`wgsl_tile_flags`]).
    TileFlags,
}

const FR: &str = include_str!("../../shaders/fr.wgsl");
const PROGRAM: &str = include_str!("../../shaders/program.wgsl");
const INTERPRETER: &str = include_str!("../../shaders/interpreter.wgsl");
const NTT: &str = include_str!("../../shaders/ntt.wgsl");
const NTT_MUL_LOOP: &str = include_str!("../../shaders/ntt_mul_loop.wgsl");
const NTT_MUL_UNROLLED: &str = include_str!("../../shaders/ntt_mul_unrolled.wgsl");
const NTT_MUL_WIDE: &str = include_str!("../../shaders/ntt_mul_wide.wgsl");
const FR_POW: &str = include_str!("../../shaders/fr_pow.wgsl");
const MSM_COMMON: &str = include_str!("../../shaders/msm_common.wgsl");
const MSM_SORT: &str = include_str!("../../shaders/msm_sort.wgsl");
const MSM: &str = include_str!("../../shaders/msm.wgsl");
const MSM_VALUES: &str = include_str!("../../shaders/msm_values.wgsl");
const MSM_XYZZ: &str = include_str!("../../shaders/msm_xyzz.wgsl");
const FR_TEST: &str = include_str!("../../shaders/fr_test.wgsl");
const PROGRAM_TEST_PARAMS: &str = include_str!("../../shaders/program_test_params.wgsl");
const PROGRAM_TEST: &str = include_str!("../../shaders/program_test.wgsl");
const SPARSE_PRODUCT: &str = include_str!("../../shaders/sparse_product.wgsl");

/// Where the MSM kernels' parameters name the point addition's program.
const MSM_PROGRAM: [&str; 2] = ["params.prog_start", "params.prog_len"];
/// Where the test kernels' parameters name the tested program.
const TEST_PROGRAM: [&str; 2] = ["params.start", "params.len"];

/// The programs of G1's straight-line test entry points (the Fq ones need no function
/// of their own).
const G1_TESTED: &[Program] = &[
    Program::FqAdd,
    Program::FqSub,
    Program::FqMul,
    Program::G1Add,
];
/// The programs of G2's, each also a straight-line function.
const G2_TESTED: &[Program] = &[
    Program::Fq2Add,
    Program::Fq2Sub,
    Program::Fq2Mul,
    Program::G2Add,
];

impl Module {
    /// Every module, in the order of [`Module::index`].
    pub const ALL: [Module; 14] = [
        Module::Ntt,
        Module::NttUnrolled,
        Module::NttWide,
        Module::MsmSort,
        Module::MsmBuckets,
        Module::MsmG1,
        Module::MsmG2,
        Module::MsmG1Registers,
        Module::FrTest,
        Module::ProgramTest,
        Module::FormulaTestG1,
        Module::FormulaTestG2,
        Module::SparseProduct,
        Module::SparseProductWide,
    ];

    /// The straight-line MSM module of the curve whose addition is `add`, or the
    /// interpreter's, by the curve's form.
    pub fn msm_buckets(add: Program, formulas: PerCurve<Formulas>) -> Module {
        match (formulas.of(add), add.ext()) {
            (Formulas::Interpreted, _) => Module::MsmBuckets,
            (_, 1) => Module::MsmG1,
            _ => Module::MsmG2,
        }
    }

    /// The module's pieces in order.
    fn parts(self) -> &'static [Part] {
        use Part::*;
        match self {
            Module::Ntt => &[
                FieldConstants,
                Wgsl(FR),
                Wgsl(FR_POW),
                Params(ParamsBlock::Ntt),
                Wgsl(NTT_MUL_LOOP),
                TileFlags,
                Wgsl(NTT),
            ],
            Module::NttUnrolled => &[
                FieldConstants,
                Wgsl(FR),
                Wgsl(FR_POW),
                FrMulUnrolled,
                Params(ParamsBlock::Ntt),
                Wgsl(NTT_MUL_UNROLLED),
                TileFlags,
                Wgsl(NTT),
            ],
            Module::NttWide => &[
                FrWide,
                Wgsl(FR_POW),
                Params(ParamsBlock::Ntt),
                Wgsl(NTT_MUL_WIDE),
                TileFlags,
                Wgsl(NTT),
            ],
            Module::MsmSort => &[
                FieldConstants,
                Wgsl(FR),
                Params(ParamsBlock::Msm),
                Wgsl(MSM_COMMON),
                Wgsl(MSM_SORT),
            ],
            Module::MsmBuckets => &[
                FieldConstants,
                Fq,
                Wgsl(PROGRAM),
                Interpreter,
                Params(ParamsBlock::Msm),
                Wgsl(MSM_COMMON),
                Wgsl(MSM),
            ],
            Module::MsmG1 => &[
                Formulas(&[Program::G1Add], MSM_PROGRAM),
                MsmCurve(Program::G1Add),
                Params(ParamsBlock::Msm),
                Wgsl(MSM_COMMON),
                Wgsl(MSM_VALUES),
                Wgsl(MSM_XYZZ),
            ],
            Module::MsmG2 => &[
                Formulas(&[Program::G2Add], MSM_PROGRAM),
                MsmCurve(Program::G2Add),
                Params(ParamsBlock::Msm),
                Wgsl(MSM_COMMON),
                Wgsl(MSM_VALUES),
            ],
            Module::MsmG1Registers => &[
                RegisterFormulas(&[Program::G1Add], MSM_PROGRAM),
                MsmCurve(Program::G1Add),
                Params(ParamsBlock::Msm),
                Wgsl(MSM_COMMON),
                Wgsl(MSM_VALUES),
            ],
            Module::FrTest => &[
                FieldConstants,
                Wgsl(FR),
                Params(ParamsBlock::FrTest),
                Wgsl(FR_TEST),
            ],
            Module::ProgramTest => &[
                FieldConstants,
                Fq,
                Wgsl(PROGRAM),
                Interpreter,
                Params(ParamsBlock::ProgramTest),
                Wgsl(PROGRAM_TEST_PARAMS),
                Wgsl(PROGRAM_TEST),
            ],
            Module::FormulaTestG1 => &[
                Formulas(&[Program::G1Add], TEST_PROGRAM),
                Params(ParamsBlock::ProgramTest),
                Wgsl(PROGRAM_TEST_PARAMS),
                FormulaTests(G1_TESTED),
            ],
            Module::FormulaTestG2 => &[
                Formulas(G2_TESTED, TEST_PROGRAM),
                Params(ParamsBlock::ProgramTest),
                Wgsl(PROGRAM_TEST_PARAMS),
                FormulaTests(G2_TESTED),
            ],
            Module::SparseProduct => &[
                FieldConstants,
                Wgsl(FR),
                Params(ParamsBlock::Sparse),
                Wgsl(SPARSE_PRODUCT),
            ],
            Module::SparseProductWide => {
                &[FrWide, Params(ParamsBlock::Sparse), Wgsl(SPARSE_PRODUCT)]
            }
        }
    }

    /// The module's position in [`Module::ALL`]: a slot in a per-module table.
    pub fn index(self) -> usize {
        Module::ALL.iter().position(|m| *m == self).unwrap_or(0)
    }

    /// The module's full WGSL source under `config`.
    pub fn source(self, config: &ShaderConfig) -> String {
        let curve = &*config.curve;
        let mut s = String::new();
        for part in self.parts() {
            if !s.is_empty() {
                s.push('\n');
            }
            match *part {
                Part::Params(block) => s.push_str(&block.wgsl()),
                Part::FieldConstants => s.push_str(&wgsl_constants(curve)),
                Part::Wgsl(text) => s.push_str(text),
                Part::Fq => s.push_str(&fq_wgsl(FR, curve.name)),
                Part::Interpreter => {
                    s.push_str(&wgsl_programs(curve));
                    s.push('\n');
                    s.push_str(&wgsl_interpreter(curve, INTERPRETER));
                }
                Part::Formulas(programs, range) => {
                    let form = config.formulas.of(programs[0]);
                    s.push_str(&formulas(config, form, programs, range))
                }
                Part::RegisterFormulas(programs, range) => {
                    s.push_str(&formulas(config, Formulas::Registers, programs, range))
                }
                Part::MsmCurve(add) => s.push_str(&wgsl_msm_curve(curve, add)),
                Part::FormulaTests(programs) => s.push_str(&wgsl_test_entries(curve, programs)),
                Part::FrMulUnrolled => s.push_str(&fr_code::wgsl_fr_mul_unrolled(curve)),
                Part::FrWide => s.push_str(&fr_code::wgsl_fr_wide(curve)),
                Part::TileFlags => s.push_str(&wgsl_tile_flags()),
            }
        }
        s
    }
}

/// shaders/ntt.wgsl's flag constants, each with core's value.
fn wgsl_tile_flags() -> String {
    use crucible_core::ntt_tiles::*;
    [
        ("TILE_INVERSE", TILE_INVERSE),
        ("TILE_SCALE_BY_C", TILE_SCALE_BY_C),
        ("TILE_SCALE_BY_POWERS", TILE_SCALE_BY_POWERS),
        ("TILE_LOAD_REVERSED", TILE_LOAD_REVERSED),
        ("TILE_STORE_REVERSED", TILE_STORE_REVERSED),
        ("TILE_PAIRED", TILE_PAIRED),
        ("TILE_SCALE_LOADS_BY_POWERS", TILE_SCALE_LOADS_BY_POWERS),
    ]
    .iter()
    .map(|(name, value)| format!("const {name}: u32 = {value}u;\n"))
    .collect()
}

/// The formulas' part of a module in `form` over the limbs of `programs`' curve.
fn formulas(
    config: &ShaderConfig,
    form: Formulas,
    programs: &'static [Program],
    range: [&'static str; 2],
) -> String {
    wgsl_formulas(
        &config.curve,
        config.limbs.of(programs[0]),
        form.formula_code(),
        programs,
        range,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validate(module: Module, config: &ShaderConfig) -> naga::Module {
        let source = module.source(config);
        let at = format!(
            "{module:?} ({}, {:?}, {:?}, int64 {})",
            config.curve.name, config.limbs, config.formulas, config.int64
        );
        let parsed = naga::front::wgsl::parse_str(&source).unwrap_or_else(|e| {
            panic!(
                "{at}: {}",
                e.emit_to_string_with_path(&source, "module.wgsl")
            )
        });
        // u64 only where the module's code is wide (what the device was opened with).
        let capabilities = if config.int64 {
            naga::valid::Capabilities::SHADER_INT64
        } else {
            naga::valid::Capabilities::empty()
        };
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities)
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

    fn bls12_381() -> Arc<CurveParams> {
        Arc::new(CurveParams::of::<crucible_core::Bls12_381>().expect("supported"))
    }

    fn bn254() -> Arc<CurveParams> {
        Arc::new(CurveParams::of::<crucible_core::Bn254>().expect("supported"))
    }

    fn config_of(curve: &Arc<CurveParams>, bits: u32, form: Formulas) -> ShaderConfig {
        let limbs = LimbBits::new(bits).expect("in range");
        ShaderConfig {
            curve: Arc::clone(curve),
            limbs: PerCurve::both(limbs),
            formulas: PerCurve::both(form),
            int64: limbs.needs_int64(),
        }
    }

    /// Every module is valid WGSL as wgpu's own front end and validator see it (what
    /// `create_shader_module` checks), without a device, on both curves; the
    /// straight-line ones for every limb width and form.
    #[test]
    fn every_module_parses_and_validates() {
        for (module, curve) in Module::ALL
            .into_iter()
            .flat_map(|m| [(m, bls12_381()), (m, bn254())])
        {
            let config = |bits, form| config_of(&curve, bits, form);
            let straight = module
                .parts()
                .iter()
                .any(|p| matches!(p, Part::Formulas(..) | Part::RegisterFormulas(..)));
            let configs: Vec<ShaderConfig> = if straight {
                LimbBits::RANGE
                    .flat_map(|b| [Formulas::Straight, Formulas::Registers].map(|f| config(b, f)))
                    .collect()
            } else if matches!(module, Module::NttWide | Module::SparseProductWide) {
                vec![ShaderConfig {
                    int64: true,
                    ..config(LimbBits::DEFAULT.bits(), Formulas::Interpreted)
                }]
            } else {
                vec![config(LimbBits::DEFAULT.bits(), Formulas::Interpreted)]
            };
            for config in configs {
                let parsed = validate(module, &config);
                let names = entries(&parsed);
                let tested = match module {
                    Module::FormulaTestG1 => G1_TESTED,
                    Module::FormulaTestG2 => G2_TESTED,
                    _ => &[],
                };
                for p in tested {
                    assert!(names.contains(&p.straight_entry()), "{p:?}: {names:?}");
                }
                match module {
                    Module::ProgramTest => assert_eq!(names, ["program_op"]),
                    Module::SparseProduct | Module::SparseProductWide => {
                        assert_eq!(names, ["sparse_product"])
                    }
                    Module::MsmBuckets => {
                        assert_eq!(names, ["accumulate", "merge_tasks", "reduce_level"])
                    }
                    Module::MsmG2 | Module::MsmG1Registers => {
                        assert_eq!(names, ["accumulate", "merge_tasks", "reduce_level"])
                    }
                    Module::MsmG1 => assert_eq!(
                        names,
                        [
                            "accumulate",
                            "merge_tasks",
                            "reduce_level",
                            "accumulate_xyzz"
                        ]
                    ),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn formulas_default_per_adapter() {
        assert_eq!(
            PerCurve::for_adapter(true),
            PerCurve::both(Formulas::Interpreted),
            "software adapters (CI's llvmpipe) keep the interpreter"
        );
        let hardware = PerCurve::for_adapter(false);
        assert_eq!(hardware.g1, Formulas::Straight);
        assert_eq!(hardware.g2, Formulas::Registers, "measured on the H200");
        assert_eq!(hardware.describe(), "g1 straight, g2 registers");
    }

    /// The straight-line MSM modules carry their own curve's additions only; the
    /// straight ones no register file, the registers one no formula written out; the
    /// interpreted one no straight-line code.
    #[test]
    fn msm_modules_emit_only_their_formulas() {
        let at = |form| ShaderConfig {
            curve: bls12_381(),
            limbs: PerCurve::both(LimbBits::DEFAULT),
            formulas: PerCurve::both(form),
            int64: false,
        };
        for form in [Formulas::Straight, Formulas::Registers] {
            let g1 = Module::MsmG1.source(&at(form));
            assert!(g1.contains("fn g1_add_affine(p: G1P, q: G1A) -> G1P {"));
            assert!(!g1.contains("fn g2_add("));
            let g2 = Module::MsmG2.source(&at(form));
            assert!(g2.contains("fn g2_add(p: G2P, q: G2P) -> G2P {"));
            assert!(!g2.contains("fn g1_add("));
            for s in [&g1, &g2] {
                assert!(!s.contains("var<private> regs:") && !s.contains("fn run_program"));
                let registers = s.contains("var<private> fq_regs: array<Fq, ");
                assert_eq!(registers, form == Formulas::Registers, "{form:?}");
                assert_eq!(s.contains("let v0 = fq_"), form != Formulas::Registers);
            }
        }
        let hardware = ShaderConfig::hardware_default();
        let interpreted = Module::MsmBuckets.source(&hardware);
        assert!(!interpreted.contains("fn g1_add"));
        assert!(interpreted.contains("var<private> program:"));
        assert_eq!(
            Module::msm_buckets(Program::G1Add, hardware.formulas),
            Module::MsmG1
        );
        assert_eq!(
            Module::msm_buckets(Program::G2Add, hardware.formulas),
            Module::MsmG2,
            "G2 in the registers form on hardware"
        );
        assert_eq!(
            Module::msm_buckets(Program::G2Add, PerCurve::both(Formulas::Registers)),
            Module::MsmG2
        );
        let software = PerCurve::for_adapter(true);
        assert_eq!(
            Module::msm_buckets(Program::G2Add, software),
            Module::MsmBuckets
        );
    }

    /// The registers-form G1 MSM module reduces what the straight G1 module
    /// accumulated and merged: for every limb width, the same Fq type, R', constants,
    /// packing and arithmetic, and the same curve head and msm_values.wgsl layout of
    /// partials and levels; its formulas run through the register file.
    #[test]
    fn registers_modules_read_the_scratch_every_values_form_writes() {
        const CURVE_HEAD: &str = "// The curve of this MSM module";
        // Function `name`'s text, or a constant's line.
        let item = |s: &str, name: &str| -> String {
            let start = s
                .find(&format!("fn {name}("))
                .or_else(|| s.find(&format!("const {name} =")))
                .unwrap_or_else(|| panic!("{name}"));
            let end = if s[start..].starts_with("fn ") {
                s[start..].find("\n}\n").map(|e| start + e + 3)
            } else {
                s[start..].find('\n').map(|e| start + e + 1)
            };
            s[start..end.unwrap_or(s.len())].to_owned()
        };
        let shared = [
            "FQ_ZERO",
            "FQ_ONE",
            "FQ_ARK_R",
            "fq_add",
            "fq_sub",
            "fq_from_words",
            "fq_to_words",
            "fq_is_zero",
        ];
        for bits in LimbBits::RANGE {
            for curve in [bls12_381(), bn254()] {
                let form = Formulas::Straight;
                let config = config_of(&curve, bits, form);
                for (own, registers) in [(Module::MsmG1, Module::MsmG1Registers)] {
                    let (own, registers) = (own.source(&config), registers.source(&config));
                    let at = format!("{}, {bits}-bit limbs, {form:?}", curve.name);
                    // The field code's first line names its limbs and R'.
                    assert_eq!(own.lines().next(), registers.lines().next(), "{at}");
                    for name in shared {
                        assert!(item(&own, name) == item(&registers, name), "{at}: {name}");
                    }
                    assert!(
                        item(&own, "fq_mul") == item(&registers, "fq_mul"),
                        "{at}: fq_mul"
                    );
                    // MsmG1 adds msm_xyzz.wgsl after the shared kernels.
                    let tail = |s: &str| s[s.find(CURVE_HEAD).expect("curve head")..].to_owned();
                    assert!(tail(&own).starts_with(&tail(&registers)), "{at}: layout");
                    assert!(
                        registers.contains("var<private> fq_regs: array<Fq, "),
                        "{at}"
                    );
                    assert!(!registers.contains("let v0 = fq_"), "{at}");
                }
            }
        }
    }

    /// Fq operations one point addition puts into a kernel, every call inlined (the
    /// proxy for a driver's compile time; `cargo test ... kernel_sizes -- --nocapture`
    /// prints them): G2's registers addition is a fraction of G1's straight one, whose
    /// MSM kernels NVIDIA's Vulkan driver compiles in about a second each.
    #[test]
    fn kernel_sizes_registers_g2_below_straight_g1() {
        let size = |p, f: Formulas| {
            let n =
                straight::inlined_operations(p, &bls12_381(), LimbBits::DEFAULT, f.formula_code());
            println!("kernel sizes: {p:?} {}: {n} operations inlined", f.name());
            n
        };
        let g1 = size(Program::G1Add, Formulas::Straight);
        let g2 = size(Program::G2Add, Formulas::Straight);
        let g2_registers = size(Program::G2Add, Formulas::Registers);
        assert!(g2_registers * 10 < g2, "{g2_registers} vs {g2}");
        assert!(g2_registers * 10 < g1, "{g2_registers} vs {g1}");
    }
}
