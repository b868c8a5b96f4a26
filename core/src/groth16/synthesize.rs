//! Circuit synthesis on the host, exactly as ark-groth16's prover configures it, and
//! what a job hands the engine to synthesize ([`Synthesize`]): a circuit, a circuit of
//! a fixed shape whose matrices are built once ([`FixedShape`]), or a circuit already
//! synthesized.

use ark_ff::PrimeField;
use std::sync::{Arc, OnceLock};

use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystem, ConstraintSystemRef, OptimizationGoal, SynthesisError,
    SynthesisMode, R1CS_PREDICATE_LABEL,
};
use ark_relations::utils::matrix::Matrix;

use super::QapMatrices;
use crate::{Error, Fr, ProofShape, Result};

/// A synthesized circuit: its R1CS matrices and full assignment. The matrices are
/// shared (`Arc`), so that proofs of one circuit need not rebuild or copy them.
#[derive(Clone)]
pub struct Synthesized<F = Fr> {
    /// Sizes (domain included).
    pub shape: ProofShape,
    /// Matrix A, one row per constraint, `(coefficient, variable)` pairs; empty where
    /// the circuit's matrices are kept in the device layout only (`qap`, see
    /// [`CircuitMatrices::into_device_layout`]).
    pub a: Arc<Matrix<F>>,
    /// Matrix B.
    pub b: Arc<Matrix<F>>,
    /// Matrix C.
    pub c: Arc<Matrix<F>>,
    /// Instance assignment (starting with the constant one) then witness.
    pub assignment: Vec<F>,
    /// The same circuit's matrices in the device layout, where they were built once
    /// for many proofs ([`CircuitMatrices::qap`]): a key staged with these
    /// ([`super::StagedKey::stage_for_circuit`]) evaluates this circuit on the device.
    pub qap: Option<Arc<QapMatrices<F>>>,
}

impl<F: PrimeField> Synthesized<F> {
    /// This circuit's matrices in the device layout.
    pub fn qap_matrices(&self) -> Result<QapMatrices<F>> {
        match &self.qap {
            Some(qap) => Ok(QapMatrices::clone(qap)),
            None => QapMatrices::new(self.shape, &self.a, &self.b, Some(&self.c)),
        }
    }
}

/// What an engine job proves: anything that yields matrices and a full assignment.
/// Every arkworks circuit is one (synthesized as ark-groth16 does); so is a
/// [`Synthesized`] (already done) and a [`FixedShape`] circuit.
pub trait Synthesize<F: PrimeField = Fr>: Send {
    /// The matrices and the assignment; an error names what is wrong with the circuit
    /// or its witness.
    fn synthesize(self) -> Result<Synthesized<F>>;
}

// One blanket impl per proved field, not one over every field: a generic one would
// let a downstream crate's field make `Synthesized` a circuit too (coherence).
macro_rules! circuits_synthesize {
    ($($field:ty),*) => {$(
        impl<C: ConstraintSynthesizer<$field> + Send> Synthesize<$field> for C {
            fn synthesize(self) -> Result<Synthesized<$field>> {
                synthesize(self)
            }
        }
    )*};
}
circuits_synthesize!(ark_bls12_381::Fr, ark_bn254::Fr);

impl<F: PrimeField> Synthesize<F> for Synthesized<F> {
    fn synthesize(self) -> Result<Synthesized<F>> {
        Ok(self)
    }
}

/// The matrices of a circuit whose shape does not depend on its witness (the usual
/// case: the benchmark circuit, a circom circuit), built once from one instance.
#[derive(Clone)]
pub struct CircuitMatrices<F = Fr> {
    /// Sizes.
    pub shape: ProofShape,
    a: Arc<Matrix<F>>,
    b: Arc<Matrix<F>>,
    c: Arc<Matrix<F>>,
    // Built on first use, shared by every clone.
    qap: Arc<OnceLock<Arc<QapMatrices<F>>>>,
}

