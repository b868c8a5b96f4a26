//! The sparse product (A·z, B·z, C·z on the device) through the `ProverBackend` trait:
//! random compressed-row matrices (empty rows, repeated columns, rows longer than a
//! workgroup, coefficients one, minus one and others), staged with `stage_indices`
//! and `stage_scalars`, against core's `row_value` on fresh random assignments, with
//! `out` holding garbage before and a zero tail past the matrix's rows; with the
//! adapter's own limits, with every buffer split into chunks by a small binding limit,
//! and in the wide Fr code where the adapter has 64-bit integers. Matrices built by
//! `SparseMatrix::new` from arkworks-style rows are checked against the sums of those
//! rows themselves.

use crate::common;

use ark_ff::{Field, UniformRand, Zero};
use ark_std::rand::Rng;
use crucible_backend_wgpu::{NttMul, WgpuBackend, WgpuOptions, WgpuTuning};
use crucible_core::groth16::{row_value, SparseMatrix};
use crucible_core::registry::ProbeOptions;
use crucible_core::{
    BufferUse, ElementKind, Error, Fr, Lease, MemoryPlan, PlanKey, ProverBackend, ScalarBuf,
    ScratchNeed, SparseMatrixBufs,
};

const ROW_STARTS: PlanKey = PlanKey::new("test", "row starts");
const ENTRIES: PlanKey = PlanKey::new("test", "entries");
const COEFFICIENTS: PlanKey = PlanKey::new("test", "coefficients");
const Z: PlanKey = PlanKey::new("test", "z");
const OUT: PlanKey = PlanKey::new("test", "out");

/// A matrix in the device layout, on the host.
struct HostMatrix {
    row_starts: Vec<u32>,
    entries: Vec<u32>,
    coefficients: Vec<Fr>,
}

impl HostMatrix {
    fn rows(&self) -> usize {
        self.row_starts.len() - 1
    }

    fn of(m: &SparseMatrix) -> HostMatrix {
        HostMatrix {
            row_starts: m.row_starts().to_vec(),
            entries: m.entry_words().to_vec(),
            coefficients: m.coefficients().to_vec(),
        }
    }
}

/// The shape of a random matrix.
struct Shape {
    name: &'static str,
    rows: usize,
    /// Length of `out` (at least `rows`: the rest must come back zero).
    out_len: usize,
    /// Length of the assignment.
    columns: usize,
    /// Coefficients besides one and minus one.
    others: usize,
    /// Rows of a given length (the others: empty one time in five, else 1 to 8).
    long_rows: &'static [(usize, usize)],
    /// No entry in any row.
    empty: bool,
}

/// A random matrix of `shape`: a quarter of the entries repeat their row's previous
/// column; coefficient indices 0, 1 and the others about equally often.
fn random_matrix(rng: &mut impl Rng, shape: &Shape) -> HostMatrix {
    let mut coefficients = vec![Fr::ONE, -Fr::ONE];
    coefficients.extend((0..shape.others).map(|_| Fr::rand(rng)));
    let mut row_starts = vec![0u32];
    let mut entries = Vec::new();
    for r in 0..shape.rows {
        let len = match shape.long_rows.iter().find(|(row, _)| *row == r) {
            Some((_, len)) => *len,
            None if shape.empty || rng.gen_ratio(1, 5) => 0,
            None => rng.gen_range(1..=8),
        };
        let mut column = rng.gen_range(0..shape.columns);
        for _ in 0..len {
            if !rng.gen_ratio(1, 4) {
                column = rng.gen_range(0..shape.columns);
            }
            let coefficient = match rng.gen_range(0..3) {
                0 => 0,
                1 => 1,
                _ if coefficients.len() > 2 => rng.gen_range(2..coefficients.len()),
                _ => rng.gen_range(0..2),
            };
            entries.extend([column as u32, coefficient as u32]);
        }
        row_starts.push((entries.len() / 2) as u32);
    }
    HostMatrix {
        row_starts,
        entries,
        coefficients,
    }
}

