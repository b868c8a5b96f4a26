//! crucible-files: the files a Groth16 prover reads and writes, read streaming and
//! validated, with errors that name the file and what is wrong.
//!
//! - circom's [`R1cs`] constraint files and `.wtns` witnesses ([`read_witness`]);
//! - snarkjs' Groth16 [`Zkey`] proving keys (arkworks' `ProvingKey` plus the matrices
//!   the key carries);
//! - the circuit and witness as crucible proves them ([`synthesized_from_r1cs`],
//!   [`synthesized_from_zkey`]) or as arkworks sees them ([`R1csCircuit`]);
//! - proofs, public inputs and verifying keys in snarkjs' JSON ([`snarkjs_json`]) or
//!   arkworks' binary form, chosen by file name ([`artifacts`]);
//! - one call that proves a circom circuit from its `.zkey` and `.wtns` on a backend
//!   ([`prove_zkey`]), or a key file and witness read once and proved as often as
//!   wanted ([`KeyAndWitness`]);
//! - development powers-of-tau files for snarkjs' Groth16 setup ([`ptau`]).
//!
//! Every file names its curve ([`curve_of`]). Proofs are made over BLS12-381 (circom
//! `--prime bls12381`, snarkjs' `bls12381` curve); a BN254 (`bn128`) file is refused
//! by the provers' readers with both curves named, and a BN254 key exports an
//! Ethereum verifier ([`solidity`]).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod arkworks_key;
pub mod artifacts;
mod binfile;
mod bulk;
mod circuit;
mod curve_of;
mod curve_verifying_key;
mod encoding;
mod file_curve;
mod key_and_witness;
pub mod output;
pub mod ptau;
mod r1cs;
pub mod snarkjs_json;
pub mod solidity;
mod subgroup;
pub mod validated_keys;
mod wtns;
mod zkey;
mod zkey_writer;

pub use circuit::{synthesized_from_r1cs, synthesized_from_zkey, R1csCircuit, ZkeyCircuit};
pub use curve_of::{curve_of, curve_of_reader};
pub use curve_verifying_key::CurveVerifyingKey;
pub use encoding::PointError;
pub use file_curve::FileCurve;
pub use key_and_witness::{prove_zkey, KeyAndWitness};
pub use r1cs::R1cs;
pub use snarkjs_json::JsonCurve;
pub use wtns::{read_witness, read_witness_from};
pub use zkey::{SubgroupChecks, Zkey, ZkeyHeader};
