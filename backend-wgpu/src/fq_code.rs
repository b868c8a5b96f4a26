//! Fq arithmetic for hardware adapters, generated as loop-free WGSL over `b`-bit limbs.
//!
//! The interpreter's Fq code (shaders/fr.wgsl renamed) loops over 16-bit limbs with
//! a carry per product. Here every Fq function is written out by Rust: each limb a
//! `let`, the modulus and the Montgomery constants literals, no loop and no array
//! indexed at run time, so that a GPU compiler keeps everything in registers and
//! schedules freely.
//!
//! # Limbs and deferred carries
//!
//! An element is `n = ⌈384 / b⌉` limbs of `b` bits, one per `u32`. WGSL has no widening
//! multiply, so a limb product must fit 32 bits, and the narrower the limb, the more
//! products a `u32` column can sum before its carry must move on: with 13-bit limbs
//! (30 of them) every one of the 2n = 60 products of a Montgomery column fits
//! (60·(2^13 − 1)² < 2^32), so the whole multiplication is multiply-adds with one
//! carry per row, against 16-bit limbs' shift, mask and add after every product.
//! Whether 13 or 15 bits (26 limbs, a carry every few products) or 16 bits (24 limbs)
//! is fastest depends on the adapter's integer multiply rate: [`LimbBits`] is a knob,
//! measured on the H200 (`CRUCIBLE_WGPU_LIMB_BITS`). The builder tracks an upper bound
//! of every value and moves a column's carry only where the next product could
//! overflow it, and refuses (panics while generating, which the unit tests exercise
//! for every choice) any operation it cannot prove free of overflow.
//!
//! # Montgomery form
//!
//! Products are Montgomery products with R' = 2^(b·n) (2^390 for 13-bit limbs):
//! `mul(x, y) = x·y/R' mod p`. Device buffers hold arkworks' form x·R (R = 2^384)
//! packed in 12 words; [`FqCode`] unpacks and packs those bits unchanged, so a value
//! read as is means x·R/R' in the shaders. Projective points do not mind (all three
//! coordinates scale alike), affine bases get Z = R mod p (`FQ_ARK_R`), which makes
//! (x·R/R' : y·R/R' : R/R') the same point, and only the field test kernels' operands
//! convert, on the host ([`words_to_internal`], [`words_from_internal`]).

use ark_ff::{Field, PrimeField};
use crucible_core::Fq;

use crate::error::WgpuError;
use crate::field::{DeviceElement, FQ_WORDS};

/// Index of a value in a [`Code`].
pub type V = usize;

/// Bits of one Fq limb in the generated (hardware) arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LimbBits(u32);

impl LimbBits {
    /// The default: 15-bit limbs (26 of them, a carry every few products). On the
    /// H200's Vulkan driver MSM G1 2^20 (straight form) took 91.7 ms with 15 bits,
    /// 96.1 with 13 (whose columns never carry mid-row, but which need 30 limbs: 15 %
    /// more products) and 135.6 with 16 (a carry after every product): the products
    /// cost more than the carries there (eleventh session, BENCHMARKS.md).
    pub const DEFAULT: LimbBits = LimbBits(15);
    /// The widths the generator accepts: a limb product must fit a `u32` (b ≤ 16), and
    /// narrower limbs than 12 only add products.
    pub const RANGE: std::ops::RangeInclusive<u32> = 12..=16;

    /// `bits` if it is in [`LimbBits::RANGE`].
    pub fn new(bits: u32) -> Option<LimbBits> {
        Self::RANGE.contains(&bits).then_some(LimbBits(bits))
    }

    /// Parses a knob's value (`13`, ` 15 `).
    pub fn parse(s: &str) -> Option<LimbBits> {
        s.trim().parse().ok().and_then(LimbBits::new)
    }

    /// Bits per limb.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Limbs per Fq element: ⌈384 / b⌉ (the packed storage form has 384 bits).
    pub fn limbs(self) -> usize {
        384usize.div_ceil(self.0 as usize)
    }
}

/// How the generated `fq_mul` is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MulForm {
    /// Every row of the product written out: no loop, the fastest code, and the most
    /// (about 4000 operations for 13-bit limbs).
    Unrolled,
    /// A loop over the rows, one row's code written once ([`FqCode::mul_loop`]).
    Loop,
}

/// One operation of straight-line `u32` code.
#[derive(Clone, Copy, Debug)]
enum Op {
    /// Limb `limb` of parameter `param`.
    Input {
        param: usize,
        limb: usize,
    },
    Const(u32),
    Add(V, V),
    Sub(V, V),
    Mul(V, V),
    /// The product's low 32 bits (no bound: used only before a mask).
    MulLow(V, V),
    And(V, u32),
    Shr(V, u32),
    /// Shifted left, bits above 32 dropped.
    Shl(V, u32),
    Or(V, V),
    /// `then` if `cond` is 1, `otherwise` if it is 0.
    Select {
        cond: V,
        then: V,
        otherwise: V,
    },
}

/// Straight-line `u32` code with a proven bound [lo, hi] on every value.
#[derive(Clone, Debug, Default)]
pub struct Code {
    ops: Vec<Op>,
    lo: Vec<u64>,
    hi: Vec<u64>,
    /// Whether [`Code::assume`] narrowed a bound ([`Code::bounds_with`] cannot redo it).
    assumed: bool,
}

const MAX: u64 = u32::MAX as u64;

impl Code {
    fn push(&mut self, op: Op, lo: u64, hi: u64) -> V {
        assert!(lo <= hi && hi <= MAX, "{op:?}: bound [{lo}, {hi}]");
        self.ops.push(op);
        self.lo.push(lo);
        self.hi.push(hi);
        self.ops.len() - 1
    }

