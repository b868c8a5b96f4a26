//! Compiles the kernels to CUBINs ahead of time, when NVRTC is at hand, so that a
//! device of those architectures never waits for the compiler (`src/embedded.rs`
//! embeds what this writes; `src/programs.rs` is the layout both follow).
//!
//! Release builds compile BLS12-381's programs (the default curve; BN254's compile
//! with NVRTC at first use, then come from the disk cache) for sm_80 and sm_90 when
//! libnvrtc loads
//! (`CRUCIBLE_NVRTC_LIB` names the file, else the loader's search path and the CUDA
//! toolkit's folder are tried), and embed nothing, with the reason recorded, when it
//! does not; other builds embed nothing. A program that fails to compile fails the
//! build with the reason. Programs compile `NUM_JOBS` at a time.

#![deny(unsafe_op_in_unsafe_fn)]

mod nvrtc;
#[allow(dead_code)]
#[path = "../src/programs.rs"]
mod programs;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use programs::{programs, KernelCurve, Program};

/// What a release build compiles for.
const ARCHS: [(i32, i32); 2] = [(8, 0), (9, 0)];

fn main() {
    for path in ["kernels", "src/programs.rs", "build"] {
        println!("cargo:rerun-if-changed={path}");
    }
    for var in [
        "CRUCIBLE_NVRTC_LIB",
        "LD_LIBRARY_PATH",
        "CUDA_PATH",
        "CUDA_HOME",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    if std::env::var("PROFILE").as_deref() != Ok("release") {
        return write_table(&out, &[], "none: not a release build");
    }
    let nvrtc = match nvrtc::Nvrtc::load() {
        Ok(nvrtc) => nvrtc,
        Err(e) => return write_table(&out, &[], &format!("none: built without NVRTC, {e}")),
    };
    let archs = ARCHS;
    let jobs: Vec<(Program, (i32, i32))> = archs
        .iter()
        .flat_map(|&arch| {
            programs(KernelCurve::Bls12_381)
                .into_iter()
                .map(move |p| (p, arch))
        })
        .collect();
    let threads = std::env::var("NUM_JOBS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, jobs.len());
    // `threads` workers take the jobs in order; each result lands in its job's slot.
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<Result<Built, String>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((program, arch)) = jobs.get(i) else {
                    break;
                };
                let result = build(&nvrtc, &out, program, *arch);
                done.lock().unwrap()[i] = Some(result);
            });
        }
    });
    let built: Vec<Built> = done
        .into_inner()
        .unwrap()
        .into_iter()
        .zip(&jobs)
        .map(|(result, (program, arch))| {
            result.expect("every job ran").unwrap_or_else(|e| {
                panic!("program {} for sm_{}{}: {e}", program.name, arch.0, arch.1)
            })
        })
        .collect();
    let names: Vec<String> = archs.iter().map(|a| format!("sm_{}{}", a.0, a.1)).collect();
    let bytes: usize = built.iter().map(|b| b.bytes).sum();
    let note = format!(
        "NVRTC {} ({}), {} programs for {}, {} KiB",
        nvrtc.version(),
        nvrtc.path,
        built.len(),
        names.join(" "),
        bytes / 1024
    );
    write_table(&out, &built, &note);
}

/// One program's CUBIN, written under OUT_DIR.
struct Built {
    program: String,
    arch: (i32, i32),
    options: Vec<String>,
    path: PathBuf,
    bytes: usize,
}

fn build(
    nvrtc: &nvrtc::Nvrtc,
    out: &Path,
    program: &Program,
    arch: (i32, i32),
) -> Result<Built, String> {
    let options = program.options(arch);
    let cubin = nvrtc.compile(
        &program.source(),
        &format!("crucible-{}.cu", program.name),
        &options,
    )?;
    let path = out.join(format!("{}-sm{}{}.cubin", program.name, arch.0, arch.1));
    std::fs::write(&path, &cubin).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(Built {
        program: program.name.clone(),
        arch,
        options,
        path,
        bytes: cubin.len(),
    })
}

/// Writes `embedded.rs`, which `src/embedded.rs` includes: the table and the note.
fn write_table(out: &Path, built: &[Built], note: &str) {
    let mut code = String::from(
        "/// This build's CUBINs (build/main.rs).\nstatic EMBEDDED: &[Embedded] = &[\n",
    );
    for b in built {
        let _ = writeln!(
            code,
            "    Embedded {{ program: {:?}, arch: ({}, {}), options: &{:?}, cubin: include_bytes!({:?}) }},",
            b.program, b.arch.0, b.arch.1, b.options, b.path
        );
    }
    code.push_str("];\n");
    let _ = writeln!(
        code,
        "/// What the build embedded, or why nothing.\nconst BUILT: &str = {note:?};"
    );
    let path = out.join("embedded.rs");
    std::fs::write(&path, code).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}
