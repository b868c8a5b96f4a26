//! The CUDA C kernels, embedded and compiled with NVRTC straight to machine code
//! (CUBIN) for the device's own architecture at first use, then kept for the life of
//! the backend (`launch::Kernels`). The CUBIN is cached on disk, keyed by a hash of
//! everything that shapes it (sources, options, NVRTC and driver versions), so that
//! later processes skip the compiler.

use std::path::PathBuf;
use std::sync::Arc;

use crucible_core::hash::Fnv1a;
use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;

use crate::driver;
use crate::error::CudaResult;
use crate::tuning::CudaTuning;

/// Sources in the order NVRTC sees them (the headers' include guards make the
/// `.cu` files' own `#include`s no-ops).
const SOURCES: [&str; 7] = [
    include_str!("../kernels/field.cuh"),
    include_str!("../kernels/fq2.cuh"),
    include_str!("../kernels/curve.cuh"),
    include_str!("../kernels/ntt.cu"),
    include_str!("../kernels/msm.cu"),
    include_str!("../kernels/planes.cu"),
    include_str!("../kernels/ones.cu"),
];

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

/// The cache key of a compile: FNV-1a over every part, part boundaries counted.
fn cache_key(parts: &[&[u8]]) -> u64 {
    Fnv1a::default().write_parts(parts).finish()
}

fn load(ctx: &Arc<CudaContext>, cubin: Vec<u8>) -> CudaResult<Arc<CudaModule>> {
    Ok(ctx.load_module(Ptx::from_binary(cubin))?)
}

/// Compiles every kernel for `sm_{major}{minor}` with the options `tuning` adds (or
/// reads the CUBIN cached for the same sources, options and versions) and loads the
/// module into `ctx`. `launch::Kernels` looks the functions up.
pub fn compile(
    ctx: &Arc<CudaContext>,
    arch: (i32, i32),
    tuning: &CudaTuning,
) -> CudaResult<Arc<CudaModule>> {
    let source: String = SOURCES.concat();
    let mut options = vec![
        format!("--gpu-architecture=sm_{}{}", arch.0, arch.1),
        "--std=c++17".into(),
    ];
    // Plain 64-bit C++ instead of inline-PTX carry chains, to tell a PTX fault from an
    // algorithmic one.
    if tuning.portable_arith {
        options.push("-DCRUCIBLE_PORTABLE_ARITH".into());
    }
    // Extra options for tuning measurements; they are part of the cache key.
    options.extend(tuning.nvrtc_options.iter().cloned());
    let versions = format!(
        "nvrtc {} driver {}",
        driver::nvrtc_version(),
        driver::driver_version()
    );
    let key = cache_key(&[
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
    match from_cache {
        Some(module) => Ok(module),
        None => {
            let cubin = driver::compile_cubin(&source, "crucible.cu", &options)?;
            if let Some(path) = &cached {
                store(path, &cubin);
            }
            load(ctx, cubin)
        }
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
        let base = cache_key(&[b"src", b"opts", b"v"]);
        assert_eq!(base, cache_key(&[b"src", b"opts", b"v"]));
        assert_ne!(base, cache_key(&[b"src2", b"opts", b"v"]));
        assert_ne!(base, cache_key(&[b"src", b"opts", b"v2"]));
        // Part boundaries count: "ab" + "c" is not "a" + "bc".
        assert_ne!(cache_key(&[b"ab", b"c"]), cache_key(&[b"a", b"bc"]));
        // The key of the hash written here before core had one, so that caches on
        // disk stay valid: FNV-1a 64 of "a" then 0xff.
        let mut old = 0xcbf2_9ce4_8422_2325u64;
        for b in [b'a', 0xff] {
            old = (old ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        assert_eq!(cache_key(&[b"a"]), old);
    }
}
