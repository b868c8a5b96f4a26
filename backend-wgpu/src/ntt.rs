//! NTTs (natural order in and out, as arkworks' `Radix2EvaluationDomain`) and the
//! pointwise ops, as dispatches of shaders/ntt.wgsl.
//!
//! Two paths, chosen by `CRUCIBLE_WGPU_NTT` (see [`NttPath`]): by default the stages
//! run in workgroup memory, up to 9 a dispatch on tiles of up to 2^9 elements (three
//! dispatches at 2^20 and 2^24), with a twiddle table built once per domain and kept
//! in the lease, the bit reversal fused into the tile dispatches on one chunk
//! ([`fused_plan`]; a reversal pass first on several chunks), the coset scalings
//! into the first dispatch's loads (or the reversal) and into the last dispatch's
//! stores. `passes` runs the kernels of before, one global dispatch per radix-2 stage
//! with the twiddles recomputed from two small tables.
//!
//! A transform (or pointwise product) is one submission, and returns with it queued:
//! its tables, its power scratch and the parameter buffer stay in the lease for the
//! next (only a failure frees them), so a repeated transform creates no buffer and
//! waits for nothing.

use ark_ff::Field;
use crucible_core::{
    BufferId, Domain, ElementKind, Error, Fr, Lease, MemoryPlan, NttKind, PlanKey, Result,
    ScalarBuf,
};

use crate::batch::{Batch, ParamsBuffer};
use crate::context::Context;
use crate::error::{check_len, WgpuError};
use crate::field::{element_bytes, DeviceElement, FR_WORDS};
use crate::memory::{check_kind, DeviceBuffer};
use crate::params::NttParams;
use crate::profile::{self, Timer};
use crate::shaders::{Module, WORKGROUP};

/// Plan item of the per-transform power tables (the passes' twiddles, the workgroup
/// path's table seeds and its twiddles of stages across chunks).
pub const TWIDDLES_ITEM: PlanKey = PlanKey::new("wgpu", "ntt_twiddles");

/// Plan item of the workgroup path's twiddle table, kept in the lease.
pub const TABLE_ITEM: PlanKey = PlanKey::new("wgpu", "ntt_twiddle_table");

/// Plan items of the coset forward's powers of g and the coset inverse's powers of
/// g^−1 (times 1/n), kept in the lease.
pub const COSET_ITEM: PlanKey = PlanKey::new("wgpu", "ntt_coset_powers");
/// See [`COSET_ITEM`].
pub const COSET_INV_ITEM: PlanKey = PlanKey::new("wgpu", "ntt_coset_inv_powers");

/// Environment variable choosing the NTT path: `workgroup` or `passes` (see
/// [`NttPath`]); unset or empty, `workgroup`.
pub const NTT_PATH_ENV: &str = "CRUCIBLE_WGPU_NTT";

/// Environment variable giving the workgroup path's largest tile, log2 of its
/// elements (1 to [`MAX_TILE_BITS`]); unset or empty, [`MAX_TILE_BITS`].
pub const TILE_BITS_ENV: &str = "CRUCIBLE_WGPU_NTT_TILE_BITS";

/// Environment variable choosing how many stages the workgroup path's tile kernel
/// runs between barriers: `4` (two stages, four elements a thread: `tile_stages4`) or
/// `2` (one stage: `tile_stages`); unset or empty, [`NttRadix::DEFAULT`].
pub const NTT_RADIX_ENV: &str = "CRUCIBLE_WGPU_NTT_RADIX";

/// log2 of the most elements of a tile: 2^9 Fr of 32 bytes fill WebGPU's default
/// 16 KiB of workgroup storage (`tile` in shaders/ntt.wgsl), so no adapter needs more
/// than the default limit. Larger tiles would save a dispatch at 2^20 (two instead of
/// three) and none at 2^24, where the butterflies' products, not the round trips, cost.
pub const MAX_TILE_BITS: u32 = 9;

/// Bytes of workgroup storage the tile kernel declares.
const TILE_STORAGE_BYTES: u32 = (1 << MAX_TILE_BITS) * (FR_WORDS as u32) * 4;

/// How the radix-2 stages of a transform run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NttPath {
    /// Up to [`MAX_TILE_BITS`] stages a dispatch on tiles in workgroup memory (the
    /// default on every adapter).
    Workgroup,
    /// One global dispatch per stage: the path of before, for A/B measurements.
    Passes,
}

impl NttPath {
    /// Parses [`NTT_PATH_ENV`]'s value (`workgroup` or `passes`, any case).
    pub fn parse(s: &str) -> Option<NttPath> {
        match s.trim().to_ascii_lowercase().as_str() {
            "workgroup" => Some(NttPath::Workgroup),
            "passes" => Some(NttPath::Passes),
            _ => None,
        }
    }

    /// The name [`NttPath::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            NttPath::Workgroup => "workgroup",
            NttPath::Passes => "passes",
        }
    }
}

/// Environment variable choosing the workgroup path's Fr product: `unrolled`
/// (fr_code.rs) or `loop` (fr.wgsl's `fr_mul`); unset or empty, by adapter
/// ([`NttMul::for_adapter`]).
pub const NTT_MUL_ENV: &str = "CRUCIBLE_WGPU_NTT_MUL";

/// The form of the workgroup path's Fr products (the passes keep fr.wgsl's loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// Parses [`NTT_MUL_ENV`]'s value (`unrolled` or `loop`, any case).
    pub fn parse(s: &str) -> Option<NttMul> {
        match s.trim().to_ascii_lowercase().as_str() {
            "unrolled" => Some(NttMul::Unrolled),
            "loop" => Some(NttMul::Loop),
            "wide" => Some(NttMul::Wide),
            _ => None,
        }
    }

    /// The name [`NttMul::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            NttMul::Unrolled => "unrolled",
            NttMul::Loop => "loop",
            NttMul::Wide => "wide",
        }
    }

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

/// How many of a tile's stages run between two barriers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NttRadix {
    /// One stage a round, two elements a butterfly (`tile_stages`).
    Two,
    /// Two stages a round, four elements a thread in registers (`tile_stages4`): half
    /// the workgroup-memory round trips and barriers.
    Four,
}

impl NttRadix {
    /// The default on every adapter.
    pub const DEFAULT: NttRadix = NttRadix::Four;

    /// Parses [`NTT_RADIX_ENV`]'s value (`2` or `4`).
    pub fn parse(s: &str) -> Option<NttRadix> {
        match s.trim() {
            "2" => Some(NttRadix::Two),
            "4" => Some(NttRadix::Four),
            _ => None,
        }
    }

    /// The tile kernel's entry point.
    fn tile_entry(self) -> &'static str {
        match self {
            NttRadix::Two => "tile_stages",
            NttRadix::Four => "tile_stages4",
        }
    }
}

/// The path, the tile size and the product of the transforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttConfig {
    /// Workgroup tiles or global passes.
    pub path: NttPath,
    /// log2 of the largest tile (the workgroup path).
    pub tile_bits: u32,
    /// The workgroup path's Fr product; `None`: [`NttMul::for_adapter`].
    pub mul: Option<NttMul>,
    /// The stages a tile runs between barriers.
    pub radix: NttRadix,
}

impl Default for NttConfig {
    fn default() -> Self {
        NttConfig {
            path: NttPath::Workgroup,
            tile_bits: MAX_TILE_BITS,
            mul: None,
            radix: NttRadix::DEFAULT,
        }
    }
}

/// An [`NttConfig`] resolved on one adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Chosen {
    path: NttPath,
    tile_bits: u32,
    mul: NttMul,
    radix: NttRadix,
}

impl Chosen {
    /// The entry point `kernel` runs as under this choice.
    fn entry(&self, kernel: Kernel) -> &'static str {
        match kernel {
            Kernel::TileStages => self.radix.tile_entry(),
            other => other.entry(),
        }
    }

    /// The pipeline of each of `steps` (a kernel used twice named twice).
    fn step_entries(&self, steps: &[Step]) -> Vec<(Module, &'static str)> {
        let (module, _) = self.module();
        steps
            .iter()
            .map(|step| (module, self.entry(step.kernel)))
            .collect()
    }

    /// The module this choice's kernels are in, and how reports name the path.
    fn module(&self) -> (Module, &'static str) {
        match (self.path, self.mul) {
            (NttPath::Workgroup, NttMul::Unrolled) => {
                (Module::NttUnrolled, "workgroup, unrolled products")
            }
            (NttPath::Workgroup, NttMul::Loop) => (Module::Ntt, "workgroup, loop products"),
            (NttPath::Workgroup, NttMul::Wide) => (Module::NttWide, "workgroup, wide products"),
            (NttPath::Passes, _) => (Module::Ntt, "passes"),
        }
    }

    /// An error if the device cannot run this choice: the wide product needs 64-bit
    /// integers in shaders.
    fn check(&self, ctx: &Context) -> Result<()> {
        if self.path == NttPath::Workgroup && self.mul == NttMul::Wide && !ctx.int64 {
            return Err(WgpuError::Unsupported(format!(
                "{NTT_MUL_ENV}=wide needs 64-bit integers in shaders (SHADER_INT64), which \
                 this adapter does not offer"
            ))
            .into());
        }
        Ok(())
    }
}

