//! Formulas as programs: Fq2 and curve arithmetic are not written in WGSL by hand.
//! [`Program`]s assemble them here into Fq instructions, and each program is emitted in
//! two forms from that one instruction list ([`Formulas`](crate::Formulas) picks one per
//! adapter):
//!
//! - **interpreted**: the instructions as data that shaders/interpreter.wgsl runs.
//!   Shader compilers inline every call, and a G2 addition written out compiled for
//!   minutes on llvmpipe; as a program it is one inlined copy each of `fq_mul`, `fq_add`
//!   and `fq_sub`. The cost is a register file indexed at run time (local memory) and
//!   a branch per Fq operation, about 90 times slower than CUDA on an H200;
//! - **straight-line**, for hardware adapters (straight.rs): each program in
//!   static single assignment as a WGSL function on values, `fn g1_add(p: G1P, q: G1P)
//!   -> G1P` with `let` bindings, over the loop-free Fq code of field_code.rs, so
//!   that a GPU compiler keeps every intermediate in registers (straight-line
//!   functions that read and write a register file measure no faster than the
//!   interpreter: 937.6 against 903 ms for a G1 MSM of 2^20 on an H200). llvmpipe
//!   compiles it slowly, so software adapters keep the interpreter.
//!
//! The programs depend on the curve only through 3b (curve.rs's [`B3`]): additions for
//! a small multiple, products by the curve's constants otherwise (the instruction
//! `MulConst`, whose constant each form holds in its own Montgomery form).

use super::curve::{CurveParams, B3};
use super::field16::{montgomery16, wgsl_element_array};

/// An interpreter program: where it starts in [`PROGRAM`](wgsl_programs)'s words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramRange {
    /// First instruction.
    pub start: u32,
    /// Number of instructions.
    pub len: u32,
}

/// The programs the shaders can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Program {
    /// Fq: `regs[2] = regs[0] + regs[1]`.
    FqAdd,
    /// Fq: `regs[2] = regs[0] − regs[1]`.
    FqSub,
    /// Fq: `regs[2] = regs[0] · regs[1]`.
    FqMul,
    /// Fq2 (two registers each): regs[4..6] = regs[0..2] + regs[2..4].
    Fq2Add,
    /// Fq2: difference.
    Fq2Sub,
    /// Fq2: product (Karatsuba, u² = −1).
    Fq2Mul,
    /// G1: P + Q: P in regs[0..3], Q in regs[3..6], P + Q written to regs[6..9]
    /// (X, Y, Z each).
    G1Add,
    /// G2: P + Q, the same with two registers per coordinate (P at 0, Q at 6, P + Q at 12).
    G2Add,
}

impl Program {
    /// Every program, in the order of the shared instruction array.
    pub const ALL: [Program; 8] = [
        Program::FqAdd,
        Program::FqSub,
        Program::FqMul,
        Program::Fq2Add,
        Program::Fq2Sub,
        Program::Fq2Mul,
        Program::G1Add,
        Program::G2Add,
    ];

    /// Fq per coordinate: 1 over Fq, 2 over Fq2.
    pub fn ext(self) -> usize {
        match self {
            Program::FqAdd | Program::FqSub | Program::FqMul | Program::G1Add => 1,
            Program::Fq2Add | Program::Fq2Sub | Program::Fq2Mul | Program::G2Add => 2,
        }
    }

    /// Where the program lies in the shared instruction array of `curve`'s programs.
    pub fn range(self, curve: &CurveParams) -> ProgramRange {
        let mut start = 0;
        for p in Program::ALL {
            let len = p.assemble(curve).code.len() as u32;
            if p == self {
                return ProgramRange { start, len };
            }
            start += len;
        }
        unreachable!("every program is in Program::ALL")
    }

