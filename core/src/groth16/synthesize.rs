//! Circuit synthesis on the host, exactly as ark-groth16's prover configures it.

use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystem, OptimizationGoal, SynthesisMode, R1CS_PREDICATE_LABEL,
};
use ark_relations::utils::matrix::Matrix;

use crate::{Error, Fr, ProofShape, Result};

/// A synthesized circuit: its R1CS matrices and full assignment.
pub struct Synthesized {
    /// Sizes (domain included).
    pub shape: ProofShape,
    /// Matrix A, one row per constraint, `(coefficient, variable)` pairs.
    pub a: Matrix<Fr>,
    /// Matrix B.
    pub b: Matrix<Fr>,
    /// Matrix C.
    pub c: Matrix<Fr>,
    /// Instance assignment (starting with the constant one) then witness.
    pub assignment: Vec<Fr>,
}

/// Runs `circuit` in proving mode and collects matrices and assignment. A panic in the
/// circuit's code is an [`Error::InvalidInput`] naming it, never an unwind through the
/// caller.
pub fn synthesize<C: ConstraintSynthesizer<Fr>>(circuit: C) -> Result<Synthesized> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        synthesize_unguarded(circuit)
    }))
    .unwrap_or_else(|panic| {
        Err(Error::InvalidInput(format!(
            "circuit panicked during synthesis: {}",
            crate::panic_message(&*panic)
        )))
    })
}

fn synthesize_unguarded<C: ConstraintSynthesizer<Fr>>(circuit: C) -> Result<Synthesized> {
    let cs = ConstraintSystem::<Fr>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(SynthesisMode::Prove {
        construct_matrices: true,
        generate_lc_assignments: false,
    });
    circuit.generate_constraints(cs.clone())?;
    cs.finalize();

    let shape = ProofShape::new(
        cs.num_constraints(),
        cs.num_instance_variables(),
        cs.num_witness_variables(),
    )?;
    let mut matrices = cs.to_matrices()?;
    let [a, b, c] = match matrices.remove(R1CS_PREDICATE_LABEL) {
        Some(m) => <[Matrix<Fr>; 3]>::try_from(m).map_err(|m| {
            Error::InvalidInput(format!(
                "R1CS predicate has {} matrices, expected 3",
                m.len()
            ))
        })?,
        None => [Vec::new(), Vec::new(), Vec::new()],
    };
    if a.len() != shape.num_constraints {
        return Err(Error::Unsupported(format!(
            "circuit uses predicates other than R1CS ({} R1CS rows of {} constraints)",
            a.len(),
            shape.num_constraints
        )));
    }
    let assignment = [cs.instance_assignment()?, cs.witness_assignment()?].concat();
    Ok(Synthesized {
        shape,
        a,
        b,
        c,
        assignment,
    })
}
