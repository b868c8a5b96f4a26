//! The QAP evaluation on the device: the sparse product on its own (empty rows, a
//! variable twice in a row, the constant column, rows longer than a workgroup, the
//! zeroed tail, a streamed run's rows from a row of the output on) against the
//! host's, and whole proofs under schedules that evaluate on the device, the matrices
//! staged with the key or streamed in runs, byte for byte against ark-groth16, with
//! both reductions and with C taken as A·z ∘ B·z (a `.zkey`'s circuit).

use std::sync::Arc;

use ark_ff::{Field, UniformRand};
use ark_std::rand::{rngs::StdRng, Rng};
use crucible_core::fixtures::circuit::BitHeavyCircuit;
use crucible_core::fixtures::key_cache::{generate_key_id, BenchKeyId};
use crucible_core::groth16::{
    DomainVectors, Evaluation, KeyOptions, Query, QuerySet, Reduction, Schedule, SparseMatrix,
};
use crucible_core::{
    ElementKind, MemoryPlan, PairingCurve, ProverBackend, ScratchNeed, SparseMatrixBufs,
};

use crate::cross_check::{compare_staged, CMatrix};
use crate::exact_shape_circuit::ExactShapeCircuit;
use crate::inputs::random_scalars;
use crate::items;
use crate::runner::Runner;
use crate::CaseError;

/// Entries of the long row: more than a workgroup or a warp handles at once.
const LONG_ROW: usize = 300;

/// A random matrix of `rows` rows over `columns` columns: empty rows, rows naming a
/// variable twice, the constant column, coefficients one, minus one and random, and
/// one row of [`LONG_ROW`] entries.
fn random_rows<E: PairingCurve>(
    rng: &mut StdRng,
    rows: usize,
    columns: usize,
) -> Vec<Vec<(E::ScalarField, usize)>> {
    let coefficient = |rng: &mut StdRng| match rng.gen_range(0..4) {
        0 => E::ScalarField::ONE,
        1 => -E::ScalarField::ONE,
        2 => E::ScalarField::from(rng.gen_range(2u64..6)),
        _ => E::ScalarField::rand(rng),
    };
    (0..rows)
        .map(|r| {
            let len = match r % 7 {
                0 => 0,
                3 if r == 3 => LONG_ROW,
                _ => rng.gen_range(1..6),
            };
            let mut row: Vec<(E::ScalarField, usize)> = (0..len)
                .map(|_| (coefficient(rng), rng.gen_range(0..columns)))
                .collect();
            if r % 5 == 1 {
                // The same variable twice, and the constant one.
                let col = rng.gen_range(0..columns);
                row.push((coefficient(rng), col));
                row.push((coefficient(rng), col));
                row.push((coefficient(rng), 0));
            }
            row
        })
        .collect()
}

