//! R1CS to QAP: how the witness's evaluations become the scalars of the h query.

use ark_ff::One;

use crate::{Domain, Fr, Result};

/// The reduction a proving key was made for. Both start from A·z, B·z and C·z on
/// the domain and go through a coset where the quotient can be evaluated; they
/// differ in the coset and in what the key's h query expects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reduction {
    /// ark-groth16's `LibsnarkReduction`: on the coset `g·H` (g = `Fr::GENERATOR`)
    /// `(a·b − c) / Z(g)`, back to coefficients; the h query has n − 1 points.
    #[default]
    Libsnark,
    /// snarkjs' (ark-circom's `CircomReduction`): on the coset `ω_2n·H` (ω_2n a
    /// primitive 2n-th root of unity) `a·b − c`, left as evaluations (Z is the
    /// constant −2 there, which the key's h query already carries); n points.
    Circom,
}

impl Reduction {
    /// Points of the h query of a key for a domain of `domain_size` points.
    pub fn h_len(self, domain_size: usize) -> usize {
        match self {
            Reduction::Libsnark => domain_size - 1,
            Reduction::Circom => domain_size,
        }
    }

    /// The domain size a key's h query of `h_len` points implies.
    pub fn domain_size(self, h_len: usize) -> Option<usize> {
        match self {
            Reduction::Libsnark => h_len.checked_add(1),
            Reduction::Circom => Some(h_len),
        }
    }

    /// `domain` with this reduction's coset offset.
    pub fn coset_domain(self, domain: &Domain) -> Result<Domain> {
        match self {
            Reduction::Libsnark => Ok(*domain),
            Reduction::Circom => {
                let double = Domain::with_log_size(domain.log_size + 1)?;
                Ok(domain.with_coset(double.omega))
            }
        }
    }

    /// The factor of the pointwise step `(a·b − c)·k` on the coset.
    pub fn quotient_factor(self, coset: &Domain) -> Fr {
        match self {
            Reduction::Libsnark => coset.vanishing_on_coset_inv(),
            Reduction::Circom => Fr::one(),
        }
    }

    /// Whether the quotient goes back to coefficients (one more inverse transform).
    pub fn back_to_coefficients(self) -> bool {
        self == Reduction::Libsnark
    }

    /// NTTs one proof runs: three to the coset and back per vector, plus the last.
    pub fn transforms(self) -> u32 {
        6 + u32::from(self.back_to_coefficients())
    }
}
