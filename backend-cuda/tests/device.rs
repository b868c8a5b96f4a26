//! CUDA-only checks: device memory returns to its baseline after a proof and after an
//! injected failure, the next proof succeeds; a second process taking the memory a
//! proof was budgeted for is a named error the next proof survives; edge-valued
//! field arithmetic; scalars crossing both ways through several staging chunks; the
//! sparse product (A·z from the matrix in compressed rows) against the host's rows; a
//! pinned key's streamed bases copied as they lie, proofs byte-identical to arkworks.
//! Without a GPU these report "skipped" with the reason, unless `CRUCIBLE_REQUIRE`
//! names `cuda`, which turns unavailability into a failure.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};

use ark_ff::{One, UniformRand, Zero};
use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_backend_cuda::{CudaBackend, CudaCurve};
use crucible_conformance::{compare_with_arkworks, required_backends};
use crucible_core::fault::{FaultKind, FaultOp, FaultRule, FaultyBackend};
use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::fixtures::key_cache::generate_key;
use crucible_core::groth16::{prove, ProveOptions, StagedKey};
use crucible_core::registry::ProbeOptions;
use crucible_core::tuning_file::TuningFile;
use crucible_core::{
    Bls12_381, BufferUse, ElementKind, Error, Fr, MemoryPlan, PlanKey, ProverBackend, ScratchNeed,
};

fn backend() -> Option<Arc<CudaBackend>> {
    backend_of::<Bls12_381>()
}

/// Device 0 proving over `E`, or `None` (the test then skips) where CUDA is unavailable.
fn backend_of<E: CudaCurve>() -> Option<Arc<CudaBackend<E>>> {
    match CudaBackend::<E>::open(0, &ProbeOptions::default()) {
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

/// The tests that read free device memory run one at a time (the test harness runs
/// tests on several threads).
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn seed() -> u64 {
    let s = crucible_conformance::run_seed();
    println!("seed {s}");
    s
}

#[test]
fn device_memory_returns_to_baseline_after_success_and_failure() {
    let _serial = serial();
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
    println!(
        "{}",
        cuda.kernel_compile_report()
            .unwrap_or_else(|| "kernels not compiled".into())
    );
    let (baseline, total) = free_total(&cuda);
    compare_with_arkworks(&*cuda, pk.clone(), circuit, &mut rng).unwrap();
    let (after_ok, _) = free_total(&cuda);
    println!("free device memory: baseline {baseline}, after a proof {after_ok} (total {total})");
    // At least the baseline free: memory held at the baseline may be let go later (an
    // H100 showed 32 MiB more free after a failed MSM); less free would be a leak.
    assert!(
        after_ok >= baseline,
        "a successful proof left {} bytes of device memory allocated",
        baseline - after_ok
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
        assert!(
            after_fail >= baseline,
            "failure in {op:?} left {} bytes of device memory allocated",
            baseline - after_fail
        );
        assert_eq!(cuda.budget().in_use(), 0);
        compare_with_arkworks(&*cuda, pk.clone(), circuit, &mut rng)
            .expect("the next proof succeeds");
    }
}

/// Set in the second process of the out-of-memory test: it takes all free device
/// memory but this many bytes, says `holding`, and holds it until its stdin closes.
const HOLD_ALL_BUT: &str = "CRUCIBLE_TEST_HOLD_ALL_BUT";
const OOM_TEST: &str = "driver_out_of_memory_inside_a_lease_is_named_and_survived";

/// This test binary again, as the other process: holds the device's free memory but
/// `leave` bytes; returns once it holds it.
fn hold_memory_in_another_process(leave: u64) -> Child {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            OOM_TEST,
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HOLD_ALL_BUT, leave.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the second process");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let held = loop {
        let mut line = String::new();
        match out.read_line(&mut line) {
            Ok(0) | Err(_) => break false,
            Ok(_) if line.trim() == "holding" => break true,
            Ok(_) => seen.push_str(&line),
        }
    };
    if held {
        return child;
    }
    let status = child.wait();
    panic!("the second process ended ({status:?}) before holding memory:\n{seen}");
}

/// The second process's side: allocate, say so, wait for stdin to close. In pieces
/// (1 GiB, halving down to 64 KiB): one allocation of all free memory fails, since the
/// driver reports memory free that no single block can take. With `cuMemAlloc`, not
/// the stream-ordered pool, whose reservations grow in coarse steps and left 18 MB
/// free (more than the proof needed) on the H200.
fn hold_until_stdin_closes(leave: u64) {
    let _ctx = cudarc::driver::CudaContext::new(0).unwrap();
    let free_now = || cudarc::driver::result::mem_get_info().unwrap().0 as u64;
    let mut held = Vec::new();
    let mut piece: u64 = 1 << 30;
    while piece >= 1 << 16 {
        let free = free_now();
        if free <= leave {
            break;
        }
        let size = piece.min(free - leave);
        // SAFETY: a plain device allocation in the current (primary) context, which
        // `_ctx` keeps alive; each block is freed once, below, before the context.
        match unsafe { cudarc::driver::result::malloc_sync(size as usize) } {
            Ok(block) => held.push(block),
            Err(_) => piece /= 2,
        }
        if size < piece {
            piece = size;
        }
    }
    println!("held {} blocks, {} bytes free", held.len(), free_now());
    println!("holding");
    let mut sink = Vec::new();
    std::io::stdin().read_to_end(&mut sink).unwrap();
    for block in held {
        // SAFETY: allocated above by `malloc_sync` and not freed before.
        unsafe { cudarc::driver::result::free_sync(block) }.unwrap();
    }
}

/// Returns what this process's stream-ordered pool keeps from freed buffers to the
/// driver, so that the proof below must ask the driver for its memory again.
fn give_pooled_memory_back() {
    use cudarc::driver::sys;
    // Frees queued on the backend's streams reach the pool only once they have run.
    cudarc::driver::CudaContext::new(0)
        .unwrap()
        .synchronize()
        .unwrap();
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: device 0 exists (the backend opened it) and `pool` is a valid out pointer.
    unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, 0) }
        .result()
        .unwrap();
    // SAFETY: `pool` is the device's default pool, valid for the process's lifetime.
    unsafe { cudarc::driver::result::mem_pool::trim_to(pool, 0) }.unwrap();
}

