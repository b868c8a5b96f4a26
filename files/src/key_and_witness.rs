//! A proving key read from a file with the witness of its circuit: what one call
//! needs to prove a circom circuit with its snarkjs `.zkey` and `.wtns`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ark_std::rand::rngs::OsRng;
use ark_std::UniformRand;
use crucible_core::groth16::{
    prove_synthesized, KeyOptions, ProofOutput, ProveOptions, ProvingKey, Reduction, StagedKey,
    Synthesized,
};
use crucible_core::{ProverBackend, Result};

use crate::file_curve::FileCurve;

use crate::artifacts::read_proving_key;
use crate::{read_witness, synthesized_from_r1cs, synthesized_from_zkey, R1cs, Zkey};

/// A proving key, the circuit with its witness, and the reduction the key was made for.
pub struct KeyAndWitness<E: FileCurve = crucible_core::Bls12_381> {
    /// The proving key.
    pub proving_key: Arc<ProvingKey<E>>,
    /// The circuit's matrices and the witness's full assignment.
    pub synthesized: Synthesized<E::ScalarField>,
    /// snarkjs' reduction for a `.zkey`, ark-groth16's for an arkworks key.
    pub reduction: Reduction,
    /// How long reading and validating the key file took (the witness and the
    /// circuit not counted).
    pub key_load_time: Duration,
}

fn name(path: &Path) -> String {
    path.display().to_string()
}

impl<E: FileCurve> KeyAndWitness<E> {
    /// A snarkjs `.zkey` and a circom `.wtns`; with `r1cs`, circom's constraints are
    /// checked against the key and every constraint against the witness first (without,
    /// the key's own matrices are used).
    pub fn read_zkey(zkey: &Path, wtns: &Path, r1cs: Option<&Path>) -> Result<Self> {
        let started = Instant::now();
        let key = Zkey::<E>::read(zkey)?;
        let key_load_time = started.elapsed();
        let witness = read_witness::<E>(wtns)?;
        let synthesized = match r1cs {
            Some(r1cs_path) => {
                let r1cs = R1cs::<E>::read(r1cs_path)?;
                key.check_matches(&r1cs, &name(zkey), &name(r1cs_path))?;
                synthesized_from_r1cs(&r1cs, witness, &name(wtns))?
            }
            None => synthesized_from_zkey(&key.circuit(), witness, &name(wtns))?,
        };
        Ok(KeyAndWitness {
            proving_key: Arc::new(key.proving_key),
            synthesized,
            reduction: Reduction::Circom,
            key_load_time,
        })
    }

    /// Stages the key on `backend`, proves with randomness `r`, `s`, and releases the
    /// key. `r` and `s` must be secret and fresh for every proof: whoever knows them
    /// can recover the witness from the proof.
    pub fn prove(
        &self,
        backend: &dyn ProverBackend<E>,
        r: E::ScalarField,
        s: E::ScalarField,
        options: ProveOptions,
    ) -> Result<ProofOutput<E>> {
        let key_options = KeyOptions {
            reduction: self.reduction,
            ..KeyOptions::default()
        };
        let key = StagedKey::stage_with(backend, Arc::clone(&self.proving_key), &key_options)?;
        let out = prove_synthesized(backend, &key, &self.synthesized, r, s, options);
        key.release()?;
        out
    }
}

impl<E: FileCurve> KeyAndWitness<E> {
    /// An arkworks `ProvingKey<E>` file (ark-groth16's reduction), circom's `.r1cs` and
    /// a `.wtns`, both of curve `E`.
    pub fn read_arkworks(pk: &Path, r1cs: &Path, wtns: &Path) -> Result<Self> {
        let started = Instant::now();
        let proving_key = read_proving_key(pk)?;
        let key_load_time = started.elapsed();
        let r1cs = R1cs::<E>::read(r1cs)?;
        let witness = read_witness::<E>(wtns)?;
        Ok(KeyAndWitness {
            proving_key: Arc::new(proving_key),
            synthesized: synthesized_from_r1cs(&r1cs, witness, &name(wtns))?,
            reduction: Reduction::Libsnark,
            key_load_time,
        })
    }
}

/// Proves a circom circuit on `backend` from its snarkjs Groth16 key (`zkey`, curve
/// bls12381) and a witness (`wtns`, from circom's witness generator or `snarkjs wtns
/// calculate`), with fresh randomness from the operating system; the proof is verified
/// before it is returned, and `snarkjs groth16 verify` accepts it once written with
/// [`crate::artifacts::write_proof`].
///
/// ```no_run
/// use crucible_core::registry::{select, ProbeOptions};
/// use crucible_core::Bls12_381;
///
/// # fn main() -> crucible_core::Result<()> {
/// // The binary links the backends once: `use crucible_backends as _;`. The curve is
/// // the key's (`crucible_files::curve_of` reads it; `Bn254` for circom's default).
/// let backend = select::<Bls12_381>("auto", &ProbeOptions::default())?.backend;
/// let out = crucible_files::prove_zkey(&*backend, "circuit.zkey".as_ref(), "witness.wtns".as_ref())?;
/// crucible_files::artifacts::write_proof("proof.json".as_ref(), &out.proof)?;
/// crucible_files::artifacts::write_public("public.json".as_ref(), &out.public_inputs)?;
/// # Ok(())
/// # }
/// ```
pub fn prove_zkey<E: FileCurve>(
    backend: &dyn ProverBackend<E>,
    zkey: &Path,
    wtns: &Path,
) -> Result<ProofOutput<E>> {
    let inputs = KeyAndWitness::read_zkey(zkey, wtns, None)?;
    let (r, s) = (
        E::ScalarField::rand(&mut OsRng),
        E::ScalarField::rand(&mut OsRng),
    );
    inputs.prove(backend, r, s, ProveOptions { verify: true })
}
