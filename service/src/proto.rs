//! The gRPC API, generated at build time from `proto/crucible/v1/prover.proto`.
#![allow(missing_docs)]

tonic::include_proto!("crucible.v1");
