//! One-shot MSMs from the host (`HostMsm`) on the CPU backend: every length up to the
//! one the slots were made for, around the pipelining threshold and the chunk
//! boundaries, against ark-ec, with the slots reused.

use ark_ec::VariableBaseMSM;
use ark_ff::UniformRand;
use ark_std::rand::{rngs::StdRng, SeedableRng};
use crucible_backends::cpu::CpuBackend;
use crucible_conformance::run_seed;
use crucible_core::group::G1;
use crucible_core::registry::ProbeOptions;
use crucible_core::streamed_msm::HostMsm;
use crucible_core::{Fr, G1Affine, G1Projective, ProverBackend};

#[test]
fn slots_made_for_a_length_sum_every_shorter_one() {
    let seed = run_seed();
    println!("seed {seed} (set CRUCIBLE_SEED to replay)");
    let mut rng = StdRng::seed_from_u64(seed);
    let backend = CpuBackend::new(&ProbeOptions::default());
    // (made for, pipelined from, lengths): threshold − 1, threshold, threshold + 1 in
    // slots for threshold + 1; every length up to 72 from 8, where the last chunk of
    // 71 (39 terms) outgrows 72's (36) and 8·k − 1 crosses a chunk boundary.
    let cases: [(usize, usize, Vec<usize>); 3] = [
        (65, 64, vec![63, 64, 65, 0, 1, 16, 17, 33, 34, 62]),
        (64, 64, vec![63, 64, 8, 7]),
        (72, 8, (0..=72).rev().collect()),
    ];
    for (made_for, from, lens) in cases {
        let mut host = HostMsm::<G1>::allocate_pipelined_from(&backend, made_for, from).unwrap();
        for n in lens {
            let bases: Vec<G1Affine> = (0..n).map(|_| G1Affine::rand(&mut rng)).collect();
            let scalars: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
            let got = host
                .msm(&backend, &bases, &scalars)
                .unwrap_or_else(|e| panic!("{n} terms in slots for {made_for} from {from}: {e}"));
            let want = G1Projective::msm(&bases, &scalars).unwrap();
            assert_eq!(
                got, want,
                "{n} terms in slots for {made_for} from {from} (seed {seed})"
            );
        }
        // One term over the made-for length is refused, naming the lengths.
        let over = made_for + 1;
        let bases: Vec<G1Affine> = (0..over).map(|_| G1Affine::rand(&mut rng)).collect();
        let scalars: Vec<Fr> = (0..over).map(|_| Fr::rand(&mut rng)).collect();
        let err = host
            .msm(&backend, &bases, &scalars)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("slots for {made_for} terms")),
            "{err}"
        );
        host.release().unwrap();
        assert_eq!(backend.budget().in_use(), 0);
    }
}