/// `name`'s value parsed by `parse` (unset or empty: `None`), or an error naming what
/// it expects.
fn env_choice<T>(
    name: &str,
    expected: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>> {
    match std::env::var(name) {
        Ok(s) if !s.trim().is_empty() => parse(&s)
            .map(Some)
            .ok_or_else(|| Error::InvalidInput(format!("{name}=`{s}`: expected {expected}"))),
        _ => Ok(None),
    }
}

impl NttConfig {
    /// The configuration [`NTT_PATH_ENV`], [`TILE_BITS_ENV`] and [`NTT_MUL_ENV`] ask
    /// for; a value that does not parse is an error that says what is expected.
    pub fn from_env() -> Result<NttConfig> {
        let default = NttConfig::default();
        let tile_bits = |s: &str| {
            s.trim()
                .parse::<u32>()
                .ok()
                .filter(|b| (1..=MAX_TILE_BITS).contains(b))
        };
        Ok(NttConfig {
            path: env_choice(NTT_PATH_ENV, "`workgroup` or `passes`", NttPath::parse)?
                .unwrap_or(default.path),
            tile_bits: env_choice(TILE_BITS_ENV, &format!("1 to {MAX_TILE_BITS}"), tile_bits)?
                .unwrap_or(default.tile_bits),
            mul: env_choice(NTT_MUL_ENV, "`unrolled`, `loop` or `wide`", NttMul::parse)?,
            radix: env_choice(NTT_RADIX_ENV, "`2` or `4`", NttRadix::parse)?
                .unwrap_or(default.radix),
        })
    }

    /// The configuration on `ctx`: the product asked for or the adapter's default, and
    /// the passes where the adapter offers less workgroup storage than a tile takes
    /// (WebGPU guarantees 16 KiB; a downlevel adapter may not). The wide product asked
    /// for on a device without 64-bit integers stays chosen: [`Chosen::check`] says why
    /// it cannot run.
    fn on(self, ctx: &Context) -> Chosen {
        let software = ctx.device.adapter_info().device_type == wgpu::DeviceType::Cpu;
        let mut path = self.path;
        if ctx.device.limits().max_compute_workgroup_storage_size < TILE_STORAGE_BYTES {
            path = NttPath::Passes;
        }
        Chosen {
            path,
            tile_bits: self.tile_bits,
            mul: self.mul.unwrap_or(NttMul::for_adapter(software, ctx.int64)),
            radix: self.radix,
        }
    }
}

fn words(x: Fr) -> [u32; FR_WORDS] {
    let mut w = [0u32; FR_WORDS];
    x.write_words(&mut w);
    w
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    Twiddles,
    Scale,
    Bitrev,
    Butterfly,
    Powers,
    TwiddleTable,
    BitrevPowers,
    ScalePowers,
    TileStages,
}

impl Kernel {
    fn entry(self) -> &'static str {
        match self {
            Kernel::Twiddles => "twiddles",
            Kernel::Scale => "scale",
            Kernel::Bitrev => "bitrev",
            Kernel::Butterfly => "butterfly",
            Kernel::Powers => "powers",
            Kernel::TwiddleTable => "twiddle_table",
            Kernel::BitrevPowers => "bitrev_powers",
            Kernel::ScalePowers => "scale_powers",
            Kernel::TileStages => "tile_stages",
        }
    }

    /// The phase a dispatch of this entry point counts under in the profile: its
    /// name, and for `tile_stages` which of the transform's tile dispatches it is
    /// (`tiles` counts them).
    fn phase(self, tiles: &mut usize) -> &'static str {
        const TILES: [&str; 4] = [
            "tile_stages 1",
            "tile_stages 2",
            "tile_stages 3",
            "tile_stages 4+",
        ];
        if self != Kernel::TileStages {
            return self.entry();
        }
        *tiles += 1;
        TILES[(*tiles - 1).min(TILES.len() - 1)]
    }

    /// The table bindings the entry point reads: `tw` (3) and `pw` (4).
    fn tables(self) -> (bool, bool) {
        match self {
            Kernel::Twiddles | Kernel::Butterfly => (true, false),
            Kernel::Scale | Kernel::Bitrev => (false, false),
            Kernel::Powers | Kernel::BitrevPowers | Kernel::ScalePowers => (false, true),
            Kernel::TwiddleTable | Kernel::TileStages => (true, true),
        }
    }

    /// Whether the entry point reads and writes the data (bindings 1 and 2).
    fn data(self) -> bool {
        !matches!(
            self,
            Kernel::Twiddles | Kernel::Powers | Kernel::TwiddleTable
        )
    }
}

/// A table buffer a dispatch binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Table {
    /// This transform's [`TWIDDLES_ITEM`].
    Scratch,
    /// The kept twiddle table ([`TABLE_ITEM`]).
    Twiddles,
    /// The kept coset powers of this transform's kind ([`COSET_ITEM`] or
    /// [`COSET_INV_ITEM`]).
    Coset,
}

struct Step {
    kernel: Kernel,
    params: NttParams,
    tw: Table,
    pw: Table,
}

impl Step {
    /// A step whose entry point reads no table, or only the scratch tables.
    fn plain(kernel: Kernel, params: NttParams) -> Step {
        Step {
            kernel,
            params,
            tw: Table::Scratch,
            pw: Table::Scratch,
        }
    }

    /// Threads of its dispatch: one workgroup a tile for the tile kernel.
    fn threads(&self) -> u32 {
        match self.kernel {
            Kernel::TileStages => self.params.count * WORKGROUP,
            _ => self.params.count,
        }
    }
}

/// log2 of the low twiddle table's length for a transform of 2^log_n points.
fn tw_log_lo(log_n: u32) -> u32 {
    log_n / 2
}

/// Entries of both twiddle tables: w^e for e < n/2 = 2^m is lo[e mod 2^h]·hi[e >> h].
fn twiddle_entries(log_n: u32) -> usize {
    if log_n == 0 {
        return 0;
    }
    let m = log_n - 1;
    let h = tw_log_lo(log_n);
    (1usize << h) + (1usize << (m - h))
}

/// log2 of the low coset power table's length: g^i for i < 2^log_n is
/// lo[i mod 2^h]·hi[i >> h].
fn coset_log_lo(log_n: u32) -> u32 {
    log_n.div_ceil(2)
}

/// Entries of both coset power tables of a domain of 2^log_n points.
fn coset_entries(log_n: u32) -> usize {
    let h = coset_log_lo(log_n);
    (1usize << h) + (1usize << (log_n - h))
}

fn fr_bytes(entries: usize) -> u64 {
    (entries * FR_WORDS * 4) as u64
}

/// log2 of the points whose transform's stages all lie inside one chunk: the
/// workgroup path's tiles cover those stages, its twiddle table their roots.
fn table_log(log_n: u32, chunk_len: usize) -> u32 {
    log_n.min(chunk_len.trailing_zeros())
}

/// Every dispatch of one NTT of `domain` over a buffer of `chunk_len`-element chunks
/// on the passes path.
fn pass_steps(domain: &Domain, kind: NttKind, chunk_len: usize) -> Vec<Step> {
    let k = domain.log_size;
    if k == 0 {
        // One point: every transform is the identity (g^0 = 1, 1/n = 1).
        return Vec::new();
    }
    let n = domain.size;
    let chunk = chunk_len.min(n);
    let chunks = n / chunk;
    let log_chunk = chunk.trailing_zeros();
    let inverse = matches!(kind, NttKind::Inverse | NttKind::CosetInverse);
    let base = NttParams {
        log_n: k,
        log_chunk,
        tw_log_lo: tw_log_lo(k),
        ..NttParams::default()
    };
    let mut out = vec![twiddle_step(domain, inverse, base)];
    let scale = |out: &mut Vec<Step>, c: Fr, h: Option<Fr>| {
        for ch in 0..chunks {
            out.push(Step::plain(
                Kernel::Scale,
                NttParams {
                    count: chunk as u32,
                    base: (ch * chunk) as u32,
                    stage: u32::from(h.is_some()),
                    lo_chunk: ch as u32,
                    hi_chunk: ch as u32,
                    c: words(c),
                    h: words(h.unwrap_or(Fr::ONE)),
                    ..base
                },
            ));
        }
    };
    if kind == NttKind::CosetForward {
        scale(&mut out, Fr::ONE, Some(domain.coset_gen));
    }
    reversal_steps(&mut out, Kernel::Bitrev, chunks, chunk, base);
    butterfly_steps(&mut out, 0..k, chunks, chunk, base);
    match kind {
        NttKind::Inverse => scale(&mut out, domain.size_inv, None),
        NttKind::CosetInverse => scale(&mut out, domain.size_inv, Some(domain.coset_gen_inv)),
        NttKind::Forward | NttKind::CosetForward => {}
    }
    out
}

