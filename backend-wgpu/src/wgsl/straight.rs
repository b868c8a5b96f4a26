//! The straight-line form of the formulas, for hardware adapters: each of programs.rs's
//! programs in static single assignment, emitted as a WGSL function on values.
//!
//! `fn g1_add(p: G1P, q: G1P) -> G1P` is the G1 addition program with every
//! instruction a `let` (`let v3 = fq_mul(p.x, q.x);`), its inputs read from the
//! parameters' fields and its outputs returned in a struct: no register file, no
//! array indexed at run time, so the point and every intermediate can live in
//! registers. The Fq functions it calls come from field_code.rs (loop-free).
//!
//! Mixed addition (`g1_add_affine(p: G1P, q: G1A)`) is the same program with Q's Z bound
//! to a constant and folded: Z = 1 when the limbs' R' is arkworks' R (limbs whose width
//! divides the packed size, 12, 16 or 32 bits for BLS12-381's Fq: one product fewer),
//! else R mod p (field_code.rs says why stored affine points
//! get that Z). The MSM's kernels (shaders/msm_values.wgsl) and the formula test entry
//! points are built on these functions.
//!
//! The same functions can instead run their program's instructions over a private
//! register file ([`wgsl_register_formulas`], the `registers` form): one copy of the
//! Fq code per call instead of one per instruction, for curves whose straight kernels
//! are too large for a driver's compiler (G2's).

use super::curve::CurveParams;
use super::field_code::{FieldCode, LimbBits};
use super::programs::{decode, wgsl_programs, FqOp, Program};

/// An Fq constant a program's register can be bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FqConst {
    Zero,
    One,
    /// R mod p (`FQ_ARK_R`): the Z of a stored affine point in R' form.
    ArkR,
    /// The curve's program constant k (`FQ_CONST_k`), an operand of `MulConst`.
    Program(usize),
}

/// A value of a straight-line program: an input register as it was on entry, the
/// result of one of its operations, or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Input(usize),
    Op(usize),
    Const(FqConst),
}

/// A program as straight-line code in static single assignment: every instruction of
/// its interpreter form becomes one operation on values, in the same order (less the
/// ones that constants fold away), so both forms compute the same thing.
pub(crate) struct Straight {
    pub(crate) program: Program,
    /// `ops[k]`: value `Op(k)` = op(a, b).
    pub(crate) ops: Vec<(FqOp, Value, Value)>,
    /// (register, value) of the program's outputs.
    pub(crate) outputs: Vec<(usize, Value)>,
    /// Whether Q is affine (its Z bound to a constant).
    mixed: bool,
}

/// x·0 = 0, x·1 = x, x ± 0 = x.
fn fold(op: FqOp, a: Value, b: Value) -> Option<Value> {
    use FqConst::*;
    use Value::Const;
    match (op, a, b) {
        (FqOp::Mul, Const(Zero), _) | (FqOp::Mul, _, Const(Zero)) => Some(Const(Zero)),
        (FqOp::Mul, Const(One), x) | (FqOp::Mul, x, Const(One)) => Some(x),
        (FqOp::Add, Const(Zero), x) | (FqOp::Add, x, Const(Zero)) => Some(x),
        (FqOp::Sub, x, Const(Zero)) => Some(x),
        _ => None,
    }
}

impl Straight {
    /// Translates `program`'s instruction list over `curve`. A read of a register that
    /// is neither written before nor one of the program's inputs, or an output never
    /// written, is a bug in the formula: it panics (the unit tests translate every
    /// program of every curve).
    pub(crate) fn of(program: Program, curve: &CurveParams) -> Straight {
        Self::bound(program, curve, &[], false)
    }

    /// A point addition with Q affine: Q's Z is `z` (and 0 in Fq2's second part).
    pub(crate) fn mixed(program: Program, curve: &CurveParams, z: FqConst) -> Straight {
        let e = program.ext();
        let mut consts = vec![(5 * e, z)];
        if e == 2 {
            consts.push((5 * e + 1, FqConst::Zero));
        }
        Self::bound(program, curve, &consts, true)
    }

