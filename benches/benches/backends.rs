//! Criterion benches of every available registered backend, through one shared
//! function ([`bench_backend`]) and the same timing code as `crucible bench`
//! ([`crucible_benches::Workload`]): NTT 2^10…2^20, MSM G1 2^10…2^18, MSM G2
//! 2^10…2^16 and whole proofs of 2^10…2^16 constraints (every other power of two, to
//! keep the run to minutes on two cores), plus ark-groth16's own prover on the same
//! circuits as the framework's overhead baseline.
//!
//! Times are device-resident (inputs staged, launch to `synchronize()`); fresh random
//! inputs are drawn before each timed run. Backends that are unavailable here are
//! printed with the reason and skipped. The proving keys come from the key cache
//! (`CRUCIBLE_CACHE_DIR`), generated on first use.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ark_ff::UniformRand;
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode};
use crucible_benches::reference::ark_groth16_prove;
use crucible_benches::{Op, Task, Workload, PROVE_INPUTS};
use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::fixtures::key_cache::KeyCache;
use crucible_core::groth16::ProvingKey;
use crucible_core::priority;
use crucible_core::registry::{probe_all, Probe, ProbeOptions};
use crucible_core::{Fr, ProverBackend, Result};

// The roster links every backend crate, so their `inventory` registrations are kept.
use crucible_backends as _;

const SEED: u64 = 0x00c0_ffee;

/// log2 sizes benched per operation.
fn log_sizes(op: Op) -> Vec<u32> {
    let top = match op {
        Op::Ntt | Op::Intt | Op::CosetNtt => 20,
        Op::MsmG1 => 18,
        Op::MsmG2 | Op::Prove => 16,
    };
    (10..=top).step_by(2).collect()
}

fn proving_key(constraints: usize) -> Result<Arc<ProvingKey>> {
    let cache = KeyCache::new(KeyCache::default_dir());
    let (pk, _) = cache.get_or_generate(constraints, PROVE_INPUTS, SEED, &mut |path| {
        eprintln!(
            "generating proving key for {constraints} constraints (cached at {})",
            path.display()
        );
    })?;
    Ok(Arc::new(pk))
}

fn configure(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sampling_mode(SamplingMode::Flat);
}

/// Benches every operation at every size on `backend`: the one body all backends share.
fn bench_backend(c: &mut Criterion, backend: &dyn ProverBackend) {
    let label = backend.info().label();
    for op in [Op::Ntt, Op::MsmG1, Op::MsmG2, Op::Prove] {
        let mut group = c.benchmark_group(format!("{label}/{op}"));
        configure(&mut group);
        for log_size in log_sizes(op) {
            let size = 1usize << log_size;
            let prepared = Task::new(op, size, proving_key)
                .and_then(|task| Workload::prepare(backend, task, SEED ^ size as u64));
            let mut workload = match prepared {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("skipped {label}/{op}/2^{log_size}: {e}");
                    continue;
                }
            };
            let mut failure = None;
            group.bench_function(BenchmarkId::from_parameter(format!("2^{log_size}")), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        match workload.run() {
                            Ok(t) => total += t.resident,
                            Err(e) => {
                                failure.get_or_insert(e);
                            }
                        }
                    }
                    total
                })
            });
            if let Some(e) = failure {
                eprintln!(
                    "error: {label}/{op}/2^{log_size} failed, its numbers are meaningless: {e}"
                );
            }
            if let Err(e) = workload.release() {
                eprintln!("error: releasing {label}/{op}/2^{log_size}: {e}");
            }
        }
        group.finish();
    }
}

/// ark-groth16's prover on the same circuits: the baseline the framework's overhead is
/// measured against.
fn bench_ark_groth16(c: &mut Criterion) {
    let mut group = c.benchmark_group("ark-groth16/prove");
    configure(&mut group);
    for log_size in log_sizes(Op::Prove) {
        let constraints = 1usize << log_size;
        let pk = match proving_key(constraints) {
            Ok(pk) => pk,
            Err(e) => {
                eprintln!("skipped ark-groth16/prove/2^{log_size}: {e}");
                continue;
            }
        };
        let mut rng = StdRng::seed_from_u64(SEED ^ constraints as u64);
        let mut failure = None;
        group.bench_function(BenchmarkId::from_parameter(format!("2^{log_size}")), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let circuit = BenchCircuit {
                        constraints,
                        inputs: PROVE_INPUTS,
                        seed: rng.gen(),
                    };
                    let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
                    let t = Instant::now();
                    let proof = ark_groth16_prove(&pk, circuit, r, s);
                    total += t.elapsed();
                    if let Err(e) = proof {
                        failure.get_or_insert(e);
                    }
                }
                total
            })
        });
        if let Some(e) = failure {
            eprintln!("error: ark-groth16/prove/2^{log_size} failed: {e}");
        }
    }
    group.finish();
}

fn every_backend(c: &mut Criterion) {
    let mut available = Vec::new();
    for probed in probe_all(&ProbeOptions::default()) {
        for probe in probed.probes {
            match probe {
                Probe::Available(backend) if backend.info().priority == priority::UNRANKED => {
                    eprintln!(
                        "skipped backend {}: unranked (it proves nothing yet)",
                        backend.info().label()
                    )
                }
                Probe::Available(backend) => available.push(backend),
                Probe::Unavailable { reason } => {
                    eprintln!("skipped backend {}: {reason}", probed.registration.name)
                }
            }
        }
    }
    for backend in &available {
        bench_backend(c, &**backend);
    }
    bench_ark_groth16(c);
}

criterion_group!(benches, every_backend);
criterion_main!(benches);
