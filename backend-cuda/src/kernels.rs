//! The CUDA C kernels as machine code (CUBIN) for the device's own architecture and a
//! curve, had once per backend and kept for its life (`launch::Kernels`): each
//! program's CUBIN from the binary when the build compiled it for this architecture
//! with these options (`embedded.rs`), else from the disk cache, else compiled with
//! NVRTC now. The curve picks field.cuh's block of constants by one define
//! (`programs::KernelCurve`); the options carry it, so the cache keys and the
//! embedded CUBINs of the curves never mix.
//!
//! They compile as several NVRTC programs at once, one thread each (NVRTC is
//! thread-safe across programs), in the layout of `programs.rs` (a program per kernel
//! file, or per part of one: msm.cu's bucket sums and reduction per group, planes.cu's
//! groups), so that a cold compile takes about as long as its slowest program instead
//! of the sum of all (one program of every file took 29–32 s on a fresh H200 machine);
//! `launch::Kernels` looks every function up across the modules. Each compiled
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

use crucible_core::curve::Curve;
use crucible_core::hash::Fnv1a;
use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;

use crucible_core::cache_dir::{cache_folder, CUDA};

use crate::driver;
use crate::embedded;
use crate::error::{CudaError, CudaResult};
use crate::programs::{programs, KernelCurve, Program};

impl From<Curve> for KernelCurve {
    fn from(curve: Curve) -> KernelCurve {
        match curve {
            Curve::Bls12_381 => KernelCurve::Bls12_381,
            Curve::Bn254 => KernelCurve::Bn254,
        }
    }
}

/// Where compiled kernels are cached: the `cuda` folder of crucible's cache directory
/// (`crucible_core::cache_dir`).
fn cache_dir() -> PathBuf {
    cache_folder(CUDA)
}

/// The cache key of a compile: FNV-1a over every part, part boundaries counted.
fn cache_key(parts: &[&[u8]]) -> u64 {
    Fnv1a::default().write_parts(parts).finish()
}

/// Where one program's CUBIN came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Compiled into the binary at build time (`embedded.rs`).
    Embedded,
    /// Read from the disk cache.
    Cached,
    /// Compiled by NVRTC now.
    Compiled,
}

impl Origin {
    fn word(self) -> &'static str {
        match self {
            Origin::Embedded => "embedded",
            Origin::Cached => "cached",
            Origin::Compiled => "compiled",
        }
    }
}

/// How one program's CUBIN was had.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramTime {
    /// The program ([`Program::name`]).
    pub name: String,
    /// Milliseconds NVRTC took, or the cache read.
    pub ms: f64,
    /// Where the CUBIN came from.
    pub origin: Origin,
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
    /// What the build embedded (`embedded::built`).
    pub embedded: &'static str,
}

impl fmt::Display for CompileReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |origin| self.programs.iter().filter(|p| p.origin == origin).count();
        let nvrtc = if self.nvrtc_version == 0 {
            "no libnvrtc".to_string()
        } else {
            format!(
                "NVRTC {}.{}",
                self.nvrtc_version / 1000,
                (self.nvrtc_version % 1000) / 10
            )
        };
        write!(
            f,
            "CUDA kernels: {} NVRTC programs ({} embedded, {} cached, {} compiled) in {:.2} s wall ({nvrtc}):",
            self.programs.len(),
            count(Origin::Embedded),
            count(Origin::Cached),
            count(Origin::Compiled),
            self.wall_ms / 1e3,
        )?;
        for p in &self.programs {
            write!(f, " {} {:.2} s {};", p.name, p.ms / 1e3, p.origin.word())?;
        }
        write!(f, " built in: {}", self.embedded)
    }
}

/// One program's CUBIN and how it was had.
struct Built {
    cubin: Vec<u8>,
    time: ProgramTime,
}

/// `job`'s CUBIN: the one built into the binary, else the one cached on disk, else
/// compiled (and cached).
fn build(job: &Job) -> CudaResult<Built> {
    let start = Instant::now();
    let (cubin, origin) = if let Some(cubin) = job.embedded {
        (cubin.to_vec(), Origin::Embedded)
    } else if let Some(cubin) = job
        .path
        .as_ref()
        .and_then(|path| std::fs::read(path).ok())
        .filter(|bytes| bytes.starts_with(b"\x7fELF"))
    {
        (cubin, Origin::Cached)
    } else {
        (compile_program(job)?, Origin::Compiled)
    };
    Ok(Built {
        cubin,
        time: ProgramTime {
            name: job.program.name.clone(),
            ms: start.elapsed().as_secs_f64() * 1e3,
            origin,
        },
    })
}