/// One sparse product into a buffer longer than the matrix, holding other values
/// before, against the host's product and a zero tail. With `first_row` > 0 the
/// matrix stands for a streamed run of rows: its rows land from that row of the
/// buffer on, the values before it stay, and its row starts sit in a buffer with room
/// for more (as a run's buffer is sized for the longest run).
fn product_case<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    rng: &mut StdRng,
    (rows, identity_rows, columns): (usize, usize, usize),
    first_row: usize,
) -> Result<(), CaseError> {
    if !backend.supports_sparse_product() {
        return Err(CaseError::Unsupported(format!(
            "{} has no sparse product",
            backend.info().name
        )));
    }
    let matrix = SparseMatrix::new(
        &random_rows::<E>(rng, rows, columns),
        identity_rows,
        columns,
    )?;
    let z: Vec<E::ScalarField> = random_scalars(rng, columns);
    let out_len = first_row + matrix.rows() + 5;
    let before: Vec<E::ScalarField> = random_scalars(rng, out_len);
    let mut want = vec![E::ScalarField::from(0u64); out_len];
    want[..first_row].copy_from_slice(&before[..first_row]);
    matrix.evaluate_into(&z, &mut want[first_row..first_row + matrix.rows()]);
    let slack = if first_row > 0 { 9 } else { 0 };

    let words = |len: usize| items::bytes(backend, ElementKind::Index, len);
    let scalars = |len: usize| items::bytes(backend, ElementKind::Scalar, len);
    let mut matrix_plan = MemoryPlan::new("conformance sparse matrix");
    matrix_plan
        .item(items::ROW_STARTS, words(matrix.row_starts().len() + slack))
        .item(items::ENTRIES, words(matrix.entry_words().len()))
        .item(items::FACTORS, scalars(matrix.coefficients().len()));
    let mut work_plan = MemoryPlan::new("conformance sparse product");
    work_plan
        .item(items::X, scalars(columns))
        .item(items::Y, scalars(out_len));
    // The scratch every plan of a pointwise operation holds (wgpu's parameters).
    work_plan.merge(&backend.scratch_plan(&ScratchNeed::default()));
    let mut held = backend.allocate(matrix_plan)?;
    let mut work = backend.allocate(work_plan)?;
    let row_starts = backend.alloc_indices(
        &mut held,
        items::ROW_STARTS,
        matrix.row_starts().len() + slack,
    )?;
    let entries = backend.alloc_indices(&mut held, items::ENTRIES, matrix.entry_words().len())?;
    let coefficients =
        backend.alloc_scalars(&mut held, items::FACTORS, matrix.coefficients().len())?;
    backend.stage_indices(&mut held, row_starts, matrix.row_starts())?;
    backend.stage_indices(&mut held, entries, matrix.entry_words())?;
    backend.stage_scalars(&mut held, coefficients, matrix.coefficients())?;
    let zbuf = backend.alloc_scalars(&mut work, items::X, columns)?;
    let out = backend.alloc_scalars(&mut work, items::Y, out_len)?;
    backend.stage_scalars(&mut work, zbuf, &z)?;
    backend.stage_scalars(&mut work, out, &before)?;
    let bufs = SparseMatrixBufs {
        row_starts,
        entries,
        coefficients,
        rows: matrix.rows(),
        first_row,
    };
    crucible_core::check_sparse_product(&bufs, zbuf, out)?;
    backend.sparse_product(&mut work, &held, bufs, zbuf, out)?;
    let got = backend.read_scalars(&work, out)?;
    work.release()?;
    held.release()?;
    if let Some(r) = (0..out_len).find(|&r| got[r] != want[r]) {
        let what = if r < first_row {
            format!("value {r}, before the first row {first_row}, changed")
        } else if r < first_row + matrix.rows() {
            let m = r - first_row;
            format!(
                "row {m} ({} entries) at {r}",
                matrix.row_starts()[m + 1] - matrix.row_starts()[m]
            )
        } else {
            format!(
                "tail value {r} (past {} rows from {first_row})",
                matrix.rows()
            )
        };
        return Err(fail!(
            "sparse product of {rows}+{identity_rows} rows over {columns} columns from row {first_row}: {what} is {}, want {}",
            got[r],
            want[r]
        ));
    }
    Ok(())
}

/// The schedules a device evaluation is proved under: every domain layout, bases
/// resident and streamed (chunks of `chunk` points), with the matrices staged with the
/// key; then streamed in runs of 3 entries (many runs, some rows alone in theirs)
/// under both domain layouts, and in runs that hold each matrix whole.
fn schedules(chunk: usize) -> Vec<Schedule> {
    let at = |resident, domain, evaluation| Schedule {
        resident,
        domain,
        chunk,
        evaluation,
    };
    let device = Evaluation::Device;
    let runs = Evaluation::DeviceStreamed { chunk: 3 };
    let whole = Evaluation::DeviceStreamed { chunk: 1 << 20 };
    let some = QuerySet::ALL.without(Query::BG2);
    vec![
        at(QuerySet::ALL, DomainVectors::Resident, device),
        at(QuerySet::ALL, DomainVectors::Sequenced, device),
        at(QuerySet::NONE, DomainVectors::Sequenced, device),
        at(some, DomainVectors::Resident, device),
        at(QuerySet::ALL, DomainVectors::Resident, runs),
        at(QuerySet::NONE, DomainVectors::Sequenced, runs),
        at(some, DomainVectors::Sequenced, whole),
    ]
}

/// [`compare_staged`] with or without C as `c` says, the failure named by its second part.
fn compare_named<
    E: PairingCurve,
    C: ark_relations::gr1cs::ConstraintSynthesizer<E::ScalarField>,
>(
    backend: &dyn ProverBackend<E>,
    pk: &Arc<crucible_core::groth16::ProvingKey<E>>,
    circuit: C,
    rng: &mut StdRng,
    options: &KeyOptions,
    (c, what): (CMatrix, String),
) -> Result<(), CaseError> {
    compare_staged(backend, Arc::clone(pk), circuit, rng, options, c).map_err(|e| e.context(&what))
}