/// A second process takes the memory this one's budget was sized from (budgets see
/// the free memory at open, not later): the proof's allocation fails inside its lease
/// as `DeviceOutOfMemory`, naming the cause; the lease gives its bytes back; once the
/// other process lets go, the next proof on the same key succeeds, byte-identical.
#[test]
#[ignore = "fails on the H200: with 3.7 MB left free by the second process, the 17.7 MB proof still allocates (not from this process's trimmed pool); the cause is not found yet"]
fn driver_out_of_memory_inside_a_lease_is_named_and_survived() {
    if let Ok(leave) = std::env::var(HOLD_ALL_BUT) {
        hold_until_stdin_closes(leave.parse().unwrap());
        return;
    }
    let _serial = serial();
    let Some(cuda) = backend() else { return };
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let (constraints, inputs) = (1 << 14, 2);
    let pk = Arc::new(generate_key(constraints, inputs, seed).unwrap());
    let circuit = BenchCircuit {
        constraints,
        inputs,
        seed: seed + 1,
    };
    // Warm up (kernels compile and load once per process), then stage the key.
    compare_with_arkworks(&*cuda, pk.clone(), circuit, &mut rng).unwrap();
    let key = StagedKey::stage(&*cuda, pk.clone()).unwrap();
    let key_bytes = cuda.budget().in_use();
    let proof_bytes = key.schedule_choice().chosen.proof.total_bytes();
    assert!(
        cuda.budget().capacity() >= key_bytes + proof_bytes,
        "the budget holds the proof"
    );

    give_pooled_memory_back();
    let mut other = hold_memory_in_another_process(proof_bytes / 4);
    let (free, _) = free_total(&cuda);
    println!("another process holds the device's memory: {free} bytes free, the proof plans {proof_bytes}");
    assert!(
        free < proof_bytes / 2,
        "the other process left {free} bytes free, enough for a proof of {proof_bytes} planned"
    );
    let result = prove(
        &*cuda,
        &key,
        circuit,
        Fr::rand(&mut rng),
        Fr::rand(&mut rng),
        ProveOptions::default(),
    );
    let err = result.expect_err("the proof's memory is held by another process");
    println!("with the memory held: {err}");
    assert!(
        matches!(err.root(), Error::DeviceOutOfMemory { .. }),
        "not named as the driver running out of memory: {err}"
    );
    assert!(err.to_string().contains("out of memory"), "{err}");
    assert_eq!(
        cuda.budget().in_use(),
        key_bytes,
        "the failed proof gave its bytes back"
    );

    drop(other.stdin.take());
    assert!(other.wait().unwrap().success(), "the second process failed");
    let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
    let out = prove(&*cuda, &key, circuit, r, s, ProveOptions::default())
        .expect("the next proof succeeds once the memory is back");
    let want =
        crucible_core::ark_groth16::Groth16::<crucible_core::Bls12_381>::create_proof_with_reduction(
            circuit, &pk, r, s,
        )
        .unwrap();
    assert_eq!(
        crucible_conformance::proof_bytes(&out.proof),
        crucible_conformance::proof_bytes(&want),
        "seed {seed}: differs from ark-groth16"
    );
    key.release().unwrap();
    assert_eq!(cuda.budget().in_use(), 0);
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

/// A random R1CS-like matrix over `columns` variables: `rows` rows of 0 to 4 entries
/// (repeated columns among them), coefficients one, minus one, small and random ones,
/// a long row, then `identity` instance rows.
fn random_matrix(
    rng: &mut StdRng,
    rows: usize,
    columns: usize,
    identity: usize,
) -> crucible_core::groth16::SparseMatrix {
    use ark_std::rand::Rng;
    let others: Vec<Fr> = (0..5).map(|_| Fr::rand(rng)).collect();
    let coefficient = |rng: &mut StdRng| match rng.gen_range(0..10) {
        0..=3 => Fr::one(),
        4..=6 => -Fr::one(),
        7 => Fr::from(2u64),
        _ => others[rng.gen_range(0..others.len())],
    };
    let mut matrix: Vec<Vec<(Fr, usize)>> = (0..rows)
        .map(|_| {
            let len = rng.gen_range(0..=4);
            let mut row: Vec<(Fr, usize)> = Vec::with_capacity(len);
            for _ in 0..len {
                let column = match row.last() {
                    Some(&(_, c)) if rng.gen_bool(0.2) => c,
                    _ => rng.gen_range(0..columns),
                };
                row.push((coefficient(rng), column));
            }
            row
        })
        .collect();
    let long = rng.gen_range(0..rows);
    matrix[long] = (0..5000)
        .map(|_| (coefficient(rng), rng.gen_range(0..columns)))
        .collect();
    crucible_core::groth16::SparseMatrix::new(&matrix, identity, columns).unwrap()
}

/// The sparse product against the host's rows (`row_value`) and zeros past them: the
/// matrix staged once in its own lease, two assignments each staged just before a
/// product (the second copy waits for the first product's reads, each product for its
/// copy), the outputs holding garbage before; invalid operands are refused.
#[test]
fn sparse_products_match_the_host_rows() {
    use crucible_core::groth16::row_value;
    let Some(cuda) = backend() else { return };
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let backend: &dyn ProverBackend = &*cuda;
    assert!(cuda.supports_sparse_product());
    let (rows, identity, columns, n) = (3000, 5, 700, 4096);
    let matrix = random_matrix(&mut rng, rows, columns, identity);
    let keys = [
        "row_starts",
        "entries",
        "coefficients",
        "z",
        "out_a",
        "out_b",
    ]
    .map(|name| PlanKey::new("test", name));
    let bytes = |kind, len| cuda.buffer_bytes(kind, len, BufferUse::Plain).unwrap();
    let mut matrix_plan = MemoryPlan::new("matrix");
    matrix_plan
        .item(
            keys[0],
            bytes(ElementKind::Index, matrix.row_starts().len()),
        )
        .item(
            keys[1],
            bytes(ElementKind::Index, matrix.entry_words().len()),
        )
        .item(
            keys[2],
            bytes(ElementKind::Scalar, matrix.coefficients().len()),
        );
    let mut work_plan = MemoryPlan::new("work");
    work_plan
        .item(keys[3], bytes(ElementKind::Scalar, columns))
        .item(keys[4], bytes(ElementKind::Scalar, n))
        .item(keys[5], bytes(ElementKind::Scalar, n));
    let mut matrices = backend.allocate(matrix_plan).unwrap();
    let mut work = backend.allocate(work_plan).unwrap();
    let bufs = crucible_core::SparseMatrixBufs {
        row_starts: backend
            .alloc_indices(&mut matrices, keys[0], matrix.row_starts().len())
            .unwrap(),
        entries: backend
            .alloc_indices(&mut matrices, keys[1], matrix.entry_words().len())
            .unwrap(),
        coefficients: backend
            .alloc_scalars(&mut matrices, keys[2], matrix.coefficients().len())
            .unwrap(),
        rows: matrix.rows(),
        first_row: 0,
    };
    cuda.stage_indices(&mut matrices, bufs.row_starts, matrix.row_starts())
        .unwrap();
    cuda.stage_indices(&mut matrices, bufs.entries, matrix.entry_words())
        .unwrap();
    cuda.stage_scalars(&mut matrices, bufs.coefficients, matrix.coefficients())
        .unwrap();
    let z = backend.alloc_scalars(&mut work, keys[3], columns).unwrap();
    let outs = [
        backend.alloc_scalars(&mut work, keys[4], n).unwrap(),
        backend.alloc_scalars(&mut work, keys[5], n).unwrap(),
    ];
    let garbage: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    let mut assignments = Vec::new();
    for out in outs {
        cuda.stage_scalars(&mut work, out, &garbage).unwrap();
        let values: Vec<Fr> = (0..columns).map(|_| Fr::rand(&mut rng)).collect();
        cuda.stage_scalars(&mut work, z, &values).unwrap();
        cuda.sparse_product(&mut work, &matrices, bufs, z, out)
            .unwrap();
        assignments.push(values);
    }
    for (round, (out, values)) in outs.iter().zip(&assignments).enumerate() {
        let got = cuda.read_scalars(&work, *out).unwrap();
        for (r, value) in got.iter().enumerate() {
            let want = if r < matrix.rows() {
                row_value(
                    matrix.row_starts(),
                    matrix.entry_words(),
                    matrix.coefficients(),
                    r,
                    values,
                )
            } else {
                Fr::zero()
            };
            assert_eq!(
                *value,
                want,
                "product {round}, row {r} of {} (out {n}, seed {seed})",
                matrix.rows()
            );
        }
    }
    // The assignment cannot be the output, and indices do not overflow their buffer.
    assert!(cuda
        .sparse_product(&mut work, &matrices, bufs, z, z)
        .is_err());
    let too_many = vec![0u32; matrix.row_starts().len() + 1];
    assert!(cuda
        .stage_indices(&mut matrices, bufs.row_starts, &too_many)
        .is_err());
    work.release().unwrap();
    matrices.release().unwrap();
}

/// Window planes under each `msm_planes_build` of the tuning file's `[cuda]` table
/// (msm/planes.rs). `paid`: a resident bases buffer starts on plane 0; MSMs over it
/// agree with arkworks before the planes are built, the one that builds them and those
/// after (a sort kept across the switch included), and new bases void the planes again.
/// `eager` (the default): built at staging; `never`: no room for them; the MSMs agree
/// either way.
#[test]
fn planes_are_built_when_the_policy_says_and_change_no_result() {
    if backend().is_none() {
        return;
    }
    for policy in ["eager", "paid", "never"] {
        let text = format!("[cuda]\nmsm_planes_build = \"{policy}\"\n");
        let options = ProbeOptions {
            tuning: Arc::new(TuningFile::parse(&text, None).unwrap()),
            ..ProbeOptions::default()
        };
        let cuda = CudaBackend::open(0, &options).unwrap();
        planes_under(&cuda, policy);
    }
}

/// An invalid `[cuda]` table makes the device unavailable, naming the key.
#[test]
fn an_invalid_tuning_table_is_refused_with_its_key() {
    if backend().is_none() {
        return;
    }
    let options = ProbeOptions {
        tuning: Arc::new(TuningFile::parse("[cuda]\nntt_tile_bits = 11\n", None).unwrap()),
        ..ProbeOptions::default()
    };
    let err = CudaBackend::<Bls12_381>::open(0, &options)
        .err()
        .expect("refused");
    let err = err.to_string();
    assert!(
        err.contains("ntt_tile_bits") && err.contains("4 to 10"),
        "{err}"
    );
}

/// The planes test under `policy`, on `cuda` opened with it.
fn planes_under(cuda: &CudaBackend, policy: &str) {
    use ark_ec::VariableBaseMSM;
    use crucible_core::{G1Affine, G1Projective, MsmSpan};
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let n = 1usize << 12;
    let backend: &dyn ProverBackend = cuda;
    let draw = |rng: &mut StdRng| -> (Vec<G1Affine>, Vec<Fr>) {
        let bases = (0..n).map(|_| G1Affine::rand(rng)).collect();
        (bases, (0..n).map(|_| Fr::rand(rng)).collect())
    };
    let (bases_key, scalars_key) = (
        PlanKey::new("test", "bases"),
        PlanKey::new("test", "scalars"),
    );
    let mut bases_plan = MemoryPlan::new("bases");
    bases_plan.item(
        bases_key,
        cuda.buffer_bytes(ElementKind::G1, n, BufferUse::Resident)
            .unwrap(),
    );
    let mut work_plan = MemoryPlan::new("work");
    work_plan.item(
        scalars_key,
        cuda.buffer_bytes(ElementKind::Scalar, n, BufferUse::Plain)
            .unwrap(),
    );
    work_plan.merge(&cuda.scratch_plan(&ScratchNeed {
        msm_g1: n,
        ..ScratchNeed::default()
    }));
    let mut bases_lease = backend.allocate(bases_plan).unwrap();
    let mut work = backend.allocate(work_plan).unwrap();
    let bases = backend
        .alloc_g1(&mut bases_lease, bases_key, n, BufferUse::Resident)
        .unwrap();
    let scalars = backend.alloc_scalars(&mut work, scalars_key, n).unwrap();
    let span = MsmSpan {
        bases,
        base_offset: 0,
        scalars,
        scalar_offset: 0,
        len: n,
    };
    for round in 0..2 {
        let (points, values) = draw(&mut rng);
        let expected = G1Projective::msm(&points, &values).unwrap();
        cuda.stage_g1(&mut bases_lease, bases, &points).unwrap();
        cuda.stage_scalars(&mut work, scalars, &values).unwrap();
        let staged = cuda.planes_built(&bases_lease, bases.id()).unwrap();
        let at_staging = match policy {
            "paid" => Some(false),
            "never" => None,
            _ => Some(true),
        };
        assert_eq!(
            staged, at_staging,
            "round {round}: staged bases of {n} points under {policy:?} (seed {seed})"
        );
        if at_staging != Some(false) {
            for msm in 1..=3 {
                let got = cuda.msm_g1(&mut work, &bases_lease, span).unwrap();
                assert_eq!(got, expected, "round {round}, MSM {msm} (seed {seed})");
            }
            continue;
        }
        let mut built_after = None;
        for msm in 1..=5000 {
            let got = cuda.msm_g1(&mut work, &bases_lease, span).unwrap();
            assert_eq!(got, expected, "round {round}, MSM {msm} (seed {seed})");
            let built = cuda.planes_built(&bases_lease, bases.id()).unwrap() == Some(true);
            match built_after {
                None if built => built_after = Some(msm),
                Some(at) if msm >= at + 3 => break,
                _ => {}
            }
        }
        let at = built_after.expect("the planes pay for themselves within 5000 MSMs");
        println!("round {round}: planes built before MSM {at} of {n} points");
        assert!(at > 1, "a single MSM never pays for the planes");
    }
    work.release().unwrap();
    bases_lease.release().unwrap();
}

/// Scalars cross both ways intact when they span several staging chunks (the default
/// 8 MiB chunk holds 2^18 scalars; the count ends mid-chunk), repeatedly through the
/// same pinned buffers, and a padded stage leaves zeros behind the live rows.
#[test]
fn scalars_round_trip_across_staging_chunks() {
    let Some(cuda) = backend() else { return };
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let n = 2 * (1usize << 18) + 12_345;
    let padded = n + 70_001;
    let key = PlanKey::new("test", "v");
    let mut plan = MemoryPlan::new("round trip");
    plan.item(
        key,
        cuda.buffer_bytes(ElementKind::Scalar, padded, BufferUse::Resident)
            .unwrap(),
    );
    let mut lease = (&*cuda as &dyn ProverBackend).allocate(plan).unwrap();
    let buf = (&*cuda as &dyn ProverBackend)
        .alloc_scalars(&mut lease, key, padded)
        .unwrap();
    for round in 0..3 {
        let values: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
        cuda.stage_scalars_padded(&mut lease, buf, &values).unwrap();
        let got = cuda.read_scalars(&lease, buf).unwrap();
        assert_eq!(got.len(), padded);
        if let Some(i) = (0..n).find(|&i| got[i] != values[i]) {
            panic!("round {round}, scalar {i} of {n} differs (seed {seed})");
        }
        if let Some(i) = (n..padded).find(|&i| !got[i].is_zero()) {
            panic!("round {round}, padding scalar {i} is not zero (seed {seed})");
        }
    }
    lease.release().unwrap();
}

/// Pinned scalars: the backend pins them (arkworks' Fr lies in memory as the device's
/// words), they cross in one copy each way with the same values, a pinned
/// destination of the wrong length is refused, and unpinned memory (the same vector
/// after its pin dropped, and a slice inside a pinned one) still crosses correctly.
#[test]
fn pinned_scalars_cross_in_one_copy_each_way() {
    let Some(cuda) = backend() else { return };
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let n = (1usize << 19) + 77;
    let key = PlanKey::new("test", "v");
    let mut plan = MemoryPlan::new("pinned");
    plan.item(
        key,
        cuda.buffer_bytes(ElementKind::Scalar, n, BufferUse::Resident)
            .unwrap(),
    );
    let dynb = &*cuda as &dyn ProverBackend;
    let mut lease = dynb.allocate(plan).unwrap();
    let buf = dynb.alloc_scalars(&mut lease, key, n).unwrap();
    let mut values: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    let want = values.clone();
    let mut back = vec![Fr::zero(); n];
    {
        let src = cuda.pin_scalars(&mut values).unwrap();
        let mut dst = cuda.pin_scalars(&mut back).unwrap();
        assert!(src.is_pinned() && dst.is_pinned(), "seed {seed}");
        cuda.stage_scalars(&mut lease, buf, &src).unwrap();
        cuda.read_scalars_into(&lease, buf, &mut dst).unwrap();
        assert!(cuda.read_scalars_into(&lease, buf, &mut dst[1..]).is_err());
        // A part of pinned memory is pinned too: its front crosses alone.
        cuda.stage_scalars(&mut lease, buf, &src[..1000]).unwrap();
    }
    if let Some(i) = (0..n).find(|&i| back[i] != want[i]) {
        panic!("pinned: scalar {i} of {n} differs (seed {seed})");
    }
    let fresh: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    values.copy_from_slice(&fresh);
    cuda.stage_scalars(&mut lease, buf, &values).unwrap();
    assert_eq!(
        cuda.read_scalars(&lease, buf).unwrap(),
        fresh,
        "seed {seed}"
    );
    lease.release().unwrap();
}

/// A key whose queries all stream is pinned once for every staging of it: each
/// staged copy's proofs copy its points as they lie and are byte-identical to
/// ark-groth16's, before and after the other copy is released.
#[test]
fn a_pinned_key_streams_its_bases_as_they_lie_and_proves_as_arkworks() {
    use crucible_core::groth16::{DomainVectors, Evaluation, KeyOptions, QuerySet, Schedule};
    // One pinning test at a time: the pinned bytes are counted over the process.
    let _serial = serial();
    let Some(cuda) = backend() else { return };
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let (constraints, inputs) = ((1 << 13) + 5, 3);
    let pk = Arc::new(generate_key(constraints, inputs, seed).unwrap());
    let circuit = BenchCircuit {
        constraints,
        inputs,
        seed: seed + 1,
    };
    // Chunks that split every query, one not a divisor of any length.
    let options = KeyOptions {
        schedule: Some(Schedule {
            resident: QuerySet::NONE,
            domain: DomainVectors::Sequenced,
            chunk: 3001,
            evaluation: Evaluation::Host,
        }),
        ..KeyOptions::default()
    };
    let first = StagedKey::stage_with(&*cuda, pk.clone(), &options).unwrap();
    let second = StagedKey::stage_with(&*cuda, pk.clone(), &options).unwrap();
    for key in [&first, &second] {
        assert_eq!(key.pinned_queries(), QuerySet::ALL, "seed {seed}");
    }
    wait_for_pinned(&cuda, key_points_bytes(&pk));
    let check = |key: &StagedKey, rng: &mut StdRng, case: &str| {
        let (r, s) = (Fr::rand(rng), Fr::rand(rng));
        let out = prove(&*cuda, key, circuit, r, s, ProveOptions::default()).unwrap();
        let want = crucible_core::ark_groth16::Groth16::<crucible_core::Bls12_381>::create_proof_with_reduction(
            circuit, &pk, r, s,
        )
        .unwrap();
        assert_eq!(
            crucible_conformance::proof_bytes(&out.proof),
            crucible_conformance::proof_bytes(&want),
            "seed {seed}, {case}: differs from ark-groth16"
        );
    };
    check(&first, &mut rng, "first staging");
    check(&second, &mut rng, "second staging");
    first.release().unwrap();
    check(&second, &mut rng, "second staging, the first released");
    second.release().unwrap();
    assert_eq!(cuda.budget().in_use(), 0);
}

/// Bytes of a key's five queries.
fn key_points_bytes(pk: &crucible_core::groth16::ProvingKey) -> usize {
    use std::mem::size_of_val;
    size_of_val(&pk.a_query[..])
        + size_of_val(&pk.b_g1_query[..])
        + size_of_val(&pk.h_query[..])
        + size_of_val(&pk.l_query[..])
        + size_of_val(&pk.b_g2_query[..])
}

/// Waits until at least `bytes` of streamed bases are pinned (in the background).
fn wait_for_pinned(cuda: &CudaBackend, bytes: usize) {
    let start = std::time::Instant::now();
    while cuda.pinned_bases_ready() < bytes {
        assert!(
            start.elapsed().as_secs() < 60,
            "{} of {bytes} bytes pinned after a minute",
            cuda.pinned_bases_ready()
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Streamed bases' staging rate from a pinned key against the staging buffers, for
/// measurements on a GPU machine: `--ignored --nocapture pinned_bases_throughput`.
#[test]
#[ignore]
fn pinned_bases_throughput() {
    use ark_ec::{CurveGroup, PrimeGroup};
    use crucible_core::{G1Affine, G1Projective};
    let _serial = serial();
    let Some(cuda) = backend() else { return };
    let dynb = &*cuda as &dyn ProverBackend;
    let n = 1usize << 22;
    let mut rng = StdRng::seed_from_u64(seed());
    let seeds: Vec<G1Affine> = (0..1024)
        .map(|_| (G1Projective::generator() * Fr::rand(&mut rng)).into_affine())
        .collect();
    let points: Vec<G1Affine> = (0..n).map(|i| seeds[i % seeds.len()]).collect();
    let key = PlanKey::new("test", "chunk");
    let mut plan = MemoryPlan::new("pinned bases");
    plan.item(
        key,
        cuda.buffer_bytes(ElementKind::G1, n, BufferUse::Plain)
            .unwrap(),
    );
    let mut lease = dynb.allocate(plan).unwrap();
    let buf = dynb.alloc_g1(&mut lease, key, n, BufferUse::Plain).unwrap();
    let gb = (n * 96) as f64 / 1e9;
    let mut rate = |label: &str| {
        let mut times: Vec<f64> = (0..7)
            .map(|_| {
                let t = std::time::Instant::now();
                cuda.stage_g1(&mut lease, buf, &points).unwrap();
                cuda.synchronize().unwrap();
                t.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        println!(
            "{label}: 2^22 G1 points ({:.0} MB) staged in a median {:.2} ms of 7: {:.1} GB/s",
            gb * 1e3,
            median * 1e3,
            gb / median
        );
    };
    rate("through the staging buffers");
    let t = std::time::Instant::now();
    let pin = cuda.pin_g1_bases(&points).unwrap().expect("pinned");
    wait_for_pinned(&cuda, n * 96);
    println!(
        "pinning {:.0} MB took {:.1} ms",
        gb * 1e3,
        t.elapsed().as_secs_f64() * 1e3
    );
    rate("straight from pinned memory");
    drop(pin);
    lease.release().unwrap();
}

/// Staging and read-back throughput (host conversion plus the pinned copies), for
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
    let mut reads: Vec<_> = (0..7)
        .map(|_| {
            let t = std::time::Instant::now();
            let back = cuda.read_scalars(&lease, buf).unwrap();
            let elapsed = t.elapsed();
            assert_eq!(back, values);
            elapsed
        })
        .collect();
    reads.sort();
    let read = reads[reads.len() / 2];
    println!(
        "reading them back into a fresh vector: median {:.2} ms ({:.1} GB/s)",
        read.as_secs_f64() * 1e3,
        gb / read.as_secs_f64()
    );
    // The part of a read-back that no copy saves: paging in the fresh vector.
    let mut touches: Vec<_> = (0..7)
        .map(|_| {
            use rayon::prelude::*;
            let t = std::time::Instant::now();
            let fresh: Vec<Fr> = (0..n).into_par_iter().map(|_| Fr::zero()).collect();
            let elapsed = t.elapsed();
            assert_eq!(fresh.len(), n);
            elapsed
        })
        .collect();
    touches.sort();
    let touch = touches[touches.len() / 2];
    println!(
        "writing a fresh vector of that size on every core, no copy: median {:.2} ms ({:.1} GB/s)",
        touch.as_secs_f64() * 1e3,
        gb / touch.as_secs_f64()
    );
    lease.release().unwrap();
}

/// BN254's MSMs over G1 and G2 against arkworks: full-width scalars and bit-heavy ones
/// (the witness-aware path), on plain bases and on resident ones (window planes where
/// the budget and the model give them), at one point, a few and thousands.
#[test]
fn bn254_msms_match_arkworks() {
    use crucible_core::group::{G1, G2};
    use crucible_core::Bn254;
    let Some(cuda) = backend_of::<Bn254>() else {
        return;
    };
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    msms_match_arkworks::<G1<Bn254>>(&*cuda, &mut rng, seed);
    msms_match_arkworks::<G2<Bn254>>(&*cuda, &mut rng, seed);
}

/// `G`'s MSMs on `backend` against arkworks' (see [`bn254_msms_match_arkworks`]).
fn msms_match_arkworks<G: crucible_core::group::MsmGroup>(
    backend: &dyn ProverBackend<G::Curve>,
    rng: &mut StdRng,
    seed: u64,
) {
    use ark_ec::{CurveGroup, VariableBaseMSM};
    use crucible_core::group::ScalarOf;
    use crucible_core::MsmSpan;
    let (bases_key, scalars_key) = (
        PlanKey::new("test", "bases"),
        PlanKey::new("test", "scalars"),
    );
    for n in [1usize, 3, 1000, 1 << 12] {
        let points: Vec<G::Affine> = (0..n)
            .map(|_| G::Projective::rand(rng).into_affine())
            .collect();
        let full: Vec<ScalarOf<G>> = (0..n).map(|_| ScalarOf::<G>::rand(rng)).collect();
        let bits: Vec<ScalarOf<G>> = (0..n)
            .map(|i| match i % 10 {
                0 => ScalarOf::<G>::rand(rng),
                1..=6 => ScalarOf::<G>::one(),
                _ => ScalarOf::<G>::zero(),
            })
            .collect();
        for usage in [BufferUse::Plain, BufferUse::Resident] {
            let mut bases_plan = MemoryPlan::new("bases");
            bases_plan.item(bases_key, backend.buffer_bytes(G::KIND, n, usage).unwrap());
            let mut work_plan = MemoryPlan::new("work");
            work_plan.item(
                scalars_key,
                backend
                    .buffer_bytes(ElementKind::Scalar, n, BufferUse::Plain)
                    .unwrap(),
            );
            work_plan.merge(&backend.scratch_plan(&G::need(n)));
            let mut bases_lease = backend.allocate(bases_plan).unwrap();
            let mut work = backend.allocate(work_plan).unwrap();
            let bases = G::alloc(backend, &mut bases_lease, bases_key, n, usage).unwrap();
            G::stage(backend, &mut bases_lease, bases, &points).unwrap();
            let scalars = backend.alloc_scalars(&mut work, scalars_key, n).unwrap();
            for (kind, values) in [("full", &full), ("bits", &bits)] {
                backend.stage_scalars(&mut work, scalars, values).unwrap();
                let span = MsmSpan {
                    bases,
                    base_offset: 0,
                    scalars,
                    scalar_offset: 0,
                    len: n,
                };
                let got = G::msm(backend, &mut work, &bases_lease, span).unwrap();
                let want = G::Projective::msm(&points, values).unwrap();
                assert_eq!(
                    got,
                    want,
                    "{} {n} {kind} scalars, {usage:?} bases (seed {seed})",
                    G::NAME
                );
            }
            work.release().unwrap();
            bases_lease.release().unwrap();
        }
    }
}
