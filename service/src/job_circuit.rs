//! What the engine synthesizes for a service job: a resident key's circuit with one
//! witness, turned into matrices and assignment on the engine's synthesis threads.

use crucible_core::circuit::BenchCircuit;
use crucible_core::groth16::{FixedShape, Synthesize, Synthesized};
use crucible_core::{Error, Result};

use crate::key_circuit::KeyCircuit;
use crate::witness::Witness;

/// A job's circuit: the key's (shared) and the job's witness.
pub struct JobCircuit {
    /// The resident key's circuit.
    pub circuit: KeyCircuit,
    /// This proof's witness.
    pub witness: Witness,
}

impl Synthesize for JobCircuit {
    fn synthesize(self) -> Result<Synthesized> {
        match (self.witness, self.circuit) {
            (
                Witness::BenchSeed(seed),
                KeyCircuit::Bench {
                    matrices,
                    constraints,
                    inputs,
                },
            ) => FixedShape {
                matrices,
                circuit: BenchCircuit {
                    constraints,
                    inputs,
                    seed,
                },
            }
            .synthesize(),
            (Witness::BenchSeed(_), KeyCircuit::Zkey(_)) => Err(Error::InvalidInput(
                "a benchmark seed is a witness of a benchmark key only".into(),
            )),
            (witness, circuit) => circuit.with_values(witness.values()?, witness.name()),
        }
    }
}