    /// Limb `limb` of parameter `param`, known to be at most `hi`.
    pub fn input(&mut self, param: usize, limb: usize, hi: u64) -> V {
        self.push(Op::Input { param, limb }, 0, hi)
    }

    /// A literal.
    pub fn constant(&mut self, c: u32) -> V {
        self.push(Op::Const(c), c as u64, c as u64)
    }

    fn as_const(&self, v: V) -> Option<u32> {
        match self.ops[v] {
            Op::Const(c) => Some(c),
            _ => None,
        }
    }

    /// Whether `a + b` cannot overflow.
    pub fn fits_add(&self, a: V, b: V) -> bool {
        self.hi[a] + self.hi[b] <= MAX
    }

    /// a + b (proven not to overflow).
    pub fn add(&mut self, a: V, b: V) -> V {
        match (self.as_const(a), self.as_const(b)) {
            (Some(0), _) => return b,
            (_, Some(0)) => return a,
            _ => {}
        }
        let (lo, hi) = (self.lo[a] + self.lo[b], self.hi[a] + self.hi[b]);
        self.push(Op::Add(a, b), lo, hi)
    }

    /// a − b (proven not to wrap: a's least value is at least b's greatest).
    pub fn sub(&mut self, a: V, b: V) -> V {
        if self.as_const(b) == Some(0) {
            return a;
        }
        assert!(self.lo[a] >= self.hi[b], "a − b may wrap");
        let (lo, hi) = (self.lo[a] - self.hi[b], self.hi[a] - self.lo[b]);
        self.push(Op::Sub(a, b), lo, hi)
    }

    /// a · b (proven not to overflow).
    pub fn mul(&mut self, a: V, b: V) -> V {
        match (self.as_const(a), self.as_const(b)) {
            (Some(0), _) | (_, Some(0)) => return self.constant(0),
            (Some(1), _) => return b,
            (_, Some(1)) => return a,
            _ => {}
        }
        let (lo, hi) = (self.lo[a] * self.lo[b], self.hi[a] * self.hi[b]);
        self.push(Op::Mul(a, b), lo, hi)
    }

    /// The low 32 bits of a · b.
    pub fn mul_low(&mut self, a: V, b: V) -> V {
        self.push(Op::MulLow(a, b), 0, MAX)
    }

    /// a & mask.
    pub fn and(&mut self, a: V, mask: u32) -> V {
        if self.hi[a] <= mask as u64 && (mask as u64 + 1).is_power_of_two() {
            return a;
        }
        self.push(Op::And(a, mask), 0, self.hi[a].min(mask as u64))
    }

    /// a >> s.
    pub fn shr(&mut self, a: V, s: u32) -> V {
        if s == 0 {
            return a;
        }
        if self.hi[a] >> s == 0 {
            return self.constant(0);
        }
        self.push(Op::Shr(a, s), self.lo[a] >> s, self.hi[a] >> s)
    }

    /// a << s, truncated to 32 bits.
    pub fn shl(&mut self, a: V, s: u32) -> V {
        if s == 0 {
            return a;
        }
        self.push(Op::Shl(a, s), 0, (self.hi[a] << s).min(MAX))
    }

    /// a | b.
    pub fn or(&mut self, a: V, b: V) -> V {
        match (self.as_const(a), self.as_const(b)) {
            (Some(0), _) => return b,
            (_, Some(0)) => return a,
            _ => {}
        }
        let bits = 64 - self.hi[a].max(self.hi[b]).leading_zeros();
        self.push(Op::Or(a, b), 0, (1u64 << bits) - 1)
    }

    /// `then` if `cond` (0 or 1) is 1, else `otherwise`.
    pub fn select(&mut self, cond: V, then: V, otherwise: V) -> V {
        assert!(self.hi[cond] <= 1, "a select's condition is 0 or 1");
        let lo = self.lo[then].min(self.lo[otherwise]);
        let hi = self.hi[then].max(self.hi[otherwise]);
        self.push(
            Op::Select {
                cond,
                then,
                otherwise,
            },
            lo,
            hi,
        )
    }

    /// Narrows v's bound to at most `hi`, for a fact the interval arithmetic cannot see
    /// (the caller says why); [`Code::eval`] checks it on every value it computes.
    pub fn assume(&mut self, v: V, hi: u64) {
        self.hi[v] = self.hi[v].min(hi);
        self.lo[v] = self.lo[v].min(self.hi[v]);
        self.assumed = true;
    }

    /// The upper bounds of every value when each input (parameter, limb) is at most
    /// `input_hi` instead of the bound it was generated with, or `None` if some value
    /// could then overflow or wrap. The code's folds (a mask dropped, a shift known to
    /// be zero) were proven under the generation bounds, so the result means something
    /// only for inputs within those: what a loop's invariant check needs
    /// ([`FqCode::mul_loop`]).
    fn bounds_with(&self, input_hi: impl Fn(usize, usize) -> u64) -> Option<Vec<u64>> {
        assert!(
            !self.assumed,
            "bounds of assumed values cannot be recomputed"
        );
        let mut lo: Vec<u64> = Vec::with_capacity(self.ops.len());
        let mut hi: Vec<u64> = Vec::with_capacity(self.ops.len());
        for op in &self.ops {
            let (l, h) = match *op {
                Op::Input { param, limb } => (0, input_hi(param, limb)),
                Op::Const(c) => (c as u64, c as u64),
                Op::Add(a, b) => (lo[a] + lo[b], hi[a] + hi[b]),
                Op::Sub(a, b) => {
                    if lo[a] < hi[b] {
                        return None;
                    }
                    (lo[a] - hi[b], hi[a] - lo[b])
                }
                Op::Mul(a, b) => (lo[a] * lo[b], hi[a] * hi[b]),
                Op::MulLow(..) => (0, MAX),
                Op::And(a, m) => (0, hi[a].min(m as u64)),
                Op::Shr(a, s) => (lo[a] >> s, hi[a] >> s),
                Op::Shl(a, s) => (0, (hi[a] << s).min(MAX)),
                Op::Or(a, b) => {
                    let bits = 64 - hi[a].max(hi[b]).leading_zeros();
                    (0, (1u64 << bits) - 1)
                }
                Op::Select {
                    then, otherwise, ..
                } => (lo[then].min(lo[otherwise]), hi[then].max(hi[otherwise])),
            };
            if h > MAX {
                return None;
            }
            lo.push(l);
            hi.push(h);
        }
        Some(hi)
    }

