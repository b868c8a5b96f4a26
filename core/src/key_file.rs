//! Proving keys on disk: a cache of keys crucible generated itself, each file saying
//! which key it holds, and fully validated loading for keys from anywhere else.
//!
//! A cache file is a header (magic, the benchmark circuit's constraints and inputs, the
//! setup seed, the body's length and its BLAKE3 hash) and the uncompressed key. A file
//! is used only if every field matches what was asked for, its size is the exact size
//! of such a key, its hash matches, and nobody else could have changed it (it is owned
//! by this user and writable by no one else); anything else is regenerated. Writers
//! use unique temporary files renamed into place, so concurrent processes all succeed
//! (the last rename wins; every writer writes the same key).

use std::fs::{File, Metadata, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Validate};
use ark_std::rand::{rngs::StdRng, SeedableRng};

use crate::circuit::{BenchCircuit, BitHeavyCircuit};
use crate::groth16::{key_shape, ProvingKey};
use crate::{Bls12_381, Error, G1Affine, G2Affine, ProofShape, Result};

const MAGIC: &[u8; 8] = b"CRUCPK02";
const HEADER_BYTES: usize = 8 + 4 * 8 + 32;

/// Which key a cache file holds: the benchmark circuit's sizes, its witness mix and
/// the setup seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchKeyId {
    /// Constraints of the [`BenchCircuit`].
    pub constraints: usize,
    /// Its public inputs.
    pub inputs: usize,
    /// Seed of the setup randomness.
    pub seed: u64,
    /// Constraints per thousand that check a bit ([`BitHeavyCircuit`]; 0: the plain
    /// benchmark chain).
    pub bits_per_mille: u16,
}

/// The header's inputs field carries the witness mix in its top 16 bits (0 in files
/// written before the mix existed, which are plain-chain keys).
const MIX_SHIFT: u32 = 48;

impl BenchKeyId {
    /// The proof shape of this key's circuit.
    pub fn shape(&self) -> Result<ProofShape> {
        BenchCircuit::shape(self.constraints, self.inputs)
    }
}

impl std::fmt::Display for BenchKeyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} constraints, {} inputs, seed {}",
            self.constraints, self.inputs, self.seed
        )?;
        if self.bits_per_mille > 0 {
            write!(f, ", {} bits per mille", self.bits_per_mille)?;
        }
        Ok(())
    }
}

struct Header {
    id: BenchKeyId,
    body_len: u64,
    hash: [u8; 32],
}

impl Header {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES);
        out.extend_from_slice(MAGIC);
        for field in [
            self.id.constraints as u64,
            self.id.inputs as u64 | u64::from(self.id.bits_per_mille) << MIX_SHIFT,
            self.id.seed,
            self.body_len,
        ] {
            out.extend_from_slice(&field.to_le_bytes());
        }
        out.extend_from_slice(&self.hash);
        out
    }

    fn decode(bytes: &[u8; HEADER_BYTES]) -> std::result::Result<Header, String> {
        if &bytes[..8] != MAGIC {
            return Err("not a crucible key cache file of this version".into());
        }
        let field = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[8 + 8 * i..16 + 8 * i]);
            u64::from_le_bytes(b)
        };
        let size = |i: usize| usize::try_from(field(i)).map_err(|_| "a size beyond usize");
        let mut hash = [0u8; 32];
        hash.copy_from_slice(&bytes[40..]);
        Ok(Header {
            id: BenchKeyId {
                constraints: size(0)?,
                inputs: usize::try_from(field(1) & ((1 << MIX_SHIFT) - 1))
                    .map_err(|_| "a size beyond usize")?,
                seed: field(2),
                bits_per_mille: (field(1) >> MIX_SHIFT) as u16,
            },
            body_len: field(3),
            hash,
        })
    }
}

