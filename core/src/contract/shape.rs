//! The sizes of one proof, from which every memory plan is computed.

use ark_ff::PrimeField;

use crate::{Domain, Fr, Result};

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
    /// A shape; the domain is derived here, once (within BLS12-381's two-adicity, the
    /// larger: [`ProofShape::domain`] checks the proving curve's own).
    pub fn new(num_constraints: usize, num_instance: usize, num_witness: usize) -> Result<Self> {
        let domain = Domain::<Fr>::for_circuit(num_constraints, num_instance)?;
        Ok(ProofShape {
            num_constraints,
            num_instance,
            num_witness,
            log_domain: domain.log_size,
        })
    }

    /// The evaluation domain over the scalar field `F`: an error where the domain
    /// exceeds the field's two-adicity (BN254's 2^28).
    pub fn domain<F: PrimeField>(&self) -> Result<Domain<F>> {
        Domain::with_log_size(self.log_domain)
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
