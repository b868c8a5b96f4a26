//! The CUDA C kernels, embedded and compiled with NVRTC straight to machine code
//! (CUBIN) for the device's own architecture at first use, then kept for the life of
//! the backend (`launch::Kernels`).
//!
//! They compile as several NVRTC programs at once, one thread each (NVRTC is
//! thread-safe across programs): every kernel file is a program of its own, and a file
//! whose kernels are split into parts (curve.cuh's `#if CRU_WITH(PART)`: msm.cu's bucket
//! sums and reduction per group, planes.cu's groups) is one program per part, so that a
//! cold compile takes about as long as its slowest program instead of the sum of all
//! (one program of every file took 29–32 s on a fresh H200 machine). The programs
//! follow the files and the parts their sources name, not a list of kernels, so a
//! kernel added to a file lands in that file's programs (outside every part: in each
//! of them); `launch::Kernels` looks every function up across the modules. Each
//! program's CUBIN is cached on disk under its own key, a hash of everything that
//! shapes it (its sources, its options, the NVRTC and driver versions), so that later
//! processes skip the compiler and a change to one file recompiles only its programs.
//!
//! The parts are cut by kernel family (msm.cu: the sort, and per group the bucket
//! sums, the carries, each reduction kernel; ntt.cu: tiles, passes, pointwise), since
//! ptxas compiles a kernel's callees into each kernel that calls them: five reduction
//! kernels in one program cost five copies of the addition in a row. The ignored test
//! `nvrtc_compile_times` compiles the programs one at a time with libnvrtc alone (no
//! driver, no device) and prints each one's CPU seconds.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crucible_core::hash::Fnv1a;
use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;

use crate::driver;
use crate::error::{CudaError, CudaResult};
use crate::tuning::{CudaTuning, NvrtcPrograms};

/// The headers every program starts with, in this order (their include guards make
/// the `.cu` files' own `#include`s no-ops).
const HEADERS: [&str; 3] = [
    include_str!("../kernels/field.cuh"),
    include_str!("../kernels/fq2.cuh"),
    include_str!("../kernels/curve.cuh"),
];

/// The kernel files: the name their programs take, and the source.
const FILES: [(&str, &str); 4] = [
    ("ntt", include_str!("../kernels/ntt.cu")),
    ("msm", include_str!("../kernels/msm.cu")),
    ("planes", include_str!("../kernels/planes.cu")),
    ("ones", include_str!("../kernels/ones.cu")),
];

/// How a kernel file opens a part of its kernels (curve.cuh): `#if CRU_WITH(PART)`.
const PART_GUARD: &str = "#if CRU_WITH(";

/// The parts a kernel file's source names, in the order it first names them.
fn parts(source: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    for line in source.lines() {
        let Some(rest) = line.trim_start().strip_prefix(PART_GUARD) else {
            continue;
        };
        let part = rest.split(')').next().unwrap_or("").trim();
        if !part.is_empty() && !found.contains(&part) {
            found.push(part);
        }
    }
    found
}

/// One NVRTC program: the headers, then kernel files, with its own options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// What reports call it: the file's name, with its part's (`msm-g2-sums`).
    pub name: String,
    /// The kernel files' sources, after the headers.
    files: Vec<&'static str>,
    /// Options of this program alone (a part's selection).
    defines: Vec<String>,
}

impl Program {
    /// The whole source NVRTC compiles.
    fn source(&self) -> String {
        HEADERS.iter().chain(&self.files).copied().collect()
    }
}

/// The programs the kernels compile as: by file and part, or (`one`, the layout
/// before the split, kept for A/B measurements) every file in a single program.
pub fn programs(layout: NvrtcPrograms) -> Vec<Program> {
    match layout {
        NvrtcPrograms::One => vec![Program {
            name: "all".into(),
            files: FILES.iter().map(|(_, source)| *source).collect(),
            defines: Vec::new(),
        }],
        NvrtcPrograms::Split => FILES
            .iter()
            .flat_map(|&(name, source)| {
                let parts = parts(source);
                if parts.is_empty() {
                    return vec![Program {
                        name: name.into(),
                        files: vec![source],
                        defines: Vec::new(),
                    }];
                }
                parts
                    .into_iter()
                    .map(|part| Program {
                        name: format!("{name}-{}", part.to_lowercase().replace('_', "-")),
                        files: vec![source],
                        defines: vec!["-DCRU_SELECT=1".into(), format!("-DCRU_ONLY_{part}=1")],
                    })
                    .collect()
            })
            .collect(),
    }
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

/// The cache key of a compile: FNV-1a over every part, part boundaries counted.
fn cache_key(parts: &[&[u8]]) -> u64 {
    Fnv1a::default().write_parts(parts).finish()
}

/// How one program's CUBIN was had.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramTime {
    /// The program ([`Program::name`]).
    pub name: String,
    /// Milliseconds NVRTC took, or the cache read.
    pub ms: f64,
    /// Whether it came from the disk cache.
    pub cached: bool,
}

