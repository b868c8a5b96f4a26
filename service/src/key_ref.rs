//! Which proving key a job is for: the identity a client, the job queue and a worker
//! agree on, and how a server or worker gets the key itself.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use crucible_core::engine::EngineConfig;
use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::fixtures::key_cache::{BenchKeyId, KeyCache, KeySource};
use crucible_core::groth16::{key_shape_for, CircuitMatrices, ProvingKey, Reduction};
use crucible_core::synthesis_threads::auto_synthesis_threads_here;
use crucible_core::Domain;
use crucible_files::validated_keys::ValidatedKeys;
use crucible_files::Zkey;

use crate::key_circuit::KeyCircuit;
use crate::key_dir::KeyDir;
use crate::load_ticket::LoadTicket;
use crate::proto;
use crate::{ServiceError, ServiceResult};

/// A proving key's identity.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyRef {
    /// The built-in benchmark circuit's key (`crucible_core::fixtures::circuit::BenchCircuit`),
    /// from ark-groth16's setup with `setup_seed`, read from the key cache
    /// (`CRUCIBLE_CACHE_DIR`) or generated into it.
    Bench {
        /// Constraints, exactly.
        constraints: usize,
        /// Public inputs (the constant one not counted).
        inputs: usize,
        /// Seed of the setup's randomness.
        setup_seed: u64,
    },
    /// A snarkjs `.zkey` at this path on the machine that loads it (proofs use
    /// snarkjs' reduction).
    Zkey {
        /// The file.
        path: PathBuf,
    },
}

/// A key read into memory: what the engine stages and what each job's witness is
/// checked and assembled against.
pub struct LoadedKey {
    /// The proving key.
    pub pk: ProvingKey,
    /// The reduction it was made for.
    pub reduction: Reduction,
    /// Its circuit, shared by every job.
    pub circuit: KeyCircuit,
}

impl LoadedKey {
    /// The engine configuration of this key on `devices` devices: `base` with the
    /// key's reduction and, when `auto_threads`, synthesis threads sized for its shape
    /// (two a worker, at most half the cores, within a quarter of the host memory).
    pub fn engine_config(
        &self,
        base: &EngineConfig,
        auto_threads: bool,
        devices: usize,
    ) -> ServiceResult<EngineConfig> {
        let mut config = EngineConfig {
            reduction: self.reduction,
            ..*base
        };
        if auto_threads {
            let shape = key_shape_for(&self.pk, self.reduction)?;
            config.synthesis_threads =
                auto_synthesis_threads_here(config.workers_per_device * devices, &shape, false);
        }
        Ok(config)
    }
}

impl KeyRef {
    /// A benchmark key, its sizes checked (at least one constraint, a domain crucible
    /// supports).
    pub fn bench(constraints: usize, inputs: usize, setup_seed: u64) -> ServiceResult<KeyRef> {
        if constraints == 0 {
            return Err(ServiceError::Invalid(
                "a benchmark key needs at least one constraint".into(),
            ));
        }
        let instance = inputs
            .checked_add(1)
            .ok_or_else(|| ServiceError::Invalid("too many public inputs".into()))?;
        Domain::<crucible_core::Fr>::for_circuit(constraints, instance)?;
        Ok(KeyRef::Bench {
            constraints,
            inputs,
            setup_seed,
        })
    }

    /// A `.zkey` key; the path must not be empty.
    pub fn zkey(path: impl Into<PathBuf>) -> ServiceResult<KeyRef> {
        let path = path.into();
        if path.as_os_str().is_empty() {
            return Err(ServiceError::Invalid("a .zkey key needs a path".into()));
        }
        Ok(KeyRef::Zkey { path })
    }

    /// From the gRPC message.
    pub fn from_proto(source: Option<&proto::KeySource>) -> ServiceResult<KeyRef> {
        match source.and_then(|s| s.source.as_ref()) {
            Some(proto::key_source::Source::Bench(b)) => KeyRef::bench(
                to_usize(b.constraints, "constraints")?,
                to_usize(b.inputs, "inputs")?,
                b.setup_seed,
            ),
            Some(proto::key_source::Source::Zkey(z)) => KeyRef::zkey(&z.path),
            None => Err(ServiceError::Invalid("the key source is missing".into())),
        }
    }

    /// As the gRPC message.
    pub fn to_proto(&self) -> proto::KeySource {
        let source = match self {
            KeyRef::Bench {
                constraints,
                inputs,
                setup_seed,
            } => proto::key_source::Source::Bench(proto::BenchKey {
                constraints: *constraints as u64,
                inputs: *inputs as u64,
                setup_seed: *setup_seed,
            }),
            KeyRef::Zkey { path } => proto::key_source::Source::Zkey(proto::ZkeyFile {
                path: path.display().to_string(),
            }),
        };
        proto::KeySource {
            source: Some(source),
        }
    }

