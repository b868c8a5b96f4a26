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
}

/// The chain itself is [`BitHeavyCircuit`]'s with no bit rows: one implementation, so a
/// benchmark key serves both.
impl ConstraintSynthesizer<Fr> for BenchCircuit {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        BitHeavyCircuit {
            constraints: self.constraints,
            inputs: self.inputs,
            seed: self.seed,
            bits_per_mille: 0,
        }
        .generate_constraints(cs)
    }
}

/// The benchmark chain with a share of its constraints turned into booleanity checks
/// `b · b = b` on fresh witness bits, so that share of the witness is 0 or 1, as in
/// circuits built from bit decompositions (SHA-256, range checks). Same shape as
/// [`BenchCircuit`] (`constraints + 1` witnesses); its matrices, and so its key,
/// depend on `bits_per_mille`, its values on `seed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitHeavyCircuit {
    /// Number of constraints, exactly.
    pub constraints: usize,
    /// Number of public inputs (the constant one not counted).
    pub inputs: usize,
    /// Seed of the witness values.
    pub seed: u64,
    /// Constraints (and witness values) per thousand that are bits, at most 1000.
    pub bits_per_mille: u16,
}

impl BitHeavyCircuit {
    /// Whether constraint `i` checks a bit: spread evenly, `bits_per_mille` in 1000.
    pub fn is_bit_row(&self, i: usize) -> bool {
        let p = u128::from(self.bits_per_mille.min(1000));
        let i = i as u128;
        (i + 1) * p / 1000 > i * p / 1000
    }
}

impl ConstraintSynthesizer<Fr> for BitHeavyCircuit {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let mut rng = StdRng::seed_from_u64(self.seed);
        let inputs: Vec<Fr> = (0..self.inputs).map(|_| Fr::rand(&mut rng)).collect();
        let u: Vec<Variable> = inputs
            .iter()
            .map(|x| cs.new_input_variable(|| Ok(*x)))
            .collect::<Result<_, _>>()?;
        let mut v = Fr::rand(&mut rng);
        let mut prev = cs.new_witness_variable(|| Ok(v))?;
        for i in 0..self.constraints {
            if self.is_bit_row(i) {
                let bit = Fr::from(u64::from(ark_std::rand::Rng::gen::<bool>(&mut rng)));
                let b = cs.new_witness_variable(|| Ok(bit))?;
                cs.enforce_r1cs_constraint(|| lc![b], || lc![b], || lc![b])?;
                continue;
            }
            let (addend, x) = if u.is_empty() {
                (Variable::one(), Fr::ONE)
            } else {
                (u[i % u.len()], inputs[i % u.len()])
            };
            v *= v + x;
            let next = cs.new_witness_variable(|| Ok(v))?;
            cs.enforce_r1cs_constraint(|| lc![prev], || lc![prev, addend], || lc![next])?;
            prev = next;
        }
        Ok(())
    }
}
