//! A circuit of an exact shape (constraints, public inputs, witness variables), for
//! proofs that land on a domain's boundaries or leave a query empty.

use ark_ff::PrimeField;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError, Variable};
use ark_relations::lc;
use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_core::groth16::{ProvingKey, Reduction};
use crucible_core::PairingCurve;

use crate::circom_reduction::CircomReduction;

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
    /// The public inputs its witness declares, in order, in the field `F`.
    pub fn public_inputs<F: PrimeField>(&self) -> Vec<F> {
        self.values()[..self.inputs].to_vec()
    }

    fn values<F: PrimeField>(&self) -> Vec<F> {
        let mut rng = StdRng::seed_from_u64(self.seed);
        (0..self.inputs + self.witnesses)
            .map(|_| F::rand(&mut rng))
            .collect()
    }

    /// A key on curve `E` for the circuit made with `reduction`'s setup, from
    /// `setup_seed`.
    pub fn key<E: PairingCurve>(
        &self,
        reduction: Reduction,
        setup_seed: u64,
    ) -> Result<ProvingKey<E>, String> {
        let mut rng = StdRng::seed_from_u64(setup_seed);
        match reduction {
            Reduction::Libsnark => {
                ark_groth16::Groth16::<E>::generate_random_parameters_with_reduction(
                    *self, &mut rng,
                )
            }
            Reduction::Circom => {
                ark_groth16::Groth16::<E, CircomReduction>::generate_random_parameters_with_reduction(
                    *self, &mut rng,
                )
            }
        }
        .map_err(|e| format!("setup failed: {e}"))
    }
}

impl<F: PrimeField> ConstraintSynthesizer<F> for ExactShapeCircuit {
    fn generate_constraints(self, cs: ConstraintSystemRef<F>) -> Result<(), SynthesisError> {
        let values: Vec<F> = self.values();
        let mut vars = Vec::with_capacity(values.len());
        for (i, &v) in values.iter().enumerate() {
            vars.push(if i < self.inputs {
                cs.new_input_variable(|| Ok(v))?
            } else {
                cs.new_witness_variable(|| Ok(v))?
            });
        }
        let one = F::ONE;
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