/// Compiles `job`'s program with its options (and caches the CUBIN at its path); an
/// error naming the program when libnvrtc is not found.
fn compile_program(job: &Job) -> CudaResult<Vec<u8>> {
    let program = &job.program;
    require_nvrtc(driver::nvrtc_present(), &program.name)?;
    let cubin = driver::compile_cubin(
        &program.source(),
        &format!("crucible-{}.cu", program.name),
        &job.options,
    )
    .map_err(|e| CudaError::CompileLog(format!("program {}: {e}", program.name)))?;
    if let Some(path) = &job.path {
        store(path, &cubin);
    }
    Ok(cubin)
}

/// An error unless libnvrtc is `present`: `program` has neither an embedded CUBIN
/// for this device (with these options) nor a cached one, and only NVRTC can make it.
fn require_nvrtc(present: bool, program: &str) -> CudaResult<()> {
    if present {
        return Ok(());
    }
    Err(CudaError::CompileLog(format!(
        "program {program} must be compiled for this device (this binary holds no CUBIN of \
         it for the device's architecture and options, and none is cached), but {}",
        driver::NVRTC_MISSING
    )))
}

/// One program to build: its whole option list, the build's CUBIN of it for the
/// device (if any), and where its CUBIN is cached.
struct Job {
    program: Program,
    options: Vec<String>,
    embedded: Option<&'static [u8]>,
    path: Option<PathBuf>,
}

/// The programs of [`programs`] for `curve`, each with its options for `arch`, the
/// build's CUBIN of it for `arch` (if any) and, under `dir`, its cache file, keyed by
/// its source, its options and `versions` (NVRTC's and the driver's).
fn jobs(arch: (i32, i32), curve: KernelCurve, versions: &str, dir: Option<&PathBuf>) -> Vec<Job> {
    programs(curve)
        .into_iter()
        .map(|program| {
            let options = program.options(arch);
            let key = cache_key(&[
                program.source().as_bytes(),
                options.join(" ").as_bytes(),
                versions.as_bytes(),
            ]);
            let path =
                dir.map(|dir| dir.join(format!("kernels-{}-{key:016x}.cubin", program.name)));
            let embedded = embedded::find(embedded::table(), &program.name, arch, |a| {
                program.options(a)
            })
            .map(|e| e.cubin);
            Job {
                program,
                options,
                embedded,
                path,
            }
        })
        .collect()
}