fn bytes(backend: &dyn ProverBackend, kind: ElementKind, len: usize) -> u64 {
    backend.buffer_bytes(kind, len, BufferUse::Plain).unwrap()
}

/// `m` staged into a lease of its own (as a key's matrices are).
fn stage_matrix(backend: &dyn ProverBackend, m: &HostMatrix) -> (Lease, SparseMatrixBufs) {
    let mut plan = MemoryPlan::new("sparse product test matrix");
    plan.item(
        ROW_STARTS,
        bytes(backend, ElementKind::Index, m.row_starts.len()),
    )
    .item(ENTRIES, bytes(backend, ElementKind::Index, m.entries.len()))
    .item(
        COEFFICIENTS,
        bytes(backend, ElementKind::Scalar, m.coefficients.len()),
    );
    let mut lease = backend.allocate(plan).unwrap();
    let row_starts = backend
        .alloc_indices(&mut lease, ROW_STARTS, m.row_starts.len())
        .unwrap();
    let entries = backend
        .alloc_indices(&mut lease, ENTRIES, m.entries.len())
        .unwrap();
    let coefficients = backend
        .alloc_scalars(&mut lease, COEFFICIENTS, m.coefficients.len())
        .unwrap();
    backend
        .stage_indices(&mut lease, row_starts, &m.row_starts)
        .unwrap();
    backend
        .stage_indices(&mut lease, entries, &m.entries)
        .unwrap();
    backend
        .stage_scalars(&mut lease, coefficients, &m.coefficients)
        .unwrap();
    let bufs = SparseMatrixBufs {
        row_starts,
        entries,
        coefficients,
        rows: m.rows(),
        first_row: 0,
    };
    (lease, bufs)
}

/// A work lease with `z` and `out`, and the scratch every operation leases.
fn work_lease(
    backend: &dyn ProverBackend,
    columns: usize,
    out_len: usize,
) -> (Lease, ScalarBuf, ScalarBuf) {
    let mut plan = MemoryPlan::new("sparse product test work");
    plan.item(Z, bytes(backend, ElementKind::Scalar, columns))
        .item(OUT, bytes(backend, ElementKind::Scalar, out_len));
    plan.merge(&backend.scratch_plan(&ScratchNeed::default()));
    let mut lease = backend.allocate(plan).unwrap();
    let z = backend.alloc_scalars(&mut lease, Z, columns).unwrap();
    let out = backend.alloc_scalars(&mut lease, OUT, out_len).unwrap();
    (lease, z, out)
}

fn random_scalars(rng: &mut impl Rng, n: usize) -> Vec<Fr> {
    (0..n).map(|_| Fr::rand(rng)).collect()
}

/// Checks `got` against `want` (the matrix's rows) and zero past them.
fn check_rows(case: &str, got: &[Fr], want: &[Fr]) {
    for (r, g) in got.iter().enumerate() {
        let w = want.get(r).copied().unwrap_or(Fr::zero());
        assert!(
            *g == w,
            "{case}: row {r} of {} (out of {}) is {g}, expected {w}",
            want.len(),
            got.len()
        );
    }
}