    /// Runs the code on `params` (limbs per parameter) the way the shader does, and
    /// checks every value against its bound.
    #[cfg(test)]
    pub fn eval(&self, params: &[&[u32]]) -> Vec<u32> {
        let mut vals: Vec<u32> = Vec::with_capacity(self.ops.len());
        for (k, op) in self.ops.iter().enumerate() {
            let x = |v: V| vals[v];
            let value = match *op {
                Op::Input { param, limb } => params[param][limb],
                Op::Const(c) => c,
                Op::Add(a, b) => x(a).checked_add(x(b)).expect("add overflows"),
                Op::Sub(a, b) => x(a).checked_sub(x(b)).expect("sub wraps"),
                Op::Mul(a, b) => x(a).checked_mul(x(b)).expect("mul overflows"),
                Op::MulLow(a, b) => x(a).wrapping_mul(x(b)),
                Op::And(a, m) => x(a) & m,
                Op::Shr(a, s) => x(a) >> s,
                Op::Shl(a, s) => x(a) << s,
                Op::Or(a, b) => x(a) | x(b),
                Op::Select {
                    cond,
                    then,
                    otherwise,
                } => {
                    if x(cond) == 1 {
                        x(then)
                    } else {
                        x(otherwise)
                    }
                }
            };
            assert!(
                (self.lo[k]..=self.hi[k]).contains(&(value as u64)),
                "value {k} ({op:?}) = {value} outside its bound [{}, {}]",
                self.lo[k],
                self.hi[k]
            );
            vals.push(value);
        }
        vals
    }

    /// Value v in WGSL: a parameter's limb (`a[3]`; a parameter whose name ends in `]`
    /// is one expression, its single limb written as the name), a literal, or the
    /// `let` named `{prefix}{v}`.
    fn operand(&self, v: V, params: &[&str], prefix: &str) -> String {
        match self.ops[v] {
            Op::Input { param, .. } if params[param].ends_with(']') => params[param].into(),
            Op::Input { param, limb } => format!("{}[{limb}]", params[param]),
            Op::Const(c) => format!("0x{c:x}u"),
            _ => format!("{prefix}{v}"),
        }
    }

    /// WGSL `let` statements for every computed value (inputs and literals are written
    /// in place), parameters named `params`, the `let`s `{prefix}{k}`, each line
    /// starting with `indent`.
    fn wgsl_body(&self, params: &[&str], prefix: &str, indent: &str) -> String {
        let mut s = String::new();
        for (k, op) in self.ops.iter().enumerate() {
            let o = |v: V| self.operand(v, params, prefix);
            let expr = match *op {
                Op::Input { .. } | Op::Const(_) => continue,
                Op::Add(a, b) => format!("{} + {}", o(a), o(b)),
                Op::Sub(a, b) => format!("{} - {}", o(a), o(b)),
                Op::Mul(a, b) | Op::MulLow(a, b) => format!("{} * {}", o(a), o(b)),
                Op::And(a, m) => format!("{} & 0x{m:x}u", o(a)),
                Op::Shr(a, sh) => format!("{} >> {sh}u", o(a)),
                Op::Shl(a, sh) => format!("{} << {sh}u", o(a)),
                Op::Or(a, b) => format!("{} | {}", o(a), o(b)),
                Op::Select {
                    cond,
                    then,
                    otherwise,
                } => format!("select({}, {}, {} == 1u)", o(otherwise), o(then), o(cond)),
            };
            s += &format!("{indent}let {prefix}{k} = {expr};\n");
        }
        s
    }

    /// Computed values (what the shader executes: inputs and literals cost nothing).
    pub fn operations(&self) -> usize {
        self.ops
            .iter()
            .filter(|op| !matches!(op, Op::Input { .. } | Op::Const(_)))
            .count()
    }
}

/// A generated WGSL function: its code and which values it returns.
pub struct Function {
    /// Name in WGSL.
    pub name: &'static str,
    /// Parameters: name and WGSL type.
    pub params: Vec<(&'static str, String)>,
    /// Return type.
    pub returns: String,
    /// The body.
    pub code: Code,
    /// The returned array's elements.
    pub outputs: Vec<V>,
}

impl Function {
    /// The function's WGSL text.
    pub fn wgsl(&self) -> String {
        let names: Vec<&str> = self.params.iter().map(|(n, _)| *n).collect();
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(n, t)| format!("{n}: {t}"))
            .collect();
        let outputs: Vec<String> = self
            .outputs
            .iter()
            .map(|v| self.code.operand(*v, &names, "v"))
            .collect();
        format!(
            "// {} operations, no loop (generated by fq_code.rs).\nfn {}({}) -> {} {{\n{}    return {}({});\n}}\n",
            self.code.operations(),
            self.name,
            params.join(", "),
            self.returns,
            self.code.wgsl_body(&names, "v", "    "),
            self.returns,
            outputs.join(", ")
        )
    }