    fn bound(
        program: Program,
        curve: &CurveParams,
        consts: &[(usize, FqConst)],
        mixed: bool,
    ) -> Straight {
        let asm = program.assemble(curve);
        let mut current: Vec<Option<Value>> = vec![None; asm.regs];
        for (r, c) in consts {
            current[*r] = Some(Value::Const(*c));
        }
        let mut ops = Vec::new();
        let read = |current: &mut Vec<Option<Value>>, r: usize| -> Value {
            if let Some(v) = current[r] {
                return v;
            }
            assert!(
                program.inputs().contains(&r),
                "{program:?} reads register {r} before writing it"
            );
            current[r] = Some(Value::Input(r));
            Value::Input(r)
        };
        for ins in asm.code {
            let (op, d, a, b) = decode(ins);
            let (op, a, b) = match op {
                FqOp::MulConst => (
                    FqOp::Mul,
                    read(&mut current, a),
                    Value::Const(FqConst::Program(b)),
                ),
                _ => (op, read(&mut current, a), read(&mut current, b)),
            };
            current[d] = Some(fold(op, a, b).unwrap_or_else(|| {
                ops.push((op, a, b));
                Value::Op(ops.len() - 1)
            }));
        }
        let outputs = program
            .outputs()
            .map(|r| match current[r] {
                Some(v @ Value::Op(_)) => (r, v),
                _ => panic!("{program:?} never writes its output register {r}"),
            })
            .collect();
        Straight {
            program,
            ops,
            outputs,
            mixed,
        }
    }

    /// The WGSL function's name.
    fn name(&self) -> String {
        let affine = if self.mixed { "_affine" } else { "" };
        format!("{}{affine}", self.program.name())
    }

    /// Register r's input as a parameter field: `a`, `b.c1`, `p.x`, `q.z.c0`.
    fn input(&self, r: usize) -> String {
        let e = self.program.ext();
        let part = if e == 1 { "" } else { [".c0", ".c1"][r % e] };
        let coordinate = r / e;
        match self.program {
            Program::G1Add | Program::G2Add => format!(
                "{}.{}{part}",
                ["p", "q"][coordinate / 3],
                ["x", "y", "z"][coordinate % 3]
            ),
            _ => format!("{}{part}", ["a", "b"][coordinate]),
        }
    }

    fn value(&self, v: Value) -> String {
        match v {
            Value::Input(r) => self.input(r),
            Value::Op(k) => format!("v{k}"),
            Value::Const(FqConst::Zero) => "FQ_ZERO".into(),
            Value::Const(FqConst::One) => "FQ_ONE".into(),
            Value::Const(FqConst::ArkR) => "FQ_ARK_R".into(),
            Value::Const(FqConst::Program(k)) => format!("FQ_CONST_{k}"),
        }
    }

    /// The WGSL function's parameters and return type (`p: G2P, q: G2A) -> G2P`, the
    /// opening parenthesis left out).
    fn signature(&self) -> String {
        let p = self.program;
        let (coord, point, affine) = match p.ext() {
            1 => ("Fq", "G1P", "G1A"),
            _ => ("Fq2", "G2P", "G2A"),
        };
        match p {
            Program::G1Add | Program::G2Add => {
                let q = if self.mixed { affine } else { point };
                format!("p: {point}, q: {q}) -> {point}")
            }
            _ => format!("a: {coord}, b: {coord}) -> {coord}"),
        }
    }

    /// The returned expression built from the output registers' values, in order.
    fn result(&self, outs: Vec<String>) -> String {
        let p = self.program;
        let coords: Vec<String> = if p.ext() == 1 {
            outs
        } else {
            outs.chunks(2)
                .map(|c| format!("Fq2({}, {})", c[0], c[1]))
                .collect()
        };
        match p {
            Program::G1Add => format!("G1P({})", coords.join(", ")),
            Program::G2Add => format!("G2P({})", coords.join(", ")),
            _ => coords.join(", "),
        }
    }

    /// The WGSL function on values.
    pub(crate) fn wgsl(&self) -> String {
        let p = self.program;
        let signature = self.signature();
        let mut s = format!(
            "// {p:?}{} in straight line ({} Fq operations; generated by straight.rs).\nfn {}({signature} {{\n",
            if self.mixed { " with Q affine" } else { "" },
            self.ops.len(),
            self.name()
        );
        for (k, (op, a, b)) in self.ops.iter().enumerate() {
            s += &format!(
                "    let v{k} = {}({}, {});\n",
                op.wgsl(),
                self.value(*a),
                self.value(*b)
            );
        }
        let outs: Vec<String> = self.outputs.iter().map(|(_, v)| self.value(*v)).collect();
        s + &format!("    return {};\n}}\n", self.result(outs))
    }
}