/// The exact uncompressed size of a proving key of `shape` (arkworks' layout: the
/// verifying key, two points, then five length-prefixed queries); `None` past `u64`.
pub fn key_bytes(shape: &ProofShape) -> Option<u64> {
    let g1 = G1Affine::identity().uncompressed_size() as u64;
    let g2 = G2Affine::identity().uncompressed_size() as u64;
    let list = |len: usize, each: u64| (len as u64).checked_mul(each)?.checked_add(8);
    let vars = shape.num_variables();
    [
        Some(g1 + 3 * g2), // alpha_g1, beta_g2, gamma_g2, delta_g2
        list(shape.num_instance, g1),
        Some(2 * g1), // beta_g1, delta_g1
        list(vars, g1),
        list(vars, g1),
        list(vars, g2),
        list(shape.h_len(), g1),
        list(shape.num_witness, g1),
    ]
    .into_iter()
    .try_fold(0u64, |sum, part| sum.checked_add(part?))
}

fn io_error(path: &Path, what: &str, e: impl std::fmt::Display) -> Error {
    Error::InvalidInput(format!("{what} {}: {e}", path.display()))
}

/// What kind of thing other than a regular file `meta` describes.
fn kind_of(meta: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Opens `path` only if it is a regular file (through links): a FIFO would block the
/// open, a device would never end. The opened file is checked again. Errors name the
/// path and what it is, never its contents.
pub fn open_regular(path: &Path, what: &str) -> Result<(File, Metadata)> {
    let not_regular = |meta: &Metadata| {
        Error::InvalidInput(format!(
            "{what} {} is {}, not a regular file",
            path.display(),
            kind_of(meta)
        ))
    };
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, "cannot open", e))?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let file = File::open(path).map_err(|e| io_error(path, "cannot open", e))?;
    let meta = file
        .metadata()
        .map_err(|e| io_error(path, "cannot inspect", e))?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok((file, meta))
}

/// Why someone other than this user could have changed the file, if anyone could.
#[cfg(unix)]
fn changeable_by_others(meta: &Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if meta.mode() & 0o022 != 0 {
        return Some(format!(
            "it is writable by others (mode {:o})",
            meta.mode() & 0o777
        ));
    }
    // `/proc/self` belongs to this process's effective user (Linux).
    let me = std::fs::metadata("/proc/self").ok()?.uid();
    (meta.uid() != me).then(|| format!("it is owned by user {}, not {me}", meta.uid()))
}

#[cfg(not(unix))]
fn changeable_by_others(_meta: &Metadata) -> Option<String> {
    None
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A temporary file next to `path` that no other writer (thread or process) uses.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "key".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let unique = format!(
        ".{name}.{}-{}-{nanos}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    path.with_file_name(unique)
}

/// Writes `pk` as the cache file of `id`: header (with the body's BLAKE3 hash), then
/// the uncompressed key. Written to a unique temporary file (readable and writable by
/// this user only) and renamed into place, so a crash never leaves half a key and
/// concurrent writers never collide.
pub fn save_cached_key(path: &Path, id: &BenchKeyId, pk: &ProvingKey) -> Result<()> {
    let mut body = Vec::new();
    body.try_reserve_exact(pk.uncompressed_size())
        .map_err(|e| io_error(path, "no memory to serialize the key for", e))?;
    pk.serialize_uncompressed(&mut body)
        .map_err(|e| io_error(path, "cannot serialize key for", e))?;
    let header = Header {
        id: *id,
        body_len: body.len() as u64,
        hash: *blake3::hash(&body).as_bytes(),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, "cannot create", e))?;
    }
    let tmp = temp_path(path);
    let write = || -> std::io::Result<()> {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut w = BufWriter::new(options.open(&tmp)?);
        w.write_all(&header.encode())?;
        w.write_all(&body)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        // Best effort: the temporary file may not exist (the open failed).
        let _ = std::fs::remove_file(&tmp);
        io_error(path, "cannot write key cache", e)
    })
}

