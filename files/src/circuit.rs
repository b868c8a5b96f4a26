//! A circom circuit and its witness as crucible proves them: directly as a
//! [`Synthesized`] (matrices + full assignment, no constraint system in between), or
//! as an arkworks `ConstraintSynthesizer` (for ark-groth16's setup and reference
//! prover).

use std::sync::Arc;

use ark_ff::Zero;
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystemRef, LinearCombination, SynthesisError, Variable,
};
use ark_relations::utils::matrix::Matrix;

use crate::file_curve::FileCurve;
use crate::{R1cs, Zkey};
use crucible_core::groth16::Synthesized;
use crucible_core::{Error, ProofShape, Result};

/// Checks a witness against a circuit's wire count; `name` names the witness file.
fn check_witness<T>(witness: &[T], num_wires: usize, name: &str, circuit: &str) -> Result<()> {
    if witness.len() != num_wires {
        return Err(Error::InvalidInput(format!(
            "{name} has {} values, {circuit} has {num_wires} wires (a witness of another circuit?)",
            witness.len()
        )));
    }
    Ok(())
}

/// The circuit of `r1cs` with the full assignment `witness` (a `.wtns`' values),
/// ready for `groth16::prove_synthesized`. `witness_name` names the witness in errors.
pub fn synthesized_from_r1cs<E: FileCurve>(
    r1cs: &R1cs<E>,
    witness: Vec<E::ScalarField>,
    witness_name: &str,
) -> Result<Synthesized<E::ScalarField>> {
    check_witness(&witness, r1cs.num_wires, witness_name, "the .r1cs")?;
    Ok(Synthesized {
        shape: r1cs.shape()?,
        a: Arc::clone(&r1cs.a),
        b: Arc::clone(&r1cs.b),
        c: Arc::clone(&r1cs.c),
        assignment: witness,
        qap: None,
    })
}

/// What a `.zkey` says of its circuit, without the proving key: the sizes and the A
/// and B matrices (shared with the `Zkey`, not copied), for proving many witnesses.
#[derive(Clone, Debug)]
pub struct ZkeyCircuit<E: FileCurve = crucible_core::Bls12_381> {
    /// Public signals (the constant one not counted).
    pub num_public: usize,
    /// Wires, the constant one included.
    pub num_wires: usize,
    /// Constraints.
    pub num_constraints: usize,
    /// Matrix A.
    pub a: Arc<Matrix<E::ScalarField>>,
    /// Matrix B.
    pub b: Arc<Matrix<E::ScalarField>>,
}

impl<E: FileCurve> Zkey<E> {
    /// The circuit this key was made for (cheap: the matrices are shared).
    pub fn circuit(&self) -> ZkeyCircuit<E> {
        ZkeyCircuit {
            num_public: self.num_public,
            num_wires: self.num_wires,
            num_constraints: self.num_constraints,
            a: Arc::clone(&self.a),
            b: Arc::clone(&self.b),
        }
    }
}

/// The circuit a `.zkey` carries (A and B only) with the full assignment `witness`.
///
/// As snarkjs' prover does, `C·z` is taken to be `A·z ∘ B·z`: each row of C is the
/// constant wire times that row's product. The verifier still checks the proof
/// against the key's C query, so a witness that does not satisfy C gives a proof that
/// fails verification; pass the `.r1cs` ([`synthesized_from_r1cs`] after
/// [`Zkey::check_matches`]) to have each constraint checked before proving.
pub fn synthesized_from_zkey<E: FileCurve>(
    zkey: &ZkeyCircuit<E>,
    witness: Vec<E::ScalarField>,
    witness_name: &str,
) -> Result<Synthesized<E::ScalarField>> {
    check_witness(&witness, zkey.num_wires, witness_name, "the .zkey")?;
    let value = |row: &[(E::ScalarField, usize)]| -> E::ScalarField {
        row.iter().map(|(c, w)| *c * witness[*w]).sum()
    };
    let c: Matrix<E::ScalarField> = zkey
        .a
        .iter()
        .zip(zkey.b.iter())
        .map(|(a, b)| {
            let product = value(a) * value(b);
            if product.is_zero() {
                Vec::new()
            } else {
                vec![(product, 0)]
            }
        })
        .collect();
    Ok(Synthesized {
        shape: ProofShape::new(
            zkey.num_constraints,
            zkey.num_public + 1,
            zkey.num_wires - zkey.num_public - 1,
        )?,
        a: Arc::clone(&zkey.a),
        b: Arc::clone(&zkey.b),
        c: Arc::new(c),
        assignment: witness,
        qap: None,
    })
}

/// A circom circuit as an arkworks `ConstraintSynthesizer`: wire `i` becomes instance
/// variable `i` for `i ≤ num_public` and witness variable `i − num_public − 1` after.
/// Without a witness it serves key generation (setup mode never asks for values).
#[derive(Clone, Copy, Debug)]
pub struct R1csCircuit<'a, E: FileCurve = crucible_core::Bls12_381> {
    /// The constraints.
    pub r1cs: &'a R1cs<E>,
    /// Every wire's value (the `.wtns`), or `None` for setup.
    pub witness: Option<&'a [E::ScalarField]>,
}

impl<E: FileCurve> ConstraintSynthesizer<E::ScalarField> for R1csCircuit<'_, E> {
    fn generate_constraints(
        self,
        cs: ConstraintSystemRef<E::ScalarField>,
    ) -> Result<(), SynthesisError> {
        let r1cs = self.r1cs;
        if let Some(w) = self.witness {
            if w.len() != r1cs.num_wires {
                return Err(SynthesisError::AssignmentMissing);
            }
        }
        let value = |wire: usize| {
            move || {
                self.witness
                    .map(|w| w[wire])
                    .ok_or(SynthesisError::AssignmentMissing)
            }
        };
        let mut vars = Vec::with_capacity(r1cs.num_wires);
        vars.push(Variable::one());
        for wire in 1..r1cs.num_wires {
            vars.push(if wire <= r1cs.num_public {
                cs.new_input_variable(value(wire))?
            } else {
                cs.new_witness_variable(value(wire))?
            });
        }
        let lc = |row: &[(E::ScalarField, usize)]| {
            let mut lc = LinearCombination::zero();
            for &(coeff, wire) in row {
                lc += (coeff, vars[wire]);
            }
            lc
        };
        for i in 0..r1cs.num_constraints() {
            let (a, b, c) = (lc(&r1cs.a[i]), lc(&r1cs.b[i]), lc(&r1cs.c[i]));
            cs.enforce_r1cs_constraint(|| a, || b, || c)?;
        }
        Ok(())
    }
}