/// How the formula functions (`fn g2_add(p: G2P, q: G2P) -> G2P`, ...) compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FormulaCode {
    /// Each formula a function of `let`s calling the Fq functions ([`Straight::wgsl`]).
    Straight,
    /// Each formula's instructions run by one loop over a private register file
    /// ([`wgsl_register_formulas`]).
    Registers,
}

const VALUE_TYPES: &str = "\n// Value types of the straight-line formulas (straight.rs).\n\
    struct Fq2 { c0: Fq, c1: Fq }\n\
    struct G1P { x: Fq, y: Fq, z: Fq }\n\
    struct G1A { x: Fq, y: Fq }\n\
    struct G2P { x: Fq2, y: Fq2, z: Fq2 }\n\
    struct G2A { x: Fq2, y: Fq2 }\n";

/// The value types, `curve`'s Fq code over `limbs` (with the programs' constants, if
/// the curve has any) and the functions of `programs` (the point additions also in
/// their mixed form), written as `code` says (`range`: see [`wgsl_register_formulas`]).
pub(crate) fn wgsl_formulas(
    curve: &CurveParams,
    limbs: LimbBits,
    code: FormulaCode,
    programs: &[Program],
    range: [&str; 2],
) -> String {
    let fq = FieldCode::fq(curve, limbs);
    let mut s = fq.wgsl();
    for (k, c) in curve.program_constants().iter().enumerate() {
        s += &fq.wgsl_constant(
            &format!("FQ_CONST_{k}"),
            c,
            &format!("The programs' constant {k} (wgsl/programs.rs)."),
        );
    }
    s += VALUE_TYPES;
    // Q's Z in R' form: 1 when R' = R, else R mod p.
    let z = if fq.r_bits() == curve.fq.ark_r_bits() {
        FqConst::One
    } else {
        FqConst::ArkR
    };
    if code == FormulaCode::Registers {
        return s + &wgsl_register_formulas(curve, programs, z, range);
    }
    for &p in programs {
        s.push('\n');
        s += &Straight::of(p, curve).wgsl();
        if matches!(p, Program::G1Add | Program::G2Add) {
            s.push('\n');
            s += &Straight::mixed(p, curve, z).wgsl();
        }
    }
    s
}

