//! A loaded key's circuit: its matrices, built or read once and shared by every job,
//! and how one witness's values become the assignment a proof is made from.

use std::sync::Arc;

use crucible_core::groth16::{CircuitMatrices, Synthesized};
use crucible_core::{Fr, Result};
use crucible_files::{synthesized_from_zkey, ZkeyCircuit};

/// The circuit of a resident key.
#[derive(Clone)]
pub enum KeyCircuit {
    /// The benchmark circuit of this size.
    Bench {
        /// Its matrices.
        matrices: CircuitMatrices,
        /// Constraints.
        constraints: usize,
        /// Public inputs (the constant one not counted).
        inputs: usize,
    },
    /// A `.zkey`'s circuit (A and B; C·z is A·z ∘ B·z, as snarkjs proves).
    Zkey(Arc<ZkeyCircuit>),
}

impl KeyCircuit {
    /// The circuit's constraints and public inputs (the constant one not counted), as
    /// its author counts them (the proving shape of a `.zkey` has a row more per
    /// public input).
    pub fn sizes(&self) -> (usize, usize) {
        match self {
            KeyCircuit::Bench {
                constraints,
                inputs,
                ..
            } => (*constraints, *inputs),
            KeyCircuit::Zkey(circuit) => (circuit.num_constraints, circuit.num_public),
        }
    }

    /// The circuit with every variable's value (`values`, checked against the
    /// circuit's size; `name` names them in errors).
    pub fn with_values(&self, values: Vec<Fr>, name: &str) -> Result<Synthesized> {
        match self {
            KeyCircuit::Bench { matrices, .. } => matrices.with_assignment(values),
            KeyCircuit::Zkey(circuit) => synthesized_from_zkey(circuit, values, name),
        }
    }
}
