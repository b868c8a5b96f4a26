//! Development powers-of-tau files against snarkjs: the fixture is what snarkjs 0.7.6's
//! `powersoftau prepare phase2` made of this writer's unprepared file for power 3,
//! seed 7; the prepared file written here must be the same bytes. On fresh secrets,
//! the sections must hold the powers of tau and Lagrange bases they name.

use std::path::Path;

use ark_bls12_381::Fq2;
use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::{BigInt, Field};
use crucible_conformance::run_seed;
use crucible_core::groth16::snarkjs_root_of_unity;
use crucible_core::{Fq, Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use crucible_files::ptau::DevPtau;

const G1: usize = 96;
const G2: usize = 192;

fn written(ptau: &DevPtau, prepared: bool) -> Vec<u8> {
    let mut bytes = Vec::new();
    ptau.write(&mut bytes, prepared).expect("writing to memory");
    bytes
}

/// The container's sections in file order: (type, body).
fn sections(bytes: &[u8]) -> Vec<(u32, &[u8])> {
    assert_eq!(&bytes[..4], b"ptau");
    let count = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    let mut at = 12;
    let mut out = Vec::new();
    for _ in 0..count {
        let kind = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let len = u64::from_le_bytes(bytes[at + 4..at + 12].try_into().unwrap()) as usize;
        out.push((kind, &bytes[at + 12..at + 12 + len]));
        at += 12 + len;
    }
    assert_eq!(at, bytes.len(), "bytes after the last section");
    out
}

/// An Fq from its Montgomery limbs (the `.zkey`/`.ptau` form).
fn fq(bytes: &[u8]) -> Fq {
    let limbs: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    Fq::new_unchecked(BigInt(limbs.try_into().unwrap()))
}

fn g1(section: &[u8], i: usize) -> G1Affine {
    let b = &section[i * G1..(i + 1) * G1];
    let p = G1Affine::new(fq(&b[..48]), fq(&b[48..]));
    assert!(p.is_in_correct_subgroup_assuming_on_curve());
    p
}

fn g2(section: &[u8], i: usize) -> G2Affine {
    let b = &section[i * G2..(i + 1) * G2];
    let c = |k: usize| fq(&b[k * 48..(k + 1) * 48]);
    G2Affine::new(Fq2::new(c(0), c(1)), Fq2::new(c(2), c(3)))
}

#[test]
fn the_prepared_file_is_byte_for_byte_what_snarkjs_prepares() {
    let fixture = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/dev-power3-seed7.prepared-by-snarkjs.ptau"),
    )
    .unwrap();
    let ptau = DevPtau::<crucible_core::Bls12_381>::from_seed(3, 7).unwrap();
    let ours = written(&ptau, true);
    assert_eq!(ours.len(), fixture.len(), "file length");
    if let Some(at) = ours.iter().zip(&fixture).position(|(a, b)| a != b) {
        panic!("first difference from snarkjs' prepared file at byte {at}");
    }
    // The unprepared file is the prepared one's first seven sections.
    let unprepared = written(&ptau, false);
    let (u, p) = (sections(&unprepared), sections(&ours));
    assert_eq!(u.len(), 7);
    assert_eq!(u[..], p[..7]);
}

#[test]
fn sections_hold_the_powers_and_lagrange_bases_of_fresh_secrets() {
    let seed = run_seed();
    let power = 4u32;
    let ptau = DevPtau::<crucible_core::Bls12_381>::from_seed(power, seed).unwrap();
    let n = 1usize << power;
    let bytes = written(&ptau, true);
    let s = sections(&bytes);
    let kinds: Vec<u32> = s.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, [1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15], "seed {seed}");
    let body = |k: u32| s.iter().find(|(kind, _)| *kind == k).unwrap().1;
    let gen = G1Projective::generator();
    let (tau, alpha, beta) = (ptau.tau, ptau.alpha, ptau.beta);

    assert_eq!(body(2).len(), (2 * n - 1) * G1);
    assert_eq!(body(3).len(), n * G2);
    assert_eq!(body(6).len(), G2);
    for i in [0, 1, 2, n - 1, 2 * n - 2] {
        let t = tau.pow([i as u64]);
        assert_eq!(
            g1(body(2), i),
            (gen * t).into_affine(),
            "tau^{i} G1, seed {seed}"
        );
        if i < n {
            assert_eq!(
                g1(body(4), i),
                (gen * (alpha * t)).into_affine(),
                "seed {seed}"
            );
            assert_eq!(
                g1(body(5), i),
                (gen * (beta * t)).into_affine(),
                "seed {seed}"
            );
        }
    }
    let gen2 = G2Projective::generator();
    assert_eq!(
        g2(body(6), 0),
        (gen2 * beta).into_affine(),
        "beta G2, seed {seed}"
    );
    for i in [0, 1, n - 1] {
        let t = tau.pow([i as u64]);
        assert_eq!(
            g2(body(3), i),
            (gen2 * t).into_affine(),
            "tau^{i} G2, seed {seed}"
        );
    }

    // Block p of section 12: L_i(tau) G1 over snarkjs' domain of 2^p points, so that
    // sum_i L_i(tau) w^(ij) G1 = tau^j G1 for j < 2^p.
    let mut at = 0;
    for p in 0..=power {
        let size = 1usize << p;
        let w = snarkjs_root_of_unity::<Fr>(p).unwrap();
        let block: Vec<G1Affine> = (0..size).map(|i| g1(&body(12)[at * G1..], i)).collect();
        for j in [0usize, 1, size - 1].into_iter().filter(|j| *j < size) {
            let sum: G1Projective = block
                .iter()
                .enumerate()
                .map(|(i, l)| *l * w.pow([(i * j) as u64]))
                .sum();
            assert_eq!(
                sum.into_affine(),
                (gen * tau.pow([j as u64])).into_affine(),
                "section 12, domain 2^{p}, j = {j}, seed {seed}"
            );
        }
        at += size;
    }
    assert_eq!(
        body(12).len(),
        (at + 2 * n) * G1,
        "the last block is 2^(power + 1) points"
    );
}

#[test]
fn a_power_outside_the_supported_range_is_an_error() {
    for power in [0, crucible_files::ptau::MAX_POWER + 1] {
        let err = DevPtau::<crucible_core::Bls12_381>::from_seed(power, 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("power {power}")), "{err}");
    }
}
