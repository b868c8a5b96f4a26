//! R1CS to QAP: how the witness's evaluations become the scalars of the h query.

use ark_ff::{FftField, LegendreSymbol, PrimeField};

use crate::{Domain, Error, Result};

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
    /// snarkjs': on the coset `ω_2n·H` (ω_2n its primitive 2n-th root of unity)
    /// `a·b − c`, left as evaluations (Z is the constant −2 there, which the key's h
    /// query already carries); n points. Its roots of unity are ffjavascript's, from
    /// the field's smallest quadratic non-residue (5), where arkworks' come from the
    /// generator (7): row i of the constraints sits at another point, so every
    /// transform of the reduction runs over those roots ([`snarkjs_root_of_unity`]).
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

    /// The domain of `domain`'s size that this reduction's transforms run over: its
    /// roots of unity and its coset offset.
    pub fn coset_domain<F: PrimeField>(self, domain: &Domain<F>) -> Result<Domain<F>> {
        match self {
            Reduction::Libsnark => Ok(*domain),
            Reduction::Circom => {
                let log = domain.log_size;
                let root = |log: u32| {
                    snarkjs_root_of_unity::<F>(log).ok_or_else(|| {
                        Error::Unsupported(format!(
                            "snarkjs' reduction over 2^{} needs a 2^{log}-th root of unity, beyond the field's two-adicity",
                            domain.log_size
                        ))
                    })
                };
                Domain::with_roots(log, root(log)?, root(log + 1)?)
            }
        }
    }

    /// The factor of the pointwise step `(a·b − c)·k` on the coset.
    pub fn quotient_factor<F: PrimeField>(self, coset: &Domain<F>) -> Result<F> {
        match self {
            Reduction::Libsnark => coset.vanishing_on_coset_inv(),
            Reduction::Circom => Ok(F::one()),
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

/// ffjavascript's (snarkjs') primitive 2^k-th root of unity in `F`: `nqr^((p − 1) /
/// 2^s)` for the smallest quadratic non-residue `nqr`, squared down to order 2^k;
/// `None` beyond the field's two-adicity.
pub fn snarkjs_root_of_unity<F: PrimeField + FftField>(log_size: u32) -> Option<F> {
    if log_size > F::TWO_ADICITY {
        return None;
    }
    let nqr = (2u64..)
        .map(F::from)
        .find(|x| x.legendre() == LegendreSymbol::QuadraticNonResidue)?;
    let mut root = nqr.pow(F::TRACE);
    for _ in log_size..F::TWO_ADICITY {
        root.square_in_place();
    }
    Some(root)
}