/// How the kernels were compiled: each program, and the wall time of all of them
/// (compiled concurrently) with the modules' load.
#[derive(Clone, Debug, PartialEq)]
pub struct CompileReport {
    /// Each program, in [`programs`]' order.
    pub programs: Vec<ProgramTime>,
    /// Milliseconds from the start of the first compile to the last module loaded.
    pub wall_ms: f64,
    /// NVRTC's version (`major * 1000 + minor * 10`).
    pub nvrtc_version: i32,
}

impl fmt::Display for CompileReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let compiled = self.programs.iter().filter(|p| !p.cached).count();
        write!(
            f,
            "CUDA kernels: {} NVRTC programs ({compiled} compiled, {} cached) in {:.2} s wall (NVRTC {}.{}):",
            self.programs.len(),
            self.programs.len() - compiled,
            self.wall_ms / 1e3,
            self.nvrtc_version / 1000,
            (self.nvrtc_version % 1000) / 10
        )?;
        for p in &self.programs {
            let how = if p.cached { "cached" } else { "compiled" };
            write!(f, " {} {:.2} s {how};", p.name, p.ms / 1e3)?;
        }
        Ok(())
    }
}

/// One program's CUBIN and how it was had.
struct Built {
    cubin: Vec<u8>,
    time: ProgramTime,
}

/// Reads `program`'s cached CUBIN at `path`, or compiles it with `options` and caches
/// it there.
fn build(program: &Program, options: &[String], path: Option<&PathBuf>) -> CudaResult<Built> {
    let start = Instant::now();
    let cached = path
        .and_then(|path| std::fs::read(path).ok())
        .filter(|bytes| bytes.starts_with(b"\x7fELF"));
    let (cubin, was_cached) = match cached {
        Some(cubin) => (cubin, true),
        None => (compile_program(program, options, path)?, false),
    };
    Ok(Built {
        cubin,
        time: ProgramTime {
            name: program.name.clone(),
            ms: start.elapsed().as_secs_f64() * 1e3,
            cached: was_cached,
        },
    })
}

/// Compiles `program` with `options` (and caches the CUBIN at `path`).
fn compile_program(
    program: &Program,
    options: &[String],
    path: Option<&PathBuf>,
) -> CudaResult<Vec<u8>> {
    let cubin = driver::compile_cubin(
        &program.source(),
        &format!("crucible-{}.cu", program.name),
        options,
    )
    .map_err(|e| CudaError::CompileLog(format!("program {}: {e}", program.name)))?;
    if let Some(path) = path {
        store(path, &cubin);
    }
    Ok(cubin)
}

/// The NVRTC options every program gets for `sm_{major}{minor}` under `tuning`,
/// before its own (its part's selection).
fn base_options(arch: (i32, i32), tuning: &CudaTuning) -> Vec<String> {
    let mut base = vec![
        format!("--gpu-architecture=sm_{}{}", arch.0, arch.1),
        "--std=c++17".into(),
    ];
    // Plain 64-bit C++ instead of inline-PTX carry chains, to tell a PTX fault from an
    // algorithmic one.
    if tuning.portable_arith {
        base.push("-DCRUCIBLE_PORTABLE_ARITH".into());
    }
    // Extra options for tuning measurements; they are part of the cache key.
    base.extend(tuning.nvrtc_options.iter().cloned());
    base
}

/// One program to build: its whole option list, and where its CUBIN is cached.
struct Job {
    program: Program,
    options: Vec<String>,
    path: Option<PathBuf>,
}

/// The programs `tuning` lays out, each with its options for `arch` and, under `dir`,
/// its cache file, keyed by its source, its options and `versions` (NVRTC's and the
/// driver's).
fn jobs(arch: (i32, i32), tuning: &CudaTuning, versions: &str, dir: Option<&PathBuf>) -> Vec<Job> {
    let base = base_options(arch, tuning);
    programs(tuning.nvrtc_programs.unwrap_or_default())
        .into_iter()
        .map(|program| {
            let mut options = base.clone();
            options.extend(program.defines.iter().cloned());
            let key = cache_key(&[
                program.source().as_bytes(),
                options.join(" ").as_bytes(),
                versions.as_bytes(),
            ]);
            let path =
                dir.map(|dir| dir.join(format!("kernels-{}-{key:016x}.cubin", program.name)));
            Job {
                program,
                options,
                path,
            }
        })
        .collect()
}

