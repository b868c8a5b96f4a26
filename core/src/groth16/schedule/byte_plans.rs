//! A schedule's exact byte plans: the staged key's, and one proof's.

use super::{DomainVectors, Evaluation, MatrixSizes, Query, Schedule};
use crate::groth16::{items, Reduction};
use crate::PairingCurve;
use crate::{BufferUse, ElementKind, MemoryPlan, ProofShape, ProverBackend, Result, ScratchNeed};

/// Plan for the staged key: the resident queries, laid out for reuse, and the
/// matrices where the schedule evaluates on the device.
pub fn key_plan_for<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    shape: &ProofShape,
    reduction: Reduction,
    schedule: &Schedule,
    matrices: Option<&MatrixSizes>,
) -> Result<MemoryPlan> {
    let mut plan = MemoryPlan::new(format!("proving key on {}", backend.info().label()));
    for q in schedule.resident.iter() {
        let bytes = backend.buffer_bytes(q.kind(), q.len(shape, reduction), BufferUse::Resident)?;
        plan.item(q.key(), bytes);
    }
    if let (Evaluation::Device, Some(m)) = (schedule.evaluation, matrices) {
        let words = |len: usize| backend.buffer_bytes(ElementKind::Index, len, BufferUse::Plain);
        for i in 0..m.staged() {
            let at = i as u32;
            plan.item(items::MATRIX_ROW_STARTS.at(at), words(m.rows[i] + 1)?)
                .item(items::MATRIX_ENTRIES.at(at), words(2 * m.entries[i])?)
                .item(
                    items::MATRIX_COEFFICIENTS.at(at),
                    backend.buffer_bytes(
                        ElementKind::Scalar,
                        m.coefficients[i],
                        BufferUse::Plain,
                    )?,
                );
        }
    }
    Ok(plan)
}

/// Plan for one proof under `schedule`: the domain vectors, the assignment, the chunk
/// buffers of the streamed queries (and matrices, sized from `matrices`) and the
/// scratch of every NTT and MSM.
pub fn proof_plan_for<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    shape: &ProofShape,
    reduction: Reduction,
    schedule: &Schedule,
    matrices: Option<&MatrixSizes>,
) -> Result<MemoryPlan> {
    let n = shape.domain_size();
    let vars = shape.num_variables();
    let scalars = |len: usize| backend.buffer_bytes(ElementKind::Scalar, len, BufferUse::Plain);
    let mut plan = MemoryPlan::new(format!(
        "proof of 2^{} domain on {} ({schedule})",
        shape.log_domain,
        backend.info().label()
    ));
    match (schedule.domain, schedule.evaluation) {
        (DomainVectors::Resident, _) => {
            plan.item(items::DOMAIN_A, scalars(n)?)
                .item(items::DOMAIN_B, scalars(n)?)
                .item(items::DOMAIN_C, scalars(n)?)
                .item(items::ASSIGNMENT, scalars(vars)?);
        }
        (DomainVectors::Sequenced, Evaluation::Host) => {
            plan.item(items::DOMAIN_A, scalars(n)?)
                .item(items::DOMAIN_B, scalars(n.max(vars))?);
        }
        // The products read the assignment, so it is staged first and stays.
        (DomainVectors::Sequenced, Evaluation::Device | Evaluation::DeviceStreamed { .. }) => {
            plan.item(items::DOMAIN_A, scalars(n)?)
                .item(items::DOMAIN_B, scalars(n)?)
                .item(items::ASSIGNMENT, scalars(vars)?);
        }
    }
    let mut need = ScratchNeed {
        ntt: Some(shape.domain()?),
        ..ScratchNeed::default()
    };
    for q in Query::ALL {
        let terms = q.msm_terms(shape, reduction);
        let len = if schedule.resident.contains(q) {
            terms
        } else {
            terms.min(schedule.chunk)
        };
        match q.kind() {
            ElementKind::G2 => need.msm_g2 = need.msm_g2.max(len),
            _ => need.msm_g1 = need.msm_g1.max(len),
        }
    }
    let (g1_chunk, g2_chunk) = chunk_lens(shape, reduction, schedule);
    for (key, kind, len) in [
        (items::G1_CHUNK, ElementKind::G1, g1_chunk),
        (items::G2_CHUNK, ElementKind::G2, g2_chunk),
    ] {
        if len > 0 {
            let bytes = backend.buffer_bytes(kind, len, BufferUse::Plain)?;
            plan.item(key.at(0), bytes).item(key.at(1), bytes);
        }
    }
    if let (Evaluation::DeviceStreamed { chunk }, Some(m)) = (schedule.evaluation, matrices) {
        // One run of any matrix at a time, in the first chunk lease (no MSM uses it
        // before the products are done).
        let (starts, entries, coefficients) = m.run_buffers(chunk);
        let words = |len: usize| backend.buffer_bytes(ElementKind::Index, len, BufferUse::Plain);
        plan.item(items::MATRIX_CHUNK_ROW_STARTS.at(0), words(starts)?)
            .item(items::MATRIX_CHUNK_ENTRIES.at(0), words(entries)?)
            .item(
                items::MATRIX_CHUNK_COEFFICIENTS.at(0),
                scalars(coefficients)?,
            );
    }
    plan.merge(&backend.scratch_plan(&need));
    Ok(plan)
}

