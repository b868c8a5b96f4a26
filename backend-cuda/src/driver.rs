//! Every raw (unsafe) driver call of the CUDA backend, and the operating-system call
//! beside them (the process's CPU time, for compile measurements), in one place: the
//! only module where `unsafe` is allowed (the crate denies it everywhere else).

use std::sync::Arc;

use std::ffi::{c_char, CString};

use cudarc::driver::{
    result, CudaContext, CudaSlice, CudaStream, DeviceRepr, DriverError, LaunchArgs, LaunchConfig,
    PinnedHostSlice,
};
use cudarc::nvrtc::sys as nvrtc;

use crate::error::{CudaError, CudaResult};
use crate::field::{DeviceElement, DeviceScalar, FrArg, FrSeeds};

// SAFETY: plain old data (u32 words, no padding, no pointers), and its layout is that
// of ntt.cu's `struct FrArg { u32 words[8]; }`, which the kernels take by value.
unsafe impl DeviceRepr for FrArg {}

// SAFETY: plain old data (u32 words, no padding, no pointers), and its layout is that
// of ntt.cu's `struct FrSeeds { u32 words[8 * 32]; }`, which the kernels take by value.
unsafe impl DeviceRepr for FrSeeds {}

/// Why CUDA cannot be used here, if it cannot: libcuda must load. libnvrtc is needed
/// only for a kernel program the binary holds no CUBIN of for the device (kernels.rs
/// says so, naming the program, when it is missing then).
pub fn missing_library() -> Option<&'static str> {
    // SAFETY: only tries to dlopen the driver library by its usual names; no symbol
    // of it is called.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Some("libcuda not found (no NVIDIA driver on this machine)");
    }
    None
}

/// What to do about a missing libnvrtc.
pub const NVRTC_MISSING: &str =
    "libnvrtc not found (install the CUDA runtime compiler, or add its folder to LD_LIBRARY_PATH)";

/// Whether libnvrtc loads: the compiler alone, which needs no driver or device.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the NVRTC library by its usual names.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

#[cfg(test)]
/// CPU seconds this process has used (0 if the system cannot say): what a compile
/// costs on a machine whose cores other processes share, where wall time misleads.
pub fn process_cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes one timespec through a valid pointer.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } != 0 {
        return 0.0;
    }
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Returns the stream-ordered pool's unused memory to the device, so that other
/// processes see it free once a lease is released.
pub fn trim_memory_pool(ctx: &Arc<CudaContext>) -> CudaResult<()> {
    if !ctx.has_async_alloc() {
        return Ok(());
    }
    ctx.bind_to_thread()?;
    // SAFETY: `cu_device()` is a valid device of a live context (we hold the Arc).
    let pool = unsafe { result::device::get_default_mem_pool(ctx.cu_device()) }?;
    // SAFETY: `pool` was just returned by the driver for this device.
    unsafe { result::mem_pool::trim_to(pool, 0) }?;
    Ok(())
}

/// Launches a kernel whose arguments are already pushed (by a `launch` function).
pub fn launch(args: &mut LaunchArgs<'_>, config: LaunchConfig) -> CudaResult<()> {
    // SAFETY: the callers are launch.rs's functions, which push exactly the arguments,
    // in the order and with the types, that the kernel's signature in
    // backend-cuda/kernels/*.cu declares (a test reads the sources and compares), and
    // their callers pass buffers long enough for the indices the launch shape covers
    // (checked before launching).
    unsafe { args.launch(config) }?;
    Ok(())
}

/// `count` words of device memory, stream-ordered on `stream`, not cleared: for
/// scratch that kernels write before they read it.
pub fn alloc_uninit(stream: &Arc<CudaStream>, count: usize) -> Result<CudaSlice<u32>, DriverError> {
    // SAFETY: any bit pattern is a valid u32, and the callers (memory::alloc_words_uninit)
    // read no word before a kernel writes it (msm.cu's scratch list says which kernel
    // writes what).
    unsafe { stream.alloc::<u32>(count) }
}