    /// Reads the key and its circuit (for a benchmark key: the key from the key cache,
    /// generated there when missing or corrupt, and the circuit's matrices built once;
    /// a `.zkey` from `key_dir`). Blocking: seconds to minutes for a large key; admit
    /// it first ([`crate::admission::Limits::admit`]). A key's setup stops within
    /// milliseconds of `ticket` being called off, and then caches nothing; a `.zkey`'s
    /// read stops within a block (64 MiB) of it.
    pub fn load(&self, key_dir: &KeyDir, ticket: &LoadTicket) -> ServiceResult<LoadedKey> {
        match self {
            &KeyRef::Bench {
                constraints,
                inputs,
                setup_seed,
            } => {
                let cache = KeyCache::new(KeyCache::default_dir());
                let id = BenchKeyId {
                    constraints,
                    inputs,
                    seed: setup_seed,
                    bits_per_mille: 0,
                };
                let mut announce = |path: &std::path::Path| {
                    tracing::info!(path = %path.display(), key = self.to_string(), "generating the proving key");
                };
                let stop = || ticket.is_called_off();
                let Some((pk, source)) = cache.get_or_generate_until(&id, &mut announce, &stop)?
                else {
                    return Err(
                        ticket.stopped_while(&self.to_string(), "generating its proving key")
                    );
                };
                match &source {
                    KeySource::Regenerated { why } => tracing::warn!(
                        key = self.to_string(),
                        why = why.as_str(),
                        "the key cache file was unusable; regenerated it"
                    ),
                    KeySource::Unsaved { why } => tracing::warn!(
                        key = self.to_string(),
                        why = why.as_str(),
                        "the key cache is unusable; the key was not cached"
                    ),
                    KeySource::Cached | KeySource::Generated => {}
                }
                let matrices = CircuitMatrices::of(BenchCircuit {
                    constraints,
                    inputs,
                    seed: 0,
                })?;
                Ok(LoadedKey {
                    pk,
                    reduction: Reduction::Libsnark,
                    circuit: KeyCircuit::Bench {
                        matrices,
                        constraints,
                        inputs,
                    },
                })
            }
            KeyRef::Zkey { path } => {
                let file = key_dir.resolve(path)?;
                let stop = || ticket.is_called_off();
                let read = Zkey::<crucible_core::Bls12_381>::read_remembering_until(
                    &file,
                    &ValidatedKeys::in_cache(),
                    &stop,
                )
                .map_err(|e| key_dir.client_error(path, &file, e))?;
                let Some((zkey, _)) = read else {
                    return Err(ticket.stopped_while(&self.to_string(), "reading its .zkey"));
                };
                let circuit = KeyCircuit::Zkey(Arc::new(zkey.circuit()));
                Ok(LoadedKey {
                    pk: zkey.proving_key,
                    reduction: Reduction::Circom,
                    circuit,
                })
            }
        }
    }
}

fn to_usize(value: u64, what: &str) -> ServiceResult<usize> {
    usize::try_from(value)
        .map_err(|_| ServiceError::Invalid(format!("{what} {value} is too large")))
}

/// `bench:n=<constraints>,p=<inputs>,seed=<setup seed>` or `zkey:<path>`: the form
/// stored in the job queue and given to `crucible queue submit --key`.
impl fmt::Display for KeyRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyRef::Bench {
                constraints,
                inputs,
                setup_seed,
            } => write!(f, "bench:n={constraints},p={inputs},seed={setup_seed}"),
            KeyRef::Zkey { path } => write!(f, "zkey:{}", path.display()),
        }
    }
}

impl FromStr for KeyRef {
    type Err = ServiceError;

    fn from_str(s: &str) -> ServiceResult<KeyRef> {
        let bad = |why: &str| {
            ServiceError::Invalid(format!(
                "key reference `{s}`: {why} (expected bench:n=<constraints>,p=<inputs>,seed=<seed> or zkey:<path>)"
            ))
        };
        if let Some(path) = s.strip_prefix("zkey:") {
            return KeyRef::zkey(path);
        }
        let fields = s
            .strip_prefix("bench:")
            .ok_or_else(|| bad("unknown kind"))?;
        let mut values = [None::<u64>; 3];
        for field in fields.split(',') {
            let (name, value) = field
                .split_once('=')
                .ok_or_else(|| bad("a field without `=`"))?;
            let slot = match name {
                "n" => 0,
                "p" => 1,
                "seed" => 2,
                _ => return Err(bad(&format!("unknown field `{name}`"))),
            };
            if values[slot].is_some() {
                return Err(bad(&format!("field `{name}` given twice")));
            }
            values[slot] = Some(
                value
                    .parse()
                    .map_err(|_| bad(&format!("`{value}` is not a number")))?,
            );
        }
        let [Some(n), Some(p), Some(seed)] = values else {
            return Err(bad("a field is missing"));
        };
        KeyRef::bench(to_usize(n, "constraints")?, to_usize(p, "inputs")?, seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_text_and_proto() {
        let bench = KeyRef::bench(64, 2, 7).unwrap();
        assert_eq!(bench.to_string(), "bench:n=64,p=2,seed=7");
        let zkey = KeyRef::zkey("/keys/chain.zkey").unwrap();
        assert_eq!(zkey.to_string(), "zkey:/keys/chain.zkey");
        for key in [bench, zkey] {
            assert_eq!(key.to_string().parse::<KeyRef>().unwrap(), key);
            assert_eq!(KeyRef::from_proto(Some(&key.to_proto())).unwrap(), key);
        }
    }

    #[test]
    fn rejects_malformed_references() {
        for bad in [
            "",
            "bench:",
            "bench:n=64,p=1",
            "bench:n=64,p=1,seed=0,n=3",
            "bench:n=x,p=1,seed=0",
            "bench:n=0,p=1,seed=0",
            "zkey:",
            "pk:n=64,p=1,seed=0",
            "bench:n=64,p=1,seed=0,extra=1",
        ] {
            assert!(bad.parse::<KeyRef>().is_err(), "{bad:?} was accepted");
        }
        assert!(KeyRef::from_proto(None).is_err());
    }
}