/// Runs `m` on `backend` twice, each time on a fresh assignment of `columns` values
/// and over `out_len` values of garbage, against `row_value`; the second time creates
/// no buffer. Returns the submissions the second product made.
fn check_matrix(
    backend: &dyn ProverBackend,
    activity: &dyn Fn() -> crucible_backend_wgpu::Activity,
    rng: &mut impl Rng,
    case: &str,
    m: &HostMatrix,
    columns: usize,
    out_len: usize,
) -> u64 {
    let (matrices, bufs) = stage_matrix(backend, m);
    let (mut work, z, out) = work_lease(backend, columns, out_len);
    let mut submissions = 0;
    for pass in 0..2 {
        let values = random_scalars(rng, columns);
        backend.stage_scalars(&mut work, z, &values).unwrap();
        let garbage = random_scalars(rng, out_len);
        backend.stage_scalars(&mut work, out, &garbage).unwrap();
        let before = activity();
        backend
            .sparse_product(&mut work, &matrices, bufs, z, out)
            .unwrap_or_else(|e| panic!("{case}, product {pass}: {e}"));
        let after = activity();
        if pass == 1 {
            assert_eq!(
                after.buffers, before.buffers,
                "{case}: a repeated product created buffers"
            );
            submissions = after.submissions - before.submissions;
        }
        let want: Vec<Fr> = (0..m.rows())
            .map(|r| row_value(&m.row_starts, &m.entries, &m.coefficients, r, &values))
            .collect();
        let got = backend.read_scalars(&work, out).unwrap();
        check_rows(&format!("{case}, product {pass}"), &got, &want);
    }
    // As a streamed run: the rows from row `first` of `out` on, the values before it
    // left as they were (37 crosses a chunk of the small-binding backend's `out`).
    let first = (out_len - m.rows()).min(37);
    if first > 0 {
        let values = random_scalars(rng, columns);
        backend.stage_scalars(&mut work, z, &values).unwrap();
        let garbage = random_scalars(rng, out_len);
        backend.stage_scalars(&mut work, out, &garbage).unwrap();
        let run = SparseMatrixBufs {
            first_row: first,
            ..bufs
        };
        backend
            .sparse_product(&mut work, &matrices, run, z, out)
            .unwrap_or_else(|e| panic!("{case}, from row {first}: {e}"));
        let got = backend.read_scalars(&work, out).unwrap();
        assert_eq!(
            got[..first],
            garbage[..first],
            "{case}: rows before {first} changed"
        );
        let want: Vec<Fr> = (0..m.rows())
            .map(|r| row_value(&m.row_starts, &m.entries, &m.coefficients, r, &values))
            .collect();
        check_rows(&format!("{case}, from row {first}"), &got[first..], &want);
    }
    work.release().unwrap();
    matrices.release().unwrap();
    submissions
}

/// Every shape of [`check_shapes`] at the adapter's own limits.
const SHAPES: &[Shape] = &[
    Shape {
        name: "mixed rows, a zero tail",
        rows: 500,
        out_len: 640,
        columns: 300,
        others: 30,
        long_rows: &[(7, 200), (123, 70), (499, 65)],
        empty: false,
    },
    Shape {
        name: "rows fill out, coefficients ±1 only",
        rows: 256,
        out_len: 256,
        columns: 50,
        others: 0,
        long_rows: &[(0, 64), (255, 129)],
        empty: false,
    },
    Shape {
        name: "no entry in any row",
        rows: 40,
        out_len: 64,
        columns: 10,
        others: 3,
        long_rows: &[],
        empty: true,
    },
    Shape {
        name: "no rows",
        rows: 0,
        out_len: 16,
        columns: 4,
        others: 1,
        long_rows: &[],
        empty: false,
    },
    Shape {
        name: "one row of 5000 entries",
        rows: 1,
        out_len: 3,
        columns: 1000,
        others: 100,
        long_rows: &[(0, 5000)],
        empty: false,
    },
];

fn check_shapes(backend: &WgpuBackend, rng: &mut impl Rng, shapes: &[Shape]) {
    let activity = || backend.activity();
    let dyn_backend: &dyn ProverBackend = backend;
    assert!(dyn_backend.supports_sparse_product());
    for shape in shapes {
        let m = random_matrix(rng, shape);
        let submissions = check_matrix(
            dyn_backend,
            &activity,
            rng,
            shape.name,
            &m,
            shape.columns,
            shape.out_len,
        );
        println!(
            "{}: {} rows, {} entries, {} submissions",
            shape.name,
            shape.rows,
            m.entries.len() / 2,
            submissions
        );
    }
    assert_eq!(dyn_backend.budget().in_use(), 0, "every lease released");
}

