//! The evaluation domain of a proof, computed once, here, from the circuit's size.

use ark_ff::{FftField, Field, PrimeField};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};

use crate::{Error, Fr, Result};

/// Two-adicity of BLS12-381's scalar field: the largest NTT it supports is 2^32.
pub const MAX_LOG_SIZE: u32 = 32;

/// A radix-2 evaluation domain of size 2^k with every constant a backend needs.
///
/// Backends never re-derive the size: they receive it here (a prover that derived it
/// from an SRS length once doubled it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Domain {
    /// log2 of the size.
    pub log_size: u32,
    /// Number of points, 2^log_size.
    pub size: usize,
    /// Primitive size-th root of unity (arkworks' `group_gen`).
    pub omega: Fr,
    /// Its inverse.
    pub omega_inv: Fr,
    /// 1 / size.
    pub size_inv: Fr,
    /// Coset offset g (`Fr::GENERATOR`, as ark-groth16 uses).
    pub coset_gen: Fr,
    /// 1 / g.
    pub coset_gen_inv: Fr,
}

impl Domain {
    /// The domain ark-groth16 uses for `num_constraints` constraints and `num_instance`
    /// instance variables (the constant one included): the power of two ≥ their sum.
    pub fn for_circuit(num_constraints: usize, num_instance: usize) -> Result<Domain> {
        let n = num_constraints
            .checked_add(num_instance)
            .ok_or_else(|| Error::InvalidInput("constraint count overflows".into()))?;
        Self::covering(n)
    }

    /// The smallest domain with at least `n` points.
    pub fn covering(n: usize) -> Result<Domain> {
        let size = n.max(1).checked_next_power_of_two().ok_or_else(|| {
            Error::InvalidInput(format!(
                "{n} points exceed the largest domain 2^{MAX_LOG_SIZE}"
            ))
        })?;
        Self::with_log_size(size.trailing_zeros())
    }

    /// The domain of exactly 2^log_size points.
    pub fn with_log_size(log_size: u32) -> Result<Domain> {
        if log_size > MAX_LOG_SIZE || log_size >= usize::BITS {
            return Err(Error::InvalidInput(format!(
                "domain 2^{log_size} exceeds the field's two-adicity (largest is 2^{MAX_LOG_SIZE})"
            )));
        }
        let size = 1usize << log_size;
        let d = Radix2EvaluationDomain::<Fr>::new(size)
            .ok_or_else(|| Error::InvalidInput(format!("no radix-2 domain of size {size}")))?;
        let coset_gen = Fr::GENERATOR;
        Ok(Domain {
            log_size,
            size,
            omega: d.group_gen,
            omega_inv: d.group_gen_inv,
            size_inv: d.size_inv,
            coset_gen,
            coset_gen_inv: coset_gen.inverse().expect("generator is non-zero"),
        })
    }

    /// The same domain with another coset offset `g` (non-zero, not an n-th root of
    /// unity): the coset kinds of [`NttKind`](crate::NttKind) then work on `g·H`.
    pub fn with_coset(&self, g: Fr) -> Domain {
        Domain {
            coset_gen: g,
            coset_gen_inv: g.inverse().unwrap_or_else(ark_ff::Zero::zero),
            ..*self
        }
    }

    /// 1 / Z(g), the inverse of the vanishing polynomial x^n − 1 on the coset offset.
    pub fn vanishing_on_coset_inv(&self) -> Fr {
        let z = self.coset_gen.pow([self.size as u64]) - Fr::ONE;
        z.inverse().unwrap_or_else(ark_ff::Zero::zero)
    }

    /// The same domain as arkworks' type, for reference computations.
    pub fn to_ark(&self) -> Radix2EvaluationDomain<Fr> {
        Radix2EvaluationDomain::<Fr>::new(self.size).expect("size checked at construction")
    }

    /// Modulus bits, for callers sizing scalar windows.
    pub fn scalar_bits() -> u32 {
        Fr::MODULUS_BIT_SIZE
    }
}