    /// Runs the function on `params` (one slice per parameter).
    #[cfg(test)]
    pub fn eval(&self, params: &[&[u32]]) -> Vec<u32> {
        let vals = self.code.eval(params);
        self.outputs.iter().map(|v| vals[*v]).collect()
    }
}

/// `fq_mul` as a loop over its rows ([`FqCode::mul_loop`]).
pub struct MulLoop {
    rows: usize,
    /// One row: parameters a, the columns, b_i.
    row: Code,
    /// The columns after the row.
    row_out: Vec<V>,
    /// Normalization and final subtraction of the columns (parameter 0).
    post: Code,
    /// The product's limbs.
    post_out: Vec<V>,
}

impl MulLoop {
    /// The function's WGSL text: `fn fq_mul(a: Fq, b: Fq) -> Fq`.
    pub fn wgsl(&self) -> String {
        let columns = self.rows + 1;
        // b_i is bv[0], bv shifted down a limb each row: no array indexed by the
        // loop's counter, which compilers unroll the loop to resolve (Mesa does).
        let names = ["a", "t", "bv[0]"];
        let outs: Vec<String> = self
            .row_out
            .iter()
            .map(|v| self.row.operand(*v, &names, "r"))
            .collect();
        let shifted: Vec<String> = (1..self.rows)
            .map(|k| format!("bv[{k}]"))
            .chain(["0u".to_string()])
            .collect();
        let limbs: Vec<String> = self
            .post_out
            .iter()
            .map(|v| self.post.operand(*v, &["t"], "v"))
            .collect();
        format!(
            "// A loop of {rows} rows of {} operations, then {} (generated by fq_code.rs).\n\
             fn fq_mul(a: Fq, b: Fq) -> Fq {{\n    var bv = b;\n    var t: array<u32, {columns}>;\n    \
             for (var i = 0u; i < {rows}u; i++) {{\n{}        t = array<u32, {columns}>({});\n        bv = Fq({});\n    }}\n{}    return Fq({});\n}}\n",
            self.row.operations(),
            self.post.operations(),
            self.row.wgsl_body(&names, "r", "        "),
            outs.join(", "),
            shifted.join(", "),
            self.post.wgsl_body(&["t"], "v", "    "),
            limbs.join(", "),
            rows = self.rows,
        )
    }

    /// Operations of the loop's body and of the code after it: what a compiler that
    /// keeps the loop has to schedule.
    #[cfg(test)]
    pub fn operations(&self) -> usize {
        self.row.operations() + self.post.operations()
    }

    /// Runs the loop on a and b's limbs, as the shader does.
    #[cfg(test)]
    pub fn eval(&self, a: &[u32], b: &[u32]) -> Vec<u32> {
        let mut t = vec![0u32; self.rows + 1];
        for &bi in &b[..self.rows] {
            let vals = self.row.eval(&[a, &t, &[bi]]);
            t = self.row_out.iter().map(|v| vals[*v]).collect();
        }
        let vals = self.post.eval(&[&t]);
        self.post_out.iter().map(|v| vals[*v]).collect()
    }
}

/// Storage words of one packed Fq element (arkworks' 384 bits).
const PACKED_WORDS: usize = 12;

/// The generated Fq arithmetic for one limb width.
#[derive(Clone, Copy, Debug)]
pub struct FqCode {
    bits: u32,
    n: usize,
    mask: u32,
}

/// `x` (little-endian u64 limbs) as `n` limbs of `bits` bits.
pub fn to_limbs(x: &[u64], bits: u32, n: usize) -> Vec<u32> {
    (0..n)
        .map(|l| {
            let mut v = 0u32;
            for k in 0..bits as usize {
                let bit = l * bits as usize + k;
                if bit < 64 * x.len() && (x[bit / 64] >> (bit % 64)) & 1 == 1 {
                    v |= 1 << k;
                }
            }
            v
        })
        .collect()
}

/// R'/R = 2^(b·n − 384) as an element: x·R' is the Montgomery word form of x·R'/R.
fn r_ratio(limbs: LimbBits) -> Fq {
    Fq::from(2u64).pow([FqCode::new(limbs).r_bits() - 384])
}

fn scale_words(words: &mut [u32], by: Fq) -> Result<(), WgpuError> {
    for chunk in words.chunks_exact_mut(FQ_WORDS) {
        (Fq::read_words(chunk)? * by).write_words(chunk);
    }
    Ok(())
}

/// Rewrites packed Fq words in arkworks' form (x·R) as the straight-line form's (x·R'),
/// in place; fails on words that are no element.
pub fn words_to_internal(limbs: LimbBits, words: &mut [u32]) -> Result<(), WgpuError> {
    scale_words(words, r_ratio(limbs))
}

/// The inverse of [`words_to_internal`].
pub fn words_from_internal(limbs: LimbBits, words: &mut [u32]) -> Result<(), WgpuError> {
    let inverse = r_ratio(limbs).inverse().ok_or(WgpuError::Corrupt {
        what: "R'/R (zero)",
    })?;
    scale_words(words, inverse)
}

/// 2^e mod p as Fq's canonical integer.
fn pow2_mod_p(e: u64) -> Vec<u64> {
    Fq::from(2u64).pow([e]).into_bigint().as_ref().to_vec()
}