/// Reads the cache file of `id` written by [`save_cached_key`]. Refused (and so
/// regenerated by [`KeyCache::get_or_generate`]) unless it is a regular file nobody
/// else could have changed, its header names `id`, it is exactly as long as a key of
/// `id`'s shape (checked before the body is read), its hash matches and the key has
/// that shape. Points are not re-validated: crucible wrote them, the hash says they
/// are unchanged, and every proof is verified before it is returned unless told not to.
pub fn load_cached_key(path: &Path, id: &BenchKeyId) -> Result<ProvingKey> {
    let corrupt = |why: String| {
        Error::InvalidInput(format!("key cache {} is not usable: {why}", path.display()))
    };
    let (file, meta) = open_regular(path, "key cache")?;
    if let Some(why) = changeable_by_others(&meta) {
        return Err(corrupt(format!("{why}, so it could have been changed")));
    }
    let shape = id.shape()?;
    let expected = key_bytes(&shape).ok_or_else(|| corrupt("the key size overflows".into()))?;
    let mut reader = BufReader::new(file);
    let mut head = [0u8; HEADER_BYTES];
    reader
        .read_exact(&mut head)
        .map_err(|_| corrupt("shorter than its header".into()))?;
    let header = Header::decode(&head).map_err(corrupt)?;
    if header.id != *id {
        return Err(corrupt(format!(
            "it holds the key for {}, not {id}",
            header.id
        )));
    }
    if header.body_len != expected {
        return Err(corrupt(format!(
            "its header gives {} bytes of key, a key for {id} has {expected}",
            header.body_len
        )));
    }
    let file_len = expected.saturating_add(HEADER_BYTES as u64);
    if meta.len() != file_len {
        return Err(corrupt(format!(
            "it is {} bytes long, its header says {file_len}",
            meta.len()
        )));
    }
    let len = usize::try_from(expected).map_err(|_| corrupt("too large to read".into()))?;
    let mut body = Vec::new();
    body.try_reserve_exact(len)
        .map_err(|e| corrupt(format!("no memory to read it: {e}")))?;
    body.resize(len, 0);
    reader
        .read_exact(&mut body)
        .map_err(|e| corrupt(format!("cannot read it: {e}")))?;
    if *blake3::hash(&body).as_bytes() != header.hash {
        return Err(corrupt("its BLAKE3 hash does not match its header".into()));
    }
    let mut rest = &body[..];
    let pk = ProvingKey::deserialize_with_mode(&mut rest, Compress::No, Validate::No)
        .map_err(|e| corrupt(e.to_string()))?;
    // A key knows its variables and domain, not the exact constraint count.
    let k = key_shape(&pk)?;
    let fits = (k.num_instance, k.num_witness, k.log_domain)
        == (shape.num_instance, shape.num_witness, shape.log_domain);
    if !rest.is_empty() || !fits {
        return Err(corrupt(format!("it does not hold a key for {id}")));
    }
    Ok(pk)
}

/// Loads an arkworks-serialized proving key from an untrusted file: a regular file,
/// holding exactly one key (no bytes after it) whose queries are consistent, every
/// point on its curve and in the prime-order subgroup.
pub fn load_untrusted_key(path: &Path, compress: Compress) -> Result<ProvingKey> {
    let (file, meta) = open_regular(path, "proving key")?;
    let invalid = |why: String| {
        Error::InvalidInput(format!("proving key {} is invalid: {why}", path.display()))
    };
    let mut reader = BufReader::new(file);
    let pk =
        ProvingKey::deserialize_with_mode(&mut reader, compress, Validate::Yes).map_err(|e| {
            invalid(format!(
                "truncated, corrupt, or a point not on the curve / not in the subgroup ({e})"
            ))
        })?;
    let read = reader
        .stream_position()
        .map_err(|e| io_error(path, "cannot read", e))?;
    if read != meta.len() {
        return Err(invalid(format!(
            "{} bytes follow the key (a file holds exactly one)",
            meta.len().saturating_sub(read)
        )));
    }
    key_shape(&pk)?;
    Ok(pk)
}

/// Generated proving keys of [`BenchCircuit`]s, cached on disk by (N, P, seed).
#[derive(Clone, Debug)]
pub struct KeyCache {
    dir: PathBuf,
}

/// Where a key came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// Read from the cache.
    Cached,
    /// Generated now (and written to the cache).
    Generated,
    /// Generated now because the cache file could not be used.
    Regenerated {
        /// Why the file was not used.
        why: String,
    },
}

