//! The pipeline cache across two devices of one adapter (as across two processes):
//! the first compiles and saves, the second creates its pipelines from the saved data,
//! and both compute what arkworks does.

use std::time::Instant;

use crucible_backend_wgpu::{CacheUse, FieldOp, WgpuBackend, WgpuOptions};
use crucible_core::registry::ProbeOptions;
use crucible_core::Fr;

use crate::common;

fn open(dir: &std::path::Path) -> Option<WgpuBackend> {
    let options = WgpuOptions {
        pipeline_cache: Some(dir.to_path_buf()),
        ..WgpuOptions::default()
    };
    match WgpuBackend::open(&ProbeOptions::default(), &options) {
        Ok(b) => Some(b),
        Err(e) => {
            assert!(
                !common::wgpu_required(),
                "wgpu is required (CRUCIBLE_REQUIRE) but unavailable: {e}"
            );
            println!("skipped, wgpu unavailable: {e}");
            None
        }
    }
}

/// Runs the Fr test kernel (its pipeline created on first use), checked against
/// arkworks; returns what the cache did for it.
fn fr_ops(backend: &WgpuBackend) -> CacheUse {
    let (mut rng, _seed) = common::rng();
    let started = Instant::now();
    crate::field::check::<_, Fr>(
        backend,
        &mut rng,
        [
            (FieldOp::FrAdd, |a, b| a + b),
            (FieldOp::FrSub, |a, b| a - b),
            (FieldOp::FrMul, |a, b| a * b),
        ],
    );
    let compiles = backend.pipeline_compiles();
    println!(
        "{:.2?} with {}",
        started.elapsed(),
        backend.pipeline_compile_report()
    );
    assert_eq!(
        compiles.len(),
        1,
        "one module, one entry point: {compiles:?}"
    );
    compiles[0].cache.clone()
}

#[test]
fn pipeline_cache_is_saved_and_reused() {
    let _serial = common::serial();
    let dir = std::env::temp_dir().join(format!("crucible-wgpu-pipelines-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let Some(first) = open(&dir) else { return };
    let api = crucible_core::ProverBackend::info(&first).api.clone();
    match fr_ops(&first) {
        CacheUse::Unsupported => {
            assert!(api.contains("no pipeline cache"), "{api}");
            println!("{api}: the adapter has no pipeline cache; nothing to reuse");
            return;
        }
        CacheUse::Cold(why) => assert!(why.contains("nothing saved"), "{why}"),
        other => panic!("a fresh folder cannot hold a cache: {other:?}"),
    }
    assert!(
        api.contains(&format!("pipeline cache in {}", dir.display())),
        "{api}"
    );
    let saved: Vec<_> = std::fs::read_dir(&dir)
        .expect("the first device saved its cache")
        .map(|e| e.expect("listing the cache folder").path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    drop(first);
    let second = open(&dir).expect("the adapter opened a moment ago");
    match fr_ops(&second) {
        CacheUse::Loaded(bytes) => assert!(bytes > 0),
        other => panic!("the second device did not load the saved cache: {other:?}"),
    }
    drop(second);
    std::fs::remove_dir_all(&dir).expect("removing the test's cache folder");
}