/// Compiles every kernel program for `sm_{major}{minor}` with the options `tuning`
/// adds (or reads each program's CUBIN cached for the same sources, options and
/// versions), concurrently, and loads the modules into `ctx`, in [`programs`]' order.
/// `launch::Kernels` looks the functions up across them.
pub fn compile(
    ctx: &Arc<CudaContext>,
    arch: (i32, i32),
    tuning: &CudaTuning,
) -> CudaResult<(Vec<Arc<CudaModule>>, CompileReport)> {
    let start = Instant::now();
    let nvrtc_version = driver::nvrtc_version();
    let versions = format!("nvrtc {nvrtc_version} driver {}", driver::driver_version());
    let jobs = jobs(arch, tuning, &versions, cache_dir().as_ref());
    let built: Vec<CudaResult<Built>> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|job| scope.spawn(move || build(&job.program, &job.options, job.path.as_ref())))
            .collect();
        handles
            .into_iter()
            .zip(&jobs)
            .map(|(handle, job)| {
                handle.join().unwrap_or_else(|_| {
                    Err(CudaError::CompileLog(format!(
                        "the compile thread of program {} panicked",
                        job.program.name
                    )))
                })
            })
            .collect()
    });
    let mut modules = Vec::with_capacity(jobs.len());
    let mut times = Vec::with_capacity(jobs.len());
    for (built, job) in built.into_iter().zip(&jobs) {
        let mut built = built?;
        let module = match load(ctx, std::mem::take(&mut built.cubin)) {
            Ok(module) => module,
            // A cached CUBIN the driver refuses (a damaged file): compile it afresh.
            Err(_) if built.time.cached => {
                let again = Instant::now();
                let cubin = compile_program(&job.program, &job.options, job.path.as_ref())?;
                built.time.ms = again.elapsed().as_secs_f64() * 1e3;
                built.time.cached = false;
                load(ctx, cubin)?
            }
            Err(e) => return Err(e),
        };
        modules.push(module);
        times.push(built.time);
    }
    Ok((
        modules,
        CompileReport {
            programs: times,
            wall_ms: start.elapsed().as_secs_f64() * 1e3,
            nvrtc_version,
        },
    ))
}

fn load(ctx: &Arc<CudaContext>, cubin: Vec<u8>) -> CudaResult<Arc<CudaModule>> {
    Ok(ctx.load_module(Ptx::from_binary(cubin))?)
}