/// The module names the product's pipelines were created from on `backend`.
fn product_modules(backend: &WgpuBackend) -> Vec<String> {
    backend
        .pipeline_compiles()
        .into_iter()
        .filter(|c| c.entry == "sparse_product")
        .map(|c| c.module)
        .collect()
}

#[test]
fn sparse_product_matches_the_host_rows() {
    let _serial = common::serial();
    let Some(backend) = common::backend("sparse_product_matches_the_host_rows") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    check_shapes(backend, &mut rng, SHAPES);
    let expected = if backend.has_int64() && backend.tuned().ntt_mul == NttMul::Wide {
        "SparseProductWide"
    } else {
        "SparseProduct"
    };
    assert_eq!(product_modules(backend), [expected]);

    // The same in the wide Fr code, where the adapter has 64-bit integers.
    if !backend.has_int64() {
        println!("the wide form is not checked: this adapter has no 64-bit integers in shaders");
        return;
    }
    let options = WgpuOptions {
        tuning: WgpuTuning {
            ntt_mul: Some(NttMul::Wide),
            ..WgpuTuning::default()
        },
        ..WgpuOptions::default()
    };
    let wide = WgpuBackend::open(&ProbeOptions::default(), &options).expect("a wide backend");
    check_shapes(&wide, &mut rng, SHAPES);
    assert_eq!(product_modules(&wide), ["SparseProductWide"]);
}

/// Bindings of 1 KiB: chunks of 32 scalars and of 256 index words (128 entries), so
/// that `out`, `z`, the coefficients and the entries each span several chunks, rows
/// span entry chunks, an `out` chunk's row starts span two index chunks (rows 224 to
/// 256), and the last `out` chunk lies wholly past the matrix's rows.
#[test]
fn chunked_sparse_product_matches_the_host_rows() {
    let _serial = common::serial();
    let Some(backend) =
        common::small_binding_backend("chunked_sparse_product_matches_the_host_rows", 1024)
    else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    check_shapes(
        backend,
        &mut rng,
        &[
            Shape {
                name: "chunked: every buffer in several chunks",
                rows: 300,
                out_len: 350,
                columns: 100,
                others: 40,
                long_rows: &[(3, 300), (250, 130), (255, 65)],
                empty: false,
            },
            Shape {
                name: "chunked: rows fill out",
                rows: 257,
                out_len: 257,
                columns: 33,
                others: 31,
                long_rows: &[(256, 129)],
                empty: false,
            },
            Shape {
                name: "chunked: no entry in any row",
                rows: 70,
                out_len: 100,
                columns: 40,
                others: 2,
                long_rows: &[],
                empty: true,
            },
        ],
    );
}

