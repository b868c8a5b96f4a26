//! Kernel launches, one typed function per kernel signature: the arguments a kernel of
//! kernels/*.cu takes, in its order, with its types, so that a launch with a missing or
//! extra argument, or one of the wrong kind (an array for a number, a `u32` for an
//! `FrArg`), does not compile; the parameters carry the kernel's own names. The kernel
//! names come from one table ([`Kernel`]), from which [`Kernels::load`] loads the
//! functions, and a test reads the kernels' signatures from the sources and checks
//! every function here against them (parameter names and order, pointer or value,
//! element and value types).
//!
//! Device arrays are passed as [`Dev`]: a borrowed buffer or view of u32 words, typed
//! by the element the kernel reads there ([`elem`]; the buffers themselves are untyped
//! words, so the element is the function's promise, checked against the source). The
//! launch itself is the driver's one unsafe call (`driver::launch`); what makes it
//! sound is that the arguments match the signature (this module and its test) and that
//! the buffers cover what the launch shape indexes (the callers check lengths first).

use std::marker::PhantomData;
use std::sync::Arc;

use crucible_core::curve::Curve;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, CudaView, LaunchArgs, LaunchConfig,
    PushKernelArg,
};

use crate::driver;
use crate::error::{CudaError, CudaResult};
use crate::field::{FrArg, FrSeeds, Group, Which};
use crate::kernels;

/// The element types of device arrays, as the kernels' C names them.
pub mod elem {
    /// `Fr` (8 words, Montgomery form).
    pub struct Fr;
    /// `u32`.
    pub struct U32;
    /// `Affine<F>`: G1 or G2 affine points, by the kernel's group.
    pub struct Affine;
    /// `Xyzz<F>`: G1 or G2 XYZZ points, by the kernel's group.
    pub struct Xyzz;
}

/// An element type of a device array.
pub trait Element {
    /// The C pointer type, template arguments dropped (`Affine*` for `Affine<F>*`).
    #[cfg(test)]
    const C_POINTER: &'static str;
}

impl Element for elem::Fr {
    #[cfg(test)]
    const C_POINTER: &'static str = "Fr*";
}
impl Element for elem::U32 {
    #[cfg(test)]
    const C_POINTER: &'static str = "u32*";
}
impl Element for elem::Affine {
    #[cfg(test)]
    const C_POINTER: &'static str = "Affine*";
}
impl Element for elem::Xyzz {
    #[cfg(test)]
    const C_POINTER: &'static str = "Xyzz*";
}

/// What a [`Dev`] borrows: a whole buffer, or a view into one.
#[derive(Clone, Copy)]
enum Words<'a> {
    Slice(&'a CudaSlice<u32>),
    View(&'a CudaView<'a, u32>),
}

/// A device array of `E` passed to a kernel (C `E*` or `const E*`), borrowed for the
/// launch. Passing the buffer (not a copy of its address) keeps cudarc's stream
/// ordering: the launch waits for the buffer's pending writes.
pub struct Dev<'a, E> {
    words: Words<'a>,
    element: PhantomData<E>,
}

impl<'a, E> Dev<'a, E> {
    /// A whole buffer.
    pub fn new(words: &'a CudaSlice<u32>) -> Self {
        Dev {
            words: Words::Slice(words),
            element: PhantomData,
        }
    }

    /// A view into a buffer.
    pub fn view(words: &'a CudaView<'a, u32>) -> Self {
        Dev {
            words: Words::View(words),
            element: PhantomData,
        }
    }
}

/// A value a kernel takes, with its C type.
pub trait KernelArg {
    /// The C parameter type as the signature test compares it: `E*` for an array,
    /// the type's name for a value.
    #[cfg(test)]
    const C_TYPE: &'static str;
    /// Appends it to a launch's arguments.
    fn push<'a>(&'a self, args: &mut LaunchArgs<'a>);
}

impl<E: Element> KernelArg for Dev<'_, E> {
    #[cfg(test)]
    const C_TYPE: &'static str = E::C_POINTER;
    fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        match self.words {
            Words::Slice(s) => args.arg(s),
            Words::View(v) => args.arg(v),
        };
    }
}

