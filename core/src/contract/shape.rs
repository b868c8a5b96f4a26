//! The sizes of one proof, from which every memory plan is computed.

use crate::{Domain, Result};

/// The sizes of a Groth16 proof: what a backend needs to plan its memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProofShape {
    /// Number of R1CS constraints.
    pub num_constraints: usize,
    /// Instance variables, the constant one included.
    pub num_instance: usize,
    /// Witness (auxiliary) variables.
    pub num_witness: usize,
    /// log2 of the evaluation domain's size (see [`Domain::for_circuit`]).
    pub log_domain: u32,
}

impl ProofShape {
    /// A shape; the domain is derived here, once.
    pub fn new(num_constraints: usize, num_instance: usize, num_witness: usize) -> Result<Self> {
        let domain = Domain::for_circuit(num_constraints, num_instance)?;
        Ok(ProofShape {
            num_constraints,
            num_instance,
            num_witness,
            log_domain: domain.log_size,
        })
    }

    /// The evaluation domain.
    pub fn domain(&self) -> Domain {
        Domain::with_log_size(self.log_domain).expect("checked when the shape was made")
    }

    /// Number of points in the domain.
    pub fn domain_size(&self) -> usize {
        1usize << self.log_domain
    }

    /// All variables: instance (with the one) plus witness.
    pub fn num_variables(&self) -> usize {
        self.num_instance + self.num_witness
    }

    /// Length of the proving key's h query (domain size − 1).
    pub fn h_len(&self) -> usize {
        self.domain_size() - 1
    }
}