/// Matrices from arkworks-style rows (`(coefficient, column)` lists) through
/// `SparseMatrix::new`, instance rows appended as A's are: the device's rows equal
/// the rows' own sums, and `SparseMatrix::evaluate_into`.
#[test]
fn matrices_from_arkworks_rows_evaluate_on_the_device() {
    let _serial = common::serial();
    let Some(backend) = common::backend("matrices_from_arkworks_rows_evaluate_on_the_device")
    else {
        return;
    };
    let activity = || backend.activity();
    let dyn_backend: &dyn ProverBackend = backend;
    let (mut rng, _seed) = common::rng();
    let columns = 97;
    // A few shared constants (real circuits repeat theirs), one and minus one.
    let constants: Vec<Fr> = (0..5).map(|_| Fr::rand(&mut rng)).collect();
    for (case, constraints, instance) in [
        ("A-like: instance rows appended", 150, 4),
        ("B-like: no instance rows", 90, 0),
        ("every column an instance row", 10, columns),
    ] {
        let rows: Vec<Vec<(Fr, usize)>> = (0..constraints)
            .map(|r| {
                let len = match r {
                    5 => 100,
                    _ if rng.gen_ratio(1, 6) => 0,
                    _ => rng.gen_range(1..6),
                };
                (0..len)
                    .map(|_| {
                        let c = match rng.gen_range(0..4) {
                            0 => Fr::ONE,
                            1 => -Fr::ONE,
                            2 => constants[rng.gen_range(0..constants.len())],
                            _ => Fr::rand(&mut rng),
                        };
                        // Column 0 (the constant one) often, as in real circuits.
                        let col = if rng.gen_ratio(1, 5) {
                            0
                        } else {
                            rng.gen_range(0..columns)
                        };
                        (c, col)
                    })
                    .collect()
            })
            .collect();
        let matrix = SparseMatrix::new(&rows, instance, columns).expect("a valid matrix");
        let m = HostMatrix::of(&matrix);
        assert_eq!(m.rows(), constraints + instance, "{case}");
        let out_len = (m.rows() + 1).next_power_of_two();
        // The device against row_value (twice, fresh assignments) ...
        check_matrix(dyn_backend, &activity, &mut rng, case, &m, columns, out_len);
        // ... and row_value's layout against the rows themselves.
        let (matrices, bufs) = stage_matrix(dyn_backend, &m);
        let (mut work, z, out) = work_lease(dyn_backend, columns, out_len);
        let values = random_scalars(&mut rng, columns);
        backend.stage_scalars(&mut work, z, &values).unwrap();
        backend
            .sparse_product(&mut work, &matrices, bufs, z, out)
            .unwrap();
        let got = backend.read_scalars(&work, out).unwrap();
        let mut want: Vec<Fr> = rows
            .iter()
            .map(|row| row.iter().map(|(c, col)| *c * values[*col]).sum())
            .collect();
        want.extend(&values[..instance]);
        check_rows(&format!("{case}, against the rows"), &got, &want);
        let mut evaluated = vec![Fr::zero(); m.rows()];
        matrix.evaluate_into(&values, &mut evaluated);
        check_rows(&format!("{case}, against evaluate_into"), &got, &evaluated);
        work.release().unwrap();
        matrices.release().unwrap();
    }
    assert_eq!(dyn_backend.budget().in_use(), 0, "every lease released");
}

/// Buffers that do not fit each other are refused before anything runs, and the
/// leases still release.
#[test]
fn mismatched_sparse_product_buffers_are_refused() {
    let _serial = common::serial();
    let Some(backend) = common::backend("mismatched_sparse_product_buffers_are_refused") else {
        return;
    };
    let backend: &dyn ProverBackend = backend;
    let (mut rng, _seed) = common::rng();
    let shape = Shape {
        name: "refused",
        rows: 20,
        out_len: 32,
        columns: 8,
        others: 2,
        long_rows: &[],
        empty: false,
    };
    let m = random_matrix(&mut rng, &shape);
    let (matrices, bufs) = stage_matrix(backend, &m);
    let (mut work, z, out) = work_lease(backend, shape.columns, shape.out_len);
    let more_rows = SparseMatrixBufs { rows: 40, ..bufs };
    for (case, matrix, z, out) in [
        ("more rows than out holds", more_rows, z, out),
        ("z is out", bufs, out, out),
    ] {
        match backend.sparse_product(&mut work, &matrices, matrix, z, out) {
            Err(Error::InvalidInput(message)) => {
                assert!(message.contains("sparse product"), "{case}: {message}")
            }
            other => panic!("{case}: expected InvalidInput, got {other:?}"),
        }
    }
    // Staging more words than an index buffer holds.
    let mut matrices = matrices;
    let too_many = vec![0u32; bufs.row_starts.len() + 1];
    assert!(
        backend
            .stage_indices(&mut matrices, bufs.row_starts, &too_many)
            .is_err(),
        "staging {} words into {}",
        too_many.len(),
        bufs.row_starts.len()
    );
    work.release().unwrap();
    matrices.release().unwrap();
    assert_eq!(backend.budget().in_use(), 0, "every lease released");
}