/// The sparse product at sizes around a workgroup, then proofs evaluated on the
/// device on domain boundaries.
pub fn run<E: PairingCurve>(r: &mut Runner<'_, E>) {
    let backend = r.backend;
    for (rows, identity_rows, columns) in [(1, 0, 1), (7, 3, 5), (255, 1, 40), (1100, 4, 300)] {
        r.case(
            &format!("sparse-product/rows={rows}+{identity_rows}/columns={columns}"),
            |rng| product_case(backend, rng, (rows, identity_rows, columns), 0),
        );
    }
    // A streamed run's product: from a row inside the first workgroup, and one past it.
    for (rows, identity_rows, columns, first_row) in [(7, 3, 5, 3), (255, 1, 40, 300)] {
        r.case(
            &format!(
                "sparse-product-run/rows={rows}+{identity_rows}/columns={columns}/from={first_row}"
            ),
            |rng| product_case(backend, rng, (rows, identity_rows, columns), first_row),
        );
    }
    let unsupported = |backend: &dyn ProverBackend<E>| {
        CaseError::Unsupported(format!("{} has no sparse product", backend.info().name))
    };
    let k = r.config.proof_log_size.min(5);
    // Each schedule meets each count of public inputs once, on a boundary that moves
    // with it (an orthogonal array: schedule j runs where i + d + j = 0 mod 3): 14
    // proofs where the full product takes 42.
    for (i, inputs) in [0usize, 3].into_iter().enumerate() {
        for (d, delta) in [-1i64, 0, 1].into_iter().enumerate() {
            let total = (1i64 << k) + delta;
            let constraints = (total - inputs as i64 - 1).max(1) as usize;
            let name = format!(
                "device-evaluation/constraints={constraints}/inputs={inputs}/2^{k}{delta:+}"
            );
            r.case(&name, |rng| {
                if !backend.supports_sparse_product() {
                    return Err(unsupported(backend));
                }
                // A tenth of the rows check bits (b·b = b): a variable twice in a row.
                let id = BenchKeyId {
                    constraints,
                    inputs,
                    seed: rng.gen(),
                    bits_per_mille: 100,
                };
                let pk = Arc::new(generate_key_id(&id)?);
                let circuit = BitHeavyCircuit {
                    constraints,
                    inputs,
                    seed: rng.gen(),
                    bits_per_mille: 100,
                };
                let planned = schedules(7).into_iter().enumerate();
                for (_, schedule) in planned.filter(|(j, _)| (i + d + j) % 3 == 0) {
                    let options = KeyOptions {
                        schedule: Some(schedule),
                        ..KeyOptions::default()
                    };
                    let named = (CMatrix::Staged, format!("schedule {schedule}"));
                    compare_named(backend, &pk, circuit, rng, &options, named)?;
                }
                Ok(())
            });
        }
    }
    // snarkjs' reduction with C·z taken as A·z ∘ B·z, as a `.zkey` is proved; and
    // ark-groth16's with the same, which gives the same values for a satisfied circuit.
    for (reduction, tag) in [
        (Reduction::Circom, "circom"),
        (Reduction::Libsnark, "libsnark"),
    ] {
        for delta in [-1i64, 0, 1] {
            let inputs = 2;
            let constraints = ((1i64 << k) + delta - inputs as i64 - 1).max(1) as usize;
            let name = format!(
                "device-evaluation-without-c/{tag}/constraints={constraints}/2^{k}{delta:+}"
            );
            r.case(&name, |rng| {
                if !backend.supports_sparse_product() {
                    return Err(unsupported(backend));
                }
                let circuit = ExactShapeCircuit {
                    constraints,
                    inputs,
                    witnesses: 3,
                    seed: rng.gen(),
                };
                let pk = Arc::new(circuit.key(reduction, rng.gen())?);
                for evaluation in [Evaluation::Device, Evaluation::DeviceStreamed { chunk: 3 }] {
                    let options = KeyOptions {
                        reduction,
                        schedule: Some(Schedule {
                            evaluation,
                            ..Schedule::RESIDENT
                        }),
                        ..KeyOptions::default()
                    };
                    let named = (CMatrix::Omitted, format!("{evaluation:?}"));
                    compare_named(backend, &pk, circuit, rng, &options, named)?;
                }
                Ok(())
            });
        }
    }
}