impl<F: PrimeField> CircuitMatrices<F> {
    /// Synthesizes `circuit` in full once and keeps its matrices.
    pub fn of<C: ConstraintSynthesizer<F>>(circuit: C) -> Result<CircuitMatrices<F>> {
        Ok(Self::from(&synthesize(circuit)?))
    }

    /// The matrices in the device layout, built on the first call (in parallel) and
    /// shared after: instances made by [`CircuitMatrices::with_assignment`] from then
    /// on carry them, so a key staged with them evaluates on the device.
    pub fn qap(&self) -> Result<Arc<QapMatrices<F>>> {
        if let Some(built) = self.qap.get() {
            return Ok(Arc::clone(built));
        }
        let built = Arc::new(QapMatrices::new(
            self.shape,
            &self.a,
            &self.b,
            Some(&self.c),
        )?);
        Ok(Arc::clone(self.qap.get_or_init(|| built)))
    }

    /// These matrices in the device layout only ([`CircuitMatrices::qap`]), the row
    /// lists dropped: the host then holds one copy of the circuit (at 2^26 constraints
    /// the row lists alone are tens of GiB). Instances made from the result evaluate
    /// from that layout, on the device or on the host ([`QapMatrices::evaluate`]).
    pub fn into_device_layout(self) -> Result<CircuitMatrices<F>> {
        let qap = self.qap()?;
        Ok(CircuitMatrices {
            shape: self.shape,
            a: Arc::default(),
            b: Arc::default(),
            c: Arc::default(),
            qap: Arc::new(OnceLock::from(qap)),
        })
    }

    /// These matrices with `assignment`, its length checked against the shape.
    pub fn with_assignment(&self, assignment: Vec<F>) -> Result<Synthesized<F>> {
        if assignment.len() != self.shape.num_variables() {
            return Err(Error::InvalidInput(format!(
                "the assignment has {} values, the circuit has {} variables (a witness of another circuit?)",
                assignment.len(),
                self.shape.num_variables()
            )));
        }
        Ok(Synthesized {
            shape: self.shape,
            a: Arc::clone(&self.a),
            b: Arc::clone(&self.b),
            c: Arc::clone(&self.c),
            assignment,
            qap: self.qap.get().cloned(),
        })
    }
}

impl<F: PrimeField> From<&Synthesized<F>> for CircuitMatrices<F> {
    fn from(s: &Synthesized<F>) -> CircuitMatrices<F> {
        CircuitMatrices {
            shape: s.shape,
            a: Arc::clone(&s.a),
            b: Arc::clone(&s.b),
            c: Arc::clone(&s.c),
            qap: Arc::new(s.qap.clone().map(OnceLock::from).unwrap_or_default()),
        }
    }
}

/// A circuit of a fixed shape: only its assignment is synthesized (ark-relations'
/// prove mode without matrices, which skips every constraint), the matrices are the
/// ones built once. For a circuit whose constraints depend on the witness this gives
/// wrong proofs, which the engine's verification catches; do not use it there.
pub struct FixedShape<C, F = Fr> {
    /// The matrices of every instance of the circuit.
    pub matrices: CircuitMatrices<F>,
    /// This instance, with its witness.
    pub circuit: C,
}

impl<F: PrimeField, C: ConstraintSynthesizer<F> + Send> Synthesize<F> for FixedShape<C, F> {
    fn synthesize(self) -> Result<Synthesized<F>> {
        let assignment = guarded(|| assignment_only(self.circuit))?;
        self.matrices.with_assignment(assignment)
    }
}

/// Runs `f`, turning a panic in the circuit's code into an [`Error::InvalidInput`].
fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        Err(Error::InvalidInput(format!(
            "circuit panicked during synthesis: {}",
            crate::panic_message(&*panic)
        )))
    })
}

/// Runs `circuit` in proving mode as ark-groth16's prover configures it, recording the
/// matrices only when asked.
fn run_prove_mode<F: PrimeField, C: ConstraintSynthesizer<F>>(
    circuit: C,
    construct_matrices: bool,
) -> Result<ConstraintSystemRef<F>> {
    let cs = ConstraintSystem::<F>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(SynthesisMode::Prove {
        construct_matrices,
        generate_lc_assignments: false,
    });
    circuit.generate_constraints(cs.clone())?;
    cs.finalize();
    Ok(cs)
}

