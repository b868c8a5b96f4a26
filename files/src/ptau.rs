//! Powers-of-tau files (`.ptau`) as snarkjs writes them, made from known secrets for
//! development and tests: what `snarkjs powersoftau new`, one `contribute` and
//! `prepare phase2` produce, without the ceremony. The secrets come from a seed, so
//! the file proves nothing about setup security; it exists because snarkjs' own
//! `prepare phase2` takes about 25 CPU-minutes at power 14 over BLS12-381, and this
//! takes about a second.
//!
//! The layout (iden3's container, magic `ptau`, version 1), with n = 2^power:
//! - 1, header: n8 = 48 (u32), q (48 bytes), power (u32), ceremony power (u32);
//! - 2, tau^i G1 for i < 2n - 1; 3, tau^i G2 for i < n;
//! - 4, alpha tau^i G1 and 5, beta tau^i G1 for i < n; 6, beta G2;
//! - 7, contributions: a count of 0 (no ceremony transcript);
//! - prepared only: 12, 13, 14, 15, the inverse FFTs of sections 2, 3, 4 and 5 over
//!   every domain 2^p, p = 0..=power (each the Lagrange basis at tau over that domain,
//!   times G1, G2, alpha G1, beta G1), and for section 12 also p = power + 1, whose
//!   input is section 2 with a point at infinity appended (snarkjs' zkey setup reads
//!   its odd entries for the H query of a circuit of the full power).
//!
//! Points are affine, coordinates in Montgomery form, as in a `.zkey`.

use std::io::Write;
use std::path::Path;

use ark_ec::scalar_mul::BatchMulPreprocessing;
use ark_ec::{AffineRepr, PrimeGroup};
use ark_ff::{Field, PrimeField, UniformRand, Zero};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_core::groth16::snarkjs_root_of_unity;
use crucible_core::{Bls12_381, Error, Result};

use crate::encoding::{g1_zkey_bytes, g2_zkey_bytes};
use crate::file_curve::{fq_bytes, g1_bytes, g2_bytes, FileCurve};

/// The largest power written: section 12 needs a domain of 2^(power + 1), within
/// both curves' scalar fields (2-adicity 32 for BLS12-381, 28 for BN254: BN254's
/// largest is 27, which [`DevPtau::from_seed`] checks).
pub const MAX_POWER: u32 = 28;

/// The secrets of a development powers-of-tau file over the curve `E` (BLS12-381
/// unless named; snarkjs' `bls12381` or `bn128`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevPtau<E: FileCurve = Bls12_381> {
    /// Domains up to 2^power points (circuits of up to 2^power constraints plus
    /// public inputs).
    pub power: u32,
    /// The evaluation point.
    pub tau: E::ScalarField,
    /// The alpha of Groth16's phase 1.
    pub alpha: E::ScalarField,
    /// The beta of Groth16's phase 1.
    pub beta: E::ScalarField,
}

impl<E: FileCurve> DevPtau<E> {
    /// Secrets drawn from `seed` for domains up to 2^`power`; power 1 to [`MAX_POWER`].
    pub fn from_seed(power: u32, seed: u64) -> Result<DevPtau<E>> {
        let max = MAX_POWER.min(<E::ScalarField as ark_ff::FftField>::TWO_ADICITY - 1);
        if !(1..=max).contains(&power) {
            return Err(Error::InvalidInput(format!(
                "powers of tau: power {power} is outside 1..={max} for {}",
                E::CURVE
            )));
        }
        let mut rng = StdRng::seed_from_u64(seed);
        let mut nonzero = || loop {
            let x = E::ScalarField::rand(&mut rng);
            if !x.is_zero() {
                return x;
            }
        };
        Ok(DevPtau {
            power,
            tau: nonzero(),
            alpha: nonzero(),
            beta: nonzero(),
        })
    }

    /// Writes the file to `path` (created or truncated), with the phase-2 sections
    /// when `prepared`.
    pub fn write_file(&self, path: &Path, prepared: bool) -> Result<()> {
        crate::output::write_atomically(path, "powers of tau", |out| self.write(out, prepared))
    }

