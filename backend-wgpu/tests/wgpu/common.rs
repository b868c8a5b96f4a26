//! Shared by the wgpu tests: opening the adapter for either curve (or skipping, or
//! failing when `CRUCIBLE_REQUIRE` names wgpu) and seeded randomness that prints its
//! seed on failure.
#![allow(dead_code)]

use std::sync::{Mutex, MutexGuard, OnceLock};

use ark_std::rand::rngs::StdRng;
use ark_std::rand::SeedableRng;
use crucible_backend_wgpu::field::DeviceCurve;
use crucible_backend_wgpu::{Formulas, PerCurve, WgpuBackend, WgpuOptions, WgpuTuning};
use crucible_core::registry::ProbeOptions;
use crucible_core::Bn254;

/// Whether `CRUCIBLE_REQUIRE` (comma-separated backend names) includes wgpu.
pub fn wgpu_required() -> bool {
    crucible_core::registry::is_required("wgpu")
}

/// The first adapter with its own limits, opened once per test binary so that its
/// tests share compiled pipelines (compiling is the slow part on llvmpipe).
pub fn backend(test: &str) -> Option<&'static WgpuBackend> {
    static SHARED: Shared = OnceLock::new();
    shared(&SHARED, test, WgpuOptions::default())
}

/// Like [`backend`], proving over BN254.
pub fn bn254_backend(test: &str) -> Option<&'static WgpuBackend<Bn254>> {
    static SHARED: Shared<Bn254> = OnceLock::new();
    shared(&SHARED, test, WgpuOptions::default())
}

/// The forms these tests force: hardware adapters' defaults, G1 straight and G2
/// registers.
pub const STRAIGHT_FORMS: PerCurve<Formulas> = PerCurve {
    g1: Formulas::Straight,
    g2: Formulas::Registers,
};

/// The first adapter with [`STRAIGHT_FORMS`] forced, whatever its type (on llvmpipe
/// too), opened once per test binary.
pub fn straight_backend(test: &str) -> Option<&'static WgpuBackend> {
    static SHARED: Shared = OnceLock::new();
    let backend = shared(&SHARED, test, straight_options())?;
    assert_eq!(backend.formulas(), STRAIGHT_FORMS);
    Some(backend)
}

/// Like [`straight_backend`], proving over BN254.
pub fn bn254_straight_backend(test: &str) -> Option<&'static WgpuBackend<Bn254>> {
    static SHARED: Shared<Bn254> = OnceLock::new();
    let backend = shared(&SHARED, test, straight_options())?;
    assert_eq!(backend.formulas(), STRAIGHT_FORMS);
    Some(backend)
}

/// Runs the tests of this binary one at a time: they share backends, and several
/// assert that a backend's budget returns to zero.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

type Shared<E = crucible_core::Bls12_381> = OnceLock<Result<WgpuBackend<E>, String>>;

/// A new backend in [`STRAIGHT_FORMS`] over Fq limbs of `bits` bits, or why it did
/// not open (limbs wider than 16 bits need `SHADER_INT64`).
pub fn open_with_limbs<E: DeviceCurve>(bits: u32) -> Result<WgpuBackend<E>, String> {
    let mut options = straight_options();
    options.tuning.limb_bits = Some(bits);
    WgpuBackend::open(&ProbeOptions::default(), &options).map_err(|e| e.to_string())
}

/// Options forcing [`STRAIGHT_FORMS`], the rest the defaults.
fn straight_options() -> WgpuOptions {
    WgpuOptions {
        tuning: WgpuTuning {
            g1_formulas: Some(STRAIGHT_FORMS.g1),
            g2_formulas: Some(STRAIGHT_FORMS.g2),
            ..WgpuTuning::default()
        },
        ..WgpuOptions::default()
    }
}

/// Like [`backend`], with bindings of at most `max_binding_bytes` (one backend per
/// limit), so that buffers split into chunks and MSMs into batches.
pub fn small_binding_backend(test: &str, max_binding_bytes: u64) -> Option<&'static WgpuBackend> {
    static SHARED: Cells = Mutex::new(Vec::new());
    small_binding(&SHARED, test, max_binding_bytes)
}

/// Like [`small_binding_backend`], proving over BN254.
pub fn bn254_small_binding_backend(
    test: &str,
    max_binding_bytes: u64,
) -> Option<&'static WgpuBackend<Bn254>> {
    static SHARED: Cells<Bn254> = Mutex::new(Vec::new());
    small_binding(&SHARED, test, max_binding_bytes)
}

/// One backend per binding limit.
type Cells<E = crucible_core::Bls12_381> = Mutex<Vec<(u64, &'static Shared<E>)>>;

fn small_binding<E: DeviceCurve>(
    cells: &'static Cells<E>,
    test: &str,
    max_binding_bytes: u64,
) -> Option<&'static WgpuBackend<E>> {
    let cell: &'static Shared<E> = {
        let mut cells = cells.lock().unwrap_or_else(|p| p.into_inner());
        match cells.iter().find(|(limit, _)| *limit == max_binding_bytes) {
            Some((_, cell)) => cell,
            None => {
                let cell: &'static Shared<E> = Box::leak(Box::new(OnceLock::new()));
                cells.push((max_binding_bytes, cell));
                cell
            }
        }
    };
    let options = WgpuOptions {
        max_binding_bytes: Some(max_binding_bytes),
        ..WgpuOptions::default()
    };
    let backend = shared(cell, test, options)?;
    assert_eq!(backend.limits().binding_bytes, max_binding_bytes);
    Some(backend)
}

/// The backend in `cell`, opened with `options` on first use; `None` (after saying why)
/// when there is no adapter and wgpu is not required. When it is required, a missing
/// adapter fails the test.
fn shared<E: DeviceCurve>(
    cell: &'static Shared<E>,
    test: &str,
    options: WgpuOptions,
) -> Option<&'static WgpuBackend<E>> {
    let opened = cell.get_or_init(|| {
        WgpuBackend::open(&ProbeOptions::default(), &options).map_err(|e| e.to_string())
    });
    match opened {
        Ok(b) => Some(b),
        Err(e) => {
            assert!(
                !wgpu_required(),
                "{test}: wgpu is required (CRUCIBLE_REQUIRE) but unavailable: {e}"
            );
            println!("{test}: skipped, wgpu unavailable: {e}");
            None
        }
    }
}

/// Prints the seed if the test panics while it is alive.
pub struct Seed(pub u64);

impl Drop for Seed {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "random inputs came from seed {} (set CRUCIBLE_SEED={} to repeat)",
                self.0, self.0
            );
        }
    }
}

/// A fresh random generator (or `CRUCIBLE_SEED`'s), with the guard that reports its seed.
pub fn rng() -> (StdRng, Seed) {
    let seed = crucible_conformance::run_seed();
    (StdRng::seed_from_u64(seed), Seed(seed))
}
