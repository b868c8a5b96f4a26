//! Fq and Fr arithmetic for hardware adapters, generated as loop-free WGSL over `b`-bit
//! limbs.
//!
//! The interpreter's Fq code (shaders/fr.wgsl renamed) loops over 16-bit limbs with
//! a carry per product. Here every field function is written out by Rust: each limb a
//! `let`, the modulus and the Montgomery constants literals, no loop and no array
//! indexed at run time, so that a GPU compiler keeps everything in registers and
//! schedules freely. The MSM's straight-line forms use Fq's ([`Field::Fq`]); the
//! NTT on adapters with 64-bit integers uses Fr's ([`Field::Fr`], fr_code.rs).
//!
//! # Limbs and deferred carries
//!
//! An element is `n = ⌈s / b⌉` limbs of `b` bits, one per `u32`, where s is the
//! element's packed size (384 bits for BLS12-381's Fq, 256 for BN254's and for Fr). In
//! WGSL's own integers ([`Word::U32`], b ≤ 16) a limb product must fit 32 bits, and the
//! narrower the limb, the more products a `u32` column can sum before its carry must
//! move on: with 13-bit limbs (30 of them) every one of the 2n = 60 products of a
//! Montgomery column fits (60·(2^13 − 1)² < 2^32), so the whole multiplication is
//! multiply-adds with one carry per row, against 16-bit limbs' shift, mask and add
//! after every product. Where the adapter has 64-bit integers (wgpu's `SHADER_INT64`:
//! Vulkan, Metal, DX12) the columns are `u64` ([`Word::U64`], b from 17 to 32): a limb
//! product is one widening multiply-add, 28-bit limbs (14 for Fq) sum all 28 products
//! of a column without a carry, and 32-bit limbs (12 for Fq, 8 for Fr) carry after
//! every product as the CIOS does, with R' = R: no conversion at all. Which width is
//! fastest depends on the adapter's integer multiply rate: [`LimbBits`] is the tuning
//! file's `limb_bits`, its defaults measured on the H200. The builder tracks an upper bound
//! of every value and moves a column's carry only where the next product could
//! overflow it, and refuses (panics while generating, which the unit tests exercise
//! for every choice) any operation it cannot prove free of overflow.
//!
//! # Montgomery form
//!
//! Products are Montgomery products with R' = 2^(b·n) (2^390 for 13-bit limbs of
//! BLS12-381's Fq): `mul(x, y) = x·y/R' mod p`. Device buffers hold arkworks' form x·R
//! (R = 2^s) packed in s/32 words; [`FieldCode`] unpacks and packs those bits unchanged,
//! so a value
//! read as is means x·R/R' in the shaders. Projective points do not mind (all three
//! coordinates scale alike), affine bases get Z = R mod p (`FQ_ARK_R`), which makes
//! (x·R/R' : y·R/R' : R/R') the same point, and only the field test kernels' operands
//! convert, on the host ([`words_to_internal`], [`words_from_internal`]). Fr's code is
//! used only with R' = R = 2^256 (32-bit limbs), where the NTT's tables and data need
//! no conversion.

use ark_ff::PrimeField;
use num_bigint::BigUint;

use super::curve::{CurveParams, FieldParams};
use crate::error::WgpuError;
use crate::field::DeviceElement;

/// Index of a value in a [`Code`].
pub type V = usize;

/// Bits of one Fq limb in the generated (hardware) arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LimbBits(u32);

impl LimbBits {
    /// The default where the adapter has no 64-bit integers: 15-bit limbs (26 of
    /// them, a carry every few products). On the H200's Vulkan driver MSM G1 2^20
    /// (straight form) took 91.7 ms with 15 bits, 96.1 with 13 (whose columns never
    /// carry mid-row, but which need 30 limbs: 15 % more products) and 135.6 with 16
    /// (a carry after every product): the products cost more than the carries there
    /// (d32de65:BENCHMARKS.md).
    pub const DEFAULT: LimbBits = LimbBits(15);
    /// G1's default where the adapter has 64-bit integers: 28-bit limbs (14 of them,
    /// u64 columns that sum a whole row's products without a carry). On the H200's
    /// Vulkan driver MSM G1 2^20 (straight form) took 53.5 ms with 28 bits, 59.2 with
    /// 32 (12 limbs, but a carry after every product), 75.2 with 30 and 95.5 with
    /// 15-bit u32 limbs (d32de65:BENCHMARKS.md).
    pub const DEFAULT_INT64_G1: LimbBits = LimbBits(28);
    /// G2's default where the adapter has 64-bit integers: 32-bit limbs. G2's
    /// registers form (a register file of limbs, each product a loop over it) took
    /// 147.7 ms for MSM G2 2^20 with 32 bits, 177.0 with 28 and 363.2 with 15: there
    /// fewer limbs win over fewer carries.
    pub const DEFAULT_INT64_G2: LimbBits = LimbBits(32);
    /// The widths the generator accepts: up to 16 bits a limb product fits a `u32`;
    /// wider limbs need `u64` columns (`SHADER_INT64`), up to 32 bits; narrower limbs
    /// than 12 only add products.
    pub const RANGE: std::ops::RangeInclusive<u32> = 12..=32;
    /// The widths over WGSL's own `u32` arithmetic.
    pub const RANGE_U32: std::ops::RangeInclusive<u32> = 12..=16;