/// Compiles every kernel program for `sm_{major}{minor}` and `curve` (or takes each
/// program's CUBIN from the binary, or from the disk cache for the same sources,
/// options and versions), concurrently, and loads the modules into `ctx`, in
/// [`programs`]' order. `launch::Kernels` looks the functions up across them.
pub fn compile(
    ctx: &Arc<CudaContext>,
    arch: (i32, i32),
    curve: Curve,
) -> CudaResult<(Vec<Arc<CudaModule>>, CompileReport)> {
    let start = Instant::now();
    let nvrtc_version = driver::nvrtc_version();
    let versions = format!("nvrtc {nvrtc_version} driver {}", driver::driver_version());
    let jobs = jobs(arch, curve.into(), &versions, Some(&cache_dir()));
    let built: Vec<CudaResult<Built>> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|job| scope.spawn(move || build(job)))
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
            // A CUBIN the driver refuses (a damaged cache file, or one built into the
            // binary by an NVRTC newer than this driver): compile it afresh.
            Err(_) if built.time.origin != Origin::Compiled => {
                let again = Instant::now();
                let cubin = compile_program(job)?;
                built.time.ms = again.elapsed().as_secs_f64() * 1e3;
                built.time.origin = Origin::Compiled;
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
            embedded: embedded::built(),
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

    /// Compiles every program exactly as `compile` does (the same sources and options)
    /// for sm_90 and each curve, one at a time, and prints each one's CPU and wall
    /// seconds: the NVRTC cold compile measured with libnvrtc alone, no driver or
    /// device. Every kernel the launch table names must be in some program's CUBIN of
    /// each curve.
    #[test]
    #[ignore = "minutes of NVRTC; run with --ignored --nocapture nvrtc_compile_times"]
    fn nvrtc_compile_times() {
        if !driver::nvrtc_present() {
            println!("SKIPPED nvrtc_compile_times: libnvrtc not found (add its folder to LD_LIBRARY_PATH)");
            return;
        }
        let arch = (9, 0);
        // A kernel under no part (a guard's typo) would be in no program.
        let defines = |cubin: &[u8], name: &str| {
            let symbol = [name.as_bytes(), b"\0"].concat();
            cubin.windows(symbol.len()).any(|w| w == symbol.as_slice())
        };
        for curve in Curve::ALL.map(KernelCurve::from) {
            let jobs = jobs(arch, curve, "", None);
            println!(
                "NVRTC {}, sm_{}{}, {curve:?}, {} programs",
                driver::nvrtc_version(),
                arch.0,
                arch.1,
                jobs.len(),
            );
            let (mut cpu_total, mut slowest) = (0.0f64, (0.0f64, String::new()));
            let mut cubins = Vec::new();
            for job in &jobs {
                let name = &job.program.name;
                let (cpu, wall) = (driver::process_cpu_seconds(), Instant::now());
                let cubin = compile_program(job).unwrap_or_else(|e| panic!("program {name}: {e}"));
                let cpu = driver::process_cpu_seconds() - cpu;
                println!(
                    "  {name:<26} {cpu:6.2} s CPU {:6.2} s wall {:5} KiB",
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
            for kernel in crate::launch::Kernel::ALL {
                assert!(
                    cubins.iter().any(|c| defines(c, kernel.name())),
                    "no {curve:?} program defines kernel {}",
                    kernel.name()
                );
            }
        }
    }

    /// A backend builds its curve's programs, picked by its `PairingCurve::CURVE`:
    /// BLS12-381's names and options as they were (no curve define), BN254's with its
    /// define and suffix, their own cache files, and no CUBIN of the binary (release
    /// builds embed BLS12-381's alone; a BN254 program's name never matches one).
    #[test]
    fn each_curve_builds_its_own_programs() {
        use crucible_core::{Bls12_381, Bn254, PairingCurve};
        let dir = PathBuf::from("cache");
        let arch = (9, 0);
        let bls = jobs(arch, Bls12_381::CURVE.into(), "v", Some(&dir));
        let bn = jobs(arch, Bn254::CURVE.into(), "v", Some(&dir));
        assert_eq!(KernelCurve::from(Bn254::CURVE), KernelCurve::Bn254);
        assert_eq!(KernelCurve::from(Bls12_381::CURVE), KernelCurve::Bls12_381);
        assert_eq!(bls.len(), bn.len());
        for (b, n) in bls.iter().zip(&bn) {
            assert_eq!(n.program.name, format!("{}-bn254", b.program.name));
            let mut want = crate::programs::base_options(arch);
            want.extend(b.program.defines.iter().cloned());
            assert_eq!(b.options, want, "{}", b.program.name);
            assert!(!b.options.iter().any(|o| o.starts_with("-DCRU_CURVE")));
            assert_eq!(n.options[..2], b.options[..2]);
            assert_eq!(n.options[2], "-DCRU_CURVE_BN254");
            assert_eq!(n.options[3..], b.options[2..]);
            assert_ne!(b.path, n.path, "{}", b.program.name);
            assert!(n.embedded.is_none(), "{}", n.program.name);
        }
        for bn_job in &bn {
            assert!(!embedded::table()
                .iter()
                .any(|e| e.program == bn_job.program.name));
        }
    }

    #[test]
    fn the_report_names_every_program_and_the_wall_time() {
        let report = CompileReport {
            programs: vec![
                ProgramTime {
                    name: "ntt".into(),
                    ms: 2100.0,
                    origin: Origin::Compiled,
                },
                ProgramTime {
                    name: "msm-g2".into(),
                    ms: 3.0,
                    origin: Origin::Cached,
                },
                ProgramTime {
                    name: "ones-g1".into(),
                    ms: 40.0,
                    origin: Origin::Embedded,
                },
            ],
            wall_ms: 2150.0,
            nvrtc_version: 13000,
            embedded: "NVRTC 13.0, 23 programs for sm_90",
        };
        assert_eq!(
            report.to_string(),
            "CUDA kernels: 3 NVRTC programs (1 embedded, 1 cached, 1 compiled) in 2.15 s wall \
             (NVRTC 13.0): ntt 2.10 s compiled; msm-g2 0.00 s cached; ones-g1 0.04 s embedded; \
             built in: NVRTC 13.0, 23 programs for sm_90"
        );
        let without = CompileReport {
            programs: vec![ProgramTime {
                name: "ntt".into(),
                ms: 10.0,
                origin: Origin::Embedded,
            }],
            wall_ms: 10.0,
            nvrtc_version: 0,
            embedded: "NVRTC 13.0, 23 programs for sm_90",
        };
        assert!(without
            .to_string()
            .contains("in 0.01 s wall (no libnvrtc):"));
    }

    /// Without libnvrtc a program the binary and the cache lack fails with an error
    /// that names it and says what to install; with it, nothing is in the way.
    #[test]
    fn a_missing_nvrtc_fails_only_what_must_be_compiled() {
        assert!(require_nvrtc(true, "ntt").is_ok());
        let e = require_nvrtc(false, "msm-g2-sums").unwrap_err().to_string();
        assert!(e.contains("program msm-g2-sums must be compiled"), "{e}");
        assert!(e.contains("libnvrtc not found"), "{e}");
    }
}
