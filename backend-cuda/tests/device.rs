//! CUDA-only checks: device memory returns to its baseline after a proof and after an
//! injected failure, the next proof succeeds, and edge-valued field arithmetic.
//! Without a GPU these report "skipped" with the reason, unless `CRUCIBLE_REQUIRE`
//! names `cuda`, which turns unavailability into a failure.

use std::sync::Arc;

use ark_ff::{One, UniformRand, Zero};
use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_backend_cuda::CudaBackend;
use crucible_conformance::{compare_with_arkworks, required_backends};
use crucible_core::circuit::BenchCircuit;
use crucible_core::fault::{FaultKind, FaultOp, FaultRule, FaultyBackend};
use crucible_core::groth16::{prove, ProveOptions, StagedKey};
use crucible_core::key_file::generate_key;
use crucible_core::registry::ProbeOptions;
use crucible_core::{BufferUse, ElementKind, Fr, MemoryPlan, PlanKey, ProverBackend, ScratchNeed};

fn backend() -> Option<Arc<CudaBackend>> {
    match CudaBackend::open(0, &ProbeOptions::default()) {
        Ok(b) => Some(Arc::new(b)),
        Err(e) => {
            let required = required_backends().iter().any(|r| r == "cuda");
            assert!(
                !required,
                "CRUCIBLE_REQUIRE names cuda but it is unavailable: {e}"
            );
            println!("skipped: {e}");
            None
        }
    }
}

/// (free, total) device memory as the driver reports it now.
fn free_total(cuda: &CudaBackend) -> (u64, u64) {
    let m = cuda
        .device_memory()
        .unwrap()
        .expect("the CUDA backend reports its memory");
    (m.free, m.total)
}

fn seed() -> u64 {
    let s = crucible_conformance::run_seed();
    println!("seed {s}");
    s
}

#[test]
fn device_memory_returns_to_baseline_after_success_and_failure() {
    let Some(cuda) = backend() else { return };
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let (constraints, inputs) = (1000, 3);
    let pk = Arc::new(generate_key(constraints, inputs, seed).unwrap());
    let circuit = BenchCircuit {
        constraints,
        inputs,
        seed: seed + 1,
    };
    // Warm up: kernels compile and load once per process; that memory stays.
    compare_with_arkworks(&*cuda, pk.clone(), circuit, &mut rng).unwrap();
    println!("NVRTC compile + load: {:?} ms", cuda.kernel_compile_ms());
    let (baseline, total) = free_total(&cuda);
    compare_with_arkworks(&*cuda, pk.clone(), circuit, &mut rng).unwrap();
    let (after_ok, _) = free_total(&cuda);
    println!("free device memory: baseline {baseline}, after a proof {after_ok} (total {total})");
    assert_eq!(
        after_ok, baseline,
        "a successful proof left device memory allocated"
    );
    assert_eq!(cuda.budget().in_use(), 0);

    // A proof makes 4 padded stages, 7 NTTs and 4 G1 MSMs (key staging none of them).
    for (op, first) in [
        (FaultOp::StageScalarsPadded, 2),
        (FaultOp::Ntt, 5),
        (FaultOp::MsmG1, 3),
    ] {
        let faulty = FaultyBackend::new(
            cuda.clone(),
            vec![FaultRule {
                op,
                first,
                every: 0,
                kind: FaultKind::Error,
            }],
        );
        let key = StagedKey::stage(&faulty, pk.clone()).unwrap();
        let result = prove(
            &faulty,
            &key,
            circuit,
            Fr::rand(&mut rng),
            Fr::rand(&mut rng),
            ProveOptions::default(),
        );
        key.release().unwrap();
        let err = result.expect_err("the injected fault fails the proof");
        println!("{op:?} fault: {err}");
        let (after_fail, _) = free_total(&cuda);
        assert_eq!(
            after_fail, baseline,
            "failure in {op:?} left device memory allocated"
        );
        assert_eq!(cuda.budget().in_use(), 0);
        compare_with_arkworks(&*cuda, pk.clone(), circuit, &mut rng)
            .expect("the next proof succeeds");
    }
}