    /// `bits` if it is in [`LimbBits::RANGE`].
    pub fn new(bits: u32) -> Option<LimbBits> {
        Self::RANGE.contains(&bits).then_some(LimbBits(bits))
    }

    /// Bits per limb.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Whether the arithmetic needs 64-bit integers (limbs wider than 16 bits).
    pub fn needs_int64(self) -> bool {
        self.word() == Word::U64
    }

    /// The word of the arithmetic over these limbs.
    pub fn word(self) -> Word {
        if self.0 > 16 {
            Word::U64
        } else {
            Word::U32
        }
    }

    /// Limbs per element of `packed_bits` bits (the packed storage form's): ⌈bits / b⌉.
    pub fn limbs(self, packed_bits: u64) -> usize {
        packed_bits.div_ceil(u64::from(self.0)) as usize
    }
}

/// The integer type of every value a [`Code`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Word {
    /// `u32`: WGSL's own integers (16-bit limbs and narrower: a limb product fits).
    U32,
    /// `u64` (wgpu's `SHADER_INT64`): limbs up to 32 bits, each product of two limbs
    /// one widening multiply-add into a 64-bit column.
    U64,
}

impl Word {
    /// The largest value.
    fn max(self) -> u128 {
        match self {
            Word::U32 => u32::MAX as u128,
            Word::U64 => u64::MAX as u128,
        }
    }

    /// A WGSL literal of this type.
    fn literal(self, c: u64) -> String {
        match self {
            Word::U32 => format!("0x{c:x}u"),
            Word::U64 => format!("0x{c:x}lu"),
        }
    }
}

/// One operation of straight-line code over one [`Word`].
#[derive(Clone, Copy, Debug)]
enum Op {
    /// Limb `limb` of parameter `param`: a `u32` limb (converted in `u64` code) or,
    /// `native`, already of the code's own word.
    Input {
        param: usize,
        limb: usize,
        native: bool,
    },
    Const(u64),
    Add(V, V),
    Sub(V, V),
    Mul(V, V),
    /// The product's low 32 bits (no bound: used only before a mask of at most 32
    /// bits); in `u64` code a 32-bit multiply of the operands' low halves, where a
    /// 64-bit one would cost the GPU three.
    MulLow(V, V),
    And(V, u64),
    Shr(V, u32),
    /// Shifted left, bits above the word dropped.
    Shl(V, u32),
    Or(V, V),
    /// `then` if `cond` is 1, `otherwise` if it is 0.
    Select {
        cond: V,
        then: V,
        otherwise: V,
    },
}

/// Straight-line code with a proven bound [lo, hi] on every value.
#[derive(Clone, Debug)]
pub struct Code {
    word: Word,
    ops: Vec<Op>,
    lo: Vec<u128>,
    hi: Vec<u128>,
}

impl Default for Code {
    fn default() -> Self {
        Code::new(Word::U32)
    }
}

/// The largest `u32`: a limb's, whatever the code's word.
const MAX32: u128 = u32::MAX as u128;

impl Code {
    /// Empty code over `word`.
    pub fn new(word: Word) -> Code {
        Code {
            word,
            ops: Vec::new(),
            lo: Vec::new(),
            hi: Vec::new(),
        }
    }

    fn push(&mut self, op: Op, lo: u128, hi: u128) -> V {
        assert!(
            lo <= hi && hi <= self.word.max(),
            "{op:?}: bound [{lo}, {hi}]"
        );
        self.ops.push(op);
        self.lo.push(lo);
        self.hi.push(hi);
        self.ops.len() - 1
    }

    /// Limb `limb` of parameter `param` (a `u32`), known to be at most `hi`.
    pub fn input(&mut self, param: usize, limb: usize, hi: u64) -> V {
        assert!(hi as u128 <= MAX32, "a limb is a u32");
        let native = self.word == Word::U32;
        self.push(
            Op::Input {
                param,
                limb,
                native,
            },
            0,
            hi as u128,
        )
    }

    /// A literal.
    pub fn constant(&mut self, c: u64) -> V {
        self.push(Op::Const(c), c as u128, c as u128)
    }

    fn as_const(&self, v: V) -> Option<u64> {
        match self.ops[v] {
            Op::Const(c) => Some(c),
            _ => None,
        }
    }

    /// Whether `a + b` cannot overflow.
    pub fn fits_add(&self, a: V, b: V) -> bool {
        self.hi[a] + self.hi[b] <= self.word.max()
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
        self.push(Op::MulLow(a, b), 0, MAX32)
    }