/// The cache directory from the environment `var` gives: `CRUCIBLE_CACHE_DIR`, else
/// `XDG_CACHE_HOME/crucible/keys`, else `HOME/.cache/crucible/keys`, else the system
/// temp dir's `crucible/keys`. An empty variable counts as unset (an empty path would
/// mean the working directory).
fn cache_dir_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> PathBuf {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set("CRUCIBLE_CACHE_DIR") {
        return dir;
    }
    let base = set("XDG_CACHE_HOME")
        .or_else(|| set("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("crucible").join("keys")
}

impl KeyCache {
    /// A cache in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        KeyCache { dir: dir.into() }
    }

    /// `$CRUCIBLE_CACHE_DIR`, else `$XDG_CACHE_HOME/crucible/keys`, else
    /// `~/.cache/crucible/keys`, else a folder under the system temp dir (empty
    /// variables count as unset).
    pub fn default_dir() -> PathBuf {
        cache_dir_from(|name| std::env::var_os(name))
    }

    /// The cache file for a circuit shape and setup seed.
    pub fn path(&self, constraints: usize, inputs: usize, seed: u64) -> PathBuf {
        self.path_of(&BenchKeyId {
            constraints,
            inputs,
            seed,
            bits_per_mille: 0,
        })
    }

    /// The cache file of key `id`.
    pub fn path_of(&self, id: &BenchKeyId) -> PathBuf {
        let BenchKeyId {
            constraints,
            inputs,
            seed,
            bits_per_mille,
        } = *id;
        let mix = match bits_per_mille {
            0 => String::new(),
            p => format!("-bits{p}"),
        };
        self.dir
            .join(format!("bench-n{constraints}-p{inputs}-s{seed}{mix}.pk"))
    }

    /// The key for `BenchCircuit { constraints, inputs }` with setup randomness `seed`:
    /// from the cache, or generated with ark-groth16 (calling `on_generate` first so the
    /// caller can show progress) and cached. A file that cannot be used (see
    /// [`load_cached_key`]) is regenerated, never used; a directory in its place is an
    /// error, found before anything is generated.
    pub fn get_or_generate(
        &self,
        constraints: usize,
        inputs: usize,
        seed: u64,
        on_generate: &mut dyn FnMut(&Path),
    ) -> Result<(ProvingKey, KeySource)> {
        let id = BenchKeyId {
            constraints,
            inputs,
            seed,
            bits_per_mille: 0,
        };
        self.get_or_generate_id(&id, on_generate)
    }

    /// [`get_or_generate`](Self::get_or_generate) for any benchmark key, the
    /// bit-heavy circuit's included.
    pub fn get_or_generate_id(
        &self,
        id: &BenchKeyId,
        on_generate: &mut dyn FnMut(&Path),
    ) -> Result<(ProvingKey, KeySource)> {
        let id = *id;
        id.shape()?;
        let path = self.path_of(&id);
        let mut source = KeySource::Generated;
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(&path, "cannot inspect key cache", e)),
            Ok(meta) if meta.is_dir() => {
                return Err(Error::InvalidInput(format!(
                    "key cache {} is a directory; remove it or point CRUCIBLE_CACHE_DIR elsewhere",
                    path.display()
                )))
            }
            Ok(_) => match load_cached_key(&path, &id) {
                Ok(pk) => return Ok((pk, KeySource::Cached)),
                Err(e) => {
                    source = KeySource::Regenerated {
                        why: e.root().to_string(),
                    }
                }
            },
        }
        on_generate(&path);
        let pk = generate_key_id(&id)?;
        save_cached_key(&path, &id, &pk)?;
        Ok((pk, source))
    }
}

/// Runs ark-groth16's setup for the benchmark circuit with randomness from `seed`.
pub fn generate_key(constraints: usize, inputs: usize, seed: u64) -> Result<ProvingKey> {
    generate_key_id(&BenchKeyId {
        constraints,
        inputs,
        seed,
        bits_per_mille: 0,
    })
}

