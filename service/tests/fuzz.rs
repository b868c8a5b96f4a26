//! Mutation fuzzing of the gRPC request decoding (`crucible_conformance::fuzz`): the
//! bytes a client sends, decoded as `LoadKeyRequest` and `SubmitRequest` and turned
//! into the daemon's own types (`KeyRef::from_proto`, `Witness::from_proto`), then the
//! witness parsed as a synthesis thread parses it. Every accepted input must
//! round-trip. `CRUCIBLE_FUZZ_SECONDS` sets each test's time, `CRUCIBLE_SEED` replays.

use std::path::Path;
use std::time::Duration;

use ark_ff::UniformRand;
use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_conformance::fuzz::{fuzz_test, Verdict};
use crucible_conformance::run_seed;
use crucible_core::Fr;
use crucible_service::key_ref::KeyRef;
use crucible_service::proto;
use crucible_service::witness::Witness;
use prost::Message;

/// No decode of these small messages should take near this long.
const PER_INPUT: Duration = Duration::from_secs(10);

fn run(
    name: &str,
    seeds: Vec<Vec<u8>>,
    check: impl Fn(&[u8]) -> Result<Verdict, String> + Send + 'static,
) {
    fuzz_test(name, seeds, PER_INPUT, check);
}

#[test]
fn fuzz_load_key_requests() {
    let load = |id: &str, key: KeyRef| {
        proto::LoadKeyRequest {
            key_id: id.into(),
            source: Some(key.to_proto()),
        }
        .encode_to_vec()
    };
    let seeds = vec![
        load("bench", KeyRef::bench(1 << 10, 3, 7).unwrap()),
        load("sha256", KeyRef::zkey("circuits/sha256.zkey").unwrap()),
    ];
    run("grpc-load-key", seeds, |bytes| {
        let Ok(request) = proto::LoadKeyRequest::decode(bytes) else {
            return Ok(Verdict::Rejected);
        };
        let Ok(key) = KeyRef::from_proto(request.source.as_ref()) else {
            return Ok(Verdict::Rejected);
        };
        let again = KeyRef::from_proto(Some(&key.to_proto())).map_err(|e| e.to_string())?;
        if again != key {
            return Err(format!("{key} came back as {again}"));
        }
        if let KeyRef::Zkey { path } = &key {
            if path.as_os_str().is_empty() {
                return Err("an empty .zkey path was accepted".into());
            }
        }
        Ok(Verdict::Accepted)
    });
}

#[test]
fn fuzz_submit_requests() {
    let mut rng = StdRng::seed_from_u64(run_seed());
    let values: Vec<Fr> = (0..6).map(|_| Fr::rand(&mut rng)).collect();
    let wtns = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../files/tests/fixtures/multi_public.wtns"),
    )
    .expect("the files crate's .wtns fixture");
    let submit = |witness: Witness| {
        proto::SubmitRequest {
            key_id: "k".into(),
            witness: Some(witness.to_proto()),
        }
        .encode_to_vec()
    };
    let seeds = vec![
        submit(Witness::BenchSeed(42)),
        submit(Witness::assignment(&values)),
        submit(Witness::Wtns(wtns.into())),
    ];
    run("grpc-submit", seeds, |bytes| {
        let Ok(request) = proto::SubmitRequest::decode(bytes) else {
            return Ok(Verdict::Rejected);
        };
        let Ok(witness) = Witness::from_proto(request.witness.as_ref()) else {
            return Ok(Verdict::Rejected);
        };
        // As the job queue stores it, and back.
        let (kind, stored) = witness.encode();
        let back = Witness::decode(kind, &stored).map_err(|e| e.to_string())?;
        if back != witness {
            return Err(format!(
                "{} did not survive the queue's encoding",
                witness.name()
            ));
        }
        if witness.byte_len() > bytes.len().max(8) {
            return Err(format!(
                "{} holds {} bytes from a {}-byte message",
                witness.name(),
                witness.byte_len(),
                bytes.len()
            ));
        }
        match (&witness, witness.values()) {
            (Witness::BenchSeed(_), Ok(_)) => Err("a benchmark seed parsed as values".into()),
            (_, Err(_)) => Ok(Verdict::Rejected),
            (_, Ok(values)) if values.len() * 32 > witness.byte_len() => Err(format!(
                "{} values from {} bytes",
                values.len(),
                witness.byte_len()
            )),
            (_, Ok(_)) => Ok(Verdict::Accepted),
        }
    });
}
