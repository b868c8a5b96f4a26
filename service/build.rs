//! Compiles the gRPC API (proto/) to Rust with protox, a protobuf compiler written in
//! Rust, so building needs no `protoc` on the machine.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/crucible/v1/prover.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto"])?;
    tonic_build::configure().compile_fds(descriptors)?;
    Ok(())
}
