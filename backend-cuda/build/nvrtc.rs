//! libnvrtc, loaded at build time: just what compiling a program to a CUBIN takes.
//! (The backend itself goes through cudarc's bindings, `src/driver.rs`; a build script
//! cannot use the crate it builds, and cudarc as a build dependency would compile all
//! of it a second time for eight functions.)

use std::ffi::{c_char, c_int, CString};
use std::path::PathBuf;

type Handle = *mut std::ffi::c_void;
type Status = c_int;
type Version = unsafe extern "C" fn(*mut c_int, *mut c_int) -> Status;
type Create = unsafe extern "C" fn(
    *mut Handle,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> Status;
type Compile = unsafe extern "C" fn(Handle, c_int, *const *const c_char) -> Status;
type Size = unsafe extern "C" fn(Handle, *mut usize) -> Status;
type Bytes = unsafe extern "C" fn(Handle, *mut c_char) -> Status;
type Destroy = unsafe extern "C" fn(*mut Handle) -> Status;

/// The loaded library and the functions the build uses.
pub struct Nvrtc {
    /// Where it was found.
    pub path: String,
    version: Version,
    create: Create,
    compile: Compile,
    log_size: Size,
    log: Bytes,
    cubin_size: Size,
    cubin: Bytes,
    destroy: Destroy,
    // Kept loaded for as long as the function pointers above are used.
    _library: libloading::Library,
    _builtins: Vec<libloading::Library>,
}

/// libnvrtc opens its builtins library by name at the first compile, which finds it
/// only on the loader's search path: one beside a libnvrtc named by its path (a pip
/// wheel's folder) is loaded first, so that the name finds it already loaded.
fn builtins_beside(path: &std::path::Path) -> Vec<libloading::Library> {
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libnvrtc-builtins.so"))
        })
        // SAFETY: the builtins library's initialisers have no preconditions; nothing
        // of it is called from here.
        .filter_map(|p| unsafe { libloading::Library::new(p) }.ok())
        .collect()
}

/// Where to look for libnvrtc: `CRUCIBLE_NVRTC_LIB` (a file), else the usual names
/// (the loader's search path, `LD_LIBRARY_PATH` included), else the toolkit's folder.
fn candidates() -> Vec<PathBuf> {
    if let Some(path) = std::env::var_os("CRUCIBLE_NVRTC_LIB") {
        return vec![PathBuf::from(path)];
    }
    let mut names: Vec<PathBuf> = ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"]
        .iter()
        .map(PathBuf::from)
        .collect();
    for root in ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain([PathBuf::from("/usr/local/cuda")])
    {
        names.push(root.join("lib64").join("libnvrtc.so"));
    }
    names
}

impl Nvrtc {
    /// Loads libnvrtc from the first candidate that has it, or says where it looked.
    pub fn load() -> Result<Nvrtc, String> {
        let mut tried = Vec::new();
        for path in candidates() {
            let builtins = builtins_beside(&path);
            // SAFETY: loading libnvrtc runs its initialisers, which have no
            // preconditions; the symbols are looked up with their C signatures from
            // nvrtc.h and copied out as plain function pointers, used only while
            // `_library` keeps the library loaded.
            let loaded = unsafe {
                libloading::Library::new(&path).and_then(|library| {
                    Ok(Nvrtc {
                        path: path.display().to_string(),
                        version: *library.get(b"nvrtcVersion\0")?,
                        create: *library.get(b"nvrtcCreateProgram\0")?,
                        compile: *library.get(b"nvrtcCompileProgram\0")?,
                        log_size: *library.get(b"nvrtcGetProgramLogSize\0")?,
                        log: *library.get(b"nvrtcGetProgramLog\0")?,
                        cubin_size: *library.get(b"nvrtcGetCUBINSize\0")?,
                        cubin: *library.get(b"nvrtcGetCUBIN\0")?,
                        destroy: *library.get(b"nvrtcDestroyProgram\0")?,
                        _library: library,
                        _builtins: builtins,
                    })
                })
            };
            match loaded {
                Ok(nvrtc) => return Ok(nvrtc),
                Err(e) => tried.push(format!("{}: {e}", path.display())),
            }
        }
        Err(format!("no libnvrtc ({})", tried.join("; ")))
    }

    /// NVRTC's version, `major.minor`.
    pub fn version(&self) -> String {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: writes two ints through valid pointers.
        unsafe { (self.version)(&mut major, &mut minor) };
        format!("{major}.{minor}")
    }

    /// Compiles `source` (called `name` in messages) with `options` to a CUBIN, or
    /// returns NVRTC's log.
    pub fn compile(&self, source: &str, name: &str, options: &[String]) -> Result<Vec<u8>, String> {
        let c = |s: &str| CString::new(s).map_err(|e| e.to_string());
        let (source, name) = (c(source)?, c(name)?);
        let options: Vec<CString> = options.iter().map(|o| c(o)).collect::<Result<_, _>>()?;
        let pointers: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let mut program: Handle = std::ptr::null_mut();
        // SAFETY: NUL-terminated strings that outlive the program (destroyed below,
        // before they drop); no headers (0, null, null).
        let status = unsafe {
            (self.create)(
                &mut program,
                source.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if status != 0 {
            return Err(format!("nvrtcCreateProgram failed ({status})"));
        }
        // SAFETY: `program` is live; `pointers` holds `options.len()` pointers to
        // NUL-terminated strings alive until the end of this function.
        let status = unsafe { (self.compile)(program, pointers.len() as c_int, pointers.as_ptr()) };
        let result = if status == 0 {
            self.read(program, self.cubin_size, self.cubin)
        } else {
            let log = self
                .read(program, self.log_size, self.log)
                .unwrap_or_default();
            Err(format!(
                "NVRTC failed ({status}):\n{}",
                String::from_utf8_lossy(&log)
            ))
        };
        // SAFETY: destroys the live program once; a failure leaks host memory only.
        unsafe { (self.destroy)(&mut program) };
        result
    }

    /// A live program's log or CUBIN: its size, then its bytes.
    fn read(&self, program: Handle, size: Size, bytes: Bytes) -> Result<Vec<u8>, String> {
        let mut n = 0usize;
        // SAFETY: `program` is live; writes one usize.
        if unsafe { size(program, &mut n) } != 0 {
            return Err("NVRTC could not say a size".into());
        }
        let mut out = vec![0u8; n];
        // SAFETY: `out` has the `n` bytes NVRTC said it would write.
        if unsafe { bytes(program, out.as_mut_ptr().cast()) } != 0 {
            return Err("NVRTC could not give its output".into());
        }
        Ok(out)
    }
}