impl FqCode {
    /// The arithmetic over `limbs`-bit limbs.
    pub fn new(limbs: LimbBits) -> FqCode {
        FqCode {
            bits: limbs.bits(),
            n: limbs.limbs(),
            mask: (1u32 << limbs.bits()) - 1,
        }
    }

    /// R' = 2^(b·n)'s exponent.
    pub fn r_bits(&self) -> u64 {
        self.bits as u64 * self.n as u64
    }

    fn p_limbs(&self) -> Vec<u32> {
        to_limbs(Fq::MODULUS.as_ref(), self.bits, self.n)
    }

    /// −p⁻¹ mod 2^b.
    fn neg_inv(&self) -> u32 {
        let p0 = Fq::MODULUS.as_ref()[0] as u32;
        let mut x: u32 = 1;
        for _ in 0..5 {
            x = x.wrapping_mul(2u32.wrapping_sub(p0.wrapping_mul(x)));
        }
        x.wrapping_neg() & self.mask
    }

    fn inputs(&self, code: &mut Code, param: usize) -> Vec<V> {
        (0..self.n)
            .map(|l| code.input(param, l, self.mask as u64))
            .collect()
    }

    fn function(
        &self,
        name: &'static str,
        params: &[&'static str],
        code: Code,
        out: Vec<V>,
    ) -> Function {
        Function {
            name,
            params: params.iter().map(|p| (*p, "Fq".to_string())).collect(),
            returns: "Fq".into(),
            code,
            outputs: out,
        }
    }

    /// Adds `x` into column `j` of `t`, first moving column j's carry up a column if
    /// the sum could overflow.
    fn accumulate(&self, code: &mut Code, t: &mut [V], j: usize, x: V) {
        if !code.fits_add(t[j], x) {
            self.carry(code, t, j);
        }
        t[j] = code.add(t[j], x);
    }

    /// Column j keeps its low b bits; the rest moves to column j + 1.
    fn carry(&self, code: &mut Code, t: &mut [V], j: usize) {
        assert!(j + 1 < t.len(), "no column above the top one to carry into");
        let high = code.shr(t[j], self.bits);
        t[j] = code.and(t[j], self.mask);
        self.accumulate(code, t, j + 1, high);
    }

    /// Columns (each up to 32 bits) of a value below 2p as n limbs of b bits: the
    /// carries ripple up, and what is left above the top limb is zero because 2p < R'.
    fn normalize(&self, code: &mut Code, mut t: Vec<V>) -> Vec<V> {
        for j in 0..t.len() - 1 {
            self.carry(code, &mut t, j);
        }
        for &above in &t[self.n..] {
            code.assume(above, 0);
        }
        t.truncate(self.n);
        // The value is below 2p < 2^(b·n): its top limb is a limb like the others.
        let last = self.n - 1;
        code.assume(t[last], self.mask as u64);
        t
    }

    /// r − p if r ≥ p, else r (for r < 2p in normalized limbs).
    fn reduce_once(&self, code: &mut Code, r: &[V]) -> Vec<V> {
        let p = self.p_limbs();
        let base = code.constant(1 << self.bits);
        let mut borrow = code.constant(0);
        let mut d = Vec::with_capacity(self.n);
        for j in 0..self.n {
            // r_j + 2^b − p_j − borrow ≥ 1 − 1.
            let x = code.add(r[j], base);
            let pj = code.constant(p[j]);
            let x = code.sub(x, pj);
            let x = code.sub(x, borrow);
            d.push(code.and(x, self.mask));
            let no_borrow = code.shr(x, self.bits);
            let one = code.constant(1);
            borrow = code.sub(one, no_borrow);
        }
        // No borrow out of the top limb: r ≥ p, keep r − p.
        let one = code.constant(1);
        let keep_d = code.sub(one, borrow);
        (0..self.n)
            .map(|j| code.select(keep_d, d[j], r[j]))
            .collect()
    }

    /// `fq_mul(a, b)`: a·b/R' mod p (operands below p, result below p), by operand
    /// scanning: row i adds a·b_i and m·p (m making column 0 divisible by 2^b) and
    /// shifts down one column; carries are deferred as [`FqCode::accumulate`] allows.
    pub fn mul(&self) -> Function {
        let mut code = Code::default();
        let a = self.inputs(&mut code, 0);
        let b = self.inputs(&mut code, 1);
        let r = self.mul_code(&mut code, &a, &b);
        self.function("fq_mul", &["a", "b"], code, r)
    }

    fn mul_code(&self, code: &mut Code, a: &[V], b: &[V]) -> Vec<V> {
        let zero = code.constant(0);
        // n columns and one above them for carries.
        let mut t = vec![zero; self.n + 1];
        for &bi in b {
            self.row(code, &mut t, a, bi);
        }
        let r = self.normalize(code, t);
        self.reduce_once(code, &r)
    }

    /// One row of the product: adds a·b_i and m·p (m making column 0 divisible by 2^b)
    /// into the columns `t` and shifts them down one (the top column becomes 0).
    fn row(&self, code: &mut Code, t: &mut Vec<V>, a: &[V], bi: V) {
        for (j, &aj) in a.iter().enumerate() {
            let x = code.mul(aj, bi);
            self.accumulate(code, t, j, x);
        }
        let inv = code.constant(self.neg_inv());
        let m = code.mul_low(t[0], inv);
        let m = code.and(m, self.mask);
        for (j, pj) in self.p_limbs().into_iter().enumerate() {
            let pj = code.constant(pj);
            let x = code.mul(m, pj);
            self.accumulate(code, t, j, x);
        }
        // Column 0 is now ≡ 0 mod 2^b: shift down, its carry into the new column 0.
        let high = code.shr(t[0], self.bits);
        t.remove(0);
        t.push(code.constant(0));
        self.accumulate(code, t, 0, high);
    }

    /// One row as code of its own, for the columns at most `columns` on entry:
    /// parameters `a` (param 0), the columns (param 1) and b_i (param 2, one limb).
    fn row_code(&self, columns: &[u64]) -> (Code, Vec<V>) {
        let mut code = Code::default();
        let a = self.inputs(&mut code, 0);
        let mut t: Vec<V> = (0..=self.n).map(|j| code.input(1, j, columns[j])).collect();
        let bi = code.input(2, 0, self.mask as u64);
        self.row(&mut code, &mut t, &a, bi);
        (code, t)
    }

    /// `fq_mul` as a loop over the rows of the product: one row's code, run n times,
    /// then the normalization and the final subtraction. A fraction of the unrolled
    /// code (for compilers that take minutes on a kernel made of many unrolled
    /// products, as NVIDIA's Vulkan driver did on G2's additions), the same
    /// operations in the same order.
    ///
    /// The row's carries are placed for bounds `U` on the columns at a row's start, and
    /// the code is valid for any columns within `U`; starting from zero columns, the
    /// bounds after each of the n rows are recomputed through that code and must stay
    /// within `U` before the last row. `U` grows to the largest start until that holds
    /// (a few rounds); the last row's result bounds the normalization's input.
    pub fn mul_loop(&self) -> MulLoop {
        let mask = self.mask as u64;
        let mut u = vec![0u64; self.n + 1];
        for _ in 0..16 {
            let (row, row_out) = self.row_code(&u);
            let mut start = vec![0u64; self.n + 1];
            let mut worst = start.clone();
            // The starts of rows 0..n through this code, as far as it does not overflow.
            let mut rows = 0;
            for _ in 0..self.n {
                for (w, s) in worst.iter_mut().zip(&start) {
                    *w = (*w).max(*s);
                }
                let Some(hi) =
                    row.bounds_with(|param, limb| if param == 1 { start[limb] } else { mask })
                else {
                    break;
                };
                start = row_out.iter().map(|v| hi[*v]).collect();
                rows += 1;
            }
            if rows < self.n || worst.iter().zip(&u).any(|(w, u)| w > u) {
                u = u.iter().zip(&worst).map(|(u, w)| (*u).max(*w)).collect();
                continue;
            }
            let mut post = Code::default();
            let t: Vec<V> = (0..=self.n).map(|j| post.input(0, j, start[j])).collect();
            let r = self.normalize(&mut post, t);
            let post_out = self.reduce_once(&mut post, &r);
            return MulLoop {
                rows: self.n,
                row,
                row_out,
                post,
                post_out,
            };
        }
        panic!(
            "{}-bit limbs: no bound on the columns holds for every row",
            self.bits
        )
    }

    /// `fq_add(a, b)`: a + b mod p.
    pub fn add(&self) -> Function {
        let mut code = Code::default();
        let a = self.inputs(&mut code, 0);
        let b = self.inputs(&mut code, 1);
        let zero = code.constant(0);
        let mut t: Vec<V> = (0..self.n).map(|j| code.add(a[j], b[j])).collect();
        t.push(zero);
        let r = self.normalize(&mut code, t);
        let r = self.reduce_once(&mut code, &r);
        self.function("fq_add", &["a", "b"], code, r)
    }

    /// `fq_sub(a, b)`: a − b mod p.
    pub fn sub(&self) -> Function {
        let mut code = Code::default();
        let a = self.inputs(&mut code, 0);
        let b = self.inputs(&mut code, 1);
        let c = &mut code;
        let base = c.constant(1 << self.bits);
        let one = c.constant(1);
        let mut borrow = c.constant(0);
        let mut d = Vec::with_capacity(self.n);
        for j in 0..self.n {
            let x = c.add(a[j], base);
            let x = c.sub(x, b[j]);
            let x = c.sub(x, borrow);
            d.push(c.and(x, self.mask));
            let no_borrow = c.shr(x, self.bits);
            borrow = c.sub(one, no_borrow);
        }
        // Borrow out of the top limb: a < b, add p back (the carry out of that sum is
        // the 2^(b·n) the borrow took).
        let p = self.p_limbs();
        let mut carry = c.constant(0);
        let mut e = Vec::with_capacity(self.n);
        for j in 0..self.n {
            let pj = c.constant(p[j]);
            let x = c.add(d[j], pj);
            let x = c.add(x, carry);
            e.push(c.and(x, self.mask));
            carry = c.shr(x, self.bits);
        }
        let r = (0..self.n).map(|j| c.select(borrow, e[j], d[j])).collect();
        self.function("fq_sub", &["a", "b"], code, r)
    }

    /// `fq_from_words(w)`: a packed element's 384 bits as limbs, unchanged in value.
    pub fn unpack(&self) -> Function {
        let mut code = Code::default();
        let w: Vec<V> = (0..PACKED_WORDS).map(|k| code.input(0, k, MAX)).collect();
        let mut out = Vec::with_capacity(self.n);
        for l in 0..self.n {
            let bit = l * self.bits as usize;
            let (k, s) = (bit / 32, (bit % 32) as u32);
            if k >= PACKED_WORDS {
                out.push(code.constant(0));
                continue;
            }
            let mut v = code.shr(w[k], s);
            if s + self.bits > 32 && k + 1 < PACKED_WORDS {
                let up = code.shl(w[k + 1], 32 - s);
                v = code.or(v, up);
            }
            out.push(code.and(v, self.mask));
        }
        Function {
            name: "fq_from_words",
            params: vec![("w", format!("array<u32, {PACKED_WORDS}>"))],
            returns: "Fq".into(),
            code,
            outputs: out,
        }
    }

    /// `fq_to_words(a)`: the limbs' bits packed in 12 words (a < p < 2^384).
    pub fn pack(&self) -> Function {
        let mut code = Code::default();
        let a = self.inputs(&mut code, 0);
        let b = self.bits as usize;
        let mut words = Vec::with_capacity(PACKED_WORDS);
        for k in 0..PACKED_WORDS {
            let (lo, hi) = (32 * k, 32 * k + 32);
            let mut word = code.constant(0);
            for (l, &limb) in a.iter().enumerate() {
                let (start, end) = (l * b, l * b + b);
                if end <= lo || start >= hi {
                    continue;
                }
                let part = if start >= lo {
                    code.shl(limb, (start - lo) as u32)
                } else {
                    code.shr(limb, (lo - start) as u32)
                };
                word = code.or(word, part);
            }
            words.push(word);
        }
        Function {
            name: "fq_to_words",
            params: vec![("a", "Fq".into())],
            returns: format!("array<u32, {PACKED_WORDS}>"),
            code,
            outputs: words,
        }
    }

    fn wgsl_const(&self, name: &str, value: &[u64], why: &str) -> String {
        let limbs: Vec<String> = to_limbs(value, self.bits, self.n)
            .iter()
            .map(|l| format!("0x{l:x}u"))
            .collect();
        format!("// {why}\nconst {name} = Fq({});\n", limbs.join(", "))
    }

    /// The whole generated Fq code: the type, its constants and functions, `fq_mul` in
    /// the form `mul` says.
    pub fn wgsl(&self, mul: MulForm) -> String {
        let mut s = format!(
            "// Fq over {} limbs of {} bits in Montgomery form with R' = 2^{} (fq_code.rs).\n\
             alias Fq = array<u32, {}>;\n",
            self.n,
            self.bits,
            self.r_bits(),
            self.n
        );
        s += "const FQ_ZERO = Fq();\n";
        s += &self.wgsl_const("FQ_ONE", &pow2_mod_p(self.r_bits()), "1 (R' mod p).");
        s += &self.wgsl_const(
            "FQ_ARK_R",
            &pow2_mod_p(384),
            "R mod p (2^384): Z of a stored affine point, and the factor from R' form to arkworks'.",
        );
        s.push('\n');
        s += &match mul {
            MulForm::Unrolled => self.mul().wgsl(),
            MulForm::Loop => self.mul_loop().wgsl(),
        };
        for f in [self.add(), self.sub(), self.unpack(), self.pack()] {
            s.push('\n');
            s += &f.wgsl();
        }
        let limbs: Vec<String> = (0..self.n).map(|l| format!("a[{l}]")).collect();
        s + &format!(
            "\nfn fq_is_zero(a: Fq) -> bool {{\n    return ({}) == 0u;\n}}\n",
            limbs.join(" | ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::{BigInt, UniformRand};
    use ark_std::rand::{rngs::StdRng, SeedableRng};

    fn int(x: Fq) -> Vec<u64> {
        x.into_bigint().as_ref().to_vec()
    }

    fn from_limbs(limbs: &[u32], bits: u32) -> Fq {
        let mut x = [0u64; 7];
        for (l, v) in limbs.iter().enumerate() {
            for k in 0..bits as usize {
                let bit = l * bits as usize + k;
                if (v >> k) & 1 == 1 {
                    x[bit / 64] |= 1 << (bit % 64);
                }
            }
        }
        assert_eq!(x[6], 0);
        let b = BigInt::<6>(x[..6].try_into().unwrap());
        assert!(b < Fq::MODULUS, "a result is not reduced");
        Fq::from_bigint(b).unwrap()
    }

    fn all_widths() -> impl Iterator<Item = FqCode> {
        LimbBits::RANGE.map(|b| FqCode::new(LimbBits::new(b).unwrap()))
    }

    /// Random elements and the edge values 0, 1, p − 1, p − 2 (as integers).
    fn operands(rng: &mut StdRng) -> Vec<Fq> {
        let mut v: Vec<Fq> = (0..24).map(|_| Fq::rand(rng)).collect();
        v.extend([
            Fq::from(0u64),
            Fq::from(1u64),
            -Fq::from(1u64),
            -Fq::from(2u64),
        ]);
        v
    }

    #[test]
    fn generated_arithmetic_matches_arkworks_for_every_width() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        let xs = operands(&mut rng);
        for code in all_widths() {
            let (bits, n) = (code.bits, code.n);
            let r_inv = Fq::from(2u64).pow([code.r_bits()]).inverse().unwrap();
            let (mul, add, sub) = (code.mul(), code.add(), code.sub());
            for &x in &xs {
                for &y in &xs[20..] {
                    let (xl, yl) = (to_limbs(&int(x), bits, n), to_limbs(&int(y), bits, n));
                    let at = format!("{bits}-bit limbs, {x} and {y} (seed {seed})");
                    let got = |f: &Function| from_limbs(&f.eval(&[&xl, &yl]), bits);
                    assert_eq!(got(&mul), x * y * r_inv, "mul, {at}");
                    assert_eq!(got(&add), x + y, "add, {at}");
                    assert_eq!(got(&sub), x - y, "sub, {at}");
                }
            }
        }
    }

    /// The loop over rows computes what the unrolled product does, with the same
    /// operations per row, for every width and the edge operands.
    #[test]
    fn row_loop_multiplication_matches_arkworks_for_every_width() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        let xs = operands(&mut rng);
        for code in all_widths() {
            let (bits, n) = (code.bits, code.n);
            let r_inv = Fq::from(2u64).pow([code.r_bits()]).inverse().unwrap();
            let looped = code.mul_loop();
            for &x in &xs {
                for &y in &xs[20..] {
                    let (xl, yl) = (to_limbs(&int(x), bits, n), to_limbs(&int(y), bits, n));
                    let got = from_limbs(&looped.eval(&xl, &yl), bits);
                    assert_eq!(
                        got,
                        x * y * r_inv,
                        "{bits}-bit limbs, {x}·{y} (seed {seed})"
                    );
                }
            }
            let unrolled = code.mul().code.operations();
            let rolled = n * looped.row.operations() + looped.post.operations();
            println!("{bits}-bit fq_mul: {unrolled} operations unrolled, {rolled} looped ({} a row, {} once)", looped.row.operations(), looped.post.operations());
            // Limbs narrow enough that no row carries mid-row run the unrolled rows'
            // operations (and the first row's, whose zero columns fold away there);
            // wider limbs carry where the worst row needs it, in every row.
            if bits <= 13 {
                assert!(
                    rolled <= unrolled + unrolled / 50,
                    "{bits} bits: {rolled} vs {unrolled}"
                );
            }
            let text = looped.wgsl();
            assert!(
                text.contains(&format!("for (var i = 0u; i < {n}u; i++) {{")),
                "{text}"
            );
            assert!(
                text.len() * 4 < code.mul().wgsl().len(),
                "{bits} bits: the loop is smaller"
            );
        }
    }

    #[test]
    fn packing_keeps_the_bits_and_constants_convert_forms() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        for code in all_widths() {
            let (bits, n) = (code.bits, code.n);
            let (unpack, pack, mul) = (code.unpack(), code.pack(), code.mul());
            for x in operands(&mut rng) {
                // Stored form: arkworks' Montgomery words.
                let mut words = [0u32; PACKED_WORDS];
                crucible_core::limbs::limbs_to_words(&x.0 .0, &mut words);
                let limbs = unpack.eval(&[&words]);
                assert_eq!(
                    limbs,
                    to_limbs(&x.0 .0, bits, n),
                    "{bits} bits (seed {seed})"
                );
                assert_eq!(pack.eval(&[&limbs]), words, "{bits} bits (seed {seed})");
                // x·R → x·R' by R'²/R, and back by R (FQ_ARK_R).
                let to_internal = to_limbs(&pow2_mod_p(2 * code.r_bits() - 384), bits, n);
                let internal = mul.eval(&[&limbs, &to_internal]);
                let r_prime = Fq::from(2u64).pow([code.r_bits()]);
                assert_eq!(from_limbs(&internal, bits), x * r_prime, "{bits} bits");
                let ark_r = to_limbs(&pow2_mod_p(384), bits, n);
                assert_eq!(mul.eval(&[&internal, &ark_r]), limbs, "{bits} bits");
            }
        }
    }

    /// The host's conversion is the generated multiplication by R'²/R, and back.
    #[test]
    fn host_conversion_is_the_montgomery_factor() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        for code in all_widths() {
            let limbs = LimbBits::new(code.bits).unwrap();
            let x = Fq::rand(&mut rng);
            let mut words = [0u32; PACKED_WORDS];
            x.write_words(&mut words);
            let to_internal = to_limbs(&pow2_mod_p(2 * code.r_bits() - 384), code.bits, code.n);
            let on_device = code
                .mul()
                .eval(&[&code.unpack().eval(&[&words]), &to_internal]);
            let mut host = words;
            words_to_internal(limbs, &mut host).unwrap();
            assert_eq!(
                code.pack().eval(&[&on_device]),
                host,
                "{} bits (seed {seed})",
                code.bits
            );
            words_from_internal(limbs, &mut host).unwrap();
            assert_eq!(host, words);
        }
    }