    /// The program's name in generated WGSL (its straight-line function).
    pub fn name(self) -> &'static str {
        match self {
            Program::FqAdd => "fq_add",
            Program::FqSub => "fq_sub",
            Program::FqMul => "fq_mul",
            Program::Fq2Add => "fq2_add",
            Program::Fq2Sub => "fq2_sub",
            Program::Fq2Mul => "fq2_mul",
            Program::G1Add => "g1_add",
            Program::G2Add => "g2_add",
        }
    }

    /// The straight-line form's test entry point of the program (straight.rs's
    /// test module).
    pub fn straight_entry(self) -> &'static str {
        match self {
            Program::FqAdd => "program_op_fq_add",
            Program::FqSub => "program_op_fq_sub",
            Program::FqMul => "program_op_fq_mul",
            Program::Fq2Add => "program_op_fq2_add",
            Program::Fq2Sub => "program_op_fq2_sub",
            Program::Fq2Mul => "program_op_fq2_mul",
            Program::G1Add => "program_op_g1_add",
            Program::G2Add => "program_op_g2_add",
        }
    }

    /// Registers the program reads before writing them: its operands (two field
    /// elements, or two points).
    pub fn inputs(self) -> std::ops::Range<usize> {
        let e = self.ext();
        match self {
            Program::G1Add | Program::G2Add => 0..6 * e,
            _ => 0..2 * e,
        }
    }

    /// Registers holding the result when it ends (the rest up to `PROGRAM_REGS` are
    /// scratch).
    pub fn outputs(self) -> std::ops::Range<usize> {
        let e = self.ext();
        match self {
            Program::G1Add | Program::G2Add => 6 * e..9 * e,
            _ => 2 * e..3 * e,
        }
    }

    /// The program's instructions over `curve`'s constants.
    pub(crate) fn assemble(self, curve: &CurveParams) -> Asm {
        let e = self.ext();
        match self {
            Program::FqAdd | Program::Fq2Add => field_program(e, Asm::add),
            Program::FqSub | Program::Fq2Sub => field_program(e, Asm::sub),
            Program::FqMul | Program::Fq2Mul => field_program(e, Asm::mul),
            Program::G1Add | Program::G2Add => point_add(e, curve.b3(e)),
        }
    }
}

/// An Fq operation of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FqOp {
    Mul = 0,
    Add = 1,
    Sub = 2,
    /// A product by the curve's program constant numbered by the instruction's `b`
    /// field (not a register).
    MulConst = 3,
}

impl FqOp {
    /// Decodes an instruction's operation the way shaders/interpreter.wgsl does.
    fn of(ins: u32) -> FqOp {
        match ins & 3 {
            0 => FqOp::Mul,
            1 => FqOp::Add,
            2 => FqOp::Sub,
            _ => FqOp::MulConst,
        }
    }

    /// The WGSL function computing it.
    pub(crate) fn wgsl(self) -> &'static str {
        match self {
            FqOp::Mul | FqOp::MulConst => "fq_mul",
            FqOp::Add => "fq_add",
            FqOp::Sub => "fq_sub",
        }
    }
}

/// Fields of an instruction: (op, d, a, b), as shaders/interpreter.wgsl decodes them
/// (`b` a constant's index for [`FqOp::MulConst`]).
pub(crate) fn decode(ins: u32) -> (FqOp, usize, usize, usize) {
    let field = |shift: u32| ((ins >> shift) & 0xff) as usize;
    (FqOp::of(ins), field(2), field(10), field(18))
}

/// Assembles Fq instructions; an element of Fq^ext is `ext` consecutive registers,
/// scratch registers start at `temps`.
pub(crate) struct Asm {
    ext: usize,
    temps: usize,
    /// The instruction words.
    pub(crate) code: Vec<u32>,
    /// Registers used.
    pub(crate) regs: usize,
}

impl Asm {
    fn new(ext: usize, temps: usize) -> Asm {
        Asm {
            ext,
            temps,
            code: Vec::new(),
            regs: temps,
        }
    }

    fn fq(&mut self, op: FqOp, d: usize, a: usize, b: usize) {
        self.regs = self.regs.max(d + 1).max(a + 1);
        if op != FqOp::MulConst {
            self.regs = self.regs.max(b + 1);
        }
        self.code
            .push(op as u32 | (d as u32) << 2 | (a as u32) << 10 | (b as u32) << 18);
    }