    /// Writes the file's bytes, with the phase-2 sections when `prepared`.
    pub fn write(&self, out: &mut impl Write, prepared: bool) -> std::io::Result<()> {
        let n = 1usize << self.power;
        let tables = Tables::<E>::new(2 * n);
        let sections: u32 = if prepared { 11 } else { 7 };
        out.write_all(b"ptau")?;
        out.write_all(&1u32.to_le_bytes())?;
        out.write_all(&sections.to_le_bytes())?;

        let mut header = Vec::with_capacity(4 + fq_bytes::<E>() + 8);
        header.extend_from_slice(&(fq_bytes::<E>() as u32).to_le_bytes());
        header.extend_from_slice(&E::CURVE.base_modulus());
        header.extend_from_slice(&self.power.to_le_bytes());
        header.extend_from_slice(&self.power.to_le_bytes());
        section(out, 1, &header)?;

        let tau_powers = powers(self.tau, 2 * n - 1);
        let scaled = |c: E::ScalarField| tau_powers[..n].iter().map(|t| c * t).collect::<Vec<_>>();
        section(out, 2, &tables.g1(&tau_powers))?;
        section(out, 3, &tables.g2(&tau_powers[..n]))?;
        section(out, 4, &tables.g1(&scaled(self.alpha)))?;
        section(out, 5, &tables.g1(&scaled(self.beta)))?;
        section(out, 6, &tables.g2(&[self.beta]))?;
        section(out, 7, &0u32.to_le_bytes())?;
        if !prepared {
            return Ok(());
        }

        // Section p's block: the inverse FFT of the first 2^p entries of the powers,
        // then the section's constant times the group's generator.
        let lagrange = |factor: E::ScalarField, top: u32, g2: bool| -> Vec<u8> {
            let mut scalars = Vec::with_capacity(2 << top);
            for p in 0..=top {
                let size = 1usize << p;
                let mut block: Vec<E::ScalarField> = (0..size)
                    .map(|i| {
                        tau_powers
                            .get(i)
                            .map_or(E::ScalarField::zero(), |t| factor * t)
                    })
                    .collect();
                snarkjs_domain::<E::ScalarField>(p).ifft_in_place(&mut block);
                scalars.extend(block);
            }
            if g2 {
                tables.g2(&scalars)
            } else {
                tables.g1(&scalars)
            }
        };
        section(
            out,
            12,
            &lagrange(E::ScalarField::ONE, self.power + 1, false),
        )?;
        section(out, 13, &lagrange(E::ScalarField::ONE, self.power, true))?;
        section(out, 14, &lagrange(self.alpha, self.power, false))?;
        section(out, 15, &lagrange(self.beta, self.power, false))
    }
}

/// The domain of 2^log points with ffjavascript's root of unity, which is not
/// arkworks' beyond 4 points: snarkjs' provers evaluate over it.
fn snarkjs_domain<F: PrimeField>(log: u32) -> Radix2EvaluationDomain<F> {
    // log <= power + 1 <= the field's 2-adicity, checked by DevPtau::from_seed.
    let ark = Radix2EvaluationDomain::<F>::new(1 << log).expect("2^log fits the 2-adicity");
    let gen = snarkjs_root_of_unity::<F>(log).expect("log is within Fr's 2-adicity");
    Radix2EvaluationDomain {
        group_gen: gen,
        group_gen_inv: gen.inverse().expect("a root of unity is invertible"),
        ..ark
    }
}

/// One container section: its type, byte length and bytes.
fn section(out: &mut impl Write, kind: u32, body: &[u8]) -> std::io::Result<()> {
    out.write_all(&kind.to_le_bytes())?;
    out.write_all(&(body.len() as u64).to_le_bytes())?;
    out.write_all(body)
}

/// x^i for i < count.
fn powers<F: PrimeField>(x: F, count: usize) -> Vec<F> {
    let mut v = Vec::with_capacity(count);
    let mut p = F::ONE;
    for _ in 0..count {
        v.push(p);
        p *= x;
    }
    v
}

/// Fixed-base tables of the two generators, for many scalar multiples each.
struct Tables<E: FileCurve> {
    g1: BatchMulPreprocessing<E::G1>,
    g2: BatchMulPreprocessing<E::G2>,
}

impl<E: FileCurve> Tables<E> {
    fn new(scalars: usize) -> Tables<E> {
        Tables {
            g1: BatchMulPreprocessing::new(E::G1::generator(), scalars),
            g2: BatchMulPreprocessing::new(E::G2::generator(), scalars),
        }
    }

    /// s_i G1 for every scalar, encoded one after the other.
    fn g1(&self, scalars: &[E::ScalarField]) -> Vec<u8> {
        encode(
            &self.g1.batch_mul(scalars),
            g1_bytes::<E>(),
            g1_zkey_bytes::<E>,
        )
    }

    /// s_i G2 for every scalar, encoded one after the other.
    fn g2(&self, scalars: &[E::ScalarField]) -> Vec<u8> {
        encode(
            &self.g2.batch_mul(scalars),
            g2_bytes::<E>(),
            g2_zkey_bytes::<E>,
        )
    }
}

fn encode<A: AffineRepr>(points: &[A], size: usize, put: fn(&A, &mut [u8])) -> Vec<u8> {
    let mut bytes = vec![0u8; points.len() * size];
    for (p, chunk) in points.iter().zip(bytes.chunks_exact_mut(size)) {
        put(p, chunk);
    }
    bytes
}