/// Runs ark-groth16's setup for key `id`'s circuit (the plain chain is the bit-heavy
/// circuit without bit rows, so both are one circuit here).
pub fn generate_key_id(id: &BenchKeyId) -> Result<ProvingKey> {
    let circuit = BitHeavyCircuit {
        constraints: id.constraints,
        inputs: id.inputs,
        seed: id.seed,
        bits_per_mille: id.bits_per_mille,
    };
    let seed = id.seed;
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed_c0de);
    Ok(
        ark_groth16::Groth16::<Bls12_381>::generate_random_parameters_with_reduction(
            circuit, &mut rng,
        )?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn an_empty_cache_variable_counts_as_unset() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let dir = cache_dir_from(env(&[("CRUCIBLE_CACHE_DIR", ""), ("HOME", "/home/u")]));
        assert_eq!(dir, Path::new("/home/u/.cache/crucible/keys"));
        let dir = cache_dir_from(env(&[
            ("CRUCIBLE_CACHE_DIR", ""),
            ("XDG_CACHE_HOME", ""),
            ("HOME", "/home/u"),
        ]));
        assert_eq!(dir, Path::new("/home/u/.cache/crucible/keys"));
        let dir = cache_dir_from(env(&[("CRUCIBLE_CACHE_DIR", "/c"), ("HOME", "/h")]));
        assert_eq!(dir, Path::new("/c"));
        let dir = cache_dir_from(env(&[]));
        assert!(dir.is_absolute(), "{}", dir.display());
        assert!(dir.ends_with("crucible/keys"));
    }

    #[test]
    fn key_bytes_is_the_serialized_size() {
        let (constraints, inputs) = (5, 2);
        let pk = generate_key(constraints, inputs, 1).unwrap();
        let shape = BenchCircuit::shape(constraints, inputs).unwrap();
        assert_eq!(key_bytes(&shape), Some(pk.uncompressed_size() as u64));
    }

    #[test]
    fn headers_round_trip() {
        for bits_per_mille in [0, 900, 1000] {
            let header = Header {
                id: BenchKeyId {
                    constraints: 7,
                    inputs: 3,
                    seed: u64::MAX,
                    bits_per_mille,
                },
                body_len: 12345,
                hash: [7; 32],
            };
            let bytes: [u8; HEADER_BYTES] = header.encode().try_into().unwrap();
            let back = Header::decode(&bytes).unwrap();
            assert_eq!(
                (back.id, back.body_len, back.hash),
                (header.id, 12345, [7; 32])
            );
            let mut wrong = bytes;
            wrong[0] ^= 1;
            assert!(Header::decode(&wrong).is_err());
        }
    }

    #[test]
    fn a_bit_heavy_key_has_its_own_file_and_its_own_matrices() {
        let dir = std::env::temp_dir().join(format!("crucible-mix-{}", std::process::id()));
        let cache = KeyCache::new(&dir);
        let plain = BenchKeyId {
            constraints: 9,
            inputs: 1,
            seed: 4,
            bits_per_mille: 0,
        };
        let heavy = BenchKeyId {
            bits_per_mille: 900,
            ..plain
        };
        assert_eq!(cache.path_of(&plain), cache.path(9, 1, 4));
        assert_ne!(cache.path_of(&heavy), cache.path_of(&plain));
        let (a, _) = cache.get_or_generate_id(&plain, &mut |_| ()).unwrap();
        let (b, _) = cache.get_or_generate_id(&heavy, &mut |_| ()).unwrap();
        assert_ne!(
            a.a_query, b.a_query,
            "the bit rows change the circuit, so the key"
        );
        let (again, source) = cache.get_or_generate_id(&heavy, &mut |_| ()).unwrap();
        assert!(matches!(source, KeySource::Cached));
        assert_eq!(again.a_query, b.a_query);
        // The plain file does not pass for the bit-heavy key.
        std::fs::copy(cache.path_of(&plain), cache.path_of(&heavy)).unwrap();
        assert!(load_cached_key(&cache.path_of(&heavy), &heavy).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