/// The passes' twiddle tables of the transform's direction into the scratch tables.
fn twiddle_step(domain: &Domain, inverse: bool, base: NttParams) -> Step {
    Step::plain(
        Kernel::Twiddles,
        NttParams {
            count: twiddle_entries(domain.log_size) as u32,
            h: words(if inverse {
                domain.omega_inv
            } else {
                domain.omega
            }),
            ..base
        },
    )
}

/// The bit reversal (`kernel`: `bitrev` or `bitrev_powers`), one dispatch per pair of
/// chunks.
fn reversal_steps(
    out: &mut Vec<Step>,
    kernel: Kernel,
    chunks: usize,
    chunk: usize,
    base: NttParams,
) {
    for a in 0..chunks {
        for b in a..chunks {
            out.push(Step {
                kernel,
                params: NttParams {
                    count: chunk as u32,
                    base: (a * chunk) as u32,
                    lo_chunk: a as u32,
                    hi_chunk: b as u32,
                    ..base
                },
                tw: Table::Scratch,
                pw: Table::Coset,
            });
        }
    }
}

/// Global radix-2 stages `stages`, one dispatch per stage and chunk (pair), their
/// twiddles from the scratch tables.
fn butterfly_steps(
    out: &mut Vec<Step>,
    stages: std::ops::Range<u32>,
    chunks: usize,
    chunk: usize,
    base: NttParams,
) {
    for s in stages {
        let half = 1usize << s;
        if 2 * half <= chunk {
            // Both ends of every butterfly lie in the same chunk.
            for c in 0..chunks {
                out.push(Step::plain(
                    Kernel::Butterfly,
                    NttParams {
                        count: (chunk / 2) as u32,
                        base: (c * chunk / 2) as u32,
                        stage: s,
                        lo_chunk: c as u32,
                        hi_chunk: c as u32,
                        ..base
                    },
                ));
            }
        } else {
            // Chunk a's elements pair with chunk a + half/chunk's.
            for a in (0..chunks).filter(|a| (a * chunk) & half == 0) {
                let first = a * chunk;
                out.push(Step::plain(
                    Kernel::Butterfly,
                    NttParams {
                        count: chunk as u32,
                        base: (((first >> (s + 1)) << s) + (first & (half - 1))) as u32,
                        stage: s,
                        lo_chunk: a as u32,
                        hi_chunk: (a + half / chunk) as u32,
                        ..base
                    },
                ));
            }
        }
    }
}

/// tile_stages' flags (shaders/ntt.wgsl's TILE_*).
const TILE_INVERSE: u32 = 1;
const TILE_SCALE_BY_C: u32 = 2;
const TILE_SCALE_BY_POWERS: u32 = 4;
const TILE_LOAD_REVERSED: u32 = 8;
const TILE_STORE_REVERSED: u32 = 16;
const TILE_PAIRED: u32 = 32;
const TILE_SCALE_LOADS: u32 = 64;

/// One tile_stages dispatch's tiles: stages s .. s+k−1 on the 2^(w1+w2) elements
/// whose indices differ only in bits p1 .. p1+w1−1 and p2 .. p2+w2−1 (p1 + w1 <= p2),
/// one range the stages', the other a batch of independent groups (empty when w2 is
/// 0). Tile element x holds range 1 in its low w1 bits, so that x ascends with the
/// index and neighbouring threads touch neighbouring elements. `layout`: where the
/// elements lie before and after the dispatch, and whether each workgroup does a tile
/// and its mirror (TILE_LOAD_REVERSED, TILE_STORE_REVERSED, TILE_PAIRED; see
/// [`fused_plan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TileShape {
    s: u32,
    k: u32,
    p1: u32,
    w1: u32,
    p2: u32,
    w2: u32,
    layout: u32,
}

impl TileShape {
    fn bits(&self) -> u32 {
        self.w1 + self.w2
    }

    /// The index of element x of tile b (shaders/ntt.wgsl's `tile_index`).
    #[cfg(test)]
    fn index(&self, b: u32, x: u32) -> u32 {
        let mask = |w: u32| if w >= 32 { u32::MAX } else { (1u32 << w) - 1 };
        let gap = self.p2 - self.p1 - self.w1;
        let fixed = (b & mask(self.p1))
            | (((b >> self.p1) & mask(gap)) << (self.p1 + self.w1))
            | ((b >> (self.p1 + gap)) << (self.p2 + self.w2));
        fixed | ((x & mask(self.w1)) << self.p1) | ((x >> self.w1) << self.p2)
    }

    /// The tile bit of stage s + j.
    #[cfg(test)]
    fn stage_bit(&self, j: u32) -> u32 {
        if self.p1 == self.s {
            j
        } else {
            self.w1 + j
        }
    }

    /// The partner of tile b in a paired dispatch (shaders/ntt.wgsl's
    /// `workgroup_tiles`): its s fixed bits below the stages and s above, reversed.
    #[cfg(test)]
    fn partner(&self, b: u32) -> u32 {
        let s = self.s;
        let rev = |x: u32| x.reverse_bits() >> (32 - s);
        rev(b >> s) | (rev(b & ((1 << s) - 1)) << s)
    }
}

/// `total` stages in ceil(total / most) parts as equal as possible, the longer first.
fn split_even(total: u32, most: u32) -> impl Iterator<Item = u32> {
    let parts = total.div_ceil(most);
    (0..parts).map(move |i| total / parts + u32::from(i < total % parts))
}

/// The tiles of the stages 0 .. log_t−1 (all inside one chunk of 2^log_t or more), at
/// most 2^tile_bits elements each: ceil(log_t / tile_bits) dispatches, the stages split
/// evenly. Each tile is filled with a batch of groups: below the stages, the lowest
/// bits (runs of neighbours in memory, for coalesced accesses); for the first
/// dispatch, whose stages start at bit 0, the bits just above them (its tiles are then
/// contiguous). Where fewer bits lie below than the tile has room for, it is smaller.
fn tile_plan(log_t: u32, tile_bits: u32) -> Vec<TileShape> {
    let mut shapes = Vec::new();
    let mut s = 0;
    for k in split_even(log_t, tile_bits) {
        let room = tile_bits - k;
        let shape = if s == 0 {
            let g = room.min(log_t - k);
            TileShape {
                s,
                k,
                p1: 0,
                w1: k,
                p2: k,
                w2: g,
                layout: 0,
            }
        } else {
            let g = room.min(s);
            TileShape {
                s,
                k,
                p1: 0,
                w1: g,
                p2: s,
                w2: k,
                layout: 0,
            }
        };
        shapes.push(shape);
        s += k;
    }
    shapes
}

/// The tiles of a transform of 2^log_n points, all in one chunk, with the bit
/// reversal fused into them (the CUDA backend's plan, backend-cuda/src/ntt.rs's
/// `tile_plan`), or `None` where that takes more dispatches than the reversal and
/// [`tile_plan`]'s (9-bit tiles: 2^27).
///
/// A dispatch may read elements from other places than it writes them to only where
/// each workgroup writes the very places it read: one workgroup for the whole domain
/// (read reversed), or a dispatch centered on the middle stages (2s + k = log_n, no
/// batch), whose tiles bitrev maps onto each other in pairs: each workgroup then does
/// a tile and its mirror (TILE_PAIRED, twice the workgroup memory: k <= tile_bits − 1,
/// log_n − k even). So the stages below it run on the data where it lies, element i at
/// bitrev(i) (their batch bits at the top of i, neighbours in memory there); the
/// centered dispatch reads at bitrev(i) and writes at i; the stages above it run in
/// natural order. Three dispatches from 2^10 to 2^26: the reversal pass's round trip
/// saved at 2^20 and 2^24, and the coset forward's scaling on the first dispatch's
/// loads.
fn fused_plan(log_n: u32, tile_bits: u32) -> Option<Vec<TileShape>> {
    if log_n <= tile_bits {
        return Some(vec![TileShape {
            s: 0,
            k: log_n,
            p1: 0,
            w1: log_n,
            p2: log_n,
            w2: 0,
            layout: TILE_LOAD_REVERSED,
        }]);
    }
    let mid = if (tile_bits - 1 + log_n) % 2 == 0 {
        tile_bits - 1
    } else {
        tile_bits.checked_sub(2)?
    };
    let side = (log_n - mid) / 2;
    if mid == 0 || 2 * side.div_ceil(tile_bits) + 1 > log_n.div_ceil(tile_bits) + 1 {
        return None;
    }
    let mut shapes = Vec::new();
    let mut s = 0;
    for k in split_even(side, tile_bits) {
        let g = (tile_bits - k).min(log_n - s - k);
        shapes.push(TileShape {
            s,
            k,
            p1: s,
            w1: k,
            p2: log_n - g,
            w2: g,
            layout: TILE_LOAD_REVERSED | TILE_STORE_REVERSED,
        });
        s += k;
    }
    shapes.push(TileShape {
        s,
        k: mid,
        p1: s,
        w1: mid,
        p2: s + mid,
        w2: 0,
        layout: TILE_LOAD_REVERSED | TILE_PAIRED,
    });
    s += mid;
    for k in split_even(side, tile_bits) {
        let g = (tile_bits - k).min(s);
        shapes.push(TileShape {
            s,
            k,
            p1: 0,
            w1: g,
            p2: s,
            w2: k,
            layout: 0,
        });
        s += k;
    }
    Some(shapes)
}