    fn temp(&self, k: usize) -> usize {
        self.temps + k
    }

    fn add(&mut self, d: usize, a: usize, b: usize) {
        for k in 0..self.ext {
            self.fq(FqOp::Add, d + k, a + k, b + k);
        }
    }

    fn sub(&mut self, d: usize, a: usize, b: usize) {
        for k in 0..self.ext {
            self.fq(FqOp::Sub, d + k, a + k, b + k);
        }
    }

    // Writes d only after reading a and b, so d may alias them.
    fn mul(&mut self, d: usize, a: usize, b: usize) {
        if self.ext == 1 {
            self.fq(FqOp::Mul, d, a, b);
            return;
        }
        // Karatsuba over Fq2: v0 = a0·b0, v1 = a1·b1, s = (a0 + a1)(b0 + b1);
        // d = (v0 − v1) + (s − v0 − v1)·u.
        let (v0, v1, s, t) = (self.temp(0), self.temp(1), self.temp(2), self.temp(3));
        self.fq(FqOp::Mul, v0, a, b);
        self.fq(FqOp::Mul, v1, a + 1, b + 1);
        self.fq(FqOp::Add, s, a, a + 1);
        self.fq(FqOp::Add, t, b, b + 1);
        self.fq(FqOp::Mul, s, s, t);
        self.fq(FqOp::Sub, s, s, v0);
        self.fq(FqOp::Sub, d + 1, s, v1);
        self.fq(FqOp::Sub, d, v0, v1);
    }

    // d = k·a in Fq (k ≥ 2) by additions, through scratch register t; d may be a.
    // 2^h + 2^l: t = 2^l·a, then d = 2^(h−l)·t + t (12: 8a + 4a); 2^h + 1: t = 2^h·a,
    // d = t + a (9); other k by doubling and adding from the top bit, in t but for
    // the last addition.
    fn mul_small(&mut self, d: usize, a: usize, k: u64, t: usize) {
        let h = 63 - k.leading_zeros();
        let low = k - (1 << h);
        if low == 0 {
            self.fq(FqOp::Add, d, a, a);
            for _ in 1..h {
                self.fq(FqOp::Add, d, d, d);
            }
        } else if low.is_power_of_two() && low > 1 {
            let l = low.trailing_zeros();
            self.fq(FqOp::Add, t, a, a);
            for _ in 1..l {
                self.fq(FqOp::Add, t, t, t);
            }
            self.fq(FqOp::Add, d, t, t);
            for _ in 1..h - l {
                self.fq(FqOp::Add, d, d, d);
            }
            self.fq(FqOp::Add, d, d, t);
        } else if low == 1 {
            self.fq(FqOp::Add, t, a, a);
            for _ in 1..h {
                self.fq(FqOp::Add, t, t, t);
            }
            self.fq(FqOp::Add, d, t, a);
        } else {
            let mut steps = vec![(t, a, a)];
            for bit in (0..h).rev() {
                if bit + 1 < h {
                    steps.push((t, t, t));
                }
                if (k >> bit) & 1 == 1 {
                    steps.push((t, t, a));
                }
            }
            if let Some(last) = steps.last_mut() {
                last.0 = d;
            }
            for (x, y, z) in steps {
                self.fq(FqOp::Add, x, y, z);
            }
        }
    }

