//! Proofs whose key has an empty query, on every backend under every kind of schedule:
//! a circuit without witness variables (an empty l query), a domain of one point (an
//! empty h query), and the constant as the only variable (empty a and b MSMs). Each
//! sums nothing to the identity for that query; the proof is byte for byte
//! ark-groth16's.

use std::sync::Arc;

use ark_std::rand::Rng;
use crucible_core::groth16::{
    key_shape_for, DomainVectors, Evaluation, KeyOptions, Query, QuerySet, Reduction, Schedule,
};

use crucible_core::PairingCurve;

use crate::cross_check::compare_with_arkworks_under;
use crate::exact_shape_circuit::ExactShapeCircuit;
use crate::runner::Runner;

/// The schedules an empty-query key is proved under: the chooser's, everything
/// resident, and streamed ones in chunks of one point, one short of the longest MSM,
/// the longest MSM and one over, each with another resident set (none, all but l, all
/// but h) and domain layout.
fn schedules(longest: usize) -> Vec<Option<Schedule>> {
    let chunks = [
        1,
        longest.saturating_sub(1).max(1),
        longest.max(1),
        longest + 1,
    ];
    let kinds = [
        (QuerySet::NONE, DomainVectors::Resident),
        (QuerySet::NONE, DomainVectors::Sequenced),
        (QuerySet::ALL.without(Query::L), DomainVectors::Resident),
        (QuerySet::ALL.without(Query::H), DomainVectors::Sequenced),
    ];
    let mut out = vec![None, Some(Schedule::RESIDENT)];
    out.extend(
        chunks
            .into_iter()
            .zip(kinds)
            .map(|(chunk, (resident, domain))| {
                Some(Schedule {
                    resident,
                    domain,
                    chunk,
                    evaluation: Evaluation::Host,
                })
            }),
    );
    out
}

/// Proves `circuit` under each of [`schedules`] with `reduction`, against
/// ark-groth16.
fn prove_case<E: PairingCurve>(
    r: &mut Runner<'_, E>,
    name: &str,
    reduction: Reduction,
    constraints: usize,
    inputs: usize,
    witnesses: usize,
) {
    let backend = r.backend;
    r.case(name, |rng| {
        let circuit = ExactShapeCircuit {
            constraints,
            inputs,
            witnesses,
            seed: rng.gen(),
        };
        let pk = Arc::new(circuit.key(reduction, rng.gen())?);
        let shape = key_shape_for(&pk, reduction).map_err(|e| e.to_string())?;
        let longest = Query::ALL
            .iter()
            .map(|q| q.msm_terms(&shape, reduction))
            .max()
            .unwrap_or(0);
        for schedule in schedules(longest) {
            let options = KeyOptions {
                reduction,
                schedule,
                ..KeyOptions::default()
            };
            compare_with_arkworks_under(backend, Arc::clone(&pk), circuit, rng, &options).map_err(
                |e| {
                    let under = schedule.map_or("the chosen schedule".into(), |s| s.to_string());
                    e.context(&format!("under {under}"))
                },
            )?;
        }
        Ok(())
    });
}

/// No witness variables (l empty) with constraints + inputs + 1 on 2^k − 1, 2^k and
/// 2^k + 1, with each reduction; a domain of one point (h empty with ark-groth16's
/// reduction) with and without witness variables; the constant as the only variable.
pub fn run<E: PairingCurve>(r: &mut Runner<'_, E>) {
    let k = r.config.proof_log_size.clamp(2, 3);
    for (reduction, tag) in [
        (Reduction::Libsnark, "empty-l"),
        (Reduction::Circom, "empty-l-circom"),
    ] {
        for delta in [-1i64, 0, 1] {
            let inputs = 2;
            let constraints = ((1i64 << k) + delta - inputs as i64 - 1) as usize;
            let name = format!("{tag}/constraints={constraints}/inputs={inputs}/2^{k}{delta:+}");
            prove_case(r, &name, reduction, constraints, inputs, 0);
        }
    }
    for witnesses in [0usize, 1, 3] {
        let name = format!("empty-h/domain=1/witnesses={witnesses}");
        prove_case(r, &name, Reduction::Libsnark, 0, 0, witnesses);
    }
    prove_case(
        r,
        "empty-a-b/constant-only/constraints=1",
        Reduction::Libsnark,
        1,
        0,
        0,
    );
}