/// Which kept tables a workgroup transform reads.
struct KeptTables {
    /// The twiddle table (stages inside chunks exist).
    twiddles: bool,
    /// The coset powers of the kind (coset transforms).
    coset: bool,
}

fn kept_tables(domain: &Domain, kind: NttKind, chunk_len: usize) -> KeptTables {
    KeptTables {
        twiddles: table_log(domain.log_size, chunk_len) > 0,
        coset: matches!(kind, NttKind::CosetForward | NttKind::CosetInverse),
    }
}

/// The steps that build the twiddle table of `domain`'s transforms over
/// `chunk_len`-element chunks: powers of w' = omega^(n / 2^t), t = table_log, into the
/// scratch tables, then tw[m] = w'^m for m < 2^(t−1).
fn twiddle_table_steps(domain: &Domain, chunk_len: usize) -> Vec<Step> {
    let t = table_log(domain.log_size, chunk_len);
    let root = domain.omega.pow([1u64 << (domain.log_size - t)]);
    let params = NttParams {
        pow_log_lo: tw_log_lo(t),
        c: words(Fr::ONE),
        h: words(root),
        ..NttParams::default()
    };
    vec![
        Step::plain(
            Kernel::Powers,
            NttParams {
                count: twiddle_entries(t) as u32,
                ..params
            },
        ),
        Step {
            kernel: Kernel::TwiddleTable,
            params: NttParams {
                count: 1 << (t - 1),
                ..params
            },
            tw: Table::Twiddles,
            pw: Table::Scratch,
        },
    ]
}

/// The root and the factor of the kind's kept coset powers: g for the coset forward,
/// g^−1 times 1/n (premultiplied into the low table) for the coset inverse.
fn coset_powers(domain: &Domain, kind: NttKind) -> (Fr, Fr) {
    if kind == NttKind::CosetInverse {
        (domain.coset_gen_inv, domain.size_inv)
    } else {
        (domain.coset_gen, Fr::ONE)
    }
}

/// The step that builds the kind's coset powers.
fn coset_table_step(domain: &Domain, kind: NttKind) -> Step {
    let (root, first) = coset_powers(domain, kind);
    Step {
        kernel: Kernel::Powers,
        params: NttParams {
            count: coset_entries(domain.log_size) as u32,
            pow_log_lo: coset_log_lo(domain.log_size),
            c: words(first),
            h: words(root),
            ..NttParams::default()
        },
        tw: Table::Scratch,
        pw: Table::Coset,
    }
}

/// The tile_stages dispatch of `shape`'s tiles in chunk `c` of `chunk` elements.
fn tile_step(
    shape: TileShape,
    chunk: usize,
    c: usize,
    flags: u32,
    base: &NttParams,
    pw: Table,
) -> Step {
    let tiles = chunk >> shape.bits();
    Step {
        kernel: Kernel::TileStages,
        params: NttParams {
            count: tiles as u32,
            base: (c * tiles) as u32,
            lo_chunk: c as u32,
            hi_chunk: c as u32,
            stage: shape.s,
            k: shape.k,
            p1: shape.p1,
            w1: shape.w1,
            p2: shape.p2,
            w2: shape.w2,
            flags: flags | shape.layout,
            ..*base
        },
        tw: Table::Twiddles,
        pw,
    }
}

/// Every dispatch of one NTT of `domain` over `chunk_len`-element chunks on the
/// workgroup path, its tables built (the table-building steps come first).
fn workgroup_steps(domain: &Domain, kind: NttKind, chunk_len: usize, tile_bits: u32) -> Vec<Step> {
    let log_n = domain.log_size;
    if log_n == 0 {
        return Vec::new();
    }
    let n = domain.size;
    let chunk = chunk_len.min(n);
    let chunks = n / chunk;
    let log_t = table_log(log_n, chunk_len);
    let tables = kept_tables(domain, kind, chunk_len);
    let inverse = matches!(kind, NttKind::Inverse | NttKind::CosetInverse);
    // A table every kernel reading `pw` can bind where it reads none.
    let any_pw = if tables.coset {
        Table::Coset
    } else if tables.twiddles {
        Table::Twiddles
    } else {
        Table::Scratch
    };
    let (scale_flags, c) = match kind {
        NttKind::Inverse => (TILE_SCALE_BY_C, domain.size_inv),
        NttKind::CosetInverse => (TILE_SCALE_BY_POWERS, Fr::ONE),
        NttKind::Forward | NttKind::CosetForward => (0, Fr::ONE),
    };
    let base = NttParams {
        log_n,
        log_chunk: chunk.trailing_zeros(),
        tw_log_lo: tw_log_lo(log_n),
        table_log: log_t,
        pow_log_lo: coset_log_lo(log_n),
        flags: if inverse { TILE_INVERSE } else { 0 },
        c: words(c),
        ..NttParams::default()
    };
    let tile =
        |shape: TileShape, c: usize, flags: u32| tile_step(shape, chunk, c, flags, &base, any_pw);
    let mut out = Vec::new();
    let fused = if chunks == 1 {
        fused_plan(log_n, tile_bits)
    } else {
        None
    };
    let (shapes, loads) = match fused {
        // The first dispatch reads the input where it lies, so it scales what it reads.
        Some(shapes) if kind == NttKind::CosetForward => (shapes, TILE_SCALE_LOADS),
        Some(shapes) => (shapes, 0),
        None => {
            let reversal = if kind == NttKind::CosetForward {
                Kernel::BitrevPowers
            } else {
                Kernel::Bitrev
            };
            reversal_steps(&mut out, reversal, chunks, chunk, base);
            (tile_plan(log_t, tile_bits), 0)
        }
    };
    let across = log_t < log_n;
    for (i, shape) in shapes.iter().enumerate() {
        let last = i + 1 == shapes.len() && !across;
        let mut flags = base.flags | if last { scale_flags } else { 0 };
        if i == 0 {
            flags |= loads;
        }
        for c in 0..chunks {
            out.push(tile(*shape, c, flags));
        }
    }
    if across {
        // The stages whose pairs lie in two chunks, as passes.
        out.push(twiddle_step(domain, inverse, base));
        butterfly_steps(&mut out, log_t..log_n, chunks, chunk, base);
        if scale_flags != 0 {
            for c in 0..chunks {
                out.push(Step {
                    kernel: Kernel::ScalePowers,
                    params: NttParams {
                        count: chunk as u32,
                        base: (c * chunk) as u32,
                        lo_chunk: c as u32,
                        hi_chunk: c as u32,
                        flags: scale_flags,
                        ..base
                    },
                    tw: Table::Scratch,
                    pw: any_pw,
                });
            }
        }
    }
    out
}

/// Scratch of the largest NTT of `domain`: the per-transform power tables, the kept
/// tables of the workgroup path, and, when the domain is larger than one binding, a
/// note saying how it is chunked.
pub fn scratch_plan(ctx: &Context, domain: &Domain) -> MemoryPlan {
    // An unreadable setting fails the transform; the plan covers the default.
    scratch_plan_for(
        ctx,
        domain,
        NttConfig::from_env().unwrap_or_default().on(ctx),
    )
}

