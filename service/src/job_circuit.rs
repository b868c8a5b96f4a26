//! What the engine synthesizes for a service job: a resident key's circuit with one
//! witness, turned into matrices and assignment on the engine's synthesis threads.

use ark_std::rand::rngs::OsRng;
use ark_std::UniformRand;
use crucible_core::engine::Job;
use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::groth16::{FixedShape, Synthesize, Synthesized};
use crucible_core::{Error, Fr, Result};

use crate::key_circuit::KeyCircuit;
use crate::witness::Witness;
use crate::{ServiceError, ServiceResult};

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

// Here rather than beside `Witness`: a job is made of a witness, not the other way.
impl Witness {
    /// The engine job for this witness of `circuit`, with fresh secret randomness `r`,
    /// `s` from the operating system; an error when the witness's kind cannot belong
    /// to that circuit (its values are checked when the job is synthesized).
    pub fn job(&self, id: u64, circuit: &KeyCircuit) -> ServiceResult<Job<JobCircuit>> {
        if matches!(
            (self, circuit),
            (Witness::BenchSeed(_), KeyCircuit::Zkey(_))
        ) {
            return Err(ServiceError::Invalid(
                "a benchmark seed is a witness of a benchmark key only; send a .wtns or an assignment".into(),
            ));
        }
        Ok(Job {
            id,
            circuit: JobCircuit {
                circuit: circuit.clone(),
                witness: self.clone(),
            },
            r: Fr::rand(&mut OsRng),
            s: Fr::rand(&mut OsRng),
        })
    }
}
