//! What one proof proves: the witness a client or a queued job supplies (a benchmark
//! seed, a circom `.wtns`, or an arkworks assignment), with fresh randomness.

use std::io::Cursor;
use std::sync::Arc;

use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use crucible_core::{Error, Fr, Result};

use crate::proto;
use crate::{ServiceError, ServiceResult};

/// One proof's witness. The bytes are kept as sent and parsed by the engine's
/// synthesis threads, so a malformed witness fails its own job, never the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Witness {
    /// The benchmark circuit's witness drawn from this seed (benchmark keys only).
    BenchSeed(u64),
    /// A circom `.wtns` file: every wire's value.
    Wtns(Arc<[u8]>),
    /// The full assignment as `Vec<Fr>`, arkworks-serialized (compressed).
    Assignment(Arc<[u8]>),
}

/// How each kind is named in the job queue.
const BENCH_SEED: &str = "bench-seed";
const WTNS: &str = "wtns";
const ASSIGNMENT: &str = "assignment";

impl Witness {
    /// An arkworks assignment (the constant one, the public inputs, the witness).
    pub fn assignment(values: &[Fr]) -> Witness {
        let mut bytes = Vec::new();
        values
            .serialize_compressed(&mut bytes)
            .expect("serializing into a Vec cannot fail");
        Witness::Assignment(bytes.into())
    }

    /// From the gRPC message.
    pub fn from_proto(witness: Option<&proto::Witness>) -> ServiceResult<Witness> {
        use proto::witness::Kind;
        match witness.and_then(|w| w.kind.as_ref()) {
            Some(Kind::BenchSeed(seed)) => Ok(Witness::BenchSeed(*seed)),
            Some(Kind::Wtns(bytes)) => Ok(Witness::Wtns(bytes.as_slice().into())),
            Some(Kind::Assignment(bytes)) => Ok(Witness::Assignment(bytes.as_slice().into())),
            None => Err(ServiceError::Invalid("the witness is missing".into())),
        }
    }

    /// As the gRPC message.
    pub fn to_proto(&self) -> proto::Witness {
        use proto::witness::Kind;
        let kind = match self {
            Witness::BenchSeed(seed) => Kind::BenchSeed(*seed),
            Witness::Wtns(bytes) => Kind::Wtns(bytes.to_vec()),
            Witness::Assignment(bytes) => Kind::Assignment(bytes.to_vec()),
        };
        proto::Witness { kind: Some(kind) }
    }

    /// Every variable's value, parsed from a `.wtns` or an assignment (a benchmark
    /// seed has none until synthesized).
    pub fn values(&self) -> Result<Vec<Fr>> {
        match self {
            Witness::BenchSeed(_) => Err(Error::InvalidInput(
                "a benchmark seed is synthesized, not parsed".into(),
            )),
            Witness::Wtns(bytes) => {
                crucible_files::read_witness_from::<crucible_core::Bls12_381, _>(
                    Cursor::new(&bytes[..]),
                    "the .wtns witness",
                )
            }
            Witness::Assignment(bytes) => Vec::<Fr>::deserialize_compressed(&bytes[..])
                .map_err(|e| Error::InvalidInput(format!("the assignment does not parse: {e}"))),
        }
    }

    /// The bytes the witness holds in memory.
    pub fn byte_len(&self) -> usize {
        match self {
            Witness::BenchSeed(_) => 8,
            Witness::Wtns(bytes) | Witness::Assignment(bytes) => bytes.len(),
        }
    }

    /// How errors name this witness.
    pub fn name(&self) -> &'static str {
        match self {
            Witness::BenchSeed(_) => "the benchmark seed",
            Witness::Wtns(_) => "the .wtns witness",
            Witness::Assignment(_) => "the assignment",
        }
    }

    /// The kind and bytes stored in the job queue.
    pub fn encode(&self) -> (&'static str, Vec<u8>) {
        match self {
            Witness::BenchSeed(seed) => (BENCH_SEED, seed.to_le_bytes().to_vec()),
            Witness::Wtns(bytes) => (WTNS, bytes.to_vec()),
            Witness::Assignment(bytes) => (ASSIGNMENT, bytes.to_vec()),
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
            WTNS => Ok(Witness::Wtns(bytes.into())),
            ASSIGNMENT => Ok(Witness::Assignment(bytes.into())),
            other => Err(ServiceError::Invalid(format!(
                "unknown witness kind `{other}` (known: {BENCH_SEED}, {WTNS}, {ASSIGNMENT})"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key_circuit::KeyCircuit;
    use crucible_core::fixtures::circuit::BenchCircuit;
    use crucible_core::groth16::{synthesize, CircuitMatrices, Synthesize};

    #[test]
    fn round_trips_through_the_queue_encoding_and_proto() {
        let values = [Fr::from(1u64), Fr::from(7u64), -Fr::from(3u64)];
        for w in [
            Witness::BenchSeed(0xdead_beef_0123),
            Witness::Wtns(vec![1, 2, 3].into()),
            Witness::assignment(&values),
        ] {
            let (kind, bytes) = w.encode();
            assert_eq!(Witness::decode(kind, &bytes).unwrap(), w);
            assert_eq!(Witness::from_proto(Some(&w.to_proto())).unwrap(), w);
        }
        assert_eq!(Witness::assignment(&values).values().unwrap(), values);
        let (kind, bytes) = Witness::BenchSeed(5).encode();
        assert!(Witness::decode(kind, &bytes[..7]).is_err());
        assert!(Witness::decode("r1cs", &bytes).is_err());
        assert!(Witness::from_proto(None).is_err());
    }

    fn bench_circuit(constraints: usize, inputs: usize) -> KeyCircuit {
        KeyCircuit::Bench {
            matrices: CircuitMatrices::of(BenchCircuit {
                constraints,
                inputs,
                seed: 0,
            })
            .unwrap(),
            constraints,
            inputs,
        }
    }

    #[test]
    fn jobs_get_fresh_randomness() {
        let circuit = bench_circuit(8, 1);
        let a = Witness::BenchSeed(1).job(1, &circuit).unwrap();
        let b = Witness::BenchSeed(1).job(2, &circuit).unwrap();
        assert_eq!(a.circuit.witness, b.circuit.witness);
        assert_ne!((a.r, a.s), (b.r, b.s));
    }

    #[test]
    fn a_seed_and_its_assignment_synthesize_alike_and_a_bad_one_fails_its_job() {
        let circuit = bench_circuit(32, 2);
        let want = synthesize(BenchCircuit {
            constraints: 32,
            inputs: 2,
            seed: 9,
        })
        .unwrap();
        for witness in [Witness::BenchSeed(9), Witness::assignment(&want.assignment)] {
            let got = witness
                .job(0, &circuit)
                .unwrap()
                .circuit
                .synthesize()
                .unwrap();
            assert_eq!(got.assignment, want.assignment, "{witness:?}");
            assert_eq!(*got.a, *want.a);
        }
        let short = Witness::assignment(&want.assignment[1..]);
        let err = short
            .job(0, &circuit)
            .unwrap()
            .circuit
            .synthesize()
            .err()
            .unwrap();
        assert!(err.to_string().contains("another circuit"), "{err}");
        let garbage = Witness::Wtns(vec![0u8; 12].into());
        assert!(garbage
            .job(0, &circuit)
            .unwrap()
            .circuit
            .synthesize()
            .is_err());
    }
}
