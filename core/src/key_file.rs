//! Proving keys on disk: a checksummed cache for keys crucible generated itself, and
//! fully validated loading for keys from anywhere else.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Validate};
use ark_std::rand::{rngs::StdRng, SeedableRng};

use crate::circuit::BenchCircuit;
use crate::groth16::ProvingKey;
use crate::{Bls12_381, Error, Result};

const MAGIC: &[u8; 8] = b"CRUCPK01";

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn io_error(path: &Path, what: &str, e: impl std::fmt::Display) -> Error {
    Error::InvalidInput(format!("{what} {}: {e}", path.display()))
}

/// Writes `pk` as a cache file: magic, length, checksum, uncompressed key.
/// Written to a temporary file and renamed, so a crash never leaves half a key.
pub fn save_cached_key(path: &Path, pk: &ProvingKey) -> Result<()> {
    let mut body = Vec::with_capacity(pk.uncompressed_size());
    pk.serialize_uncompressed(&mut body)
        .map_err(|e| io_error(path, "cannot serialize key for", e))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, "cannot create", e))?;
    }
    let tmp = path.with_extension("tmp");
    let write = || -> std::io::Result<()> {
        let mut w = BufWriter::new(File::create(&tmp)?);
        w.write_all(MAGIC)?;
        w.write_all(&(body.len() as u64).to_le_bytes())?;
        w.write_all(&fnv1a(&body).to_le_bytes())?;
        w.write_all(&body)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()
    };
    write().map_err(|e| io_error(&tmp, "cannot write", e))?;
    std::fs::rename(&tmp, path).map_err(|e| io_error(path, "cannot rename key into", e))
}

/// Reads a cache file written by [`save_cached_key`]. The checksum catches corruption
/// and truncation; points are not re-validated (crucible wrote them), and every proof
/// is verified before it is returned anyway.
pub fn load_cached_key(path: &Path) -> Result<ProvingKey> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|f| BufReader::new(f).read_to_end(&mut bytes))
        .map_err(|e| io_error(path, "cannot read key cache", e))?;
    let corrupt =
        |why: &str| Error::InvalidInput(format!("corrupt key cache {}: {why}", path.display()));
    if bytes.len() < 24 || &bytes[..8] != MAGIC {
        return Err(corrupt("not a crucible key cache file"));
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes")) as usize;
    let sum = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
    let body = &bytes[24..];
    if body.len() != len {
        return Err(corrupt(&format!(
            "{} bytes of key, header says {len}",
            body.len()
        )));
    }
    if fnv1a(body) != sum {
        return Err(corrupt("checksum mismatch"));
    }
    ProvingKey::deserialize_with_mode(body, Compress::No, Validate::No)
        .map_err(|e| corrupt(&e.to_string()))
}

/// Loads an arkworks-serialized proving key from an untrusted file, checking that
/// every point is on its curve and in the prime-order subgroup.
pub fn load_untrusted_key(path: &Path, compress: Compress) -> Result<ProvingKey> {
    let file = File::open(path).map_err(|e| io_error(path, "cannot open proving key", e))?;
    ProvingKey::deserialize_with_mode(BufReader::new(file), compress, Validate::Yes).map_err(|e| {
        Error::InvalidInput(format!(
            "proving key {} is invalid (truncated, corrupt, or a point not on the curve / not in the subgroup): {e}",
            path.display()
        ))
    })
}

/// Generated proving keys of [`BenchCircuit`]s, cached on disk by (N, P, seed).
#[derive(Clone, Debug)]
pub struct KeyCache {
    dir: PathBuf,
}

/// Where a key came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// Read from the cache.
    Cached,
    /// Generated now (and written to the cache).
    Generated,
    /// Generated now because the cache file was unreadable or corrupt.
    Regenerated,
}

impl KeyCache {
    /// A cache in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        KeyCache { dir: dir.into() }
    }

    /// `$CRUCIBLE_CACHE_DIR`, else `$XDG_CACHE_HOME/crucible/keys`, else
    /// `~/.cache/crucible/keys`, else a folder under the system temp dir.
    pub fn default_dir() -> PathBuf {
        if let Some(d) = std::env::var_os("CRUCIBLE_CACHE_DIR") {
            return PathBuf::from(d);
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        base.join("crucible").join("keys")
    }

    /// The cache file for a circuit shape and setup seed.
    pub fn path(&self, constraints: usize, inputs: usize, seed: u64) -> PathBuf {
        self.dir
            .join(format!("bench-n{constraints}-p{inputs}-s{seed}.pk"))
    }

    /// The key for `BenchCircuit { constraints, inputs }` with setup randomness `seed`:
    /// from the cache, or generated with ark-groth16 (calling `on_generate` first so the
    /// caller can show progress) and cached. A corrupt file is regenerated, never used.
    pub fn get_or_generate(
        &self,
        constraints: usize,
        inputs: usize,
        seed: u64,
        on_generate: &mut dyn FnMut(&Path),
    ) -> Result<(ProvingKey, KeySource)> {
        let path = self.path(constraints, inputs, seed);
        let mut source = KeySource::Generated;
        if path.exists() {
            match load_cached_key(&path) {
                Ok(pk) => return Ok((pk, KeySource::Cached)),
                Err(_) => source = KeySource::Regenerated,
            }
        }
        on_generate(&path);
        let pk = generate_key(constraints, inputs, seed)?;
        save_cached_key(&path, &pk)?;
        Ok((pk, source))
    }
}

/// Runs ark-groth16's setup for the benchmark circuit with randomness from `seed`.
pub fn generate_key(constraints: usize, inputs: usize, seed: u64) -> Result<ProvingKey> {
    let circuit = BenchCircuit {
        constraints,
        inputs,
        seed,
    };
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed_c0de);
    Ok(
        ark_groth16::Groth16::<Bls12_381>::generate_random_parameters_with_reduction(
            circuit, &mut rng,
        )?,
    )
}