/// Writes the cache file through a temporary name and a rename, so that a reader
/// never sees half a file. The cache is an optimisation: failures are ignored.
fn store(path: &std::path::Path, cubin: &[u8]) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(
        ".{}.{:?}.{}",
        std::process::id(),
        std::thread::current().id(),
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

    #[test]
    fn every_file_is_compiled_once_per_part_it_names() {
        let split = programs(NvrtcPrograms::Split);
        let names: Vec<&str> = split.iter().map(|p| p.name.as_str()).collect();
        // The programs today (a new part of a file adds its own program).
        for expected in [
            "ntt-pointwise",
            "ntt-passes",
            "ntt-r3",
            "ntt-r4",
            "ntt-tile",
            "msm-sort",
            "msm-g1-sums",
            "msm-g1-fold",
            "msm-g1-tiles",
            "msm-g1-records",
            "msm-g1-segments",
            "msm-g1-pairs",
            "msm-g2-sums",
            "msm-g2-fold",
            "msm-g2-tiles",
            "msm-g2-records",
            "msm-g2-segments",
            "msm-g2-pairs",
            "planes-g1",
            "planes-g2",
            "ones-g1",
            "ones-g2",
        ] {
            assert!(names.contains(&expected), "{expected} not in {names:?}");
        }
        for (name, source) in FILES {
            let of_file: Vec<&Program> = split.iter().filter(|p| p.files == [source]).collect();
            let parts = parts(source);
            if parts.is_empty() {
                assert_eq!(of_file.len(), 1, "{name}");
                assert!(of_file[0].defines.is_empty(), "{name}");
            } else {
                let defines: Vec<Vec<String>> = of_file.iter().map(|p| p.defines.clone()).collect();
                let expected: Vec<Vec<String>> = parts
                    .iter()
                    .map(|part| vec!["-DCRU_SELECT=1".into(), format!("-DCRU_ONLY_{part}=1")])
                    .collect();
                assert_eq!(defines, expected, "{name}");
            }
            // Every program starts with the headers, which define CRU_WITH.
            for p in of_file {
                assert!(p.source().starts_with(HEADERS[0]), "{}", p.name);
                assert!(p.source().ends_with(source), "{}", p.name);
            }
        }
        let one = programs(NvrtcPrograms::One);
        assert_eq!(one.len(), 1);
        assert!(one[0].defines.is_empty());
        assert_eq!(
            one[0].source(),
            HEADERS.concat() + &FILES.map(|(_, s)| s).concat()
        );
    }

    #[test]
    fn parts_are_read_from_the_guards() {
        let source = "a\n#if CRU_WITH(G1_SUMS)\nx\n#endif\n  #if CRU_WITH( G2 )\n#if CRU_WITH(G1_SUMS)\n#if X\n";
        assert_eq!(parts(source), ["G1_SUMS", "G2"]);
        assert!(parts("#if CRU_SELECT\n").is_empty());
        // curve.cuh, which every program starts with, defines the guard.
        assert!(HEADERS[2].contains("#define CRU_WITH(part) (!CRU_SELECT || CRU_ONLY_##part)"));
    }

    /// Compiles every program exactly as `compile` does (the same sources and options,
    /// for sm_90 unless `CRUCIBLE_NVRTC_TIME_ARCH=89` or another), one at a time, and
    /// prints each one's CPU and wall seconds: the NVRTC cold compile measured with
    /// libnvrtc alone, no driver or device. `CRUCIBLE_NVRTC_TIME_ONLY=ntt-tile,ones-g2`
    /// picks programs; the tuning variables (`CRUCIBLE_CUDA_NVRTC_OPTIONS`,
    /// `CRUCIBLE_CUDA_NVRTC_PROGRAMS`, ...) apply as in the backend. Every kernel the
    /// launch table names must be in some program's CUBIN.
    #[test]
    #[ignore = "minutes of NVRTC; run with --ignored --nocapture nvrtc_compile_times"]
    fn nvrtc_compile_times() {
        if !driver::nvrtc_present() {
            println!("SKIPPED nvrtc_compile_times: libnvrtc not found (add its folder to LD_LIBRARY_PATH)");
            return;
        }
        let arch = match std::env::var("CRUCIBLE_NVRTC_TIME_ARCH") {
            Ok(sm) => {
                let n: i32 = sm
                    .trim()
                    .parse()
                    .expect("CRUCIBLE_NVRTC_TIME_ARCH: e.g. 90");
                (n / 10, n % 10)
            }
            Err(_) => (9, 0),
        };
        let only: Option<Vec<String>> = std::env::var("CRUCIBLE_NVRTC_TIME_ONLY")
            .ok()
            .map(|list| list.split(',').map(|p| p.trim().to_string()).collect());
        let tuning = CudaTuning::from_env().expect("tuning variables");
        let jobs = jobs(arch, &tuning, "", None);
        println!(
            "NVRTC {}, sm_{}{}, {} programs, options {:?}",
            driver::nvrtc_version(),
            arch.0,
            arch.1,
            jobs.len(),
            base_options(arch, &tuning)
        );
        let (mut cpu_total, mut slowest) = (0.0f64, (0.0f64, String::new()));
        let mut cubins = Vec::new();
        for job in &jobs {
            let name = &job.program.name;
            if only.as_ref().is_some_and(|only| !only.contains(name)) {
                continue;
            }
            let (cpu, wall) = (driver::process_cpu_seconds(), Instant::now());
            let cubin = compile_program(&job.program, &job.options, None)
                .unwrap_or_else(|e| panic!("program {name}: {e}"));
            let cpu = driver::process_cpu_seconds() - cpu;
            println!(
                "  {name:<20} {cpu:6.2} s CPU {:6.2} s wall {:5} KiB",
                wall.elapsed().as_secs_f64(),
                cubin.len() / 1024
            );
            cpu_total += cpu;
            if cpu > slowest.0 {
                slowest = (cpu, name.clone());
            }
            cubins.push(cubin);
        }
        println!(
            "total {cpu_total:.2} s CPU; slowest {} {:.2} s",
            slowest.1, slowest.0
        );
        if only.is_none() {
            // A kernel under no part (a guard's typo) would be in no program.
            let defines = |cubin: &[u8], name: &str| {
                let symbol = [name.as_bytes(), b"\0"].concat();
                cubin.windows(symbol.len()).any(|w| w == symbol.as_slice())
            };
            for kernel in crate::launch::Kernel::ALL {
                assert!(
                    cubins.iter().any(|c| defines(c, kernel.name())),
                    "no program defines kernel {}",
                    kernel.name()
                );
            }
        }
    }

    #[test]
    fn the_report_names_every_program_and_the_wall_time() {
        let report = CompileReport {
            programs: vec![
                ProgramTime {
                    name: "ntt".into(),
                    ms: 2100.0,
                    cached: false,
                },
                ProgramTime {
                    name: "msm-g2".into(),
                    ms: 3.0,
                    cached: true,
                },
            ],
            wall_ms: 2150.0,
            nvrtc_version: 13000,
        };
        assert_eq!(
            report.to_string(),
            "CUDA kernels: 2 NVRTC programs (1 compiled, 1 cached) in 2.15 s wall (NVRTC 13.0): \
             ntt 2.10 s compiled; msm-g2 0.00 s cached;"
        );
    }
}