/// The instance then witness assignment of a synthesized constraint system, taken
/// out of it (the system is spent). ark-relations' accessors copy each vector and a
/// concatenation copies both again: three copies of the assignment at once, 6 GiB a
/// synthesizing thread at 2^26 variables. Here the witness vector becomes the
/// assignment, the few instance values moved in front of it in place.
fn take_assignment<F: PrimeField>(cs: &ConstraintSystemRef<F>) -> Result<Vec<F>> {
    let mut system = cs.borrow_mut().ok_or(SynthesisError::AssignmentMissing)?;
    let assignments = &mut system.assignments;
    let instance = std::mem::take(&mut assignments.instance_assignment);
    let mut z = std::mem::take(&mut assignments.witness_assignment);
    z.splice(0..0, instance);
    Ok(z)
}

/// The instance then witness assignment of `circuit`, no constraints recorded.
fn assignment_only<F: PrimeField, C: ConstraintSynthesizer<F>>(circuit: C) -> Result<Vec<F>> {
    take_assignment(&run_prove_mode(circuit, false)?)
}

/// Runs `circuit` in proving mode and collects matrices and assignment. A panic in the
/// circuit's code is an [`Error::InvalidInput`] naming it, never an unwind through the
/// caller.
pub fn synthesize<F: PrimeField, C: ConstraintSynthesizer<F>>(
    circuit: C,
) -> Result<Synthesized<F>> {
    guarded(|| synthesize_unguarded(circuit))
}

fn synthesize_unguarded<F: PrimeField, C: ConstraintSynthesizer<F>>(
    circuit: C,
) -> Result<Synthesized<F>> {
    let cs = run_prove_mode(circuit, true)?;

    let shape = ProofShape::new(
        cs.num_constraints(),
        cs.num_instance_variables(),
        cs.num_witness_variables(),
    )?;
    let mut matrices = cs.to_matrices()?;
    let [a, b, c] = match matrices.remove(R1CS_PREDICATE_LABEL) {
        Some(m) => <[Matrix<F>; 3]>::try_from(m).map_err(|m| {
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
    let assignment = take_assignment(&cs)?;
    Ok(Synthesized {
        shape,
        a: Arc::new(a),
        b: Arc::new(b),
        c: Arc::new(c),
        assignment,
        qap: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::circuit::BitHeavyCircuit;
    use crate::groth16::evaluate;

    #[test]
    fn the_device_layout_alone_evaluates_as_the_row_lists_do() {
        let seed = crate::run_seed::run_seed();
        for (constraints, inputs, bits_per_mille) in [(1, 0, 0), (37, 3, 900), (300, 2, 333)] {
            let circuit = |seed| BitHeavyCircuit {
                constraints,
                inputs,
                seed,
                bits_per_mille,
            };
            let case = format!("seed {seed}, {constraints} constraints, {inputs} inputs");
            let rows = CircuitMatrices::<crate::Fr>::of(circuit(seed)).unwrap();
            let layout = rows.clone().into_device_layout().unwrap();
            // Another instance of the same shape: only its assignment is taken.
            let instance = FixedShape {
                matrices: layout.clone(),
                circuit: circuit(seed ^ 1),
            }
            .synthesize()
            .unwrap();
            assert!(instance.a.is_empty() && instance.qap.is_some(), "{case}");
            let want =
                evaluate(&rows.with_assignment(instance.assignment.clone()).unwrap()).unwrap();
            let got = evaluate(&instance).unwrap();
            assert!(
                got.a == want.a && got.b == want.b && got.c == want.c,
                "{case}"
            );
            assert_eq!(
                instance.qap_matrices().unwrap(),
                *rows.qap().unwrap(),
                "{case}"
            );
        }
    }
}