macro_rules! value_arg {
    ($t:ty, $c:literal) => {
        impl KernelArg for $t {
            #[cfg(test)]
            const C_TYPE: &'static str = $c;
            fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
                args.arg(self);
            }
        }
    };
}
value_arg!(u32, "u32");
value_arg!(FrArg, "FrArg");
value_arg!(FrSeeds, "FrSeeds");

/// Elements a thread of an NTT tile kernel holds: which tile kernel runs a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum TileElems {
    /// `ntt_tile_e4`: four, rounds of two stages, tiles of up to 2^10 in static shared
    /// memory.
    Four,
    /// `ntt_tile_w`: two, a tile of up to 2^6 a warp, shuffles between stages, no
    /// shared memory; never paired, and its grid is the launch's threads (see
    /// [`grid_tile`]).
    Warp,
}

impl TileElems {
    /// log2 of the elements a thread holds.
    pub fn log(self) -> u32 {
        match self {
            TileElems::Four => 2,
            TileElems::Warp => 1,
        }
    }

    /// log2 of the largest tile its kernel takes (kernels/ntt.cu's
    /// CRU_NTT_TILE_MAX_BITS and CRU_NTT_TILEW_MAX_BITS: its shared memory, for w a
    /// warp).
    pub fn max_tile_bits(self) -> u32 {
        match self {
            TileElems::Four => 10,
            TileElems::Warp => 6,
        }
    }
}

/// Declares every launch function and the kernel table from one list: each function's
/// parameters (named as the kernel's), the kernels it can launch, and, for a function
/// that launches one of several instances of a template, how it picks one.
macro_rules! launches {
    ($(
        $(#[$doc:meta])*
        fn $f:ident $([$sel:ident: $selty:ty])? ($($arg:ident: $ty:ty),* $(,)?)
            = [$($kernel:ident = $name:literal),+ $(,)?];
    )*) => {
        /// Every kernel the host launches.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Kernel {
            $($(
                #[doc = concat!("`", $name, "`")]
                $kernel,
            )+)*
        }

        impl Kernel {
            /// Every kernel, in declaration order (a kernel's index in it is `kernel as usize`).
            pub const ALL: &'static [Kernel] = &[$($(Kernel::$kernel,)+)*];

            /// Its name in kernels/*.cu.
            pub fn name(self) -> &'static str {
                match self {
                    $($(Kernel::$kernel => $name,)+)*
                }
            }
        }

        $(
            $(#[$doc])*
            #[allow(clippy::too_many_arguments)]
            pub fn $f(
                k: &Kernels,
                stream: &CudaStream,
                grid: LaunchConfig,
                $($sel: $selty,)?
                $($arg: $ty),*
            ) -> CudaResult<()> {
                let instances = [$(Kernel::$kernel),+];
                let kernel = launches!(@pick instances $($sel)?);
                let mut args = stream.launch_builder(k.function(kernel));
                $(KernelArg::push(&$arg, &mut args);)*
                driver::launch(&mut args, grid)
            }
        )*

        /// Each function, its parameters (name, C type), the kernels it launches and
        /// which one each selector value picks, for the tests against the sources.
        #[cfg(test)]
        fn declared() -> Vec<Declared> {
            vec![$({
                let instances = vec![$(Kernel::$kernel),+];
                #[allow(unused_mut)]
                let mut picks: Vec<(String, Kernel)> = Vec::new();
                $(
                    for &value in <$selty as Selector>::VALUES {
                        picks.push((value.tag(), instances[value.index()]));
                    }
                )?
                Declared {
                    function: stringify!($f),
                    params: vec![$((stringify!($arg), <$ty as KernelArg>::C_TYPE)),*],
                    instances,
                    picks,
                }
            }),*]
        }
    };
    (@pick $instances:ident) => { $instances[0] };
    (@pick $instances:ident $sel:ident) => { $instances[Selector::index($sel)] };
}

/// A launch function's choice among the instances of one kernel template: the
/// instance's index in the function's list.
trait Selector: Copy + 'static {
    /// Every value.
    #[cfg(test)]
    const VALUES: &'static [Self];
    /// The instance this value picks.
    fn index(self) -> usize;
    /// What the picked instance's name says (`g1`, `r2`).
    #[cfg(test)]
    fn tag(self) -> String;
}