/// The formula functions of `programs` over a private register file: each stores its
/// operands in registers, runs its instructions (the interpreter's words, programs.rs's
/// PROGRAM) through `fq_program`, one loop with one inlined copy of each Fq function,
/// and returns the result registers. A kernel holds a few copies of the Fq code instead
/// of one per instruction (a G2 addition inlined is 45 products of 4000 operations,
/// which NVIDIA's Vulkan driver did not finish compiling in 150 s), for a load and
/// store of the register file per instruction. Mixed additions bind Q's Z to `z`.
///
/// The loop runs the instructions `range` names: WGSL expressions of the program's
/// start and length read from the dispatch's parameters (the MSM's `prog_start` and
/// `prog_len`), which every kernel calling the function sets to that function's
/// program. With the bounds constants, Mesa unrolls the loop to resolve its indexing of
/// the instruction array, which writes the whole formula out again (on llvmpipe, 80 s
/// to compile a G2 addition).
pub(crate) fn wgsl_register_formulas(
    curve: &CurveParams,
    programs: &[Program],
    z: FqConst,
    range: [&str; 2],
) -> String {
    let [start, len] = range;
    // Curves with program constants (FQ_CONST_k, from wgsl_formulas) hold them in an
    // array for the products by them (op 3); the others' code has no such branch.
    let constants = curve.program_constants().len();
    let (consts_array, last_cases) = if constants == 0 {
        (String::new(), "default: { r = fq_sub(a, b); }".to_string())
    } else {
        let names: Vec<String> = (0..constants).map(|k| format!("FQ_CONST_{k}")).collect();
        (
            format!(
                "var<private> fq_consts: array<Fq, {constants}> = array<Fq, {constants}>({});\n",
                names.join(", ")
            ),
            "case 2u: { r = fq_sub(a, b); }\n            \
             default: { r = fq_mul(a, fq_consts[(ins >> 18u) & 0xffu]); }"
                .to_string(),
        )
    };
    let ops = if constants == 0 {
        "mul,\n// add, sub"
    } else {
        "mul,\n// add, sub, mul by constant b"
    };
    let mut s = format!(
        "\n{}\n// The formulas' register file (straight.rs): program instructions run on it.\n\
         var<private> fq_code: array<u32, PROGRAM_LEN> = PROGRAM;\n\
         var<private> fq_regs: array<Fq, PROGRAM_REGS>;\n{consts_array}\n\
         // fq_regs[d] = fq_regs[a] op fq_regs[b] for each instruction (op in bits 0-1: {ops}; d, a, b in bits 2-9, 10-17, 18-25), operands read before d is written.\n\
         fn fq_program(start: u32, len: u32) {{\n    \
         for (var k = start; k < start + len; k++) {{\n        \
         let ins = fq_code[k];\n        \
         let a = fq_regs[(ins >> 10u) & 0xffu];\n        \
         let b = fq_regs[(ins >> 18u) & 0xffu];\n        \
         var r: Fq;\n        \
         switch ins & 3u {{\n            \
         case 0u: {{ r = fq_mul(a, b); }}\n            \
         case 1u: {{ r = fq_add(a, b); }}\n            \
         {last_cases}\n        \
         }}\n        \
         fq_regs[(ins >> 2u) & 0xffu] = r;\n    }}\n}}\n",
        wgsl_programs(curve)
    );
    for &p in programs {
        let mut variants = vec![(Straight::of(p, curve), Vec::new())];
        if matches!(p, Program::G1Add | Program::G2Add) {
            let e = p.ext();
            let mut consts = vec![(5 * e, z)];
            if e == 2 {
                consts.push((5 * e + 1, FqConst::Zero));
            }
            variants.push((Straight::mixed(p, curve, z), consts));
        }
        for (f, consts) in variants {
            let signature = f.signature();
            s += &format!(
                "\n// {p:?}{} through the register file ({start} and {len} must be its program's).\nfn {}({signature} {{\n",
                if f.mixed { " with Q affine" } else { "" },
                f.name()
            );
            for r in p.inputs() {
                let value = match consts.iter().find(|(reg, _)| *reg == r) {
                    Some((_, c)) => f.value(Value::Const(*c)),
                    None => f.input(r),
                };
                s += &format!("    fq_regs[{r}] = {value};\n");
            }
            s += &format!("    fq_program({start}, {len});\n");
            let outs: Vec<String> = p.outputs().map(|r| format!("fq_regs[{r}]")).collect();
            s += &format!("    return {};\n}}\n", f.result(outs));
        }
    }
    s
}

/// Fq operations one call of `program`'s straight-line function puts into a kernel
/// once every Fq function is inlined: what a driver's
/// compiler has to schedule (through the register file: one copy of each).
#[cfg(test)]
pub(crate) fn inlined_operations(
    program: Program,
    curve: &CurveParams,
    limbs: LimbBits,
    code: FormulaCode,
) -> usize {
    let fq = FieldCode::fq(curve, limbs);
    let mul_ops = fq.mul().code.operations();
    let (add_ops, sub_ops) = (fq.add().code.operations(), fq.sub().code.operations());
    if code == FormulaCode::Registers {
        return mul_ops + add_ops + sub_ops;
    }
    Straight::of(program, curve)
        .ops
        .iter()
        .map(|(op, _, _)| match op {
            FqOp::Mul | FqOp::MulConst => mul_ops,
            FqOp::Add => add_ops,
            FqOp::Sub => sub_ops,
        })
        .sum()
}

