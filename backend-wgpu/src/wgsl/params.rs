//! The kernels' uniform parameter blocks: each defined once here, as a `#[repr(C)]`
//! Rust struct and the WGSL struct generated from the same field list
//! ([`WgslStruct::wgsl`]), which shader assembly splices into every module that binds
//! it (wgsl/mod.rs), so the two cannot drift apart.

use crate::field::FR_WORDS;

/// A field type of a parameter block, and how WGSL spells it in a uniform buffer.
pub trait WgslType {
    /// The WGSL type.
    fn wgsl() -> String;
}

impl WgslType for u32 {
    fn wgsl() -> String {
        "u32".into()
    }
}

/// Words as `array<vec4<u32>, N / 4>`: a uniform buffer's arrays need a 16-byte stride.
impl<const N: usize> WgslType for [u32; N] {
    fn wgsl() -> String {
        const { assert!(N % 4 == 0, "uniform word arrays are whole vec4s") };
        format!("array<vec4<u32>, {}>", N / 4)
    }
}

/// A parameter block with a generated WGSL struct.
pub trait WgslStruct: bytemuck::Pod {
    /// The struct's name, the same in Rust and WGSL.
    const NAME: &'static str;
    /// What the struct is for (its doc's first line).
    const ABOUT: &'static str;
    /// (name, WGSL type, doc lines) of every field, in order.
    fn fields() -> Vec<(&'static str, String, &'static [&'static str])>;

    /// The WGSL struct, each field's doc as a comment above it.
    fn wgsl() -> String {
        let mut s = format!(
            "// {} (generated from params.rs).\nstruct {} {{\n",
            Self::ABOUT.trim().trim_end_matches('.'),
            Self::NAME
        );
        for (name, ty, doc) in Self::fields() {
            for line in doc {
                s += &format!("    // {}\n", line.trim());
            }
            s += &format!("    {name}: {ty},\n");
        }
        s + "}\n"
    }
}

/// Defines a parameter block: the `#[repr(C)]` struct (every field `pub`, documented)
/// and its [`WgslStruct`] impl, from one field list.
macro_rules! params_struct {
    (
        #[doc = $about:literal]
        $(#[doc = $more:literal])*
        $name:ident {
            $(
                $(#[doc = $doc:literal])+
                $field:ident: $ty:ty,
            )*
        }
    ) => {
        #[doc = $about]
        $(#[doc = $more])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name {
            $(
                $(#[doc = $doc])+
                pub $field: $ty,
            )*
        }

        impl WgslStruct for $name {
            const NAME: &'static str = stringify!($name);
            const ABOUT: &'static str = $about;
            fn fields() -> Vec<(&'static str, String, &'static [&'static str])> {
                vec![$((stringify!($field), <$ty as WgslType>::wgsl(), &[$($doc),+])),*]
            }
        }
    };
}

params_struct! {
    /// Parameters of one NTT-module dispatch (shaders/ntt.wgsl).
    NttParams {
        /// Threads in this dispatch.
        count: u32,
        /// Global index of thread 0's element or butterfly.
        base: u32,
        /// log2 of the transform's size.
        log_n: u32,
        /// Butterfly stage s (half-size 2^s); in `scale`, 1 when h^i is applied.
        stage: u32,
        /// The chunk bound as `lo`.
        lo_chunk: u32,
        /// The chunk bound as `hi`.
        hi_chunk: u32,
        /// log2 of the elements per chunk.
        log_chunk: u32,
        /// h: the low twiddle table holds 2^h entries.
        tw_log_lo: u32,
        /// tile_stages: stages `stage` .. stage + k − 1 on tiles spanning two ranges of
        /// index bits, (p1, w1) below (p2, w2): the stages' and a batch of independent
        /// groups' (crucible_core::ntt_tiles's `Tile`).
        k: u32,
        /// tile_stages: the lower range's first index bit.
        p1: u32,
        /// tile_stages: the lower range's width in bits.
        w1: u32,
        /// tile_stages: the upper range's first index bit.
        p2: u32,
        /// tile_stages: the upper range's width in bits.
        w2: u32,
        /// TILE_* bits.
        flags: u32,
        /// tw holds w'^m for m < 2^(table_log − 1).
        table_log: u32,
        /// pw holds c·g^i for i < 2^pow_log_lo, then g^(i·2^pow_log_lo).
        pow_log_lo: u32,
        /// Fr constant (packed words): the scale factor, the twiddle or power root.
        c: [u32; FR_WORDS],
        /// A second Fr constant (packed words).
        h: [u32; FR_WORDS],
    }
}

params_struct! {
    /// Parameters of one MSM dispatch (shaders/msm_common.wgsl).
    MsmParams {
        /// Terms in this batch.
        n: u32,
        /// Windows of the scalars.
        windows: u32,
        /// Bits per window.
        window_bits: u32,
        /// Buckets per window, bucket 0 (which stays empty) included:
        /// 2^(window_bits − 1) + 1.
        buckets: u32,
        /// The most points one task sums.
        task_size: u32,
        /// Stride of `partials` per window: the most tasks a window can have.
        max_tasks: u32,
        /// First scalar of the batch in the bound scalar chunk.
        scalar_offset: u32,
        /// First base of the batch in the bound bases chunk.
        base_offset: u32,
        /// Threads in this dispatch.
        count: u32,
        /// Fq per coordinate (1: G1, 2: G2).
        ext: u32,
        /// First instruction of the point-addition program (program.wgsl).
        prog_start: u32,
        /// Instructions of the point-addition program.
        prog_len: u32,
        /// merge_tasks: tasks 2^round apart are summed.
        round: u32,
        /// reduce_level: level 0 reads the bucket sums.
        level: u32,
        /// reduce_level: elements per window read.
        m_in: u32,
        /// reduce_level: elements per window written.
        m_out: u32,
    }
}

params_struct! {
    /// Parameters of the Fr test entry point (shaders/fr_test.wgsl).
    FrTestParams {
        /// Elements.
        count: u32,
        /// 0 add, 1 subtract, 2 multiply, 3 out of Montgomery form.
        op: u32,
        /// Padding to 16 bytes.
        pad0: u32,
        /// Padding to 16 bytes.
        pad1: u32,
    }
}

params_struct! {
    /// Parameters of the formula test entry points (shaders/program_test.wgsl, and the
    /// straight-line ones straight.rs generates).
    ProgramTestParams {
        /// Elements.
        count: u32,
        /// First instruction of the program.
        start: u32,
        /// Instructions of the program.
        len: u32,
        /// Fq per field element (1 or 2).
        ext: u32,
        /// Fq of a[i], loaded into regs[0..].
        a_fqs: u32,
        /// First register of b[i].
        b_reg: u32,
        /// Fq of b[i].
        b_fqs: u32,
        /// First register of the result.
        out_reg: u32,
        /// Fq of the result.
        out_fqs: u32,
        /// 0 projective b, 1 affine b (the stored identity: nothing added), 2 b = a.
        mode: u32,
        /// Padding to 16 bytes.
        pad0: u32,
        /// Padding to 16 bytes.
        pad1: u32,
    }
}

params_struct! {
    /// Parameters of one sparse product dispatch (shaders/sparse_product.wgsl).
    SparseParams {
        /// Threads (rows of the bound `out` chunk) in this dispatch.
        count: u32,
        /// Global row of `out` of thread 0 (the `out` chunk's first).
        base: u32,
        /// Rows of the matrix: the rows of `out` from `first_row + rows` on are zero.
        rows: u32,
        /// 0: the first pass over the `out` chunk, which writes every row; 1: a later
        /// one, which adds to the rows it has entries for.
        accumulate: u32,
        /// Global index of `starts_lo`'s first word.
        starts_lo_base: u32,
        /// Words in `starts_lo`.
        starts_lo_len: u32,
        /// Global index of `starts_hi`'s first word.
        starts_hi_base: u32,
        /// First entry (not word) the bound entries chunk holds.
        entry_base: u32,
        /// Entries the bound entries chunk holds.
        entry_count: u32,
        /// First column the bound `z` chunk holds.
        z_base: u32,
        /// Columns the bound `z` chunk holds.
        z_count: u32,
        /// First coefficient the bound coefficients chunk holds.
        coeff_base: u32,
        /// Coefficients the bound coefficients chunk holds.
        coeff_count: u32,
        /// 1 when this pass adds the entries of coefficient one and minus one (the
        /// passes of the first coefficients chunk).
        signs: u32,
        /// Row of `out` that the matrix's row 0 is (a streamed chunk's first row): the
        /// rows before it are left as they are.
        first_row: u32,
        /// Padding to 16 bytes.
        pad1: u32,
    }
}

/// Bytes of the largest parameter block of any kernel: what one uniform slot holds.
pub const PARAMS_BYTES: u64 = {
    let sizes = [
        std::mem::size_of::<NttParams>(),
        std::mem::size_of::<MsmParams>(),
        std::mem::size_of::<FrTestParams>(),
        std::mem::size_of::<ProgramTestParams>(),
        std::mem::size_of::<SparseParams>(),
    ];
    let mut most = 0;
    let mut k = 0;
    while k < sizes.len() {
        if sizes[k] > most {
            most = sizes[k];
        }
        k += 1;
    }
    most as u64
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wgsl::{Module, ShaderConfig};

    /// (size, member offsets) of `struct name` as naga lays it out in `module`.
    fn naga_layout(module: Module, name: &str) -> Option<(u32, Vec<(String, u32)>)> {
        let config = ShaderConfig::hardware_default();
        let source = module.source(&config);
        let parsed = naga::front::wgsl::parse_str(&source).expect("valid WGSL");
        let found = parsed.types.iter().find_map(|(_, ty)| match &ty.inner {
            naga::TypeInner::Struct { members, span } if ty.name.as_deref() == Some(name) => {
                let offsets = members
                    .iter()
                    .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
                    .collect();
                Some((*span, offsets))
            }
            _ => None,
        });
        found
    }

    fn rust_layout<P: WgslStruct>() -> (u32, Vec<(String, u32)>) {
        let mut offset = 0;
        let offsets = P::fields()
            .into_iter()
            .map(|(name, ty, _)| {
                let at = offset;
                // u32 or array<vec4<u32>, N>: 4 or 16·N bytes, no padding in #[repr(C)]
                // for u32 fields.
                offset += match ty.strip_prefix("array<vec4<u32>, ") {
                    Some(n) => 16 * n.trim_end_matches('>').parse::<u32>().expect("length"),
                    None => 4,
                };
                (name.to_string(), at)
            })
            .collect();
        assert_eq!(offset as usize, std::mem::size_of::<P>(), "{}", P::NAME);
        (std::mem::size_of::<P>() as u32, offsets)
    }

    /// Every module that binds a parameter block holds the generated struct, and the
    /// WGSL layout naga computes for it (size, every member's offset) is the Rust one.
    #[test]
    fn every_modules_params_match_their_rust_structs() {
        fn check<P: WgslStruct>(modules: &[Module]) {
            for &module in modules {
                let wgsl = naga_layout(module, P::NAME)
                    .unwrap_or_else(|| panic!("{module:?} has no struct {}", P::NAME));
                assert_eq!(wgsl, rust_layout::<P>(), "{} in {module:?}", P::NAME);
                let source = module.source(&ShaderConfig::hardware_default());
                assert_eq!(source.matches(&format!("struct {} {{", P::NAME)).count(), 1);
            }
        }
        check::<NttParams>(&[Module::Ntt, Module::NttUnrolled, Module::NttWide]);
        check::<MsmParams>(&[
            Module::MsmSort,
            Module::MsmBuckets,
            Module::MsmG1,
            Module::MsmG2,
        ]);
        check::<FrTestParams>(&[Module::FrTest]);
        check::<ProgramTestParams>(&[
            Module::ProgramTest,
            Module::FormulaTestG1,
            Module::FormulaTestG2,
        ]);
        check::<SparseParams>(&[Module::SparseProduct, Module::SparseProductWide]);
        let sizes = [
            std::mem::size_of::<NttParams>(),
            std::mem::size_of::<MsmParams>(),
            std::mem::size_of::<FrTestParams>(),
            std::mem::size_of::<ProgramTestParams>(),
            std::mem::size_of::<SparseParams>(),
        ];
        assert_eq!(PARAMS_BYTES, *sizes.iter().max().unwrap() as u64);
    }

    #[test]
    fn generated_wgsl_excerpt() {
        let s = NttParams::wgsl();
        assert!(s.starts_with("// Parameters of one NTT-module dispatch (shaders/ntt.wgsl) (generated from params.rs).\nstruct NttParams {\n"), "{s}");
        assert!(
            s.contains("    // Threads in this dispatch.\n    count: u32,\n"),
            "{s}"
        );
        assert!(s.contains("    c: array<vec4<u32>, 2>,\n"), "{s}");
        assert!(s.ends_with("}\n"));
    }
}
