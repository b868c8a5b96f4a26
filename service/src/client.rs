//! The client side of the gRPC API: connecting, and checking a returned proof
//! against the key's verifying key without trusting the server.

use ark_serialize::CanonicalDeserialize;
use crucible_core::ark_groth16::{
    prepare_verifying_key, Groth16, PreparedVerifyingKey, VerifyingKey,
};
use crucible_core::groth16::Proof;
use crucible_core::{Bls12_381, Fr};
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::service::Interceptor;
use tonic::transport::Channel;

use crate::proto::prover_client::ProverClient;
use crate::proto::{JobResult, JobState};
use crate::tls::{causes, ClientTls};
use crate::{ServiceError, ServiceResult};

/// Adds `authorization: Bearer <token>` to every request (nothing without a token).
#[derive(Clone)]
pub struct BearerToken(Option<MetadataValue<tonic::metadata::Ascii>>);

impl Interceptor for BearerToken {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// A client of the API, sending its bearer token (if any) with every call.
pub type Client = ProverClient<InterceptedService<Channel, BearerToken>>;

/// Connects to a server at `addr` (`http://host:port`), without a token.
pub async fn connect(addr: &str) -> ServiceResult<Client> {
    connect_with_token(addr, None).await
}

/// Connects to a server at `addr` (`http://host:port`), sending `token` as a
/// bearer token.
pub async fn connect_with_token(addr: &str, token: Option<&str>) -> ServiceResult<Client> {
    connect_with(addr, token, None).await
}

/// Connects to a server at `addr`, sending `token` as a bearer token, over TLS when
/// `tls` is given (then `addr` is `https://host:port`, `host` being a name the
/// server's certificate holds; plain `http://` otherwise).
pub async fn connect_with(
    addr: &str,
    token: Option<&str>,
    tls: Option<&ClientTls>,
) -> ServiceResult<Client> {
    let value = token
        .map(|t| {
            format!("Bearer {t}")
                .parse()
                .map_err(|_| ServiceError::Invalid("a token is printable ASCII".into()))
        })
        .transpose()?;
    let mut endpoint = tonic::transport::Endpoint::from_shared(addr.to_string())
        .map_err(|e| ServiceError::Invalid(format!("bad server address {addr}: {e}")))?;
    // tonic sends plain text to an `http://` address even with a TLS configuration:
    // the scheme and the configuration must agree.
    let https = endpoint.uri().scheme_str() == Some("https");
    match tls {
        Some(tls) if https => {
            endpoint = endpoint
                .tls_config(tls.config())
                .map_err(|e| ServiceError::Invalid(format!("TLS: {}", causes(&e))))?;
        }
        Some(_) => {
            return Err(ServiceError::Invalid(format!(
                "{addr}: with TLS the address is https://host:port"
            )))
        }
        None if https => {
            return Err(ServiceError::Invalid(format!(
                "{addr}: an https address needs the CA that signed the server's certificate"
            )))
        }
        None => {}
    }
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| ServiceError::Invalid(format!("connecting to {addr}: {}", causes(&e))))?;
    Ok(ProverClient::with_interceptor(channel, BearerToken(value)))
}

/// The prepared verifying key from `LoadKeyResponse::verifying_key` (validated).
pub fn verifying_key(bytes: &[u8]) -> ServiceResult<PreparedVerifyingKey<Bls12_381>> {
    let vk = VerifyingKey::<Bls12_381>::deserialize_compressed(bytes)
        .map_err(|e| ServiceError::Invalid(format!("the verifying key does not decode: {e}")))?;
    Ok(prepare_verifying_key(&vk))
}

/// Checks that `result` is a done job whose proof verifies for its public inputs;
/// returns those inputs (for the caller to compare with what it expects).
pub fn verify(vk: &PreparedVerifyingKey<Bls12_381>, result: &JobResult) -> ServiceResult<Vec<Fr>> {
    let job = result.job_id;
    if result.state() != JobState::Done {
        return Err(ServiceError::Invalid(format!(
            "job {job} is {:?}, not done: {}",
            result.state(),
            result.error
        )));
    }
    let proof = Proof::deserialize_compressed(result.proof.as_slice())
        .map_err(|e| ServiceError::Invalid(format!("job {job}: the proof does not decode: {e}")))?;
    let inputs = result
        .public_inputs
        .iter()
        .map(|b| Fr::deserialize_compressed(b.as_slice()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            ServiceError::Invalid(format!("job {job}: a public input does not decode: {e}"))
        })?;
    match Groth16::<Bls12_381>::verify_proof(vk, &proof, &inputs) {
        Ok(true) => Ok(inputs),
        Ok(false) => Err(ServiceError::Invalid(format!(
            "job {job}: the proof does not verify"
        ))),
        Err(e) => Err(ServiceError::Invalid(format!(
            "job {job}: verifying failed: {e}"
        ))),
    }
}