    /// a & mask.
    pub fn and(&mut self, a: V, mask: u64) -> V {
        if self.hi[a] <= mask as u128 && (mask as u128 + 1).is_power_of_two() {
            return a;
        }
        self.push(Op::And(a, mask), 0, self.hi[a].min(mask as u128))
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

    /// a << s, truncated to the word.
    pub fn shl(&mut self, a: V, s: u32) -> V {
        if s == 0 {
            return a;
        }
        let hi = (self.hi[a] << s).min(self.word.max());
        self.push(Op::Shl(a, s), 0, hi)
    }

    /// a | b.
    pub fn or(&mut self, a: V, b: V) -> V {
        match (self.as_const(a), self.as_const(b)) {
            (Some(0), _) => return b,
            (_, Some(0)) => return a,
            _ => {}
        }
        let bits = 128 - self.hi[a].max(self.hi[b]).leading_zeros();
        self.push(Op::Or(a, b), 0, (1u128 << bits) - 1)
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
    pub fn assume(&mut self, v: V, hi: u128) {
        self.hi[v] = self.hi[v].min(hi);
        self.lo[v] = self.lo[v].min(self.hi[v]);
    }

    /// Runs the code on `params` (elements per parameter: limbs, or a loop's columns)
    /// the way the shader does, and checks every value against its bound.
    #[cfg(test)]
    pub fn eval(&self, params: &[&[u64]]) -> Vec<u64> {
        let max = self.word.max() as u64;
        let checked = |v: Option<u64>, what: &str| -> u64 {
            match v {
                Some(v) if v <= max => v,
                _ => panic!("{what} overflows"),
            }
        };
        let mut vals: Vec<u64> = Vec::with_capacity(self.ops.len());
        for (k, op) in self.ops.iter().enumerate() {
            let x = |v: V| vals[v];
            let value = match *op {
                Op::Input { param, limb, .. } => params[param][limb],
                Op::Const(c) => c,
                Op::Add(a, b) => checked(x(a).checked_add(x(b)), "add"),
                Op::Sub(a, b) => x(a).checked_sub(x(b)).expect("sub wraps"),
                Op::Mul(a, b) => checked(x(a).checked_mul(x(b)), "mul"),
                Op::MulLow(a, b) => x(a).wrapping_mul(x(b)) & MAX32 as u64,
                Op::And(a, m) => x(a) & m,
                Op::Shr(a, s) => x(a) >> s,
                Op::Shl(a, s) => (x(a) << s) & max,
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
                (self.lo[k]..=self.hi[k]).contains(&(value as u128)),
                "value {k} ({op:?}) = {value} outside its bound [{}, {}]",
                self.lo[k],
                self.hi[k]
            );
            vals.push(value);
        }
        vals
    }

    /// Value v in WGSL: a parameter's limb (`a[3]`, `u64(a[3])` in `u64` code; a
    /// parameter whose name ends in `]` is one expression, its single limb written as
    /// the name), a literal, or the `let` named `{prefix}{v}`.
    fn operand(&self, v: V, params: &[&str], prefix: &str) -> String {
        match self.ops[v] {
            Op::Input {
                param,
                limb,
                native: true,
            } => element(params[param], limb),
            Op::Input { param, limb, .. } => format!("u64({})", element(params[param], limb)),
            Op::Const(c) => self.word.literal(c),
            _ => format!("{prefix}{v}"),
        }
    }

    /// The low 32 bits of `u64` value v, written `expr`, as a `u32` (a literal for a
    /// constant: naga folds no `u64` to `u32` conversion of a literal).
    fn low_u32(&self, v: V, expr: String) -> String {
        match self.ops[v] {
            Op::Const(c) => Word::U32.literal(c & MAX32 as u64),
            _ => format!("u32({expr})"),
        }
    }

    /// Value v as a `u32` (a limb the code returns), proven to fit one.
    fn operand_u32(&self, v: V, params: &[&str], prefix: &str) -> String {
        assert!(self.hi[v] <= MAX32, "value {v} is returned as a u32");
        match (self.word, self.ops[v]) {
            (Word::U32, _) => self.operand(v, params, prefix),
            (Word::U64, Op::Const(c)) => Word::U32.literal(c),
            (Word::U64, Op::Input { param, limb, .. }) => element(params[param], limb),
            (Word::U64, _) => format!("u32({})", self.operand(v, params, prefix)),
        }
    }

    /// WGSL `let` statements for every computed value (inputs and literals are written
    /// in place), parameters named `params`, the `let`s `{prefix}{k}`, each line
    /// starting with `indent`.
    fn wgsl_body(&self, params: &[&str], prefix: &str, indent: &str) -> String {
        let mut s = String::new();
        for (k, op) in self.ops.iter().enumerate() {
            let o = |v: V| self.operand(v, params, prefix);
            let lit = |c: u64| self.word.literal(c);
            let expr = match *op {
                Op::Input { .. } | Op::Const(_) => continue,
                Op::Add(a, b) => format!("{} + {}", o(a), o(b)),
                Op::Sub(a, b) => format!("{} - {}", o(a), o(b)),
                Op::Mul(a, b) => format!("{} * {}", o(a), o(b)),
                Op::MulLow(a, b) => match self.word {
                    Word::U32 => format!("{} * {}", o(a), o(b)),
                    Word::U64 => {
                        format!("u64({} * {})", self.low_u32(a, o(a)), self.low_u32(b, o(b)))
                    }
                },
                Op::And(a, m) => format!("{} & {}", o(a), lit(m)),
                Op::Shr(a, sh) => format!("{} >> {sh}u", o(a)),
                Op::Shl(a, sh) => format!("{} << {sh}u", o(a)),
                Op::Or(a, b) => format!("{} | {}", o(a), o(b)),
                Op::Select {
                    cond,
                    then,
                    otherwise,
                } => format!(
                    "select({}, {}, {} == {})",
                    o(otherwise),
                    o(then),
                    o(cond),
                    lit(1)
                ),
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

/// Element `limb` of the parameter named `param` (`a[3]`); a name ending in `]` is one
/// expression, its single element written as the name.
fn element(param: &str, limb: usize) -> String {
    if param.ends_with(']') {
        param.to_string()
    } else {
        format!("{param}[{limb}]")
    }
}

/// A generated WGSL function: its code and which values it returns.
pub struct Function {
    /// Name in WGSL.
    pub name: String,
    /// Parameters: name and WGSL type.
    pub params: Vec<(&'static str, String)>,
    /// Return type.
    pub returns: String,
    /// The body.
    pub code: Code,
    /// The returned array's elements (each a `u32`).
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
            .map(|v| self.code.operand_u32(*v, &names, "v"))
            .collect();
        format!(
            "// {} operations, no loop (generated by field_code.rs).\nfn {}({}) -> {} {{\n{}    return {}({});\n}}\n",
            self.code.operations(),
            self.name,
            params.join(", "),
            self.returns,
            self.code.wgsl_body(&names, "v", "    "),
            self.returns,
            outputs.join(", ")
        )
    }

    /// Runs the function on `params` (one slice of `u32` limbs per parameter).
    #[cfg(test)]
    pub fn eval(&self, params: &[&[u32]]) -> Vec<u32> {
        let wide: Vec<Vec<u64>> = params
            .iter()
            .map(|p| p.iter().map(|&x| x as u64).collect())
            .collect();
        let slices: Vec<&[u64]> = wide.iter().map(Vec::as_slice).collect();
        let vals = self.code.eval(&slices);
        self.outputs
            .iter()
            .map(|v| u32::try_from(vals[*v]).expect("an output is a u32"))
            .collect()
    }
}

/// The prime field a [`FieldCode`] computes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// The base field: the MSM's coordinates (`Fq`, `fq_*`).
    Fq,
    /// The scalar field: the NTT's values (`Fr`, `fr_*`).
    Fr,
}

impl Field {
    /// The WGSL type name.
    fn type_name(self) -> &'static str {
        match self {
            Field::Fq => "Fq",
            Field::Fr => "Fr",
        }
    }

    /// The prefix of the functions' names.
    fn prefix(self) -> &'static str {
        match self {
            Field::Fq => "fq",
            Field::Fr => "fr",
        }
    }

    /// The names of the functions from and to packed words: the ones the shaders of
    /// each field call (straight.rs's for Fq, ntt.wgsl's for Fr).
    fn packing_names(self) -> [&'static str; 2] {
        match self {
            Field::Fq => ["fq_from_words", "fq_to_words"],
            Field::Fr => ["fr_unpack", "fr_pack"],
        }
    }
}

/// The generated arithmetic of one field for one limb width.
#[derive(Clone, Copy, Debug)]
pub struct FieldCode<'a> {
    field: Field,
    params: &'a FieldParams,
    bits: u32,
    n: usize,
    mask: u64,
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

/// R'/R = 2^(b·n − s) as an element of `F` (s its packed bits): x·R' is the Montgomery
/// word form of x·R'/R.
fn r_ratio<F: PrimeField>(limbs: LimbBits) -> F {
    let packed = 64 * F::MODULUS.as_ref().len() as u64;
    let r_bits = u64::from(limbs.bits()) * limbs.limbs(packed) as u64;
    F::from(2u64).pow([r_bits - packed])
}

fn scale_words<F: PrimeField + DeviceElement>(words: &mut [u32], by: F) -> Result<(), WgpuError> {
    for chunk in words.chunks_exact_mut(F::WORDS) {
        (F::read_words(chunk)? * by).write_words(chunk);
    }
    Ok(())
}

/// Rewrites packed words of `F` elements in arkworks' form (x·R) as the straight-line
/// form's (x·R'), in place; fails on words that are no element.
pub fn words_to_internal<F: PrimeField + DeviceElement>(
    limbs: LimbBits,
    words: &mut [u32],
) -> Result<(), WgpuError> {
    scale_words(words, r_ratio::<F>(limbs))
}

/// The inverse of [`words_to_internal`].
pub fn words_from_internal<F: PrimeField + DeviceElement>(
    limbs: LimbBits,
    words: &mut [u32],
) -> Result<(), WgpuError> {
    let inverse = r_ratio::<F>(limbs).inverse().ok_or(WgpuError::Corrupt {
        what: "R'/R (zero)",
    })?;
    scale_words(words, inverse)
}

impl<'a> FieldCode<'a> {
    /// The curve's Fq arithmetic over `limbs`-bit limbs.
    pub fn fq(curve: &'a CurveParams, limbs: LimbBits) -> FieldCode<'a> {
        FieldCode::of(Field::Fq, &curve.fq, limbs)
    }

    /// `field`'s arithmetic (its parameters `params`) over `limbs`-bit limbs:
    /// ⌈packed bits / b⌉ of them.
    pub fn of(field: Field, params: &'a FieldParams, limbs: LimbBits) -> FieldCode<'a> {
        let bits = limbs.bits();
        FieldCode {
            field,
            params,
            bits,
            n: limbs.limbs(params.ark_r_bits()),
            mask: (1u64 << bits) - 1,
        }
    }

    /// The word of the arithmetic's values (`u64` for limbs wider than 16 bits).
    pub fn word(&self) -> Word {
        LimbBits(self.bits).word()
    }

    /// R' = 2^(b·n)'s exponent.
    pub fn r_bits(&self) -> u64 {
        self.bits as u64 * self.n as u64
    }

    fn p_limbs(&self) -> Vec<u32> {
        to_limbs(&self.params.modulus(), self.bits, self.n)
    }

    /// −p⁻¹ mod 2^b.
    fn neg_inv(&self) -> u32 {
        let p0 = self.params.modulus()[0] as u32;
        let mut x: u32 = 1;
        for _ in 0..5 {
            x = x.wrapping_mul(2u32.wrapping_sub(p0.wrapping_mul(x)));
        }
        x.wrapping_neg() & self.mask as u32
    }

    fn inputs(&self, code: &mut Code, param: usize) -> Vec<V> {
        (0..self.n)
            .map(|l| code.input(param, l, self.mask))
            .collect()
    }

    fn function(&self, name: &str, params: &[&'static str], code: Code, out: Vec<V>) -> Function {
        let ty = self.field.type_name();
        Function {
            name: format!("{}_{name}", self.field.prefix()),
            params: params.iter().map(|p| (*p, ty.to_string())).collect(),
            returns: ty.into(),
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

    /// Columns (each up to a word) of a value below 2p as n limbs of b bits: the
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
        code.assume(t[last], self.mask as u128);
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
            let pj = code.constant(p[j] as u64);
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

    /// `fq_mul(a, b)` (or `fr_mul`): a·b/R' mod p (operands below p, result below p),
    /// by operand scanning: row i adds a·b_i and m·p (m making column 0 divisible by
    /// 2^b) and shifts down one column; carries are deferred as
    /// [`FieldCode::accumulate`] allows.
    pub fn mul(&self) -> Function {
        let mut code = Code::new(self.word());
        let a = self.inputs(&mut code, 0);
        let b = self.inputs(&mut code, 1);
        let r = self.mul_code(&mut code, &a, &b);
        self.function("mul", &["a", "b"], code, r)
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
        let inv = code.constant(self.neg_inv() as u64);
        let m = code.mul_low(t[0], inv);
        let m = code.and(m, self.mask);
        for (j, pj) in self.p_limbs().into_iter().enumerate() {
            let pj = code.constant(pj as u64);
            let x = code.mul(m, pj);
            self.accumulate(code, t, j, x);
        }
        // Column 0 is now ≡ 0 mod 2^b: shift down, its carry into the new column 0.
        let high = code.shr(t[0], self.bits);
        t.remove(0);
        t.push(code.constant(0));
        self.accumulate(code, t, 0, high);
    }

    /// `fq_add(a, b)` (or `fr_add`): a + b mod p.
    pub fn add(&self) -> Function {
        let mut code = Code::new(self.word());
        let a = self.inputs(&mut code, 0);
        let b = self.inputs(&mut code, 1);
        let zero = code.constant(0);
        let mut t: Vec<V> = (0..self.n).map(|j| code.add(a[j], b[j])).collect();
        t.push(zero);
        let r = self.normalize(&mut code, t);
        let r = self.reduce_once(&mut code, &r);
        self.function("add", &["a", "b"], code, r)
    }

    /// `fq_sub(a, b)` (or `fr_sub`): a − b mod p.
    pub fn sub(&self) -> Function {
        let mut code = Code::new(self.word());
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
            let pj = c.constant(p[j] as u64);
            let x = c.add(d[j], pj);
            let x = c.add(x, carry);
            e.push(c.and(x, self.mask));
            carry = c.shr(x, self.bits);
        }
        let r = (0..self.n).map(|j| c.select(borrow, e[j], d[j])).collect();
        self.function("sub", &["a", "b"], code, r)
    }

    /// `fq_from_words(w)` (Fr: `fr_unpack`): a packed element's bits as limbs,
    /// unchanged in value.
    pub fn unpack(&self) -> Function {
        let words = self.params.packed_words();
        let mut code = Code::default();
        let w: Vec<V> = (0..words)
            .map(|k| code.input(0, k, u32::MAX as u64))
            .collect();
        let mut out = Vec::with_capacity(self.n);
        for l in 0..self.n {
            let bit = l * self.bits as usize;
            let (k, s) = (bit / 32, (bit % 32) as u32);
            if k >= words {
                out.push(code.constant(0));
                continue;
            }
            let mut v = code.shr(w[k], s);
            if s + self.bits > 32 && k + 1 < words {
                let up = code.shl(w[k + 1], 32 - s);
                v = code.or(v, up);
            }
            out.push(code.and(v, self.mask));
        }
        Function {
            name: self.field.packing_names()[0].into(),
            params: vec![("w", format!("array<u32, {words}>"))],
            returns: self.field.type_name().into(),
            code,
            outputs: out,
        }
    }

    /// `fq_to_words(a)` (Fr: `fr_pack`): the limbs' bits packed in words (a < p).
    pub fn pack(&self) -> Function {
        let words = self.params.packed_words();
        let mut code = Code::default();
        let a = self.inputs(&mut code, 0);
        let b = self.bits as usize;
        let mut packed = Vec::with_capacity(words);
        for k in 0..words {
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
            packed.push(word);
        }
        Function {
            name: self.field.packing_names()[1].into(),
            params: vec![("a", self.field.type_name().into())],
            returns: format!("array<u32, {words}>"),
            code,
            outputs: packed,
        }
    }

    /// `const {name}` holding `c` (an integer below p) in this code's form, c·R' mod p,
    /// with the comment `why`.
    pub fn wgsl_constant(&self, name: &str, c: &BigUint, why: &str) -> String {
        self.wgsl_const(name, &self.params.times_pow2(c, self.r_bits()), why)
    }

    fn wgsl_const(&self, name: &str, value: &[u64], why: &str) -> String {
        let limbs: Vec<String> = to_limbs(value, self.bits, self.n)
            .iter()
            .map(|l| format!("0x{l:x}u"))
            .collect();
        format!(
            "// {why}\nconst {name} = {}({});\n",
            self.field.type_name(),
            limbs.join(", ")
        )
    }

    /// The whole generated code of the field: the type, its constants and functions.
    pub fn wgsl(&self) -> String {
        let (ty, prefix) = (self.field.type_name(), self.field.prefix());
        let upper = prefix.to_ascii_uppercase();
        let ark_r = self.params.ark_r_bits();
        let mut s = format!(
            "// {ty} over {} limbs of {} bits ({}) in Montgomery form with R' = 2^{} (field_code.rs).\n\
             alias {ty} = array<u32, {}>;\n",
            self.n,
            self.bits,
            match self.word() {
                Word::U32 => "u32 arithmetic",
                Word::U64 => "u64 arithmetic",
            },
            self.r_bits(),
            self.n
        );
        s += &format!("const {upper}_ZERO = {ty}();\n");
        s += &self.wgsl_const(
            &format!("{upper}_ONE"),
            &self.params.pow2(self.r_bits()),
            "1 (R' mod p).",
        );
        s += &self.wgsl_const(
            &format!("{upper}_ARK_R"),
            &self.params.pow2(ark_r),
            &format!(
                "R mod p (2^{ark_r}): Z of a stored affine point, and the factor from R' form to arkworks'."
            ),
        );
        s.push('\n');
        s += &self.mul().wgsl();
        for f in [self.add(), self.sub(), self.unpack(), self.pack()] {
            s.push('\n');
            s += &f.wgsl();
        }
        let limbs: Vec<String> = (0..self.n).map(|l| format!("a[{l}]")).collect();
        s + &format!(
            "\nfn {prefix}_is_zero(a: {ty}) -> bool {{\n    return ({}) == 0u;\n}}\n",
            limbs.join(" | ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::{Field as _, UniformRand};
    use ark_std::rand::{rngs::StdRng, SeedableRng};
    use crucible_core::{Bls12_381, Bn254, Fq, PairingCurve};

    fn int<F: PrimeField>(x: F) -> Vec<u64> {
        x.into_bigint().as_ref().to_vec()
    }

    /// The element whose canonical integer the limbs spell (asserting it is reduced).
    fn from_limbs<F: PrimeField>(limbs: &[u32], bits: u32) -> F {
        let mut x = [0u64; 8];
        for (l, v) in limbs.iter().enumerate() {
            for k in 0..bits as usize {
                let bit = l * bits as usize + k;
                if (v >> k) & 1 == 1 {
                    x[bit / 64] |= 1 << (bit % 64);
                }
            }
        }
        let words = F::MODULUS.as_ref().len();
        assert!(x[words..].iter().all(|w| *w == 0), "a result is too wide");
        let mut b = F::MODULUS;
        b.as_mut().copy_from_slice(&x[..words]);
        assert!(b < F::MODULUS, "a result is not reduced");
        F::from_bigint(b).unwrap()
    }

    fn params<E: PairingCurve>() -> CurveParams {
        CurveParams::of::<E>().expect("a supported curve")
    }

    /// Every width of one field: the generator's whole range.
    fn all_codes(field: Field, params: &FieldParams) -> impl Iterator<Item = FieldCode<'_>> + '_ {
        LimbBits::RANGE.map(move |b| FieldCode::of(field, params, LimbBits::new(b).unwrap()))
    }

    /// Random elements and the edge values 0, 1, p − 1, p − 2 (as integers).
    fn operands<F: PrimeField>(rng: &mut StdRng) -> Vec<F> {
        let mut v: Vec<F> = (0..24).map(|_| F::rand(rng)).collect();
        v.extend([F::from(0u64), F::from(1u64), -F::from(1u64), -F::from(2u64)]);
        v
    }

    /// The product, the sum and the difference against
    /// arkworks for one field's code.
    fn check_arithmetic<F: PrimeField>(code: &FieldCode, rng: &mut StdRng, seed: u64) {
        let (bits, n) = (code.bits, code.n);
        let r_inv = F::from(2u64).pow([code.r_bits()]).inverse().unwrap();
        let (mul, add, sub) = (code.mul(), code.add(), code.sub());
        let xs = operands::<F>(rng);
        for &x in &xs {
            for &y in &xs[20..] {
                let (xl, yl) = (to_limbs(&int(x), bits, n), to_limbs(&int(y), bits, n));
                let at = format!(
                    "{:?}, {bits}-bit limbs, {x} and {y} (seed {seed})",
                    code.field
                );
                let got = |f: &Function| from_limbs::<F>(&f.eval(&[&xl, &yl]), bits);
                assert_eq!(got(&mul), x * y * r_inv, "mul, {at}");
                assert_eq!(got(&add), x + y, "add, {at}");
                assert_eq!(got(&sub), x - y, "sub, {at}");
            }
        }
    }

    fn check_curve_arithmetic<E: PairingCurve>(rng: &mut StdRng, seed: u64) {
        let curve = params::<E>();
        for code in all_codes(Field::Fq, &curve.fq) {
            check_arithmetic::<E::BaseField>(&code, rng, seed);
        }
        for code in all_codes(Field::Fr, &curve.fr) {
            check_arithmetic::<E::ScalarField>(&code, rng, seed);
        }
    }

    #[test]
    fn generated_arithmetic_matches_arkworks_for_every_width() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        check_curve_arithmetic::<Bls12_381>(&mut rng, seed);
        check_curve_arithmetic::<Bn254>(&mut rng, seed);
    }

    /// R'²/R in `code`'s limbs: a product by it takes an element from arkworks' form
    /// to R' form.
    fn to_internal_factor(code: &FieldCode) -> Vec<u32> {
        let ark = code.params.ark_r_bits();
        to_limbs(
            &code.params.pow2(2 * code.r_bits() - ark),
            code.bits,
            code.n,
        )
    }

    fn check_packing<E: PairingCurve>(rng: &mut StdRng, seed: u64)
    where
        E::BaseField: DeviceElement,
    {
        let curve = params::<E>();
        let words_of = E::BaseField::WORDS;
        for code in all_codes(Field::Fq, &curve.fq) {
            let (bits, n) = (code.bits, code.n);
            let (unpack, pack, mul) = (code.unpack(), code.pack(), code.mul());
            for x in operands::<E::BaseField>(rng) {
                // Stored form: arkworks' Montgomery words.
                let mut words = vec![0u32; words_of];
                x.write_words(&mut words);
                let limbs = unpack.eval(&[&words]);
                let mont = to_limbs(
                    &curve
                        .fq
                        .times_pow2(&x.into_bigint().into(), curve.fq.ark_r_bits()),
                    bits,
                    n,
                );
                assert_eq!(limbs, mont, "{bits} bits (seed {seed})");
                assert_eq!(pack.eval(&[&limbs]), words, "{bits} bits (seed {seed})");
                // x·R → x·R' by R'²/R, and back by R (FQ_ARK_R).
                let to_internal = to_internal_factor(&code);
                let internal = mul.eval(&[&limbs, &to_internal]);
                let r_prime = E::BaseField::from(2u64).pow([code.r_bits()]);
                assert_eq!(
                    from_limbs::<E::BaseField>(&internal, bits),
                    x * r_prime,
                    "{bits} bits"
                );
                let ark_r = to_limbs(&curve.fq.pow2(curve.fq.ark_r_bits()), bits, n);
                assert_eq!(mul.eval(&[&internal, &ark_r]), limbs, "{bits} bits");
            }
        }
    }

    #[test]
    fn packing_keeps_the_bits_and_constants_convert_forms() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        check_packing::<Bls12_381>(&mut rng, seed);
        check_packing::<Bn254>(&mut rng, seed);
    }

    /// Fr over 32-bit limbs is arkworks' own form: packing is the identity on its
    /// words, and the product of two stored elements is the stored product.
    fn check_fr_wide<E: PairingCurve>(rng: &mut StdRng, seed: u64)
    where
        E::ScalarField: DeviceElement,
    {
        let curve = params::<E>();
        let code = FieldCode::of(Field::Fr, &curve.fr, LimbBits::new(32).unwrap());
        assert_eq!((code.n, code.r_bits()), (8, 256));
        let (unpack, pack, mul) = (code.unpack(), code.pack(), code.mul());
        for (x, y) in operands::<E::ScalarField>(rng)
            .into_iter()
            .zip(operands::<E::ScalarField>(rng))
        {
            let words = |v: E::ScalarField| {
                let mut w = [0u32; 8];
                v.write_words(&mut w);
                w
            };
            assert_eq!(unpack.eval(&[&words(x)]), words(x), "seed {seed}");
            assert_eq!(pack.eval(&[&words(x)]), words(x), "seed {seed}");
            assert_eq!(
                mul.eval(&[&words(x), &words(y)]),
                words(x * y),
                "{x}·{y} (seed {seed})"
            );
        }
    }

    #[test]
    fn fr_over_32_bit_limbs_is_arkworks_form() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        check_fr_wide::<Bls12_381>(&mut rng, seed);
        check_fr_wide::<Bn254>(&mut rng, seed);
    }

    /// The host's conversion is the generated multiplication by R'²/R, and back.
    fn check_host_conversion<E: PairingCurve>(rng: &mut StdRng, seed: u64)
    where
        E::BaseField: DeviceElement,
    {
        let curve = params::<E>();
        for code in all_codes(Field::Fq, &curve.fq) {
            let limbs = LimbBits::new(code.bits).unwrap();
            let x = E::BaseField::rand(rng);
            let mut words = vec![0u32; E::BaseField::WORDS];
            x.write_words(&mut words);
            let to_internal = to_internal_factor(&code);
            let on_device = code
                .mul()
                .eval(&[&code.unpack().eval(&[&words]), &to_internal]);
            let mut host = words.clone();
            words_to_internal::<E::BaseField>(limbs, &mut host).unwrap();
            assert_eq!(
                code.pack().eval(&[&on_device]),
                host,
                "{} bits (seed {seed})",
                code.bits
            );
            words_from_internal::<E::BaseField>(limbs, &mut host).unwrap();
            assert_eq!(host, words);
        }
    }

    #[test]
    fn host_conversion_is_the_montgomery_factor() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        check_host_conversion::<Bls12_381>(&mut rng, seed);
        check_host_conversion::<Bn254>(&mut rng, seed);
    }

    /// 13-bit limbs never carry inside a row; 16-bit ones carry after every product;
    /// 28-bit ones in u64 columns never carry inside a row either, for a ninth of the
    /// 13-bit products.
    #[test]
    fn deferred_carries_make_narrow_limbs_cheaper() {
        let bls = params::<Bls12_381>();
        let len = |b| {
            FieldCode::fq(&bls, LimbBits::new(b).unwrap())
                .mul()
                .code
                .operations()
        };
        let (b13, b15, b16, b28, b32) = (len(13), len(15), len(16), len(28), len(32));
        println!(
            "fq_mul operations: 13-bit {b13}, 15-bit {b15}, 16-bit {b16}, 28-bit {b28}, 32-bit {b32}"
        );
        assert!(b13 < b16, "{b13} vs {b16}");
        // 13 bits: 2·30² products and their adds, plus per row m, a shift and an add.
        assert!(b13 < 2 * 2 * 30 * 30 + 30 * 8 + 300, "{b13}");
        // 28 bits: 2·14² products and their adds, and the same per row.
        assert!(b28 < 2 * 2 * 14 * 14 + 14 * 8 + 200, "{b28}");
        assert!(b28 < b32, "{b28} vs {b32}");
    }

    #[test]
    fn wgsl_is_loop_free_with_literal_constants() {
        let bls = params::<Bls12_381>();
        let s = FieldCode::fq(&bls, LimbBits::DEFAULT).wgsl();
        assert!(s.contains("alias Fq = array<u32, 26>;"), "{s}");
        assert!(s.contains("fn fq_mul(a: Fq, b: Fq) -> Fq {"));
        assert!(!s.contains("for (") && !s.contains("loop {") && !s.contains("while "));
        assert!(s.contains("let v"));
        let wide = FieldCode::of(Field::Fr, &bls.fr, LimbBits::new(32).unwrap()).wgsl();
        assert!(wide.contains("alias Fr = array<u32, 8>;"), "{wide}");
        assert!(wide.contains("fn fr_mul(a: Fr, b: Fr) -> Fr {"));
        assert!(wide.contains("u64(a[0]) * u64(b[0])"), "{wide}");
        assert!(wide.contains("fn fr_unpack(w: array<u32, 8>) -> Fr {"));
        // BN254's Fq: 256 packed bits, 18 limbs of 15 bits, 8 words.
        let bn = params::<Bn254>();
        let s = FieldCode::fq(&bn, LimbBits::DEFAULT).wgsl();
        assert!(s.contains("alias Fq = array<u32, 18>;"), "{s}");
        assert!(
            s.contains("fn fq_from_words(w: array<u32, 8>) -> Fq {"),
            "{s}"
        );
    }

    #[test]
    fn limb_widths() {
        assert_eq!(LimbBits::new(15).map(LimbBits::bits), Some(15));
        assert_eq!(LimbBits::new(33), None);
        assert_eq!(LimbBits::new(11), None);
        assert_eq!(LimbBits::DEFAULT.limbs(384), 26);
        assert_eq!(LimbBits::DEFAULT.limbs(256), 18);
        assert_eq!(LimbBits::new(16).unwrap().limbs(384), 24);
        assert!(!LimbBits::new(16).unwrap().needs_int64());
        assert!(LimbBits::new(17).unwrap().needs_int64());
        assert_eq!(LimbBits::new(32).unwrap().limbs(384), 12);
        assert_eq!(LimbBits::new(28).unwrap().limbs(256), 10);
    }

    /// A constant's code holds c·R': its product with x·R' is c·x·R'.
    #[test]
    fn constants_are_in_the_codes_form() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        let bls = params::<Bls12_381>();
        for code in all_codes(Field::Fq, &bls.fq) {
            let c = Fq::rand(&mut rng);
            let x = Fq::rand(&mut rng);
            let text = code.wgsl_constant("FQ_C", &c.into_bigint().into(), "c");
            let limbs: Vec<u32> = text[text.find('(').unwrap() + 1..text.rfind(')').unwrap()]
                .split(", ")
                .map(|l| {
                    u32::from_str_radix(l.trim_start_matches("0x").trim_end_matches('u'), 16)
                        .unwrap()
                })
                .collect();
            let r = Fq::from(2u64).pow([code.r_bits()]);
            let xl = to_limbs(&int(x * r), code.bits, code.n);
            let got = from_limbs::<Fq>(&code.mul().eval(&[&xl, &limbs]), code.bits);
            assert_eq!(got, c * x * r, "{} bits (seed {seed})", code.bits);
        }
    }
}
