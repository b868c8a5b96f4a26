//! The CUDA C kernels, embedded and compiled with NVRTC straight to machine code
//! (CUBIN) for the device's own architecture at first use, then kept for the life of
//! the backend. The CUBIN is cached on disk, keyed by a hash of everything that
//! shapes it (sources, options, NVRTC and driver versions), so that later processes
//! skip the compiler.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;

use crate::driver;
use crate::error::{CudaError, CudaResult};

/// Sources in the order NVRTC sees them (the headers' include guards make the
/// `.cu` files' own `#include`s no-ops).
const SOURCES: [&str; 6] = [
    include_str!("../kernels/field.cuh"),
    include_str!("../kernels/fq2.cuh"),
    include_str!("../kernels/curve.cuh"),
    include_str!("../kernels/ntt.cu"),
    include_str!("../kernels/msm.cu"),
    include_str!("../kernels/planes.cu"),
];

/// Every kernel the host launches.
const NAMES: [&str; 26] = [
    "ntt_bit_reverse",
    "ntt_bit_reverse_scale",
    "ntt_pass_r1",
    "ntt_pass_r2",
    "ntt_pass_r3",
    "ntt_pass_r4",
    "fr_powers",
    "fr_power_table",
    "fr_scale_by_powers",
    "fr_scale",
    "fr_mul_assign",
    "fr_sub_scale",
    "msm_digits",
    "u32_chunk_sums",
    "u32_chunk_scan",
    "msm_scatter",
    "msm_g1_accumulate",
    "msm_g1_fold_carries",
    "msm_g1_reduce_segments",
    "msm_g1_reduce_pairs",
    "msm_g2_accumulate",
    "msm_g2_fold_carries",
    "msm_g2_reduce_segments",
    "msm_g2_reduce_pairs",
    "planes_g1",
    "planes_g2",
];

/// The loaded kernels of one device.
pub struct Kernels {
    functions: HashMap<&'static str, CudaFunction>,
    /// Milliseconds the compile (or cache read) and the module load took.
    pub compile_ms: f64,
}

/// Where compiled kernels are cached: `CRUCIBLE_CUDA_CACHE`, else the user's cache
/// folder; `CRUCIBLE_CUDA_CACHE=` (empty) turns the cache off.
fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CRUCIBLE_CUDA_CACHE") {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("crucible").join("cuda"))
}

/// FNV-1a, 64 bits: a stable hash for the cache key.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for part in parts {
        for &b in *part {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        h = (h ^ 0xff).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn load(ctx: &Arc<CudaContext>, cubin: Vec<u8>) -> CudaResult<Arc<CudaModule>> {
    Ok(ctx.load_module(Ptx::from_binary(cubin))?)
}

impl Kernels {
    /// Compiles every kernel for `sm_{major}{minor}` (or reads the cached CUBIN) and
    /// loads them into `ctx`.
    pub fn compile(ctx: &Arc<CudaContext>, arch: (i32, i32)) -> CudaResult<Kernels> {
        let start = std::time::Instant::now();
        let source: String = SOURCES.concat();
        let mut options = vec![
            format!("--gpu-architecture=sm_{}{}", arch.0, arch.1),
            "--std=c++17".into(),
        ];
        // Plain 64-bit C++ instead of inline-PTX carry chains, to tell a PTX fault
        // from an algorithmic one.
        if std::env::var_os("CRUCIBLE_CUDA_PORTABLE_ARITH").is_some() {
            options.push("-DCRUCIBLE_PORTABLE_ARITH".into());
        }
        // Extra NVRTC options, whitespace-separated, for tuning measurements (e.g.
        // `-DCRU_G1_ACC_MIN_BLOCKS=0`); they are part of the cache key.
        if let Ok(extra) = std::env::var("CRUCIBLE_CUDA_NVRTC_OPTIONS") {
            options.extend(extra.split_whitespace().map(String::from));
        }
        let versions = format!(
            "nvrtc {} driver {}",
            driver::nvrtc_version(),
            driver::driver_version()
        );
        let key = fnv1a(&[
            source.as_bytes(),
            options.join(" ").as_bytes(),
            versions.as_bytes(),
        ]);
        let cached = cache_dir().map(|dir| dir.join(format!("kernels-{key:016x}.cubin")));
        let from_cache = cached
            .as_ref()
            .and_then(|path| std::fs::read(path).ok())
            .filter(|bytes| bytes.starts_with(b"\x7fELF"))
            .and_then(|bytes| load(ctx, bytes).ok());
        let module = match from_cache {
            Some(module) => module,
            None => {
                let cubin = driver::compile_cubin(&source, "crucible.cu", &options)?;
                if let Some(path) = &cached {
                    store(path, &cubin);
                }
                load(ctx, cubin)?
            }
        };
        let mut functions = HashMap::new();
        for name in NAMES {
            functions.insert(name, module.load_function(name)?);
        }
        Ok(Kernels {
            functions,
            compile_ms: start.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// The kernel named `name` (one of [`NAMES`]).
    pub fn get(&self, name: &str) -> CudaResult<&CudaFunction> {
        self.functions
            .get(name)
            .ok_or_else(|| CudaError::Size(format!("kernel `{name}` is not loaded")))
    }
}

/// Writes the cache file through a temporary name and a rename, so that a reader
/// never sees half a file. The cache is an optimisation: failures are ignored.
fn store(path: &std::path::Path, cubin: &[u8]) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(
        ".{}.{}",
        std::process::id(),
        path.file_name().map_or("k".into(), |f| f.to_string_lossy())
    ));
    if std::fs::write(&tmp, cubin).is_err() || std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_key_depends_on_every_part() {
        let base = fnv1a(&[b"src", b"opts", b"v"]);
        assert_eq!(base, fnv1a(&[b"src", b"opts", b"v"]));
        assert_ne!(base, fnv1a(&[b"src2", b"opts", b"v"]));
        assert_ne!(base, fnv1a(&[b"src", b"opts", b"v2"]));
        // Part boundaries count: "ab" + "c" is not "a" + "bc".
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
    }
}
