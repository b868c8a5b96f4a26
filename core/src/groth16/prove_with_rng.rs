//! Proving with `r` and `s` drawn from the caller's cryptographic RNG.

use crate::PairingCurve;
use ark_ff::UniformRand;
use ark_relations::gr1cs::ConstraintSynthesizer;
use ark_std::rand::{CryptoRng, RngCore};

use super::{prove, ProofOutput, ProveOptions, StagedKey};
use crate::{ProverBackend, Result};

/// Proves `circuit` as [`prove`] does, with `r` and `s` drawn from `rng`.
///
/// `r` and `s` must be fresh secret randomness for every proof: anyone who knows them
/// (or sees two proofs made with the same ones) can recover the witness. Pass an
/// operating-system RNG (`OsRng`) or a CSPRNG seeded from one; use [`prove`] with
/// explicit values only for reproducible tests and comparisons.
pub fn prove_with_rng<E: PairingCurve, C, R>(
    backend: &dyn ProverBackend<E>,
    key: &StagedKey<E>,
    circuit: C,
    rng: &mut R,
    options: ProveOptions,
) -> Result<ProofOutput<E>>
where
    C: ConstraintSynthesizer<E::ScalarField>,
    R: RngCore + CryptoRng,
{
    let r = E::ScalarField::rand(rng);
    let s = E::ScalarField::rand(rng);
    prove(backend, key, circuit, r, s, options)
}
