//! R1CS to QAP: how the witness's evaluations become the scalars of the h query, for
//! arkworks keys (ark-groth16's `LibsnarkReduction`) and snarkjs keys (`.zkey`).

use ark_ff::{FftField, LegendreSymbol, One, PrimeField};

use crate::{Domain, Fr, Result};

/// The reduction a proving key was made for. Both take A·z, B·z and C·z on the
/// domain to a coset where the quotient can be evaluated; they differ in the roots of
/// unity, the coset, and what the key's h query expects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reduction {
    /// ark-groth16's `LibsnarkReduction`: arkworks' roots, the coset `g·H` (g =
    /// `Fr::GENERATOR`), `(a·b − c) / Z(g)` back to coefficients; n − 1 h points.
    #[default]
    Libsnark,
    /// snarkjs': ffjavascript's roots of unity (from the smallest quadratic
    /// non-residue, 5, where arkworks uses the generator 7, so row i sits at another
    /// point), the coset `ω_2n·H` (its 2n-th root), `a·b − c` left as evaluations (Z is
    /// the constant −2 there, which the key's h query carries); n h points.
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

    /// The domain of 2^log_size points the reduction's transforms run over: its
    /// roots of unity and its coset offset.
    pub fn transform_domain(self, log_size: u32) -> Result<Domain> {
        match self {
            Reduction::Libsnark => Domain::with_log_size(log_size),
            Reduction::Circom => {
                let root = |log: u32| {
                    snarkjs_root_of_unity::<Fr>(log).ok_or_else(|| {
                        crate::Error::Unsupported(format!(
                            "snarkjs' reduction over 2^{log_size} needs a 2^{log}-th root of unity, beyond the field's two-adicity"
                        ))
                    })
                };
                Domain::with_roots(log_size, root(log_size)?, root(log_size + 1)?)
            }
        }
    }

    /// The factor of the pointwise step `(a·b − c)·k` on the coset.
    pub fn quotient_factor(self, domain: &Domain) -> Fr {
        match self {
            Reduction::Libsnark => domain.vanishing_on_coset_inv(),
            Reduction::Circom => Fr::one(),
        }
    }

    /// Whether the quotient goes back to coefficients (one more inverse transform).
    pub fn back_to_coefficients(self) -> bool {
        self == Reduction::Libsnark
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