/// [`scratch_plan`] on `config`'s path.
fn scratch_plan_for(ctx: &Context, domain: &Domain, config: Chosen) -> MemoryPlan {
    let mut plan = MemoryPlan::new("wgpu NTT scratch");
    let log_n = domain.log_size;
    let chunk_len = ctx.limits.chunk_len(element_bytes(ElementKind::Scalar));
    if log_n > 0 {
        plan.item(TWIDDLES_ITEM, fr_bytes(twiddle_entries(log_n)));
        if config.path == NttPath::Workgroup {
            let t = table_log(log_n, chunk_len);
            if t > 0 {
                plan.item(TABLE_ITEM, fr_bytes(1 << (t - 1)));
            }
            plan.item(COSET_ITEM, fr_bytes(coset_entries(log_n)))
                .item(COSET_INV_ITEM, fr_bytes(coset_entries(log_n)));
        }
    }
    for (key, bytes) in profile::plan_items(ctx) {
        plan.item(key, bytes);
    }
    if domain.size > chunk_len {
        plan.note(format!(
            "wgpu: scalar buffers in {} chunks of 2^{} (binding limit {} B)",
            domain.size / chunk_len,
            chunk_len.trailing_zeros(),
            ctx.limits.binding_bytes
        ));
    }
    plan
}

/// Waits for the queue, then frees `ids`: scratch memory is really free only once the
/// dispatches that used it have finished. The first error wins.
pub fn finish(
    ctx: &Context,
    lease: &mut Lease,
    result: Result<()>,
    ids: &[BufferId],
) -> Result<()> {
    let waited = ctx.wait();
    let mut freed = Ok(());
    for id in ids {
        if let Err(e) = lease.free(*id) {
            freed = freed.and(Err(e));
        }
    }
    result.and(waited.map_err(Into::into)).and(freed)
}

/// A table kept in the lease between transforms, and what it holds the powers of: a
/// transform that needs another frees it and builds its own.
struct NttTable {
    buffer: wgpu::Buffer,
    log: u32,
    root: Fr,
}

/// The kept table of `item` for (log, root) and false if the lease holds it;
/// otherwise a new table of `entries` Fr (another one of the item freed first, which
/// queued transforms may still read: the creation waits for them) and true: the
/// caller builds it.
fn kept_table(
    ctx: &Context,
    lease: &mut Lease,
    item: PlanKey,
    (log, root): (u32, Fr),
    entries: usize,
) -> Result<(BufferId, bool)> {
    if let Some(id) = lease.buffer_of(item) {
        let table = lease.get::<NttTable>(id)?;
        if table.log == log && table.root == root {
            return Ok((id, false));
        }
        lease.free(id)?;
    }
    let bytes = fr_bytes(entries);
    let id = lease.allocate(item, bytes, || {
        Ok(NttTable {
            buffer: ctx.create_buffer(item, bytes, wgpu::BufferUsages::STORAGE)?,
            log,
            root,
        })
    })?;
    Ok((id, true))
}

/// The lease's power-table scratch ([`TWIDDLES_ITEM`]) of at least `bytes`, kept
/// between transforms like the tables (its contents are written by the transform that
/// reads them): created at its plan item's size, the largest transform's, unless this
/// one needs more.
fn kept_scratch(ctx: &Context, lease: &mut Lease, bytes: u64) -> Result<BufferId> {
    if let Some(id) = lease.buffer_of(TWIDDLES_ITEM) {
        if lease.get::<wgpu::Buffer>(id)?.size() >= bytes {
            return Ok(id);
        }
        lease.free(id)?;
    }
    let planned = lease.plan().bytes_of(TWIDDLES_ITEM);
    let bytes = bytes.max(planned.min(ctx.limits.binding_bytes));
    lease.allocate(TWIDDLES_ITEM, bytes, || {
        Ok(ctx.create_buffer(TWIDDLES_ITEM, bytes, wgpu::BufferUsages::STORAGE)?)
    })
}

/// The buffers one transform binds besides its data, all kept in the lease between
/// transforms.
#[derive(Default)]
struct KeptBuffers {
    scratch: Option<BufferId>,
    twiddles: Option<BufferId>,
    coset: Option<BufferId>,
    params: Option<BufferId>,
}

impl KeptBuffers {
    fn all(&self) -> impl Iterator<Item = BufferId> + '_ {
        [self.scratch, self.twiddles, self.coset, self.params]
            .into_iter()
            .flatten()
    }
}

/// Every pipeline the transforms of `domain` (each kind, tables built fresh) and the
/// pointwise products over buffers of `domain`'s size run, for a warm-up.
pub fn pipelines(ctx: &Context, domain: &Domain) -> Result<Vec<(Module, &'static str)>> {
    let config = NttConfig::from_env()?.on(ctx);
    config.check(ctx)?;
    let chunk_len = ctx.limits.chunk_len(element_bytes(ElementKind::Scalar));
    let mut steps = Vec::new();
    for kind in [
        NttKind::Forward,
        NttKind::Inverse,
        NttKind::CosetForward,
        NttKind::CosetInverse,
    ] {
        match config.path {
            NttPath::Passes => steps.extend(pass_steps(domain, kind, chunk_len)),
            NttPath::Workgroup => {
                let tables = kept_tables(domain, kind, chunk_len);
                if tables.twiddles {
                    steps.extend(twiddle_table_steps(domain, chunk_len));
                }
                if tables.coset {
                    steps.push(coset_table_step(domain, kind));
                }
                steps.extend(workgroup_steps(domain, kind, chunk_len, config.tile_bits));
            }
        }
    }
    let mut entries: Vec<_> = [false, true]
        .map(|scaled| (Module::Ntt, pointwise_entry(scaled)))
        .into();
    entries.extend(config.step_entries(&steps));
    Ok(entries)
}

/// In-place NTT of `buf` over `domain`, on the path [`NttConfig::from_env`] chooses.
pub fn ntt(
    ctx: &Context,
    lease: &mut Lease,
    buf: ScalarBuf,
    domain: &Domain,
    kind: NttKind,
) -> Result<()> {
    ntt_with(ctx, lease, buf, domain, kind, NttConfig::from_env()?)
}

/// In-place NTT of `buf` over `domain` on `config`'s path.
fn ntt_with(
    ctx: &Context,
    lease: &mut Lease,
    buf: ScalarBuf,
    domain: &Domain,
    kind: NttKind,
    config: NttConfig,
) -> Result<()> {
    if domain.log_size >= 32 {
        return Err(WgpuError::Unsupported(format!(
            "NTT of 2^{} points: the wgpu backend indexes with 32-bit integers",
            domain.log_size
        ))
        .into());
    }
    let chunk_len = {
        let data = lease.get::<DeviceBuffer>(buf.id())?;
        check_kind(data, ElementKind::Scalar)?;
        check_len("NTT input", domain.size, data.len)?;
        data.chunk_len
    };
    let config = config.on(ctx);
    config.check(ctx)?;
    let mut steps = match config.path {
        NttPath::Passes => pass_steps(domain, kind, chunk_len),
        NttPath::Workgroup => workgroup_steps(domain, kind, chunk_len, config.tile_bits),
    };
    if steps.is_empty() {
        return Ok(());
    }
    let tw_bytes = fr_bytes(twiddle_entries(domain.log_size));
    let coset_bytes = match config.path {
        NttPath::Workgroup => fr_bytes(coset_entries(domain.log_size)),
        NttPath::Passes => 0,
    };
    if tw_bytes.max(coset_bytes) > ctx.limits.binding_bytes {
        return Err(WgpuError::Unsupported(format!(
            "NTT of 2^{}: its power tables ({} B) exceed one binding ({} B)",
            domain.log_size,
            tw_bytes.max(coset_bytes),
            ctx.limits.binding_bytes
        ))
        .into());
    }
    let mut ids = KeptBuffers::default();
    let mut profiled = Vec::new();
    let result = (|| -> Result<()> {
        if config.path == NttPath::Workgroup {
            let mut build = Vec::new();
            let tables = kept_tables(domain, kind, chunk_len);
            if tables.twiddles {
                let t = table_log(domain.log_size, chunk_len);
                let root = domain.omega.pow([1u64 << (domain.log_size - t)]);
                let (id, fresh) = kept_table(ctx, lease, TABLE_ITEM, (t, root), 1 << (t - 1))?;
                ids.twiddles = Some(id);
                if fresh {
                    build.extend(twiddle_table_steps(domain, chunk_len));
                }
            }
            if tables.coset {
                let item = if kind == NttKind::CosetInverse {
                    COSET_INV_ITEM
                } else {
                    COSET_ITEM
                };
                let key = (domain.log_size, coset_powers(domain, kind).0);
                let (id, fresh) =
                    kept_table(ctx, lease, item, key, coset_entries(domain.log_size))?;
                ids.coset = Some(id);
                if fresh {
                    build.push(coset_table_step(domain, kind));
                }
            }
            build.append(&mut steps);
            steps = build;
        }
        let scratch = steps.iter().any(|s| {
            let (tw, pw) = s.kernel.tables();
            (tw && s.tw == Table::Scratch) || (pw && s.pw == Table::Scratch)
        });
        if scratch {
            ids.scratch = Some(kept_scratch(ctx, lease, tw_bytes)?);
        }
        ids.params = Some(ParamsBuffer::kept(ctx, lease)?);
        let timer = profile::allocate(ctx, lease, &mut profiled)?;
        record(ctx, lease, buf, domain, kind, &steps, &ids, timer, config)
    })();
    match result {
        // Nothing to free: the transform stays queued, its buffers kept for the next.
        Ok(()) if profiled.is_empty() => Ok(()),
        Ok(()) => finish(ctx, lease, Ok(()), &profiled),
        // No later transform reads a table whose build did not run, or anything else
        // a failed one left.
        Err(e) => {
            profiled.extend(ids.all());
            finish(ctx, lease, Err(e), &profiled)
        }
    }
}