#[test]
fn field_edge_values_match_arkworks() {
    let Some(cuda) = backend() else { return };
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let edges = [
        Fr::zero(),
        Fr::one(),
        -Fr::one(),
        Fr::from(2u64),
        -Fr::from(2u64),
        Fr::from(u64::MAX),
    ];
    let mut a: Vec<Fr> = Vec::new();
    let mut b: Vec<Fr> = Vec::new();
    for x in edges {
        for y in edges {
            a.push(x);
            b.push(y);
        }
    }
    for _ in 0..1000 {
        a.push(Fr::rand(&mut rng));
        b.push(Fr::rand(&mut rng));
    }
    let k = Fr::rand(&mut rng);
    let n = a.len();
    let mut plan = MemoryPlan::new("field");
    plan.item(
        PlanKey::new("test", "a"),
        cuda.buffer_bytes(ElementKind::Scalar, n, BufferUse::Resident)
            .unwrap(),
    )
    .item(
        PlanKey::new("test", "b"),
        cuda.buffer_bytes(ElementKind::Scalar, n, BufferUse::Resident)
            .unwrap(),
    );
    plan.merge(&cuda.scratch_plan(&ScratchNeed::default()));
    let mut lease = (&*cuda as &dyn ProverBackend).allocate(plan).unwrap();
    let da = (&*cuda as &dyn ProverBackend)
        .alloc_scalars(&mut lease, PlanKey::new("test", "a"), n)
        .unwrap();
    let db = (&*cuda as &dyn ProverBackend)
        .alloc_scalars(&mut lease, PlanKey::new("test", "b"), n)
        .unwrap();
    cuda.stage_scalars(&mut lease, da, &a).unwrap();
    cuda.stage_scalars(&mut lease, db, &b).unwrap();
    assert_eq!(cuda.read_scalars(&lease, da).unwrap(), a, "round trip");
    cuda.mul_assign(&mut lease, da, db).unwrap();
    let got = cuda.read_scalars(&lease, da).unwrap();
    for i in 0..n {
        assert_eq!(
            got[i],
            a[i] * b[i],
            "mul case {i}: {} * {} (seed {seed})",
            a[i],
            b[i]
        );
    }
    cuda.sub_mul_assign(&mut lease, da, db, k).unwrap();
    let got2 = cuda.read_scalars(&lease, da).unwrap();
    for i in 0..n {
        assert_eq!(
            got2[i],
            (got[i] - b[i]) * k,
            "sub-mul case {i} (seed {seed})"
        );
    }
    lease.release().unwrap();
}

/// Staging throughput (host conversion into the pinned buffers plus the copies), for
/// measurements on a GPU machine: `--ignored --nocapture staging_throughput`.
#[test]
#[ignore]
fn staging_throughput() {
    let Some(cuda) = backend() else { return };
    let n = 1usize << 21;
    let mut rng = StdRng::seed_from_u64(seed());
    let values: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    let mut plan = MemoryPlan::new("staging");
    plan.item(
        PlanKey::new("test", "v"),
        cuda.buffer_bytes(ElementKind::Scalar, n, BufferUse::Resident)
            .unwrap(),
    );
    let mut lease = (&*cuda as &dyn ProverBackend).allocate(plan).unwrap();
    let buf = (&*cuda as &dyn ProverBackend)
        .alloc_scalars(&mut lease, PlanKey::new("test", "v"), n)
        .unwrap();
    let mut times = Vec::new();
    for _ in 0..7 {
        let t = std::time::Instant::now();
        cuda.stage_scalars(&mut lease, buf, &values).unwrap();
        let queued = t.elapsed();
        cuda.synchronize().unwrap();
        times.push((t.elapsed(), queued));
    }
    times.sort();
    let (total, queued) = times[times.len() / 2];
    let gb = (n * 32) as f64 / 1e9;
    println!(
        "staging 2^21 scalars ({:.0} MB): median {:.2} ms ({:.1} GB/s), host returned after {:.2} ms",
        gb * 1e3,
        total.as_secs_f64() * 1e3,
        gb / total.as_secs_f64(),
        queued.as_secs_f64() * 1e3
    );
    lease.release().unwrap();
}