    // d = 3·b·a (d may be a), as the curve's [`B3`] says: over Fq2 a small k on each
    // coordinate; k(1 + u)·(a0 + a1·u) = k(a0 − a1) + k(a0 + a1)·u; or by constants
    // c0 + c1·u (Karatsuba: v0 = a0·c0, v1 = a1·c1,
    // d = (v0 − v1) + ((a0 + a1)(c0 + c1) − v0 − v1)·u).
    fn mul_b3(&mut self, d: usize, a: usize, b3: B3) {
        if self.ext == 1 {
            match b3 {
                B3::Constant(at) => self.fq(FqOp::MulConst, d, a, at),
                B3::Small(k) | B3::SmallOnePlusU(k) => {
                    let t = self.temp(0);
                    self.mul_small(d, a, k, t);
                }
            }
            return;
        }
        let (u, v, t) = (self.temp(4), self.temp(5), self.temp(6));
        match b3 {
            B3::Small(k) => {
                self.mul_small(d, a, k, t);
                self.mul_small(d + 1, a + 1, k, t);
            }
            B3::SmallOnePlusU(k) => {
                self.fq(FqOp::Sub, u, a, a + 1);
                self.fq(FqOp::Add, v, a, a + 1);
                self.mul_small(d, u, k, t);
                self.mul_small(d + 1, v, k, t);
            }
            B3::Constant(at) => {
                self.fq(FqOp::MulConst, u, a, at);
                self.fq(FqOp::MulConst, v, a + 1, at + 1);
                self.fq(FqOp::Add, t, a, a + 1);
                self.fq(FqOp::MulConst, t, t, at + 2);
                self.fq(FqOp::Sub, t, t, u);
                self.fq(FqOp::Sub, d + 1, t, v);
                self.fq(FqOp::Sub, d, u, v);
            }
        }
    }
}

fn field_program(ext: usize, op: fn(&mut Asm, usize, usize, usize)) -> Asm {
    let mut asm = Asm::new(ext, 3 * ext);
    op(&mut asm, 2 * ext, 0, ext);
    asm
}

/// P + Q, complete, for y² = x³ + b (a = 0) in homogeneous projective coordinates:
/// algorithm 7 of Renes, Costello and Batina, "Complete addition formulas for prime
/// order elliptic curves" (2015). One formula covers P + Q, P + P, P + (−P) and the
/// identity (0 : 1 : 0), so accumulation never branches on point values and doubling
/// is P + P. It is complete on groups without points of order two, as the G1 and G2
/// subgroups are (odd prime order).
fn point_add(ext: usize, b3: B3) -> Asm {
    let fe = |k: usize| k * ext;
    let (x1, y1, z1, x2, y2, z2, x3, y3, z3) = (
        fe(0),
        fe(1),
        fe(2),
        fe(3),
        fe(4),
        fe(5),
        fe(6),
        fe(7),
        fe(8),
    );
    let (t0, t1, t2, t3, t4) = (fe(9), fe(10), fe(11), fe(12), fe(13));
    let mut a = Asm::new(ext, fe(14));
    a.mul(t0, x1, x2);
    a.mul(t1, y1, y2);
    a.mul(t2, z1, z2);
    a.add(t3, x1, y1);
    a.add(t4, x2, y2);
    a.mul(t3, t3, t4);
    a.add(t4, t0, t1);
    a.sub(t3, t3, t4);
    a.add(t4, y1, z1);
    a.add(x3, y2, z2);
    a.mul(t4, t4, x3);
    a.add(x3, t1, t2);
    a.sub(t4, t4, x3);
    a.add(x3, x1, z1);
    a.add(y3, x2, z2);
    a.mul(x3, x3, y3);
    a.add(y3, t0, t2);
    a.sub(y3, x3, y3);
    a.add(x3, t0, t0);
    a.add(t0, x3, t0);
    a.mul_b3(t2, t2, b3);
    a.add(z3, t1, t2);
    a.sub(t1, t1, t2);
    a.mul_b3(y3, y3, b3);
    a.mul(x3, t4, y3);
    a.mul(t2, t3, t1);
    a.sub(x3, t2, x3);
    a.mul(y3, y3, t0);
    a.mul(t1, t1, z3);
    a.add(y3, t1, y3);
    a.mul(t0, t0, t3);
    a.mul(z3, z3, t4);
    a.add(z3, z3, t0);
    a
}

/// Registers past the programs' own, free for kernels to keep points in (five G2
/// points).
const SPARE_REGS: usize = 30;