/// Records and submits `steps`.
#[allow(clippy::too_many_arguments)]
fn record(
    ctx: &Context,
    lease: &Lease,
    buf: ScalarBuf,
    domain: &Domain,
    kind: NttKind,
    steps: &[Step],
    ids: &KeptBuffers,
    timer: Option<(BufferId, BufferId)>,
    config: Chosen,
) -> Result<()> {
    let started = std::time::Instant::now();
    let (module, path) = config.module();
    let data = lease.get::<DeviceBuffer>(buf.id())?;
    let table = |id: Option<BufferId>| -> Result<Option<&wgpu::Buffer>> {
        id.map(|id| lease.get::<NttTable>(id).map(|t| &t.buffer))
            .transpose()
    };
    let scratch = ids
        .scratch
        .map(|id| lease.get::<wgpu::Buffer>(id))
        .transpose()?;
    let twiddles = table(ids.twiddles)?;
    let coset = table(ids.coset)?;
    let resolve = |t: Table| -> Result<&wgpu::Buffer> {
        let found = match t {
            Table::Scratch => scratch,
            Table::Twiddles => twiddles,
            Table::Coset => coset,
        };
        found.ok_or_else(|| {
            WgpuError::Validation {
                during: format!("{kind:?} NTT of 2^{}", domain.log_size),
                message: format!("a dispatch binds the {t:?} table, which is not allocated"),
            }
            .into()
        })
    };
    let title = format!("{kind:?} NTT of 2^{} ({})", domain.log_size, path);
    let params = ids
        .params
        .map(|id| lease.get::<ParamsBuffer>(id))
        .transpose()?;
    let mut batch = Batch::new(ctx, params, title.clone());
    if let Some((resolve, readback)) = timer {
        let (resolve, readback) = (lease.get(resolve)?, lease.get(readback)?);
        batch.time_with(Timer::new(ctx, resolve, readback));
    }
    // The transform's pipelines compile together on a cold start.
    ctx.prepare(&config.step_entries(steps))?;
    let mut tiles = 0;
    for step in steps {
        batch.phase(step.kernel.phase(&mut tiles));
        let p = step.params;
        let mut bindings = Vec::new();
        if step.kernel.data() {
            bindings.push((1, &data.chunks[p.lo_chunk as usize]));
            if !matches!(
                step.kernel,
                Kernel::Scale | Kernel::ScalePowers | Kernel::TileStages
            ) {
                bindings.push((2, &data.chunks[p.hi_chunk as usize]));
            }
        }
        let (tw, pw) = step.kernel.tables();
        if tw {
            bindings.push((3, resolve(step.tw)?));
        }
        if pw {
            bindings.push((4, resolve(step.pw)?));
        }
        let pipeline = ctx.pipeline(module, config.entry(step.kernel))?;
        batch.dispatch(pipeline, &p, bindings, step.threads())?;
    }
    if timer.is_some() {
        let times = batch.submit_timed()?;
        eprint!("{}", times.table(&title, started.elapsed()));
    } else {
        batch.submit()?;
    }
    Ok(())
}

/// The pointwise kernel (module `Ntt`): `sub_mul` when the difference is scaled, else
/// `mul`.
fn pointwise_entry(scaled: bool) -> &'static str {
    if scaled {
        "sub_mul"
    } else {
        "mul"
    }
}

