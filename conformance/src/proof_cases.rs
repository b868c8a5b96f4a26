//! Whole proofs on domain boundaries, byte for byte against ark-groth16, with each
//! reduction: ark-groth16's `LibsnarkReduction` and snarkjs' (keys made here with
//! [`CircomReduction`]'s setup, the layout of a `.zkey`).

use std::sync::Arc;

use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_core::fixtures::circuit::{BenchCircuit, BitHeavyCircuit};
use crucible_core::fixtures::key_cache::generate_key;
use crucible_core::groth16::{KeyOptions, ProvingKey, Reduction};
use crucible_core::PairingCurve;

use crate::circom_reduction::CircomReduction;
use crate::cross_check::compare_with_arkworks_under;
use crate::runner::Runner;

/// A key for `BenchCircuit { constraints, inputs }` from `seed`, in the layout the
/// reduction proves with (a `.zkey`'s for snarkjs' reduction).
fn key_for<E: PairingCurve>(
    reduction: Reduction,
    constraints: usize,
    inputs: usize,
    seed: u64,
) -> Result<ProvingKey<E>, String> {
    match reduction {
        Reduction::Libsnark => generate_key(constraints, inputs, seed).map_err(|e| e.to_string()),
        Reduction::Circom => {
            let circuit = BenchCircuit {
                constraints,
                inputs,
                seed,
            };
            let mut rng = StdRng::seed_from_u64(seed);
            ark_groth16::Groth16::<E, CircomReduction>::generate_random_parameters_with_reduction(
                circuit, &mut rng,
            )
            .map_err(|e| format!("setup with snarkjs' reduction failed: {e}"))
        }
    }
}

/// Circuits whose constraints + inputs + 1 land on 2^k − 1, 2^k and 2^k + 1, with 0, 1
/// and several public inputs, with ark-groth16's reduction; and with snarkjs' reduction
/// on 2^k − 1 and 2^k + 1. Then bit-heavy witnesses (90 % and 99 % of the witness 0 or
/// 1, as in bit-decomposition circuits), whose A, B and L MSMs are mostly 0/1 scalars.
pub fn run<E: PairingCurve>(r: &mut Runner<'_, E>) {
    let backend = r.backend;
    let k = r.config.proof_log_size;
    for per_mille in [900u16, 990] {
        let (constraints, inputs) = ((1usize << k) - 3, 2);
        let name = format!("proof-bit-heavy/constraints={constraints}/bits={per_mille}-per-mille");
        r.case(&name, |rng| {
            let seed = ark_std::rand::Rng::gen::<u64>(rng);
            let circuit = |seed| BitHeavyCircuit {
                constraints,
                inputs,
                seed,
                bits_per_mille: per_mille,
            };
            let mut setup_rng = StdRng::seed_from_u64(seed);
            let pk = ark_groth16::Groth16::<E>::generate_random_parameters_with_reduction(
                circuit(seed),
                &mut setup_rng,
            )
            .map_err(|e| format!("setup failed: {e}"))?;
            compare_with_arkworks_under(
                backend,
                Arc::new(pk),
                circuit(seed.wrapping_add(1)),
                rng,
                &KeyOptions::default(),
            )
        });
    }
    for (reduction, tag, deltas) in [
        (Reduction::Libsnark, "proof", &[-1i64, 0, 1][..]),
        (Reduction::Circom, "proof-circom", &[-1i64, 1][..]),
    ] {
        for inputs in [0usize, 1, 5] {
            for &delta in deltas {
                let total = (1i64 << k) + delta;
                let constraints = (total - inputs as i64 - 1).max(1) as usize;
                let name =
                    format!("{tag}/constraints={constraints}/inputs={inputs}/2^{k}{delta:+}");
                r.case(&name, |rng| {
                    let seed = ark_std::rand::Rng::gen::<u64>(rng);
                    let pk = key_for(reduction, constraints, inputs, seed)?;
                    let circuit = BenchCircuit {
                        constraints,
                        inputs,
                        seed: seed.wrapping_add(1),
                    };
                    let options = KeyOptions {
                        reduction,
                        ..KeyOptions::default()
                    };
                    compare_with_arkworks_under(backend, Arc::new(pk), circuit, rng, &options)
                });
            }
        }
    }
}
