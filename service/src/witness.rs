//! What one proof proves: the witness a client or a queued job supplies, turned into
//! the circuit the engine synthesizes, with fresh randomness.

use ark_std::rand::rngs::OsRng;
use ark_std::UniformRand;
use crucible_core::circuit::BenchCircuit;
use crucible_core::engine::Job;
use crucible_core::Fr;

use crate::key_ref::KeyRef;
use crate::proto;
use crate::{ServiceError, ServiceResult};

/// The circuit a job proves.
pub type JobCircuit = BenchCircuit;

/// One proof's witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Witness {
    /// The benchmark circuit's witness drawn from this seed (benchmark keys only).
    BenchSeed(u64),
}

/// How [`Witness::BenchSeed`] is named in the job queue.
const BENCH_SEED: &str = "bench-seed";

impl Witness {
    /// From the gRPC message.
    pub fn from_proto(witness: Option<&proto::Witness>) -> ServiceResult<Witness> {
        match witness.and_then(|w| w.kind) {
            Some(proto::witness::Kind::BenchSeed(seed)) => Ok(Witness::BenchSeed(seed)),
            None => Err(ServiceError::Invalid("the witness is missing".into())),
        }
    }

    /// As the gRPC message.
    pub fn to_proto(&self) -> proto::Witness {
        match *self {
            Witness::BenchSeed(seed) => proto::Witness {
                kind: Some(proto::witness::Kind::BenchSeed(seed)),
            },
        }
    }

    /// The circuit proving this witness against `key`'s circuit; an error when the
    /// witness cannot belong to that circuit.
    pub fn circuit(&self, key: &KeyRef) -> ServiceResult<JobCircuit> {
        match (*self, *key) {
            (
                Witness::BenchSeed(seed),
                KeyRef::Bench {
                    constraints,
                    inputs,
                    ..
                },
            ) => Ok(BenchCircuit {
                constraints,
                inputs,
                seed,
            }),
        }
    }

    /// The engine job for this witness, with fresh secret randomness `r`, `s` from the
    /// operating system.
    pub fn job(&self, id: u64, key: &KeyRef) -> ServiceResult<Job<JobCircuit>> {
        Ok(Job {
            id,
            circuit: self.circuit(key)?,
            r: Fr::rand(&mut OsRng),
            s: Fr::rand(&mut OsRng),
        })
    }

    /// The kind and bytes stored in the job queue.
    pub fn encode(&self) -> (&'static str, Vec<u8>) {
        match *self {
            Witness::BenchSeed(seed) => (BENCH_SEED, seed.to_le_bytes().to_vec()),
        }
    }

    /// From the kind and bytes stored in the job queue.
    pub fn decode(kind: &str, bytes: &[u8]) -> ServiceResult<Witness> {
        match kind {
            BENCH_SEED => {
                let seed: [u8; 8] = bytes.try_into().map_err(|_| {
                    ServiceError::Invalid(format!(
                        "a {BENCH_SEED} witness is 8 bytes, this one {}",
                        bytes.len()
                    ))
                })?;
                Ok(Witness::BenchSeed(u64::from_le_bytes(seed)))
            }
            other => Err(ServiceError::Invalid(format!(
                "unknown witness kind `{other}` (known: {BENCH_SEED})"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_queue_encoding_and_proto() {
        let w = Witness::BenchSeed(0xdead_beef_0123);
        let (kind, bytes) = w.encode();
        assert_eq!(Witness::decode(kind, &bytes).unwrap(), w);
        assert_eq!(Witness::from_proto(Some(&w.to_proto())).unwrap(), w);
        assert!(Witness::decode(kind, &bytes[..7]).is_err());
        assert!(Witness::decode("wtns", &bytes).is_err());
        assert!(Witness::from_proto(None).is_err());
    }

    #[test]
    fn jobs_get_fresh_randomness() {
        let key = KeyRef::bench(8, 1, 0).unwrap();
        let a = Witness::BenchSeed(1).job(1, &key).unwrap();
        let b = Witness::BenchSeed(1).job(2, &key).unwrap();
        assert_eq!(a.circuit, b.circuit);
        assert_ne!((a.r, a.s), (b.r, b.s));
    }
}