/// `dst[i] *= rhs[i]`, or with `k`, `dst[i] = (dst[i] − rhs[i])·k`.
pub fn pointwise(
    ctx: &Context,
    lease: &mut Lease,
    dst: ScalarBuf,
    rhs: ScalarBuf,
    k: Option<Fr>,
) -> Result<()> {
    let (chunks, chunk_len) = {
        let d = lease.get::<DeviceBuffer>(dst.id())?;
        let r = lease.get::<DeviceBuffer>(rhs.id())?;
        check_kind(d, ElementKind::Scalar)?;
        check_kind(r, ElementKind::Scalar)?;
        check_len("pointwise operand", d.len, r.len)?;
        (d.chunks.len(), d.chunk_len)
    };
    if chunks == 0 {
        return Ok(());
    }
    let params = ParamsBuffer::kept(ctx, lease)?;
    let result = (|| -> Result<()> {
        let d = lease.get::<DeviceBuffer>(dst.id())?;
        let r = lease.get::<DeviceBuffer>(rhs.id())?;
        let entry = pointwise_entry(k.is_some());
        let pipeline = ctx.pipeline(Module::Ntt, entry)?;
        let mut batch = Batch::new(ctx, Some(lease.get::<ParamsBuffer>(params)?), entry);
        for c in 0..chunks {
            let p = NttParams {
                count: d.chunk_elems(c) as u32,
                base: (c * chunk_len) as u32,
                lo_chunk: c as u32,
                hi_chunk: c as u32,
                log_chunk: chunk_len.trailing_zeros(),
                c: words(k.unwrap_or_default()),
                ..NttParams::default()
            };
            batch.dispatch(
                pipeline.clone(),
                &p,
                vec![(1, &d.chunks[c]), (2, &r.chunks[c])],
                p.count,
            )?;
        }
        batch.submit()?;
        Ok(())
    })();
    match result {
        // The product stays queued; the parameters stay in the lease.
        Ok(()) => Ok(()),
        Err(e) => finish(ctx, lease, Err(e), &[params]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{WgpuBackend, WgpuOptions};
    use ark_ff::{FftField, UniformRand};
    use ark_poly::EvaluationDomain;
    use ark_std::rand::{rngs::StdRng, SeedableRng};
    use crucible_core::registry::ProbeOptions;
    use crucible_core::{BufferUse, ProverBackend, ScratchNeed};

    /// Bits of a log_n-bit index, reversed.
    fn mirror(i: u32, log_n: u32) -> u32 {
        i.reverse_bits() >> (32 - log_n)
    }

    /// The tiles of a dispatch's workgroups: each tile alone, or in a paired dispatch
    /// each tile with its partner (once, by the lower of the two).
    fn workgroups(t: &TileShape, log_t: u32) -> Vec<Vec<u32>> {
        (0..(1u32 << (log_t - t.bits())))
            .filter_map(|b| {
                if t.layout & TILE_PAIRED == 0 {
                    return Some(vec![b]);
                }
                let pb = t.partner(b);
                match pb.cmp(&b) {
                    std::cmp::Ordering::Less => None,
                    std::cmp::Ordering::Equal => Some(vec![b]),
                    std::cmp::Ordering::Greater => Some(vec![b, pb]),
                }
            })
            .collect()
    }

    /// Where element i of a dispatch's tiles lies before (`flag` TILE_LOAD_REVERSED)
    /// or after it (TILE_STORE_REVERSED).
    fn place(t: &TileShape, i: u32, flag: u32, log_t: u32) -> u32 {
        if t.layout & flag != 0 {
            mirror(i, log_t)
        } else {
            i
        }
    }

    /// Every tile plan, with a reversal pass before it or fused, covers the stages
    /// 0 .. log_t−1 once each, in order, with tiles of at most 2^tile_bits (a pair of
    /// them at most that) inside the low log_t bits; the tiles of a dispatch partition
    /// the indices, each stage's partner of an element is in its tile, and each
    /// workgroup writes exactly the places it read, so that none reads what another
    /// writes. A fused plan's first dispatch reads reversed, each reads where the one
    /// before wrote, and the last writes in natural order.
    #[test]
    fn tile_plans_cover_every_stage_and_index() {
        for log_t in 1..=26 {
            for tile_bits in 1..=MAX_TILE_BITS {
                let plain = tile_plan(log_t, tile_bits);
                assert_eq!(plain.len() as u32, log_t.div_ceil(tile_bits));
                check_tile_plan(&plain, log_t, tile_bits, false);
                if let Some(fused) = fused_plan(log_t, tile_bits) {
                    assert!(fused.len() <= plain.len() + 1, "{fused:?}");
                    check_tile_plan(&fused, log_t, tile_bits, true);
                }
            }
        }
    }

    fn check_tile_plan(shapes: &[TileShape], log_t: u32, tile_bits: u32, reversed: bool) {
        let case = format!("2^{log_t} in tiles of 2^{tile_bits}: {shapes:?}");
        let mut next = 0;
        let mut reversed = reversed;
        for t in shapes {
            assert_eq!(t.s, next, "{case}");
            next += t.k;
            let paired = t.layout & TILE_PAIRED != 0;
            assert!(
                t.k >= 1 && t.bits() + u32::from(paired) <= tile_bits,
                "{case}"
            );
            assert!(t.p1 + t.w1 <= t.p2 && t.p2 + t.w2 <= log_t, "{case}");
            let stages = if t.p1 == t.s {
                (t.p1, t.w1)
            } else {
                (t.p2, t.w2)
            };
            assert_eq!(stages, (t.s, t.k), "{case}");
            assert_eq!(t.layout & TILE_LOAD_REVERSED != 0, reversed, "{case}");
            reversed = t.layout & TILE_STORE_REVERSED != 0;
            if paired {
                assert!(t.w2 == 0 && 2 * t.s + t.k == log_t, "{case}");
            }
            if log_t > 12 {
                continue;
            }
            let mut seen = vec![false; 1 << log_t];
            for tiles in workgroups(t, log_t) {
                let (mut read, mut written) = (Vec::new(), Vec::new());
                for b in tiles {
                    for x in 0..(1u32 << t.bits()) {
                        let i = t.index(b, x);
                        assert!(!seen[i as usize], "{case}: {i} twice");
                        seen[i as usize] = true;
                        for j in 0..t.k {
                            let partner = t.index(b, x ^ (1 << t.stage_bit(j)));
                            assert_eq!(partner, i ^ (1 << (t.s + j)), "{case}");
                        }
                        read.push(place(t, i, TILE_LOAD_REVERSED, log_t));
                        written.push(place(t, i, TILE_STORE_REVERSED, log_t));
                    }
                }
                read.sort_unstable();
                written.sort_unstable();
                assert_eq!(read, written, "{case}: {t:?}");
            }
            assert!(seen.iter().all(|s| *s), "{case}: {t:?}");
        }
        assert_eq!(next, log_t, "{case}");
        assert!(!reversed, "{case}");
    }

    /// The fused plans run on the host, a workgroup at a time as the tile kernel runs
    /// them (its tiles read from where the elements lie, the stages, written where
    /// the layout says), give arkworks' forward transform of natural-order input.
    #[test]
    fn fused_plans_transform_natural_order() {
        let seed = crucible_conformance::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut centered = 0;
        for log_n in 1..=10 {
            let domain = Domain::with_log_size(log_n).unwrap();
            for tile_bits in 1..=MAX_TILE_BITS {
                let Some(shapes) = fused_plan(log_n, tile_bits) else {
                    continue;
                };
                centered += usize::from(shapes.len() > 1);
                let values: Vec<Fr> = (0..domain.size).map(|_| Fr::rand(&mut rng)).collect();
                let mut data = values.clone();
                for t in &shapes {
                    for tiles in workgroups(t, log_n) {
                        // Every read of the workgroup before any write.
                        let size = 1u32 << t.bits();
                        let at = |b: u32, x: u32, flag: u32| place(t, t.index(b, x), flag, log_n);
                        let mut held: Vec<Vec<Fr>> = tiles
                            .iter()
                            .map(|&b| {
                                (0..size)
                                    .map(|x| data[at(b, x, TILE_LOAD_REVERSED) as usize])
                                    .collect()
                            })
                            .collect();
                        for (&b, tile) in tiles.iter().zip(&mut held) {
                            for j in 0..t.k {
                                let (s, bit) = (t.s + j, t.stage_bit(j));
                                for x0 in (0..size).filter(|x| x & (1 << bit) == 0) {
                                    let x1 = x0 | (1 << bit);
                                    let m = (t.index(b, x0) & ((1 << s) - 1)) << (log_n - 1 - s);
                                    let v = tile[x1 as usize] * domain.omega.pow([u64::from(m)]);
                                    let u = tile[x0 as usize];
                                    tile[x0 as usize] = u + v;
                                    tile[x1 as usize] = u - v;
                                }
                            }
                        }
                        for (&b, tile) in tiles.iter().zip(&held) {
                            for x in 0..size {
                                data[at(b, x, TILE_STORE_REVERSED) as usize] = tile[x as usize];
                            }
                        }
                    }
                }
                assert!(
                    data == reference(&values, &domain, NttKind::Forward),
                    "seed {seed} (CRUCIBLE_SEED={seed} repeats it): 2^{log_n} in tiles of \
                     2^{tile_bits}: {shapes:?}"
                );
            }
        }
        assert!(centered > 20, "{centered} plans with a centered dispatch");
    }

    /// The fused plans of 2^20 and 2^24 (those of the CUDA backend's tiles of 2^10,
    /// one bit narrower), which transforms run fused, and how many dispatches a
    /// transform of one chunk takes: three at 2^20 and 2^24, no reversal pass; a whole
    /// domain of one tile: one dispatch.
    #[test]
    fn dispatch_counts() {
        let tile = |s, k, (p1, w1), (p2, w2), layout| TileShape {
            s,
            k,
            p1,
            w1,
            p2,
            w2,
            layout,
        };
        let both = TILE_LOAD_REVERSED | TILE_STORE_REVERSED;
        let pair = TILE_LOAD_REVERSED | TILE_PAIRED;
        assert_eq!(
            fused_plan(20, MAX_TILE_BITS).unwrap(),
            [
                tile(0, 6, (0, 6), (17, 3), both),
                tile(6, 8, (6, 8), (14, 0), pair),
                tile(14, 6, (0, 3), (14, 6), 0),
            ]
        );
        assert_eq!(
            fused_plan(24, MAX_TILE_BITS).unwrap(),
            [
                tile(0, 8, (0, 8), (23, 1), both),
                tile(8, 8, (8, 8), (16, 0), pair),
                tile(16, 8, (0, 1), (16, 8), 0),
            ]
        );
        // Fused at every size but 2^27, where it would take five dispatches against
        // the reversal and three (2^28 up: five against five).
        let unfused: Vec<u32> = (1..=31)
            .filter(|log| fused_plan(*log, MAX_TILE_BITS).is_none())
            .collect();
        assert_eq!(unfused, [27]);
        // The GPU test's plans of 3-bit tiles: one dispatch (2^3), three (2^4 to 2^8)
        // and five (2^10) fused; 2^9 the reversal pass and three.
        let dispatches = |log| fused_plan(log, 3).map(|p| p.len());
        assert_eq!(
            [3, 4, 5, 6, 7, 8, 9, 10].map(dispatches),
            [
                Some(1),
                Some(3),
                Some(3),
                Some(3),
                Some(3),
                Some(3),
                None,
                Some(5)
            ]
        );
        let count = |log: u32, kind| {
            let d = Domain::with_log_size(log).unwrap();
            workgroup_steps(&d, kind, 1 << 26, MAX_TILE_BITS).len()
        };
        assert_eq!(count(20, NttKind::Forward), 3);
        assert_eq!(count(20, NttKind::CosetForward), 3);
        assert_eq!(count(24, NttKind::CosetInverse), 3);
        assert_eq!(count(16, NttKind::Forward), 3);
        assert_eq!(count(9, NttKind::CosetForward), 1);
        assert_eq!(count(0, NttKind::Inverse), 0);
        // Chunked, the reversal pass runs (one dispatch per pair of chunks).
        let d = Domain::with_log_size(10).unwrap();
        let steps = workgroup_steps(&d, NttKind::Forward, 1 << 9, MAX_TILE_BITS);
        assert_eq!(steps[0].kernel, Kernel::Bitrev);
    }

    #[test]
    fn paths_parse() {
        for p in [NttPath::Workgroup, NttPath::Passes] {
            assert_eq!(NttPath::parse(p.name()), Some(p));
        }
        assert_eq!(NttPath::parse(" Passes\n"), Some(NttPath::Passes));
        assert_eq!(NttPath::parse("tiles"), None);
        for m in [NttMul::Unrolled, NttMul::Loop] {
            assert_eq!(NttMul::parse(m.name()), Some(m));
        }
    }

    fn reference(values: &[Fr], domain: &Domain, kind: NttKind) -> Vec<Fr> {
        let d = domain.to_ark();
        let mut v = values.to_vec();
        match kind {
            NttKind::Forward => d.fft_in_place(&mut v),
            NttKind::Inverse => d.ifft_in_place(&mut v),
            NttKind::CosetForward => d.get_coset(Fr::GENERATOR).unwrap().fft_in_place(&mut v),
            NttKind::CosetInverse => d.get_coset(Fr::GENERATOR).unwrap().ifft_in_place(&mut v),
        }
        v
    }

    fn open(max_binding_bytes: Option<u64>) -> Option<WgpuBackend> {
        let options = WgpuOptions {
            max_binding_bytes,
            ..WgpuOptions::default()
        };
        match WgpuBackend::open(&ProbeOptions::default(), &options) {
            Ok(b) => Some(b),
            Err(e) => {
                assert!(
                    !crucible_core::registry::is_required("wgpu"),
                    "wgpu is required (CRUCIBLE_REQUIRE) but unavailable: {e}"
                );
                println!("skipped, wgpu unavailable: {e}");
                None
            }
        }
    }

    /// Every kind at each of `logs` (largest first) on `config`'s path against
    /// arkworks, all in one lease planned for the largest (so the kept tables are
    /// reused across kinds and replaced across sizes), fresh random inputs.
    fn check(backend: &WgpuBackend, config: NttConfig, logs: &[u32], rng: &mut StdRng, at: &str) {
        let largest = Domain::with_log_size(logs[0]).unwrap();
        let x_item = PlanKey::new("test", "x");
        let mut plan = MemoryPlan::new("ntt path test");
        plan.item(
            x_item,
            backend
                .buffer_bytes(ElementKind::Scalar, largest.size, BufferUse::Resident)
                .unwrap(),
        );
        plan.merge(&backend.scratch_plan(&ScratchNeed::default()));
        plan.merge(&scratch_plan_for(
            &backend.ctx,
            &largest,
            config.on(&backend.ctx),
        ));
        let mut lease = (backend as &dyn ProverBackend).allocate(plan).unwrap();
        for &log in logs {
            let domain = Domain::with_log_size(log).unwrap();
            let x = (backend as &dyn ProverBackend)
                .alloc_scalars(&mut lease, x_item, domain.size)
                .unwrap();
            for kind in NttKind::ALL {
                let values: Vec<Fr> = (0..domain.size).map(|_| Fr::rand(rng)).collect();
                backend.stage_scalars(&mut lease, x, &values).unwrap();
                ntt_with(&backend.ctx, &mut lease, x, &domain, kind, config).unwrap();
                let got = backend.read_scalars(&lease, x).unwrap();
                assert!(
                    got == reference(&values, &domain, kind),
                    "{at}, {config:?}: {kind:?} NTT of 2^{log} differs from arkworks"
                );
            }
            lease.free(x.id()).unwrap();
        }
        lease.release().unwrap();
    }

    /// The workgroup path with every product (the wide one where the adapter has
    /// 64-bit integers), on one chunk and on buffers split into
    /// chunks of 32 elements (stages across chunks, as passes, and the scaling after
    /// them); the tile plans of every size are checked on the host above, and the
    /// conformance suite runs the workgroup path with the adapter's product. The
    /// sizes are the plan shapes, one each.
    #[test]
    fn workgroup_path_matches_arkworks_with_and_without_chunks() {
        let seed = crucible_conformance::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        let at = format!("seed {seed} (CRUCIBLE_SEED={seed} repeats it)");
        let workgroup = NttConfig {
            path: NttPath::Workgroup,
            ..NttConfig::default()
        };
        let unrolled = NttConfig {
            mul: Some(NttMul::Unrolled),
            ..workgroup
        };
        // 2^10: three fused tile dispatches, the centered one of eight stages; 2^1: one
        // tile, read reversed (2^0 is nothing to do, tests/wgpu/ntt.rs's). 32-element
        // chunks: 2^7 in four, the reversal pass, two stages as passes and the scaling
        // after them.
        let wide = NttConfig {
            mul: Some(NttMul::Wide),
            ..workgroup
        };
        // Radix 4 (the default) above; radix 2, one stage a round, as well.
        let radix2 = |config: NttConfig| NttConfig {
            radix: NttRadix::Two,
            ..config
        };
        // Tiles of 2^3 (dispatch_counts checks the plans): fused in one dispatch (2^3),
        // three with a centered one of two stages (2^4, 2^6, 2^8) or one (2^5, 2^7),
        // and five (2^10: two on each side); the reversal pass and three (2^9).
        let tiles3 = NttConfig {
            tile_bits: 3,
            ..workgroup
        };
        let small: &[u32] = &[10, 9, 8, 7, 6, 5, 4, 3];
        let cases: [(Option<u64>, NttConfig, &[u32]); 8] = [
            (None, workgroup, &[10, 1]),
            (Some(1024), unrolled, &[7]),
            (None, wide, &[10, 1]),
            (Some(1024), wide, &[7]),
            (None, radix2(workgroup), &[10]),
            (None, radix2(wide), &[10, 1]),
            (None, tiles3, small),
            (None, radix2(tiles3), small),
        ];
        let mut opened: Vec<(Option<u64>, WgpuBackend)> = Vec::new();
        for (binding, config, logs) in cases {
            if !opened.iter().any(|(b, _)| *b == binding) {
                let Some(backend) = open(binding) else {
                    return;
                };
                opened.push((binding, backend));
            }
            let Some((_, backend)) = opened.iter().find(|(b, _)| *b == binding) else {
                continue;
            };
            if config.mul == Some(NttMul::Wide) && !backend.ctx.int64 {
                // Not a pass: the adapter cannot run the wide product at all.
                println!(
                    "wide product skipped: {} has no SHADER_INT64",
                    backend.info().device_name
                );
                continue;
            }
            let at = format!("{at}, bindings of {binding:?} B");
            check(backend, config, logs, &mut rng, &at);
        }
    }

    /// Times both paths (and both products) at `CRUCIBLE_NTT_TIMING_LOG` (default 14)
    /// on the first adapter: median of 5 forward transforms each, printed. Run by
    /// hand (`--ignored`): a measurement, not a check.
    #[test]
    #[ignore]
    fn time_paths() {
        let Some(backend) = open(None) else {
            return;
        };
        let backend = &backend;
        let log = std::env::var("CRUCIBLE_NTT_TIMING_LOG")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(14);
        let tile_bits = std::env::var("CRUCIBLE_NTT_TIMING_TILE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(MAX_TILE_BITS);
        let domain = Domain::with_log_size(log).unwrap();
        println!(
            "workgroup storage limit: {} B",
            backend
                .ctx
                .device
                .limits()
                .max_compute_workgroup_storage_size
        );
        let x_item = PlanKey::new("test", "x");
        let mut plan = MemoryPlan::new("ntt timing");
        plan.item(
            x_item,
            backend
                .buffer_bytes(ElementKind::Scalar, domain.size, BufferUse::Resident)
                .unwrap(),
        );
        plan.merge(&backend.scratch_plan(&ScratchNeed::default()));
        let workgroup = NttConfig {
            path: NttPath::Workgroup,
            ..NttConfig::default()
        };
        plan.merge(&scratch_plan_for(
            &backend.ctx,
            &domain,
            workgroup.on(&backend.ctx),
        ));
        let mut lease = (backend as &dyn ProverBackend).allocate(plan).unwrap();
        let x = (backend as &dyn ProverBackend)
            .alloc_scalars(&mut lease, x_item, domain.size)
            .unwrap();
        let mut rng = StdRng::seed_from_u64(1);
        let values: Vec<Fr> = (0..domain.size).map(|_| Fr::rand(&mut rng)).collect();
        backend.stage_scalars(&mut lease, x, &values).unwrap();
        let configs = [
            NttConfig {
                path: NttPath::Passes,
                ..NttConfig::default()
            },
            NttConfig {
                path: NttPath::Workgroup,
                mul: Some(NttMul::Loop),
                tile_bits,
                radix: NttRadix::DEFAULT,
            },
            NttConfig {
                path: NttPath::Workgroup,
                mul: Some(NttMul::Unrolled),
                tile_bits,
                radix: NttRadix::DEFAULT,
            },
        ];
        for round in 0..2 {
            for config in configs {
                let mut times = Vec::new();
                for _ in 0..5 {
                    let t = std::time::Instant::now();
                    ntt_with(
                        &backend.ctx,
                        &mut lease,
                        x,
                        &domain,
                        NttKind::Forward,
                        config,
                    )
                    .unwrap();
                    times.push(t.elapsed());
                }
                times.sort();
                println!("round {round} 2^{log} {config:?}: median {:?}", times[2]);
            }
        }
        lease.release().unwrap();
    }
}