    /// 13-bit limbs never carry inside a row; 16-bit ones carry after every product.
    #[test]
    fn deferred_carries_make_narrow_limbs_cheaper() {
        let len = |b| {
            FqCode::new(LimbBits::new(b).unwrap())
                .mul()
                .code
                .operations()
        };
        let (b13, b15, b16) = (len(13), len(15), len(16));
        println!("fq_mul operations: 13-bit {b13}, 15-bit {b15}, 16-bit {b16}");
        assert!(b13 < b16, "{b13} vs {b16}");
        // 13 bits: 2·30² products and their adds, plus per row m, a shift and an add.
        assert!(b13 < 2 * 2 * 30 * 30 + 30 * 8 + 300, "{b13}");
    }

    #[test]
    fn wgsl_is_loop_free_with_literal_constants() {
        let s = FqCode::new(LimbBits::DEFAULT).wgsl(MulForm::Unrolled);
        assert!(s.contains("alias Fq = array<u32, 26>;"), "{s}");
        assert!(s.contains("fn fq_mul(a: Fq, b: Fq) -> Fq {"));
        assert!(!s.contains("for (") && !s.contains("loop {") && !s.contains("while "));
        assert!(s.contains("let v"));
    }

    #[test]
    fn limb_bits_parse() {
        assert_eq!(LimbBits::parse(" 15\n").map(LimbBits::bits), Some(15));
        assert_eq!(LimbBits::parse("17"), None);
        assert_eq!(LimbBits::parse("x"), None);
        assert_eq!(LimbBits::DEFAULT.limbs(), 26);
        assert_eq!(LimbBits::new(16).unwrap().limbs(), 24);
    }
}