/// The interpreter's constants: every program's instructions (over `curve`'s
/// constants) in one array, its length, the registers the largest program uses
/// (`PROGRAM_REGS`) and the register file's size (`REGS`, with `SPARE_REGS` more).
pub fn wgsl_programs(curve: &CurveParams) -> String {
    let mut words = Vec::new();
    let mut regs = 0;
    for p in Program::ALL {
        let asm = p.assemble(curve);
        words.extend(asm.code);
        regs = regs.max(asm.regs);
    }
    let items: Vec<String> = words.iter().map(|w| format!("0x{w:07x}u")).collect();
    format!(
        "// Generated by wgsl/programs.rs: the interpreter's programs.\n\
         const PROGRAM_LEN: u32 = {}u;\n\
         const PROGRAM = array<u32, {}>({});\n\
         const PROGRAM_REGS: u32 = {regs}u;\n\
         const REGS: u32 = {}u;\n",
        words.len(),
        words.len(),
        items.join(", "),
        regs + SPARE_REGS
    )
}

/// The `else` branch of shaders/interpreter.wgsl's dispatch, where an instruction
/// with a constant operand splits off.
const INTERPRETER_SUB: &str = "        } else {\n            r = fq_sub(a, b);\n        }\n";

/// shaders/interpreter.wgsl (`interpreter`) for `curve`'s programs: as it is where
/// every 3b is small; otherwise with the programs' constants (`PROGRAM_CONSTS`, in the
/// loop code's Montgomery form, arkworks' R) and the dispatch's branch for
/// [`FqOp::MulConst`].
pub fn wgsl_interpreter(curve: &CurveParams, interpreter: &str) -> String {
    let constants = curve.program_constants();
    if constants.is_empty() {
        return interpreter.to_string();
    }
    assert!(
        interpreter.contains(INTERPRETER_SUB),
        "shaders/interpreter.wgsl's dispatch ends with the subtraction"
    );
    let values: Vec<Vec<u32>> = constants
        .iter()
        .map(|c| montgomery16(&curve.fq, c))
        .collect();
    let mut s = format!(
        "// The programs' constants (wgsl/programs.rs), in the Fq code's Montgomery form.\n{}\
         var<private> program_consts: array<Fq, {}> = PROGRAM_CONSTS;\n\n",
        wgsl_element_array("PROGRAM_CONSTS", "Fq", &values),
        values.len()
    );
    s += &interpreter.replacen(
        INTERPRETER_SUB,
        "        } else if op == 2u {\n            r = fq_sub(a, b);\n        } else {\n            \
         r = fq_mul(a, program_consts[(ins >> 18u) & 0xffu]);\n        }\n",
        1,
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::UniformRand;
    use ark_std::rand::{rngs::StdRng, SeedableRng};
    use crucible_core::Fq;

    /// k·a by additions for every small k, into a register of its own and in place.
    #[test]
    fn small_multiples_by_additions() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        for k in 2..=64u64 {
            for d in [0, 1] {
                let mut asm = Asm::new(1, 2);
                asm.mul_small(d, 0, k, 2);
                let a = Fq::rand(&mut rng);
                let mut regs = [a, Fq::from(0u64), Fq::from(0u64)];
                for ins in &asm.code {
                    let (op, d, x, y) = decode(*ins);
                    assert_eq!(op, FqOp::Add);
                    regs[d] = regs[x] + regs[y];
                }
                assert_eq!(
                    regs[d],
                    a * Fq::from(k),
                    "{k}·a into register {d} (seed {seed})"
                );
                assert!(asm.code.len() <= 2 * 6, "{k}: {} additions", asm.code.len());
            }
        }
        // 12 = 8 + 4 as four additions: t = 2a, t = 4a, d = 8a, d = 12a.
        let mut asm = Asm::new(1, 2);
        asm.mul_small(0, 0, 12, 1);
        let fields: Vec<_> = asm.code.iter().map(|i| decode(*i)).collect();
        assert_eq!(
            fields,
            [
                (FqOp::Add, 1, 0, 0),
                (FqOp::Add, 1, 1, 1),
                (FqOp::Add, 0, 1, 1),
                (FqOp::Add, 0, 0, 1)
            ]
        );
    }
}
