//! The kernels' uniform parameter blocks, laid out as the WGSL structs they mirror.

use crate::field::FR_WORDS;

/// Parameters of one NTT-module dispatch (`NttParams` in shaders/ntt.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct NttParams {
    pub count: u32,
    pub base: u32,
    pub log_n: u32,
    pub stage: u32,
    pub lo_chunk: u32,
    pub hi_chunk: u32,
    pub log_chunk: u32,
    pub tw_log_lo: u32,
    pub c: [u32; FR_WORDS],
    pub h: [u32; FR_WORDS],
}

/// Parameters of one MSM dispatch (`MsmParams` in shaders/msm_common.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct MsmParams {
    pub n: u32,
    pub windows: u32,
    pub window_bits: u32,
    pub buckets: u32,
    pub task_size: u32,
    pub max_tasks: u32,
    pub scalar_offset: u32,
    pub base_offset: u32,
    pub count: u32,
    pub ext: u32,
    pub prog_start: u32,
    pub prog_len: u32,
    pub round: u32,
    pub level: u32,
    pub m_in: u32,
    pub m_out: u32,
}

/// Bytes of the largest parameter block of any kernel: what one uniform slot holds.
pub const PARAMS_BYTES: u64 = {
    let ntt = std::mem::size_of::<NttParams>();
    let msm = std::mem::size_of::<MsmParams>();
    (if ntt > msm { ntt } else { msm }) as u64
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shaders::Module;

    /// Bytes of a WGSL type made of `u32`s: `u32`, `vecN<u32>`, `array<T, N>`.
    fn wgsl_bytes(ty: &str) -> usize {
        let ty = ty.trim();
        if ty == "u32" {
            return 4;
        }
        if let Some(inner) = ty.strip_prefix("array<").and_then(|t| t.strip_suffix('>')) {
            let (elem, len) = inner.rsplit_once(',').expect("array<T, N>");
            return wgsl_bytes(elem) * len.trim().parse::<usize>().expect("array length");
        }
        if let Some(rest) = ty.strip_prefix("vec") {
            let (n, elem) = rest.split_once('<').expect("vecN<T>");
            return n.parse::<usize>().expect("vector size") * wgsl_bytes(&elem[..elem.len() - 1]);
        }
        panic!("unexpected WGSL field type `{ty}`");
    }

    /// Bytes of `struct name` in `source`: its fields' sizes summed, which is its
    /// size because these structs have no padding (their `vec4` arrays start at a
    /// multiple of 16 bytes).
    fn wgsl_struct_bytes(source: &str, name: &str) -> usize {
        let start = source
            .find(&format!("struct {name} {{"))
            .unwrap_or_else(|| panic!("struct {name} not in the shader source"));
        let body = &source[start..];
        let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
        body.lines()
            .map(|line| line.split("//").next().unwrap_or("").trim())
            .filter(|line| !line.is_empty())
            .map(|field| {
                let (_, ty) = field.split_once(':').expect("name: type");
                wgsl_bytes(ty.trim().trim_end_matches(','))
            })
            .sum()
    }

    #[test]
    fn rust_params_match_their_wgsl_structs() {
        let config = crate::shaders::ShaderConfig {
            limbs: crate::fq_code::LimbBits::DEFAULT,
            formulas: crate::shaders::PerCurve::for_adapter(false),
        };
        let ntt = wgsl_struct_bytes(
            &Module::Ntt.source(&config),
            "NttParams",
        );
        assert_eq!(ntt, std::mem::size_of::<NttParams>());
        let msm = wgsl_struct_bytes(
            &Module::MsmSort.source(&config),
            "MsmParams",
        );
        assert_eq!(msm, std::mem::size_of::<MsmParams>());
        assert_eq!(PARAMS_BYTES, ntt.max(msm) as u64);
    }
}