/// WGSL reading Fq element words (`fq_words` of them) at `o` of storage array `buf`
/// (`{buf}_fq(o)`) and, if `write`, writing them (`{buf}_set_fq(o, a)`); then the same
/// per coordinate of `ext` Fq (`{buf}_coord`, `{buf}_set_coord`).
pub(crate) fn wgsl_buffer_io(buf: &str, write: bool, ext: usize, fq_words: usize) -> String {
    let words: Vec<String> = (0..fq_words).map(|k| format!("{buf}[o + {k}u]")).collect();
    let mut s = format!(
        "fn {buf}_fq(o: u32) -> Fq {{\n    return fq_from_words(array<u32, {fq_words}>({}));\n}}\n",
        words.join(", ")
    );
    let coord = if ext == 1 {
        format!("fn {buf}_coord(o: u32) -> Fq {{\n    return {buf}_fq(o);\n}}\n")
    } else {
        format!("fn {buf}_coord(o: u32) -> Fq2 {{\n    return Fq2({buf}_fq(o), {buf}_fq(o + {fq_words}u));\n}}\n")
    };
    s += &coord;
    if write {
        let stores: String = (0..fq_words)
            .map(|k| format!("    {buf}[o + {k}u] = w[{k}];\n"))
            .collect();
        s += &format!(
            "fn {buf}_set_fq(o: u32, a: Fq) {{\n    let w = fq_to_words(a);\n{stores}}}\n"
        );
        s += &if ext == 1 {
            format!("fn {buf}_set_coord(o: u32, c: Fq) {{\n    {buf}_set_fq(o, c);\n}}\n")
        } else {
            format!(
                "fn {buf}_set_coord(o: u32, c: Fq2) {{\n    {buf}_set_fq(o, c.c0);\n    {buf}_set_fq(o + {fq_words}u, c.c1);\n}}\n"
            )
        };
    }
    s
}

/// The curve-specific head of an MSM module over the point addition `add` (G1 or G2)
/// of `curve`: the names shaders/msm_values.wgsl is written in, and its buffers'
/// readers and writers.
pub(crate) fn wgsl_msm_curve(curve: &CurveParams, add: Program) -> String {
    let fq_words = curve.fq.packed_words();
    let e = add.ext();
    let (coord, point, affine, one, zero, is_zero, neg, ark_r) = if e == 1 {
        (
            "Fq",
            "G1P",
            "G1A",
            "FQ_ONE",
            "FQ_ZERO",
            "fq_is_zero(c)",
            "fq_sub(FQ_ZERO, c)",
            "FQ_ARK_R",
        )
    } else {
        (
            "Fq2",
            "G2P",
            "G2A",
            "Fq2(FQ_ONE, FQ_ZERO)",
            "Fq2(FQ_ZERO, FQ_ZERO)",
            "fq_is_zero(c.c0) && fq_is_zero(c.c1)",
            "Fq2(fq_sub(FQ_ZERO, c.c0), fq_sub(FQ_ZERO, c.c1))",
            "Fq2(FQ_ARK_R, FQ_ZERO)",
        )
    };
    let name = add.name();
    let mut s = format!(
        "// The curve of this MSM module: {point} (generated by straight.rs).\n\
         alias Coord = {coord};\n\
         alias Point = {point};\n\
         alias Affine = {affine};\n\
         const COORD_WORDS: u32 = {}u;\n\
         fn coord_one() -> Coord {{\n    return {one};\n}}\n\
         fn coord_zero() -> Coord {{\n    return {zero};\n}}\n\
         fn coord_is_zero(c: Coord) -> bool {{\n    return {is_zero};\n}}\n\
         fn coord_neg(c: Coord) -> Coord {{\n    return {neg};\n}}\n\
         fn affine_z() -> Coord {{\n    return {ark_r};\n}}\n\
         fn point_add(p: Point, q: Point) -> Point {{\n    return {name}(p, q);\n}}\n\
         fn point_add_affine(p: Point, q: Affine) -> Point {{\n    return {name}_affine(p, q);\n}}\n",
        fq_words * e
    );
    for (buf, write) in [
        ("bases", false),
        ("partials", true),
        ("level_in", false),
        ("level_out", true),
    ] {
        s += &wgsl_buffer_io(buf, write, e, fq_words);
    }
    s
}

