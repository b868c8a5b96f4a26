//! Proofs whose key has an empty query, on every backend under every kind of schedule:
//! a circuit without witness variables (an empty l query), a domain of one point (an
//! empty h query), and the constant as the only variable (empty a and b MSMs). Each
//! sums nothing to the identity for that query; the proof is byte for byte
//! ark-groth16's.

use std::sync::Arc;

use ark_ff::UniformRand;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError, Variable};
use ark_relations::lc;
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use crucible_core::groth16::{
    key_shape_for, DomainVectors, Evaluation, KeyOptions, ProvingKey, Query, QuerySet, Reduction,
    Schedule,
};
use crucible_core::{Bls12_381, Fr};

use crate::circom_reduction::CircomReduction;
use crate::cross_check::compare_with_arkworks_under;
use crate::suite::Runner;

/// A circuit of exactly `constraints` constraints, `inputs` public inputs and
/// `witnesses` witness variables, its values drawn from `seed`. Constraint i is
/// `u · (v + 1) = c · 1` over the non-constant variables taken in turn (the constant
/// one when there are none), with `c` the product of their values; so the matrices,
/// and the key, depend on the seed: prove with the seed the key was made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExactShapeCircuit {
    /// Constraints, exactly.
    pub constraints: usize,
    /// Public inputs (the constant one not counted).
    pub inputs: usize,
    /// Witness variables, exactly.
    pub witnesses: usize,
    /// Seed of the values.
    pub seed: u64,
}

impl ExactShapeCircuit {
    /// The public inputs its witness declares, in order.
    pub fn public_inputs(&self) -> Vec<Fr> {
        self.values()[..self.inputs].to_vec()
    }

    fn values(&self) -> Vec<Fr> {
        let mut rng = StdRng::seed_from_u64(self.seed);
        (0..self.inputs + self.witnesses)
            .map(|_| Fr::rand(&mut rng))
            .collect()
    }

    /// A key for the circuit made with `reduction`'s setup, from `setup_seed`.
    pub fn key(&self, reduction: Reduction, setup_seed: u64) -> Result<ProvingKey, String> {
        let mut rng = StdRng::seed_from_u64(setup_seed);
        match reduction {
            Reduction::Libsnark => {
                ark_groth16::Groth16::<Bls12_381>::generate_random_parameters_with_reduction(
                    *self, &mut rng,
                )
            }
            Reduction::Circom => {
                ark_groth16::Groth16::<Bls12_381, CircomReduction>::generate_random_parameters_with_reduction(
                    *self, &mut rng,
                )
            }
        }
        .map_err(|e| format!("setup failed: {e}"))
    }
}

impl ConstraintSynthesizer<Fr> for ExactShapeCircuit {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let values = self.values();
        let mut vars = Vec::with_capacity(values.len());
        for (i, &v) in values.iter().enumerate() {
            vars.push(if i < self.inputs {
                cs.new_input_variable(|| Ok(v))?
            } else {
                cs.new_witness_variable(|| Ok(v))?
            });
        }
        let one = Fr::from(1u64);
        let pick = |j: usize| match vars.len() {
            0 => (Variable::One, one),
            n => (vars[j % n], values[j % n]),
        };
        for i in 0..self.constraints {
            let ((u, u_val), (v, v_val)) = (pick(i), pick(i + 1));
            let c = u_val * (v_val + one);
            cs.enforce_r1cs_constraint(
                || lc!() + u,
                || lc!() + v + Variable::One,
                || lc!() + (c, Variable::One),
            )?;
        }
        Ok(())
    }
}

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
fn prove_case(
    r: &mut Runner<'_>,
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
pub fn run(r: &mut Runner<'_>) {
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
