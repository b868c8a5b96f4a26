//! The built-in benchmark circuit: exactly N constraints and P public inputs, with
//! full-width random values so MSM scalars look like a real witness's.

use ark_ff::{Field, UniformRand};
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError, Variable};
use ark_relations::lc;
use ark_std::rand::{rngs::StdRng, SeedableRng};

use crate::{Error, Fr, ProofShape, Result};

/// A chain `v[i+1] = v[i] · (v[i] + u[i mod P])` (with `u` = 1 when P = 0):
/// `constraints` constraints, `inputs` public inputs, `constraints + 1` witnesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchCircuit {
    /// Number of constraints, exactly.
    pub constraints: usize,
    /// Number of public inputs (the constant one not counted).
    pub inputs: usize,
    /// Seed of the witness values (any seed works with the same key).
    pub seed: u64,
}

impl BenchCircuit {
    /// The shape of a benchmark circuit with `constraints` constraints and `inputs`
    /// public inputs: one instance variable per input plus the constant one,
    /// `constraints + 1` witnesses. Fails when the domain would exceed the field's
    /// two-adicity.
    pub fn shape(constraints: usize, inputs: usize) -> Result<ProofShape> {
        let instance = inputs
            .checked_add(1)
            .ok_or_else(|| Error::InvalidInput("too many public inputs".into()))?;
        let witness = constraints
            .checked_add(1)
            .ok_or_else(|| Error::InvalidInput("too many constraints".into()))?;
        ProofShape::new(constraints, instance, witness)
    }

    /// The public inputs this circuit's witness will declare, in order.
    pub fn public_inputs(&self) -> Vec<Fr> {
        let mut rng = StdRng::seed_from_u64(self.seed);
        (0..self.inputs).map(|_| Fr::rand(&mut rng)).collect()
    }

    fn values(&self) -> (Vec<Fr>, Vec<Fr>) {
        let mut rng = StdRng::seed_from_u64(self.seed);
        let inputs: Vec<Fr> = (0..self.inputs).map(|_| Fr::rand(&mut rng)).collect();
        let mut chain = Vec::with_capacity(self.constraints + 1);
        let mut v = Fr::rand(&mut rng);
        chain.push(v);
        for i in 0..self.constraints {
            let u = if inputs.is_empty() {
                Fr::ONE
            } else {
                inputs[i % inputs.len()]
            };
            v *= v + u;
            chain.push(v);
        }
        (inputs, chain)
    }
}

impl ConstraintSynthesizer<Fr> for BenchCircuit {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let (inputs, chain) = self.values();
        let u: Vec<Variable> = inputs
            .iter()
            .map(|x| cs.new_input_variable(|| Ok(*x)))
            .collect::<Result<_, _>>()?;
        let mut prev = cs.new_witness_variable(|| Ok(chain[0]))?;
        for (i, value) in chain.iter().enumerate().skip(1) {
            let next = cs.new_witness_variable(|| Ok(*value))?;
            let addend = if u.is_empty() {
                Variable::one()
            } else {
                u[(i - 1) % u.len()]
            };
            cs.enforce_r1cs_constraint(|| lc![prev], || lc![prev, addend], || lc![next])?;
            prev = next;
        }
        Ok(())
    }
}