/// Points of the G1 and of the G2 chunk buffers a proof under `schedule` allocates
/// (0 when no query of that group streams): the chunk, or the longest streamed MSM of
/// the group if that is shorter.
pub fn chunk_lens(shape: &ProofShape, reduction: Reduction, schedule: &Schedule) -> (usize, usize) {
    let (mut g1, mut g2) = (0, 0);
    for q in Query::ALL
        .into_iter()
        .filter(|q| !schedule.resident.contains(*q))
    {
        let len = q.msm_terms(shape, reduction).min(schedule.chunk);
        match q.kind() {
            ElementKind::G2 => g2 = g2.max(len),
            _ => g1 = g1.max(len),
        }
    }
    (g1, g2)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{
        matrices, shape, PlanningBackend, G1, G2, INDEX, SCALAR, SCRATCH,
    };
    use super::*;
    use crate::groth16::schedule::QuerySet;

    fn key(schedule: Schedule, matrices: Option<&MatrixSizes>) -> MemoryPlan {
        let backend = PlanningBackend::new(1 << 40);
        key_plan_for(&backend, &shape(), Reduction::Libsnark, &schedule, matrices).unwrap()
    }

    fn proof(schedule: Schedule, matrices: Option<&MatrixSizes>) -> MemoryPlan {
        let backend = PlanningBackend::new(1 << 40);
        proof_plan_for(&backend, &shape(), Reduction::Libsnark, &schedule, matrices).unwrap()
    }

    #[test]
    fn a_resident_key_holds_every_query() {
        let plan = key(Schedule::RESIDENT, None);
        assert_eq!(plan.bytes_of(items::H_QUERY), 1023 * G1);
        assert_eq!(plan.bytes_of(items::L_QUERY), 997 * G1);
        assert_eq!(plan.bytes_of(items::A_QUERY), 1000 * G1);
        assert_eq!(plan.bytes_of(items::B_G1_QUERY), 1000 * G1);
        assert_eq!(plan.bytes_of(items::B_G2_QUERY), 1000 * G2);
        assert_eq!(plan.total_bytes(), 577_920);
        // snarkjs' reduction has one more h point.
        let circom = key_plan_for(
            &PlanningBackend::new(1 << 40),
            &shape(),
            Reduction::Circom,
            &Schedule::RESIDENT,
            None,
        )
        .unwrap();
        assert_eq!(circom.bytes_of(items::H_QUERY), 1024 * G1);
    }

    #[test]
    fn a_resident_proof_holds_three_domain_vectors_the_assignment_and_whole_msm_scratch() {
        let plan = proof(Schedule::RESIDENT, None);
        for key in [items::DOMAIN_A, items::DOMAIN_B, items::DOMAIN_C] {
            assert_eq!(plan.bytes_of(key), 1024 * SCALAR);
        }
        assert_eq!(plan.bytes_of(items::ASSIGNMENT), 1000 * SCALAR);
        assert_eq!(plan.find(items::G1_CHUNK.at(0)), None);
        // NTT of 1024, the longest G1 MSM (h, 1023 terms), G2 over 999 terms (the
        // constant one is added by the final combination).
        assert_eq!(plan.bytes_of(SCRATCH), 32 * 1024 + 8 * 1023 + 16 * 999);
        assert_eq!(plan.total_bytes(), 187_240);
    }

    #[test]
    fn a_streamed_sequenced_proof_holds_two_domain_buffers_and_two_chunks_a_group() {
        let schedule = Schedule {
            resident: QuerySet::NONE,
            domain: DomainVectors::Sequenced,
            chunk: 256,
            evaluation: Evaluation::Host,
        };
        let key = key(schedule, None);
        assert_eq!(key.total_bytes(), 0);
        let plan = proof(schedule, None);
        assert_eq!(plan.bytes_of(items::DOMAIN_A), 1024 * SCALAR);
        assert_eq!(plan.bytes_of(items::DOMAIN_B), 1024 * SCALAR);
        assert_eq!(plan.find(items::DOMAIN_C), None);
        assert_eq!(plan.find(items::ASSIGNMENT), None);
        for at in [0, 1] {
            assert_eq!(plan.bytes_of(items::G1_CHUNK.at(at)), 256 * G1);
            assert_eq!(plan.bytes_of(items::G2_CHUNK.at(at)), 256 * G2);
        }
        // The MSMs' scratch is sized by the chunk, not by the query.
        assert_eq!(plan.bytes_of(SCRATCH), 32 * 1024 + 8 * 256 + 16 * 256);
        assert_eq!(plan.total_bytes(), 251_904);
    }

    #[test]
    fn chunk_buffers_are_no_longer_than_the_longest_streamed_msm_of_their_group() {
        let schedule = Schedule {
            resident: QuerySet::ALL.without(Query::BG2),
            domain: DomainVectors::Resident,
            chunk: 4096,
            evaluation: Evaluation::Host,
        };
        assert_eq!(
            chunk_lens(&shape(), Reduction::Libsnark, &schedule),
            (0, 999)
        );
        let h_and_l = Schedule {
            resident: QuerySet::ALL.without(Query::H).without(Query::L),
            chunk: 1000,
            ..schedule
        };
        assert_eq!(
            chunk_lens(&shape(), Reduction::Libsnark, &h_and_l),
            (1000, 0)
        );
        assert_eq!(
            chunk_lens(&shape(), Reduction::Libsnark, &Schedule::RESIDENT),
            (0, 0)
        );
    }

    #[test]
    fn a_device_evaluation_stages_each_matrix_with_the_key() {
        let schedule = Schedule {
            evaluation: Evaluation::Device,
            ..Schedule::RESIDENT
        };
        let with_c = matrices(true);
        let plan = key(schedule, Some(&with_c));
        let queries = 577_920;
        for (at, rows, entries, coefficients) in
            [(0, 1003, 2000, 5), (1, 1000, 1500, 4), (2, 1000, 1000, 3)]
        {
            assert_eq!(
                plan.bytes_of(items::MATRIX_ROW_STARTS.at(at)),
                (rows + 1) * INDEX
            );
            assert_eq!(
                plan.bytes_of(items::MATRIX_ENTRIES.at(at)),
                2 * entries * INDEX
            );
            assert_eq!(
                plan.bytes_of(items::MATRIX_COEFFICIENTS.at(at)),
                coefficients * SCALAR
            );
        }
        assert_eq!(
            plan.total_bytes(),
            queries + 4 * (1004 + 1001 + 1001) + 8 * 4500 + 32 * 12
        );
        // Without C (a .zkey's circuit) two matrices are staged.
        let without_c = matrices(false);
        let plan = key(schedule, Some(&without_c));
        assert_eq!(plan.find(items::MATRIX_ENTRIES.at(2)), None);
        assert_eq!(plan.bytes_of(items::MATRIX_ENTRIES.at(1)), 2 * 1500 * INDEX);
    }

    #[test]
    fn streamed_matrices_take_one_run_buffer_in_the_proof_and_nothing_in_the_key() {
        let schedule = Schedule {
            evaluation: Evaluation::DeviceStreamed { chunk: 512 },
            ..Schedule::RESIDENT
        };
        let m = matrices(true);
        let key = key(schedule, Some(&m));
        assert_eq!(key.total_bytes(), 577_920);
        let plan = proof(schedule, Some(&m));
        // 512 rows and a start past the last, 512 entries of two words, the most
        // coefficients of any matrix (A's 5).
        assert_eq!(
            plan.bytes_of(items::MATRIX_CHUNK_ROW_STARTS.at(0)),
            513 * INDEX
        );
        assert_eq!(
            plan.bytes_of(items::MATRIX_CHUNK_ENTRIES.at(0)),
            1024 * INDEX
        );
        assert_eq!(
            plan.bytes_of(items::MATRIX_CHUNK_COEFFICIENTS.at(0)),
            5 * SCALAR
        );
        assert_eq!(plan.find(items::MATRIX_CHUNK_ENTRIES.at(1)), None);
    }
}