/// Test entry points `program_op_<name>` of every program (shaders/program_test.wgsl's
/// bindings and parameters), every element read and written as it is: field operands
/// in R' form (the host converts them), points in either (field_code.rs says why).
pub(crate) fn wgsl_test_entries(curve: &CurveParams, programs: &[Program]) -> String {
    let w = curve.fq.packed_words();
    let mut s = String::from("// Straight-line test entry points (generated by straight.rs).\n");
    s += &wgsl_buffer_io("a", false, 1, w);
    s += &wgsl_buffer_io("b", false, 1, w);
    s += &wgsl_buffer_io("out", true, 1, w);
    let head = |name: &str| {
        format!(
            "\n@compute @workgroup_size(64)\nfn program_op_{name}(@builtin(global_invocation_id) gid: vec3<u32>) {{\n    let i = gid.x;\n    if i >= params.count {{\n        return;\n    }}\n"
        )
    };
    let field = |e: usize| {
        programs
            .iter()
            .filter(move |p| p.ext() == e && !matches!(p, Program::G1Add | Program::G2Add))
    };
    for p in field(1) {
        s += &head(p.name());
        s += &format!(
            "    out_set_fq({w}u * i, {}(a_fq({w}u * i), b_fq({w}u * i)));\n}}\n",
            p.name()
        );
    }
    for p in field(2) {
        s += &head(p.name());
        s += &format!(
            "    let o = {}u * i;\n    let r = {}(Fq2(a_fq(o), a_fq(o + {w}u)), Fq2(b_fq(o), b_fq(o + {w}u)));\n    out_set_fq(o, r.c0);\n    out_set_fq(o + {w}u, r.c1);\n}}\n",
            2 * w,
            p.name()
        );
    }
    // Modes as program_test.wgsl: 0 projective Q, 1 affine Q (stored identity: none
    // added), 2 Q = P.
    for (p, point, affine) in [
        (Program::G1Add, "G1P", "G1A"),
        (Program::G2Add, "G2P", "G2A"),
    ]
    .into_iter()
    .filter(|(p, _, _)| programs.contains(p))
    {
        let e = p.ext();
        let cw = w * e;
        let get = |buf: &str, o: String| {
            if e == 1 {
                format!("{buf}_fq({o})")
            } else {
                format!("Fq2({buf}_fq({o}), {buf}_fq({o} + {w}u))")
            }
        };
        let set = |c: &str, at: usize| {
            if e == 1 {
                format!("    out_set_fq(o + {at}u, r.{c});\n")
            } else {
                format!(
                    "    out_set_fq(o + {at}u, r.{c}.c0);\n    out_set_fq(o + {}u, r.{c}.c1);\n",
                    at + w
                )
            }
        };
        let is_zero = |c: &str| {
            if e == 1 {
                format!("fq_is_zero(q.{c})")
            } else {
                format!("fq_is_zero(q.{c}.c0) && fq_is_zero(q.{c}.c1)")
            }
        };
        s += &head(p.name());
        s += &format!(
            "    let o = {}u * i;\n    let p = {point}({}, {}, {});\n    var r = p;\n",
            3 * cw,
            get("a", "o".into()),
            get("a", format!("o + {cw}u")),
            get("a", format!("o + {}u", 2 * cw)),
        );
        s += &format!(
            "    if params.mode == 1u {{\n        let q = {affine}({}, {});\n        if !({} && {}) {{\n            r = {}_affine(p, q);\n        }}\n    }} else {{\n        var q = p;\n        if params.mode == 0u {{\n            q = {point}({}, {}, {});\n        }}\n        r = {}(p, q);\n    }}\n",
            get("b", format!("{}u * i", 2 * cw)),
            get("b", format!("{}u * i + {cw}u", 2 * cw)),
            is_zero("x"),
            is_zero("y"),
            p.name(),
            get("b", "o".into()),
            get("b", format!("o + {cw}u")),
            get("b", format!("o + {}u", 2 * cw)),
            p.name(),
        );
        s += &set("x", 0);
        s += &set("y", cw);
        s += &set("z", 2 * cw);
        s += "}\n";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::short_weierstrass::{Projective, SWCurveConfig};
    use ark_ec::{CurveConfig, CurveGroup};
    use ark_ff::{AdditiveGroup, Field, PrimeField, UniformRand};
    use ark_std::rand::{rngs::StdRng, SeedableRng};
    use crucible_core::{Bls12_381, Bn254, PairingCurve};

    /// `E`'s G2 coordinates' field (Fq2).
    type Fq2<E> = <<E as PairingCurve>::G2Config as CurveConfig>::BaseField;

    fn params<E: PairingCurve>() -> CurveParams {
        CurveParams::of::<E>().expect("a supported curve")
    }

    /// The programs' constants of `curve` as elements of `F` (its Fq).
    fn constants<F: PrimeField>(curve: &CurveParams) -> Vec<F> {
        curve.program_constants().into_iter().map(F::from).collect()
    }

    fn apply<F: Field>(op: FqOp, a: F, b: F) -> F {
        match op {
            FqOp::Mul | FqOp::MulConst => a * b,
            FqOp::Add => a + b,
            FqOp::Sub => a - b,
        }
    }

    /// Runs the interpreter form: the instruction words, decoded as the shader does.
    fn interpret<F: PrimeField>(program: Program, curve: &CurveParams, regs: &mut [F]) {
        let consts = constants::<F>(curve);
        for ins in program.assemble(curve).code {
            let (op, d, a, b) = decode(ins);
            let b = if op == FqOp::MulConst {
                consts[b]
            } else {
                regs[b]
            };
            regs[d] = apply(op, regs[a], b);
        }
    }

    /// Runs the straight-line form on values (`ark_r`: FqConst::ArkR's value); returns
    /// the outputs.
    fn run<F: PrimeField>(s: &Straight, curve: &CurveParams, regs: &[F], ark_r: F) -> Vec<F> {
        let consts = constants::<F>(curve);
        let mut values: Vec<F> = Vec::new();
        let get = |values: &Vec<F>, v: Value| match v {
            Value::Input(r) => regs[r],
            Value::Op(k) => values[k],
            Value::Const(FqConst::Zero) => F::ZERO,
            Value::Const(FqConst::One) => F::ONE,
            Value::Const(FqConst::ArkR) => ark_r,
            Value::Const(FqConst::Program(k)) => consts[k],
        };
        for (op, a, b) in &s.ops {
            let x = apply(*op, get(&values, *a), get(&values, *b));
            values.push(x);
        }
        s.outputs.iter().map(|(_, v)| get(&values, *v)).collect()
    }

    fn seed() -> u64 {
        crucible_core::run_seed::run_seed()
    }

    fn check_translation<E: PairingCurve>(rng: &mut StdRng, seed: u64) {
        let curve = params::<E>();
        for p in Program::ALL {
            let s = Straight::of(p, &curve);
            assert_eq!(s.ops.len(), p.range(&curve).len as usize, "{p:?}");
            let regs_used = p.assemble(&curve).regs;
            for _ in 0..4 {
                let start: Vec<E::BaseField> =
                    (0..regs_used).map(|_| E::BaseField::rand(rng)).collect();
                let mut a = start.clone();
                interpret(p, &curve, &mut a);
                let b = run(&s, &curve, &start, E::BaseField::ZERO);
                let want: Vec<_> = p.outputs().map(|r| a[r]).collect();
                assert_eq!(want, b, "{} {p:?} (seed {seed})", curve.name);
            }
            let text = s.wgsl();
            assert_eq!(text.matches(" = fq_").count(), s.ops.len(), "{text}");
            assert!(text.contains(&format!("fn {}(", p.name())), "{text}");
            assert!(!text.contains("regs"), "{text}");
        }
    }

    #[test]
    fn straight_form_reads_only_inputs_and_computes_what_the_interpreter_does() {
        let seed = seed();
        let mut rng = StdRng::seed_from_u64(seed);
        check_translation::<Bls12_381>(&mut rng, seed);
        check_translation::<Bn254>(&mut rng, seed);
    }

    /// Sums of random points, Q projective with a random Z, or affine as the MSM
    /// reads a stored base: (x·λ, y·λ) with Z = λ (λ = R/R' in value terms).
    fn check_add<E: PairingCurve, P: SWCurveConfig>(
        program: Program,
        rng: &mut StdRng,
        seed: u64,
        coords: impl Fn(P::BaseField) -> Vec<E::BaseField>,
        field: impl Fn(&[E::BaseField]) -> P::BaseField,
    ) {
        let curve = params::<E>();
        let e = program.ext();
        let one = E::BaseField::ONE;
        for lambda in [one, E::BaseField::from(2u64).pow([6]).inverse().unwrap()] {
            let z_const = if lambda == one {
                FqConst::One
            } else {
                FqConst::ArkR
            };
            for mixed in [false, true] {
                let s = if mixed {
                    Straight::mixed(program, &curve, z_const)
                } else {
                    Straight::of(program, &curve)
                };
                let (p, q) = (
                    Projective::<P>::rand(rng).into_affine(),
                    Projective::<P>::rand(rng).into_affine(),
                );
                let (zp, zq) = (P::BaseField::rand(rng), P::BaseField::rand(rng));
                let lam = field(&[lambda, E::BaseField::ZERO][..e]);
                let zq = if mixed { lam } else { zq };
                let mut regs = vec![E::BaseField::ZERO; program.assemble(&curve).regs];
                for (at, pt, z) in [(0, p, zp), (3, q, zq)] {
                    for (k, c) in [pt.x * z, pt.y * z, z].into_iter().enumerate() {
                        regs[(at + k) * e..(at + k + 1) * e].copy_from_slice(&coords(c));
                    }
                }
                let out = run(&s, &curve, &regs, lambda);
                let (x, y, z) = (
                    field(&out[..e]),
                    field(&out[e..2 * e]),
                    field(&out[2 * e..]),
                );
                let z_inv = z.inverse().expect("P + Q is not the identity");
                let sum = (p + q).into_affine();
                assert_eq!(
                    (x * z_inv, y * z_inv),
                    (sum.x, sum.y),
                    "{} {program:?} mixed {mixed} λ {lambda} (seed {seed})",
                    curve.name
                );
                if mixed && z_const == FqConst::One {
                    assert!(
                        s.ops.len() < Straight::of(program, &curve).ops.len(),
                        "Z = 1 folds"
                    );
                }
            }
        }
    }

    /// Fq2's c0 and c1 of `x` as elements of `F`, and back.
    fn fq2_coords<E: PairingCurve>(x: Fq2<E>) -> Vec<E::BaseField> {
        x.to_base_prime_field_elements()
            .map(|c| E::BaseField::from(c.into_bigint().into()))
            .collect()
    }

    fn fq2_of<E: PairingCurve>(c: &[E::BaseField]) -> Fq2<E> {
        let parts = c
            .iter()
            .map(|x| <Fq2<E> as Field>::BasePrimeField::from(x.into_bigint().into()));
        Fq2::<E>::from_base_prime_field_elems(parts).expect("two coordinates")
    }

    fn check_curve_formulas<E: PairingCurve>(rng: &mut StdRng, seed: u64) {
        let curve = params::<E>();
        let (x, y) = (Fq2::<E>::rand(rng), Fq2::<E>::rand(rng));
        let mut regs = fq2_coords::<E>(x);
        regs.extend(fq2_coords::<E>(y));
        let out = run(
            &Straight::of(Program::Fq2Mul, &curve),
            &curve,
            &regs,
            E::BaseField::ZERO,
        );
        assert_eq!(fq2_of::<E>(&out), x * y, "{} (seed {seed})", curve.name);
        check_add::<E, E::G1Config>(Program::G1Add, rng, seed, |c| vec![c], |c| c[0]);
        check_add::<E, E::G2Config>(Program::G2Add, rng, seed, fq2_coords::<E>, fq2_of::<E>);
    }

    #[test]
    fn straight_formulas_match_arkworks() {
        let seed = seed();
        let mut rng = StdRng::seed_from_u64(seed);
        check_curve_formulas::<Bls12_381>(&mut rng, seed);
        check_curve_formulas::<Bn254>(&mut rng, seed);
    }

    #[test]
    fn straight_wgsl_excerpt() {
        let bls = params::<Bls12_381>();
        let s = Straight::of(Program::Fq2Mul, &bls).wgsl();
        assert!(s.contains("fn fq2_mul(a: Fq2, b: Fq2) -> Fq2 {"), "{s}");
        assert!(s.contains("    let v0 = fq_mul(a.c0, b.c0);\n"), "{s}");
        assert!(s.contains("    return Fq2("), "{s}");
        let g = Straight::mixed(Program::G1Add, &bls, FqConst::One).wgsl();
        assert!(
            g.contains("fn g1_add_affine(p: G1P, q: G1A) -> G1P {"),
            "{g}"
        );
        assert!(!g.contains("q.z"), "{g}");
        assert!(g.contains("return G1P("), "{g}");
        assert!(!g.contains("FQ_CONST_"), "{g}");
        // BN254's G2 multiplies by 3b' = 9/(9 + u): three products by constants.
        let bn = params::<Bn254>();
        let g2 = Straight::of(Program::G2Add, &bn).wgsl();
        for k in 0..3 {
            assert_eq!(g2.matches(&format!("FQ_CONST_{k})")).count(), 2, "{g2}");
        }
    }
}