/// The driver's CUDA version as `major * 1000 + minor * 10` (0 if it cannot say).
pub fn driver_version() -> i32 {
    let mut version = 0i32;
    // SAFETY: writes one int through a valid pointer; the library is loaded (callers
    // probe `missing_library` first).
    let status = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    if status == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        version
    } else {
        0
    }
}

/// NVRTC's version as `major * 1000 + minor * 10` (0 if it cannot say, or libnvrtc
/// is not found).
pub fn nvrtc_version() -> i32 {
    if !nvrtc_present() {
        return 0;
    }
    let (mut major, mut minor) = (0i32, 0i32);
    // SAFETY: writes two ints through valid pointers; the library loads (checked
    // above).
    let status = unsafe { nvrtc::nvrtcVersion(&mut major, &mut minor) };
    if status == nvrtc::nvrtcResult::NVRTC_SUCCESS {
        major * 1000 + minor * 10
    } else {
        0
    }
}

/// An NVRTC program, destroyed when dropped.
struct Program(nvrtc::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        if self.0.is_null() {
            return;
        }
        // SAFETY: `self.0` was created by nvrtcCreateProgram and is destroyed once,
        // here. A failure to destroy it leaks host memory only.
        unsafe {
            nvrtc::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

fn check(status: nvrtc::nvrtcResult, what: &str) -> CudaResult<()> {
    if status == nvrtc::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(CudaError::CompileLog(format!("{what}: {status:?}")))
    }
}

/// Compiles CUDA C `source` with NVRTC straight to machine code (CUBIN) for the
/// architecture that `options` name with `--gpu-architecture=sm_XY`, so that the
/// driver loads it without a JIT step. On failure the error holds NVRTC's log.
pub fn compile_cubin(source: &str, name: &str, options: &[String]) -> CudaResult<Vec<u8>> {
    let source = CString::new(source).map_err(|e| CudaError::CompileLog(e.to_string()))?;
    let name = CString::new(name).map_err(|e| CudaError::CompileLog(e.to_string()))?;
    let options: Vec<CString> = options
        .iter()
        .map(|o| CString::new(o.as_str()))
        .collect::<Result<_, _>>()
        .map_err(|e| CudaError::CompileLog(e.to_string()))?;
    let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    let mut program = Program(std::ptr::null_mut());
    // SAFETY: `source` and `name` are NUL-terminated and outlive the program (it is
    // dropped first, at the end of this function); no headers are passed (0, null).
    let status = unsafe {
        nvrtc::nvrtcCreateProgram(
            &mut program.0,
            source.as_ptr(),
            name.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    check(status, "nvrtcCreateProgram")?;
    // SAFETY: `program.0` is a live program; `option_ptrs` holds `options.len()`
    // pointers to NUL-terminated strings that live until the end of this function.
    let status = unsafe {
        nvrtc::nvrtcCompileProgram(program.0, option_ptrs.len() as i32, option_ptrs.as_ptr())
    };
    if status != nvrtc::nvrtcResult::NVRTC_SUCCESS {
        return Err(CudaError::CompileLog(format!(
            "{status:?}: {}",
            program_log(&program)
        )));
    }
    let mut size = 0usize;
    // SAFETY: `program.0` was compiled successfully; writes one usize.
    check(
        unsafe { nvrtc::nvrtcGetCUBINSize(program.0, &mut size) },
        "nvrtcGetCUBINSize",
    )?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` has exactly the `size` bytes NVRTC asked for.
    check(
        unsafe { nvrtc::nvrtcGetCUBIN(program.0, cubin.as_mut_ptr().cast()) },
        "nvrtcGetCUBIN",
    )?;
    Ok(cubin)
}

fn program_log(program: &Program) -> String {
    let mut size = 0usize;
    // SAFETY: `program.0` is a live program; writes one usize.
    if unsafe { nvrtc::nvrtcGetProgramLogSize(program.0, &mut size) }
        != nvrtc::nvrtcResult::NVRTC_SUCCESS
    {
        return String::new();
    }
    let mut log = vec![0u8; size.max(1)];
    // SAFETY: `log` has room for the `size` bytes (NUL included) NVRTC reported.
    if unsafe { nvrtc::nvrtcGetProgramLog(program.0, log.as_mut_ptr().cast()) }
        != nvrtc::nvrtcResult::NVRTC_SUCCESS
    {
        return String::new();
    }
    String::from_utf8_lossy(&log)
        .trim_end_matches('\0')
        .trim()
        .to_string()
}

/// `len` words of page-locked host memory, write-combined: fast for the host to write
/// and the device to read, slow for the host to read (upload staging).
pub fn alloc_pinned_write_combined(
    ctx: &Arc<CudaContext>,
    len: usize,
) -> CudaResult<PinnedHostSlice<u32>> {
    // SAFETY: the memory starts uninitialised, which any u32 bit pattern tolerates;
    // the callers only write it before copying it to the device.
    Ok(unsafe { ctx.alloc_pinned::<u32>(len) }?)
}

/// `len` words of page-locked host memory, cached (read-back staging, which the host
/// reads).
pub fn alloc_pinned_cached(ctx: &Arc<CudaContext>, len: usize) -> CudaResult<PinnedHostSlice<u32>> {
    // SAFETY: the memory starts uninitialised, which any u32 bit pattern tolerates;
    // the callers write a word before they copy it to the device, or read it only
    // after a device copy into it has completed.
    Ok(unsafe { ctx.alloc_pinned_with_flags::<u32>(len, 0) }?)
}

/// Page-locks the `bytes` bytes of host memory at `start` for the context's copies
/// (`cuMemHostRegister`): the device then copies them at the link's speed. Safe to
/// call on any range: the driver reads and writes nothing there, and a copy reaches
/// the range only through a slice that the copying call borrows (`pinned.rs`), so
/// only while it is live. It stays registered until [`host_unregister`].
pub fn host_register(
    ctx: &Arc<CudaContext>,
    start: usize,
    bytes: usize,
) -> Result<(), DriverError> {
    register(ctx, start, bytes, 0)
}

/// [`host_register`] for the copies of every context of the process
/// (`CU_MEMHOSTREGISTER_PORTABLE`): one pin of a key's host copy serves every device.
pub fn host_register_portable(
    ctx: &Arc<CudaContext>,
    start: usize,
    bytes: usize,
) -> Result<(), DriverError> {
    register(
        ctx,
        start,
        bytes,
        cudarc::driver::sys::CU_MEMHOSTREGISTER_PORTABLE,
    )
}

fn register(
    ctx: &Arc<CudaContext>,
    start: usize,
    bytes: usize,
    flags: u32,
) -> Result<(), DriverError> {
    ctx.bind_to_thread()?;
    // SAFETY: registration only locks the pages (flags 0 or PORTABLE: nothing mapped
    // into the device's address space); no memory is accessed.
    unsafe {
        cudarc::driver::sys::cuMemHostRegister_v2(start as *mut std::ffi::c_void, bytes, flags)
    }
    .result()
}

/// Undoes [`host_register`] of the range at `start` (`cuMemHostUnregister`); its
/// caller has no copy of the range in flight.
pub fn host_unregister(ctx: &Arc<CudaContext>, start: usize) -> Result<(), DriverError> {
    ctx.bind_to_thread()?;
    // SAFETY: unlocks pages the driver registered at `start`; no memory is accessed,
    // and an address never registered is an error code, not undefined behaviour.
    unsafe { cudarc::driver::sys::cuMemHostUnregister(start as *mut std::ffi::c_void) }.result()
}

/// The answer of `check` for the type `T`, asked once per type: a static in a generic
/// function is one for every type, so each type's answer is kept under its own id.
fn once_per_type<T: 'static>(check: fn() -> bool) -> bool {
    use std::any::TypeId;
    use std::sync::{PoisonError, RwLock};
    static ANSWERS: RwLock<Vec<(TypeId, bool)>> = RwLock::new(Vec::new());
    let id = TypeId::of::<T>();
    let known = |answers: &[(TypeId, bool)]| answers.iter().find(|(t, _)| *t == id).map(|a| a.1);
    if let Some(same) = known(&ANSWERS.read().unwrap_or_else(PoisonError::into_inner)) {
        return same;
    }
    let same = check();
    let mut answers = ANSWERS.write().unwrap_or_else(PoisonError::into_inner);
    if known(&answers).is_none() {
        answers.push((id, same));
    }
    same
}

/// Whether values of `T` lie in memory exactly as the device's `T::WORDS` words of
/// them (field.rs): `T::WORDS * 4` bytes, 4-byte aligned, little-endian, and `probe`'s
/// values as `field::to_words` writes them. Checked on values, not assumed: arkworks'
/// types are not `repr(C)`.
fn is_device_words<T: DeviceElement>(probe: &[T]) -> bool {
    let size = T::WORDS * 4;
    if std::mem::size_of::<T>() != size
        || std::mem::align_of::<T>() < 4
        || cfg!(target_endian = "big")
    {
        return false;
    }
    let mut want = vec![0u32; probe.len() * T::WORDS];
    crate::field::to_words(probe, &mut want);
    // SAFETY: `T` is exactly `T::WORDS` u32 words (checked), of limbs: every byte
    // initialised (`T` has no padding where its size is its limbs' alone, which the
    // callers check), and its alignment (checked) suits u32 reads.
    let raw =
        unsafe { std::slice::from_raw_parts(probe.as_ptr().cast::<u32>(), probe.len() * T::WORDS) };
    raw == want
}

/// Whether arkworks' scalars of `F` lie in memory exactly as the device's 8
/// little-endian u32 words of their Montgomery form: 32 bytes, the u64 limbs in order.
fn scalars_are_device_words<F: DeviceScalar>() -> bool {
    once_per_type::<F>(|| {
        if std::mem::size_of::<F>() != F::WORDS * 4 {
            return false;
        }
        let probe = [
            F::from(0x0123_4567_89ab_cdefu64).square(),
            -F::one(),
            F::from(3u64).inverse().unwrap_or_default(),
        ];
        is_device_words(&probe)
    })
}

/// Whether arkworks' affine points of `A` lie in memory exactly as the device's words
/// of them (field.rs): `A` is its coordinates' Montgomery limbs and nothing else (no
/// flag, no padding, as both curves' points are in arkworks 0.6, whose identity is
/// (0, 0) as the device's is), which `field::to_words` writes.
fn points_are_device_words<A: ark_ec::AffineRepr + DeviceElement>() -> bool {
    once_per_type::<A>(|| {
        use ark_ec::CurveGroup;
        // The two coordinates alone fill the point's size: no room for padding or a flag.
        if 2 * std::mem::size_of::<A::BaseField>() != A::WORDS * 4 {
            return false;
        }
        let g = A::generator().into_group();
        let mut probe: Vec<A> = (1..=4u64)
            .map(|k| {
                (g * A::ScalarField::from(k.wrapping_mul(0x9e37_79b9_7f4a_7c15))).into_affine()
            })
            .collect();
        probe.push(A::zero());
        is_device_words(&probe)
    })
}

/// `values` as their words in memory, borrowed for as long as they are, where `same`
/// (values of `T` lie in memory as the device's words of them).
fn words_of<T: DeviceElement>(values: &[T], same: bool) -> Option<&[u32]> {
    // SAFETY: a value of `T` is exactly `T::WORDS` initialised u32-aligned words
    // without padding (`same`: checked), so the slice's bytes are initialised words,
    // borrowed for as long as `values`.
    same.then(|| unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u32>(), values.len() * T::WORDS)
    })
}

/// `points` (G1 or G2 bases of either curve) as the device's words, where they lie in
/// memory as them: a copy of these words stages the points as they are.
pub fn point_device_words<A: ark_ec::AffineRepr + DeviceElement>(points: &[A]) -> Option<&[u32]> {
    words_of(points, points_are_device_words::<A>())
}

/// `scalars` as the device's words, where they lie in memory as them: a copy of these
/// words to the device stages the scalars as they are.
pub fn fr_device_words<F: DeviceScalar>(scalars: &[F]) -> Option<&[u32]> {
    words_of(scalars, scalars_are_device_words::<F>())
}

/// `scalars` as the device's words to be overwritten, where they lie in memory as
/// them: a read-back of reduced Montgomery words into these leaves the scalars read.
pub fn fr_device_words_mut<F: DeviceScalar>(scalars: &mut [F]) -> Option<&mut [u32]> {
    // SAFETY: as `words_of`, borrowed exclusively; any u32 pattern is a valid u64
    // limb, and the device writes only reduced values (< r), the scalars' own invariant.
    scalars_are_device_words::<F>().then(|| unsafe {
        std::slice::from_raw_parts_mut(scalars.as_mut_ptr().cast::<u32>(), scalars.len() * F::WORDS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::{AffineRepr, CurveGroup};
    use ark_ff::UniformRand;
    use ark_std::rand::{rngs::StdRng, SeedableRng};
    use crucible_core::{ark_bls12_381, ark_bn254, Bls12_381, Bn254, PairingCurve};

    fn scalars_in_memory<F: DeviceScalar + UniformRand>(rng: &mut StdRng, seed: u64) {
        let mut v: Vec<F> = (0..33).map(|_| F::rand(rng)).collect();
        let mut want = vec![0u32; 33 * 8];
        crate::field::to_words(&v, &mut want);
        assert_eq!(fr_device_words(&v), Some(&want[..]), "seed {seed}");
        let back: Vec<F> = v.iter().rev().copied().collect();
        let mut rev = vec![0u32; 33 * 8];
        crate::field::to_words(&back, &mut rev);
        fr_device_words_mut(&mut v).unwrap().copy_from_slice(&rev);
        assert_eq!(v, back, "seed {seed}");
        assert_eq!(fr_device_words::<F>(&[]), Some(&[][..]));
    }

    #[test]
    fn arkworks_scalars_are_the_device_words_in_memory() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        scalars_in_memory::<ark_bls12_381::Fr>(&mut rng, seed);
        scalars_in_memory::<ark_bn254::Fr>(&mut rng, seed);
    }

    fn points_in_memory<A: AffineRepr + DeviceElement>(rng: &mut StdRng, seed: u64) {
        let mut points: Vec<A> = (0..17).map(|_| A::Group::rand(rng).into_affine()).collect();
        points.insert(3, A::zero());
        let mut want = vec![0u32; points.len() * A::WORDS];
        crate::field::to_words(&points, &mut want);
        assert_eq!(point_device_words(&points), Some(&want[..]), "seed {seed}");
    }

    /// Both curves' G1 and G2 points lie as the device's words, each type checked on
    /// its own (a check of one never stands for another's).
    #[test]
    fn arkworks_points_of_both_curves_are_the_device_words_in_memory() {
        fn curve<E: PairingCurve>(rng: &mut StdRng, seed: u64)
        where
            E::G1Affine: DeviceElement,
            E::G2Affine: DeviceElement,
        {
            points_in_memory::<E::G1Affine>(rng, seed);
            points_in_memory::<E::G2Affine>(rng, seed);
        }
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        curve::<Bls12_381>(&mut rng, seed);
        curve::<Bn254>(&mut rng, seed);
    }

    /// Each type gets its own answer: a type that is not its words in memory (u64
    /// pairs, say) is refused while another is accepted.
    #[test]
    fn each_type_is_asked_once_and_answered_alone() {
        assert!(once_per_type::<u8>(|| true));
        assert!(!once_per_type::<u16>(|| false));
        // Asked again, the kept answers, not the new checks.
        assert!(once_per_type::<u8>(|| false));
        assert!(!once_per_type::<u16>(|| true));
    }
}
