//! Proof, public-input and key files in either form, chosen by the file name: a
//! `.json` name is snarkjs' JSON, any other name arkworks' binary form (ark-serialize,
//! compressed when written; compressed or not when read, validated either way).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use ark_ff::PrimeField;
use ark_groth16::VerifyingKey;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Validate};
use serde_json::Value;

use crate::output::{write_atomically, PendingFile};
use crate::snarkjs_json::{
    proof_from_json, proof_to_json, public_from_json, public_to_json, vk_from_json, vk_to_json,
    JsonCurve,
};
use crucible_core::curve::Curve;
use crucible_core::groth16::{Proof, ProvingKey};
use crucible_core::key_file::open_regular;
use crucible_core::PairingCurve;

use crate::file_curve::FileCurve;
use crate::validated_keys::ValidatedKeys;
use crucible_core::{Error, Result};

/// Whether `path` names a snarkjs JSON file (by its `.json` extension).
pub fn is_json(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

fn write_bytes(
    path: &Path,
    what: &str,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<()> {
    write_atomically(path, what, write)
}

fn write_json(path: &Path, what: &str, value: &Value) -> Result<()> {
    write_bytes(path, what, |w| {
        serde_json::to_writer_pretty(&mut *w, value)?;
        w.write_all(b"\n")
    })
}

fn write_binary(path: &Path, what: &str, value: &impl CanonicalSerialize) -> Result<()> {
    let mut bytes = Vec::with_capacity(value.compressed_size());
    value
        .serialize_compressed(&mut bytes)
        .map_err(|e| Error::InvalidInput(format!("cannot serialize {what}: {e}")))?;
    write_bytes(path, what, |w| w.write_all(&bytes))
}

/// The largest proof, public-input or verifying-key file read (a verifying key of
/// 2^16 public inputs is under 7 MiB in arkworks' form, about 20 MiB in JSON).
pub const MAX_SMALL_FILE_BYTES: u64 = 64 << 20;

/// Opens a regular file no larger than [`MAX_SMALL_FILE_BYTES`].
fn open_small(path: &Path, what: &str) -> Result<File> {
    let (file, meta) = open_regular(path, what)?;
    if meta.len() > MAX_SMALL_FILE_BYTES {
        return Err(Error::InvalidInput(format!(
            "{what} {} has {} bytes, more than the {MAX_SMALL_FILE_BYTES} such a file can hold",
            path.display(),
            meta.len()
        )));
    }
    Ok(file)
}

pub(crate) fn read_json(path: &Path, what: &str) -> Result<Value> {
    let file = open_small(path, what)?;
    serde_json::from_reader(BufReader::new(file))
        .map_err(|e| Error::InvalidInput(format!("{}: not valid JSON: {e}", path.display())))
}

/// Reads a small arkworks-serialized value that must fill the whole file, in either
/// compression, with every point validated.
pub(crate) fn read_binary<T: CanonicalDeserialize>(
    path: &Path,
    what: &str,
    curve: Curve,
) -> Result<T> {
    let mut bytes = Vec::new();
    open_small(path, what)?
        .read_to_end(&mut bytes)
        .map_err(|e| Error::InvalidInput(format!("cannot read {what} {}: {e}", path.display())))?;
    let mut errors = Vec::new();
    for (compress, form) in [
        (Compress::Yes, "compressed"),
        (Compress::No, "uncompressed"),
    ] {
        let mut rest = bytes.as_slice();
        match T::deserialize_with_mode(&mut rest, compress, Validate::Yes) {
            Ok(v) if rest.is_empty() => return Ok(v),
            Ok(_) => errors.push(format!("{form}: {} bytes left over", rest.len())),
            Err(e) => errors.push(format!("{form}: {e}")),
        }
    }
    Err(Error::InvalidInput(format!(
        "{}: not an arkworks-serialized {what} (compressed or not) for {curve} ({}); a snarkjs JSON file must be named *.json",
        path.display(),
        errors.join("; ")
    )))
}

/// Writes a proof: snarkjs `proof.json` form for a `.json` name, else arkworks'.
pub fn write_proof<E: FileCurve>(path: &Path, proof: &Proof<E>) -> Result<()> {
    if is_json(path) {
        write_json(path, "proof", &proof_to_json(proof))
    } else {
        write_binary(path, "proof", proof)
    }
}

/// Reads a proof of curve `E` written by crucible, snarkjs or arkworks (a snarkjs file
/// naming the other curve is refused naming both).
pub fn read_proof<E: JsonCurve>(path: &Path) -> Result<Proof<E>> {
    if is_json(path) {
        proof_from_json(&read_json(path, "proof")?, &path.display().to_string())
    } else {
        read_binary(path, "proof", E::CURVE)
    }
}

/// Writes public inputs (the constant one not included): snarkjs `public.json` form,
/// else arkworks' `Vec<Fr>`.
pub fn write_public<F: PrimeField>(path: &Path, inputs: &[F]) -> Result<()> {
    if is_json(path) {
        write_json(path, "public inputs", &public_to_json(inputs))
    } else {
        write_binary(path, "public inputs", &inputs.to_vec())
    }
}

/// Reads public inputs: scalars of curve `E`.
pub fn read_public<E: FileCurve>(path: &Path) -> Result<Vec<E::ScalarField>> {
    if is_json(path) {
        public_from_json(
            &read_json(path, "public inputs")?,
            &path.display().to_string(),
        )
    } else {
        read_binary(path, "public inputs", E::CURVE)
    }
}

/// Writes a verifying key: snarkjs `verification_key.json` form, else arkworks'.
pub fn write_vk<E: JsonCurve>(path: &Path, vk: &VerifyingKey<E>) -> Result<()> {
    if is_json(path) {
        write_json(path, "verifying key", &vk_to_json(vk))
    } else {
        write_binary(path, "verifying key", vk)
    }
}

/// Reads a verifying key of curve `E` (a snarkjs file naming the other curve is
/// refused naming both; [`CurveVerifyingKey::read`](crate::CurveVerifyingKey::read)
/// takes either).
pub fn read_vk<E: JsonCurve>(path: &Path) -> Result<VerifyingKey<E>> {
    if is_json(path) {
        vk_from_json(
            &read_json(path, "verifying key")?,
            &path.display().to_string(),
        )
    } else {
        read_binary(path, "verifying key", E::CURVE)
    }
}

/// Writes an arkworks proving key (compressed, or not for faster loading).
pub fn write_proving_key<E: PairingCurve>(
    path: &Path,
    pk: &ProvingKey<E>,
    compress: Compress,
) -> Result<()> {
    finish_proving_key(PendingFile::create(path, "proving key")?, pk, compress)
}

/// [`write_proving_key`] into an output created before the key was made.
pub fn finish_proving_key<E: PairingCurve>(
    out: PendingFile,
    pk: &ProvingKey<E>,
    compress: Compress,
) -> Result<()> {
    out.finish(|w| {
        pk.serialize_with_mode(w, compress)
            .map_err(std::io::Error::other)
    })
}

/// Reads an arkworks proving key, compressed or not, streaming, with every point
/// validated, unless the same bytes passed before (remembered in the cache directory:
/// [`crate::arkworks_key::read_remembering`]).
pub fn read_proving_key<E: PairingCurve>(path: &Path) -> Result<ProvingKey<E>> {
    crate::arkworks_key::read_remembering(path, &ValidatedKeys::in_cache()).map(|(key, _)| key)
}