// Either curve's group picks the same instance: the curve is the program's (its
// define), never the kernel's name.
impl Selector for Group {
    #[cfg(test)]
    const VALUES: &'static [Group] = &[
        crate::field::test_groups::BLS_G1,
        crate::field::test_groups::BLS_G2,
    ];
    fn index(self) -> usize {
        match self.which {
            Which::G1 => 0,
            Which::G2 => 1,
        }
    }
    #[cfg(test)]
    fn tag(self) -> String {
        format!("{:?}", self.which).to_lowercase()
    }
}

impl Selector for TileElems {
    #[cfg(test)]
    const VALUES: &'static [TileElems] = &[TileElems::Four, TileElems::Warp];
    fn index(self) -> usize {
        self as usize
    }
    #[cfg(test)]
    fn tag(self) -> String {
        match self {
            TileElems::Warp => "_w".into(),
            _ => format!("_e{}", 1 << self.log()),
        }
    }
}

/// One launch function as [`launches!`] declared it.
#[cfg(test)]
struct Declared {
    function: &'static str,
    params: Vec<(&'static str, &'static str)>,
    instances: Vec<Kernel>,
    picks: Vec<(String, Kernel)>,
}

launches! {
    /// `k` radix-2 stages from stage `s` on shared-memory tiles of 2^(k + g) elements
    /// (batch bits from `cshift`), scaled at the end as `flags` says;
    /// grid [`grid_tile`] (with the same `elems`).
    fn ntt_tile[elems: TileElems](
        a: Dev<'_, elem::Fr>,
        tw: Dev<'_, elem::Fr>,
        pow_lo: Dev<'_, elem::Fr>,
        pow_hi: Dev<'_, elem::Fr>,
        c: FrArg,
        log_n: u32,
        s: u32,
        k: u32,
        g: u32,
        cshift: u32,
        flags: u32,
        lo_bits: u32,
    ) = [
        NttTileE4 = "ntt_tile_e4",
        NttTileW = "ntt_tile_w",
    ];
    /// `out[i] = first * g^i` from the seeds g^(2^b); threads = count.
    fn fr_powers(out: Dev<'_, elem::Fr>, pows: FrSeeds, first: FrArg, count: u32)
        = [FrPowers = "fr_powers"];
    /// `out[i] = lo[i mod 2^lo_bits] * hi[i >> lo_bits]`; threads = n.
    fn fr_power_table(
        out: Dev<'_, elem::Fr>,
        lo: Dev<'_, elem::Fr>,
        hi: Dev<'_, elem::Fr>,
        n: u32,
        lo_bits: u32,
    ) = [FrPowerTable = "fr_power_table"];
    /// `a[i] *= b[i]`; threads = n.
    fn fr_mul_assign(a: Dev<'_, elem::Fr>, b: Dev<'_, elem::Fr>, n: u32)
        = [FrMulAssign = "fr_mul_assign"];
    /// `a[i] = (a[i] - b[i]) * c`; threads = n.
    fn fr_sub_scale(a: Dev<'_, elem::Fr>, b: Dev<'_, elem::Fr>, c: FrArg, n: u32)
        = [FrSubScale = "fr_sub_scale"];
    /// msm.cu step 1: the signed digits of every scalar and the bucket counts;
    /// threads = n.
    fn msm_digits(
        scalars: Dev<'_, elem::Fr>,
        digits: Dev<'_, elem::U32>,
        bucket_count: Dev<'_, elem::U32>,
        n: u32,
        c: u32,
        wp: u32,
    ) = [MsmDigits = "msm_digits"];
    /// msm.cu step 1 over the terms `index` names (the rest of a witness-aware MSM);
    /// threads = n.
    fn msm_digits_indexed(
        scalars: Dev<'_, elem::Fr>,
        index: Dev<'_, elem::U32>,
        digits: Dev<'_, elem::U32>,
        bucket_count: Dev<'_, elem::U32>,
        n: u32,
        c: u32,
        wp: u32,
    ) = [MsmDigitsIndexed = "msm_digits_indexed"];
    /// msm.cu step 2, up: the sum of each `chunk` of `in`; threads = ceil(m / chunk).
    fn u32_chunk_sums(r#in: Dev<'_, elem::U32>, sums: Dev<'_, elem::U32>, m: u32, chunk: u32)
        = [U32ChunkSums = "u32_chunk_sums"];
    /// msm.cu step 2, across: the chunks' sums scanned in place by one block.
    fn u32_block_scan(v: Dev<'_, elem::U32>, count: u32) = [U32BlockScan = "u32_block_scan"];
    /// msm.cu step 2, down: each chunk's exclusive prefix sum from its offset;
    /// threads = ceil(m / chunk).
    fn u32_chunk_scan(
        r#in: Dev<'_, elem::U32>,
        offsets: Dev<'_, elem::U32>,
        out: Dev<'_, elem::U32>,
        m: u32,
        chunk: u32,
    ) = [U32ChunkScan = "u32_chunk_scan"];
    /// msm.cu step 4: every nonzero digit's entry into its bucket's sorted range;
    /// threads = n × W windows.
    fn msm_scatter(
        digits: Dev<'_, elem::U32>,
        bucket_start: Dev<'_, elem::U32>,
        bucket_count: Dev<'_, elem::U32>,
        sorted: Dev<'_, elem::U32>,
        n: u32,
        c: u32,
        wp: u32,
        stride: u32,
    ) = [MsmScatter = "msm_scatter"];
    /// msm.cu step 4 over the terms `index` names; threads = n × W windows.
    fn msm_scatter_indexed(
        digits: Dev<'_, elem::U32>,
        index: Dev<'_, elem::U32>,
        bucket_start: Dev<'_, elem::U32>,
        bucket_count: Dev<'_, elem::U32>,
        sorted: Dev<'_, elem::U32>,
        n: u32,
        c: u32,
        wp: u32,
        stride: u32,
    ) = [MsmScatterIndexed = "msm_scatter_indexed"];
    /// ones.cu step 1: each chunk's ones and rest; threads = ceil(n / chunk).
    fn msm_classify_count(
        scalars: Dev<'_, elem::Fr>,
        class_count: Dev<'_, elem::U32>,
        n: u32,
        chunk: u32,
    ) = [MsmClassifyCount = "msm_classify_count"];
    /// ones.cu step 3: the list [ones | rest] from the counts' prefix sum;
    /// threads = ceil(n / chunk).
    fn msm_classify_scatter(
        scalars: Dev<'_, elem::Fr>,
        class_start: Dev<'_, elem::U32>,
        list: Dev<'_, elem::U32>,
        n: u32,
        chunk: u32,
    ) = [MsmClassifyScatter = "msm_classify_scatter"];
    /// ones.cu step 4: the sum of the ones' bases, one sum per group of
    /// 2^group_bits leaves; threads = leaves.
    fn msm_ones_sum[group: Group](
        bases: Dev<'_, elem::Affine>,
        ones: Dev<'_, elem::U32>,
        partials: Dev<'_, elem::Xyzz>,
        tickets: Dev<'_, elem::U32>,
        sums: Dev<'_, elem::Xyzz>,
        count: u32,
        leaves: u32,
        group_bits: u32,
    ) = [MsmG1OnesSum = "msm_g1_ones_sum", MsmG2OnesSum = "msm_g2_ones_sum"];
    /// msm.cu step 5: bucket sums by chunks of sorted entries, carries out;
    /// threads = ceil(entries / chunk).
    fn msm_accumulate[group: Group](
        bases: Dev<'_, elem::Affine>,
        sorted: Dev<'_, elem::U32>,
        bucket_start: Dev<'_, elem::U32>,
        buckets: Dev<'_, elem::Xyzz>,
        carries: Dev<'_, elem::Xyzz>,
        max_span: Dev<'_, elem::U32>,
        m: u32,
        chunk: u32,
    ) = [MsmG1Accumulate = "msm_g1_accumulate", MsmG2Accumulate = "msm_g2_accumulate"];
    /// msm.cu step 5b "tree": every bucket's carries summed in one launch;
    /// threads = ceil(entries / chunk).
    fn msm_fold_tree[group: Group](
        carries: Dev<'_, elem::Xyzz>,
        bucket_start: Dev<'_, elem::U32>,
        tickets: Dev<'_, elem::U32>,
        m: u32,
        chunk: u32,
    ) = [MsmG1FoldTree = "msm_g1_fold_tree", MsmG2FoldTree = "msm_g2_fold_tree"];
    /// msm.cu step 6 "tree": each segment's running sums, then its block's sums into
    /// one record; grid (segments, wp), blocks of a power of two.
    fn msm_reduce_tiles[group: Group](
        buckets: Dev<'_, elem::Xyzz>,
        carries: Dev<'_, elem::Xyzz>,
        bucket_start: Dev<'_, elem::U32>,
        out: Dev<'_, elem::Xyzz>,
        c: u32,
        seg_bits: u32,
        chunk: u32,
    ) = [MsmG1ReduceTiles = "msm_g1_reduce_tiles", MsmG2ReduceTiles = "msm_g2_reduce_tiles"];
    /// msm.cu step 7 "tree": one block's records summed into one, with the bit sums
    /// of the totals; grid (records out, (items + 1) wp).
    fn msm_reduce_records[group: Group](
        r#in: Dev<'_, elem::Xyzz>,
        out: Dev<'_, elem::Xyzz>,
        items: u32,
    ) = [
        MsmG1ReduceRecords = "msm_g1_reduce_records",
        MsmG2ReduceRecords = "msm_g2_reduce_records",
    ];
    /// planes.cu: plane `plane` of the bases table from the plane below it, `shift`
    /// doublings up; threads = ceil(n / PLANES_BATCH).
    fn planes[group: Group](
        table: Dev<'_, elem::Affine>,
        n: u32,
        stride: u32,
        plane: u32,
        shift: u32,
    ) = [PlanesG1 = "planes_g1", PlanesG2 = "planes_g2"];
    /// sparse_product.cu: `out[r]` = row `r` of a compressed-row matrix at `z` for
    /// `r < rows`, zero from `rows` to `n`; threads = n.
    fn sparse_product(
        out: Dev<'_, elem::Fr>,
        row_starts: Dev<'_, elem::U32>,
        entries: Dev<'_, elem::U32>,
        coefficients: Dev<'_, elem::Fr>,
        z: Dev<'_, elem::Fr>,
        rows: u32,
        n: u32,
        entry_count: u32,
        coefficient_count: u32,
        z_len: u32,
    ) = [SparseProduct = "sparse_product"];
}

/// The loaded kernels of one device, one function per [`Kernel`].
pub struct Kernels {
    functions: Vec<CudaFunction>,
    /// How the kernels were compiled (or read from the cache) and loaded.
    pub report: kernels::CompileReport,
}

impl Kernels {
    /// Compiles the kernels for `sm_{major}{minor}` and `curve` (or reads the cached
    /// CUBINs), loads them into `ctx` and looks up every function of the [`Kernel`]
    /// table in the first module that defines it (a file's group-free kernels are in
    /// each of its groups' programs).
    pub fn load(ctx: &Arc<CudaContext>, arch: (i32, i32), curve: Curve) -> CudaResult<Kernels> {
        let (modules, report) = kernels::compile(ctx, arch, curve)?;
        let functions = Kernel::ALL
            .iter()
            .map(|kernel| {
                modules
                    .iter()
                    .find_map(|module| module.load_function(kernel.name()).ok())
                    .ok_or_else(|| {
                        CudaError::CompileLog(format!(
                            "no compiled program defines kernel {} (programs: {})",
                            kernel.name(),
                            report
                                .programs
                                .iter()
                                .map(|p| p.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Kernels { functions, report })
    }

    fn function(&self, kernel: Kernel) -> &CudaFunction {
        &self.functions[kernel as usize]
    }

    /// Threads of `kernel`, in blocks of `block`, that the device of `stream` runs at
    /// once: its SMs times the blocks of that kernel one SM holds (the driver's
    /// occupancy, from the kernel's registers and shared memory).
    pub fn resident_threads(
        &self,
        stream: &CudaStream,
        kernel: Kernel,
        block: u32,
    ) -> CudaResult<usize> {
        let sms = stream.context().attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )?;
        let blocks = self
            .function(kernel)
            .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)?;
        Ok(sms.max(1) as usize * blocks.max(1) as usize * block as usize)
    }
}

/// Threads per block of the field kernels.
const BLOCK: u32 = 256;

/// A 1-D launch covering `threads` threads (never zero blocks).
pub fn grid_1d(threads: usize) -> LaunchConfig {
    grid_with_block(threads, BLOCK)
}

/// A 1-D launch covering `threads` threads in blocks of `block`.
pub fn grid_with_block(threads: usize, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((threads as u32).div_ceil(block).max(1), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Threads a block of `ntt_tile_w` (kernels/ntt.cu's CRU_NTT_TILEW_BLOCK): four warps,
/// each its own tiles.
pub const WARP_TILE_BLOCK: u32 = 128;

/// The launch of `ntt_tile_e4` over 2^log_n elements in tiles of 2^tile_bits: one
/// block a tile, four elements a thread (one thread for a tile of fewer), twice the
/// threads when `paired` (a block then does its tile and its partner's). `ntt_tile_w` (never paired): a thread per two
/// elements, [`WARP_TILE_BLOCK`] a block (all in one block when fewer), whatever the
/// tile.
pub fn grid_tile(log_n: u32, tile_bits: u32, paired: bool, elems: TileElems) -> LaunchConfig {
    if elems == TileElems::Warp {
        let threads = 1u32 << log_n.saturating_sub(1);
        let block = threads.min(WARP_TILE_BLOCK);
        return LaunchConfig {
            grid_dim: (threads / block, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
    }
    let paired = u32::from(paired);
    LaunchConfig {
        grid_dim: (1 << (log_n - tile_bits), 1, 1),
        block_dim: ((1 << tile_bits.saturating_sub(elems.log())) << paired, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// `x` threads in blocks of `block` for each of `windows` (the grid's y).
pub fn grid_2d(x: usize, windows: usize, block: u32) -> LaunchConfig {
    let mut config = grid_with_block(x, block);
    config.grid_dim.1 = windows as u32;
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCES: [&str; 5] = [
        include_str!("../kernels/ntt.cu"),
        include_str!("../kernels/msm.cu"),
        include_str!("../kernels/planes.cu"),
        include_str!("../kernels/ones.cu"),
        include_str!("../kernels/sparse_product.cu"),
    ];

    /// A kernel's parameters as its source declares them: (name, C type with `const`,
    /// template arguments and spaces dropped).
    type Params = Vec<(String, String)>;

    /// Every `extern "C" __global__ void NAME(PARAMS)` of the sources, NAME as
    /// written (a macro's `msm_##G##_accumulate` included).
    fn kernel_signatures() -> Vec<(String, Params)> {
        let mut found = Vec::new();
        for source in SOURCES {
            // Macro bodies continue lines with a backslash; comments hold no signature
            // the host reads (ntt.cu's header repeats them as `//` lines, skipped).
            let code: String = source
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| l.trim_end().trim_end_matches('\\'))
                .collect::<Vec<_>>()
                .join(" ");
            for part in code.split("extern \"C\" __global__ void").skip(1) {
                let open = part.find('(').expect("a parameter list");
                let close = part.find(')').expect("a parameter list's end");
                // `BOUNDS msm_##G##_accumulate`: the name is the last word.
                let name = part[..open]
                    .split_whitespace()
                    .last()
                    .expect("a kernel name");
                let params = part[open + 1..close]
                    .split(',')
                    .map(|p| {
                        let p = p.replace("const ", "");
                        let (ty, name) = p
                            .trim()
                            .rsplit_once(|c: char| c.is_whitespace() || c == '*')
                            .expect("type and name");
                        let pointer = p.contains('*');
                        let ty: String =
                            ty.chars().take_while(|c| *c != '<' && *c != '*').collect();
                        let ty = ty.trim().to_string() + if pointer { "*" } else { "" };
                        (name.trim().to_string(), ty)
                    })
                    .collect();
                found.push((name.to_string(), params));
            }
        }
        found
    }

    /// Whether `name` is `template` with its macro parameter (`##G##`, `##R`) filled.
    fn instance_of(name: &str, template: &str) -> bool {
        let parts: Vec<&str> = template.split("##").collect();
        match parts.as_slice() {
            [whole] => name == *whole,
            // prefix ## PARAM ## suffix, or prefix ## PARAM at the end.
            [prefix, _, rest @ ..] => {
                let suffix = rest.first().copied().unwrap_or("");
                name.len() > prefix.len() + suffix.len()
                    && name.starts_with(prefix)
                    && name.ends_with(suffix)
            }
            [] => false,
        }
    }

    #[test]
    fn every_launch_function_matches_its_kernels_signature() {
        let signatures = kernel_signatures();
        let mut launched = Vec::new();
        for declared in declared() {
            let ours: Params = declared
                .params
                .iter()
                .map(|(name, ty)| (name.trim_start_matches("r#").to_string(), ty.to_string()))
                .collect();
            for kernel in &declared.instances {
                let matching: Vec<_> = signatures
                    .iter()
                    .filter(|(template, _)| instance_of(kernel.name(), template))
                    .collect();
                assert_eq!(
                    matching.len(),
                    1,
                    "{} in the sources: {matching:?}",
                    kernel.name()
                );
                assert_eq!(
                    ours,
                    matching[0].1,
                    "launch::{} against {}'s signature",
                    declared.function,
                    kernel.name()
                );
                launched.push(*kernel);
            }
        }
        // Every kernel of the table is launched by exactly one function.
        assert_eq!(launched, Kernel::ALL);
    }

    #[test]
    fn tile_kernels_take_the_tiles_their_shared_memory_holds() {
        let define = |name: &str| -> u32 {
            let line = SOURCES[0]
                .lines()
                .find(|l| l.starts_with(&format!("#define {name} ")))
                .unwrap_or_else(|| panic!("{name} in ntt.cu"));
            line.split_whitespace().nth(2).unwrap().parse().unwrap()
        };
        assert_eq!(
            TileElems::Four.max_tile_bits(),
            define("CRU_NTT_TILE_MAX_BITS")
        );
        assert_eq!(
            TileElems::Warp.max_tile_bits(),
            define("CRU_NTT_TILEW_MAX_BITS")
        );
        assert_eq!(WARP_TILE_BLOCK, define("CRU_NTT_TILEW_BLOCK"));
        // ntt_tile_w: a thread per two elements, whole tiles a block (a tile's threads,
        // at most a warp, divide the block), any tile size.
        for log in 1..=31u32 {
            for bits in 1..=log.min(TileElems::Warp.max_tile_bits()) {
                let grid = grid_tile(log, bits, false, TileElems::Warp);
                let block = grid.block_dim.0;
                assert_eq!(
                    u64::from(grid.grid_dim.0) * u64::from(block),
                    1 << (log - 1)
                );
                assert!(block <= WARP_TILE_BLOCK && block % (1 << (bits - 1)) == 0);
                assert_eq!(grid.shared_mem_bytes, 0);
            }
        }
        // At most 256 threads a block for e4, paired or not (a paired tile is at most
        // half), and no dynamic shared memory.
        let bits = TileElems::Four.max_tile_bits();
        let full = grid_tile(20, bits, false, TileElems::Four);
        let pair = grid_tile(20, bits - 1, true, TileElems::Four);
        assert_eq!(full.block_dim.0, 256);
        assert_eq!(pair.block_dim.0, 256);
        assert_eq!(grid_tile(1, 1, false, TileElems::Four).block_dim.0, 1);
        assert_eq!(grid_tile(2, 1, true, TileElems::Four).block_dim.0, 2);
        assert_eq!(full.shared_mem_bytes, 0);
        assert_eq!(pair.shared_mem_bytes, 0);
    }

    #[test]
    fn the_table_indexes_in_order_and_selectors_pick_their_instance() {
        for (i, kernel) in Kernel::ALL.iter().enumerate() {
            assert_eq!(*kernel as usize, i);
        }
        for declared in declared() {
            if declared.instances.len() > 1 {
                // Each instance picked by exactly one selector value, which its name says.
                assert_eq!(
                    declared.picks.len(),
                    declared.instances.len(),
                    "{}",
                    declared.function
                );
                for (tag, kernel) in &declared.picks {
                    assert!(
                        kernel.name().contains(tag.as_str()),
                        "{}: {tag}",
                        kernel.name()
                    );
                }
            }
        }
        assert_eq!(TileElems::Four.tag(), "_e4");
        // BN254's groups pick what BLS12-381's do: the curve is the program's define.
        use crate::field::test_groups::{BLS_G1, BLS_G2, BN_G1, BN_G2};
        assert_eq!((BN_G1.index(), BN_G1.tag()), (BLS_G1.index(), BLS_G1.tag()));
        assert_eq!((BN_G2.index(), BN_G2.tag()), (BLS_G2.index(), BLS_G2.tag()));
        assert_ne!(BLS_G1.index(), BLS_G2.index());
        assert_eq!(TileElems::Warp.tag(), "_w");
    }
}
