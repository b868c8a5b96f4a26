//! MSM over G1 and G2 against arkworks' `VariableBaseMSM` through the `ProverBackend`
//! trait, on both curves: lengths 0, 1, 2, 2^k − 1, 2^k, 2^k + 1 with base and scalar
//! offsets; zero scalars, −1, equal scalars, scalars with the top bits set; identity and
//! repeated bases; spans across buffer chunks and MSMs split into batches by a small
//! binding limit.

use crate::common;

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::{Field, PrimeField, UniformRand, Zero};
use ark_std::rand::Rng;
use crucible_core::ark_bls12_381::{g1, g2, Bls12_381};
use crucible_core::ark_bn254::{self, Bn254};
use crucible_core::{
    BufferUse, ElementKind, MemoryPlan, MsmSpan, PairingCurve, PlanKey, ProverBackend, ScratchNeed,
};

/// One MSM case: scalars[scalar_offset..][..len] against bases[base_offset..][..len].
pub(crate) struct Case<'a, A, S> {
    name: &'a str,
    bases: &'a [A],
    scalars: &'a [S],
    base_offset: usize,
    scalar_offset: usize,
    len: usize,
}

/// A group an MSM runs over: G1 or G2 of the curve `E`.
pub(crate) trait Curve: SWCurveConfig {
    type E: PairingCurve<ScalarField = Self::ScalarField>;
    const KIND: ElementKind;
    fn run(
        backend: &dyn ProverBackend<Self::E>,
        case: &Case<'_, Affine<Self>, Self::ScalarField>,
    ) -> Projective<Self>;
}

macro_rules! curve {
    ($config:ty, $e:ty, $kind:expr, $alloc:ident, $stage:ident, $msm:ident, $need:ident) => {
        impl Curve for $config {
            type E = $e;
            const KIND: ElementKind = $kind;

            fn run(
                backend: &dyn ProverBackend<$e>,
                case: &Case<'_, Affine<Self>, Self::ScalarField>,
            ) -> Projective<Self> {
                let mut key_plan = MemoryPlan::new("bases");
                key_plan.item(
                    PlanKey::new("test", "bases"),
                    backend
                        .buffer_bytes($kind, case.bases.len(), BufferUse::Resident)
                        .unwrap(),
                );
                let mut key = backend.allocate(key_plan).unwrap();
                let bases = backend
                    .$alloc(
                        &mut key,
                        PlanKey::new("test", "bases"),
                        case.bases.len(),
                        BufferUse::Resident,
                    )
                    .unwrap();
                backend.$stage(&mut key, bases, case.bases).unwrap();
                let mut plan = MemoryPlan::new("msm test");
                plan.item(
                    PlanKey::new("test", "scalars"),
                    backend
                        .buffer_bytes(ElementKind::Scalar, case.scalars.len(), BufferUse::Resident)
                        .unwrap(),
                );
                plan.merge(&backend.scratch_plan(&ScratchNeed {
                    $need: case.len,
                    ..ScratchNeed::default()
                }));
                let mut work = backend.allocate(plan).unwrap();
                let scalars = backend
                    .alloc_scalars(
                        &mut work,
                        PlanKey::new("test", "scalars"),
                        case.scalars.len(),
                    )
                    .unwrap();
                backend
                    .stage_scalars(&mut work, scalars, case.scalars)
                    .unwrap();
                let span = MsmSpan {
                    bases,
                    base_offset: case.base_offset,
                    scalars,
                    scalar_offset: case.scalar_offset,
                    len: case.len,
                };
                let result = backend.$msm(&mut work, &key, span).unwrap();
                work.release().unwrap();
                key.release().unwrap();
                result
            }
        }
    };
}

curve!(
    g1::Config,
    Bls12_381,
    ElementKind::G1,
    alloc_g1,
    stage_g1,
    msm_g1,
    msm_g1
);
curve!(
    g2::Config,
    Bls12_381,
    ElementKind::G2,
    alloc_g2,
    stage_g2,
    msm_g2,
    msm_g2
);
curve!(
    ark_bn254::g1::Config,
    Bn254,
    ElementKind::G1,
    alloc_g1,
    stage_g1,
    msm_g1,
    msm_g1
);
curve!(
    ark_bn254::g2::Config,
    Bn254,
    ElementKind::G2,
    alloc_g2,
    stage_g2,
    msm_g2,
    msm_g2
);

fn check<P: Curve>(backend: &dyn ProverBackend<P::E>, case: Case<'_, Affine<P>, P::ScalarField>) {
    let got = P::run(backend, &case);
    let bases = &case.bases[case.base_offset..][..case.len];
    let scalars = &case.scalars[case.scalar_offset..][..case.len];
    let want = Projective::<P>::msm(bases, scalars).unwrap();
    assert_eq!(
        got,
        want,
        "{} {:?} MSM `{}` of {} terms",
        <P::E as PairingCurve>::CURVE.name(),
        P::KIND,
        case.name,
        case.len
    );
}

/// `n` distinct random points (sums of a random walk, cheaper than random multiples).
fn points<P: SWCurveConfig>(rng: &mut impl Rng, n: usize) -> Vec<Affine<P>> {
    let step = Projective::<P>::rand(rng);
    let mut p = Projective::<P>::rand(rng);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(p);
        p += step;
    }
    Projective::normalize_batch(&out)
}

/// One MSM of `n` random points and scalars, named `name`, against arkworks.
pub(crate) fn random_case<P: Curve>(
    backend: &dyn ProverBackend<P::E>,
    rng: &mut impl Rng,
    name: &str,
    n: usize,
) {
    let bases = points::<P>(rng, n);
    let scalars: Vec<P::ScalarField> = (0..n).map(|_| P::ScalarField::rand(rng)).collect();
    check::<P>(
        backend,
        Case {
            name,
            bases: &bases,
            scalars: &scalars,
            base_offset: 0,
            scalar_offset: 0,
            len: n,
        },
    );
}

pub(crate) fn edge_cases<P: Curve>(backend: &dyn ProverBackend<P::E>, rng: &mut impl Rng) {
    let bases = points::<P>(rng, 20);
    let scalars: Vec<P::ScalarField> = (0..20).map(|_| P::ScalarField::rand(rng)).collect();
    for len in [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17] {
        check::<P>(
            backend,
            Case {
                name: "random",
                bases: &bases,
                scalars: &scalars,
                base_offset: 0,
                scalar_offset: 0,
                len,
            },
        );
    }
    for (base_offset, scalar_offset, len) in
        [(1, 0, 8), (0, 3, 9), (4, 2, 7), (19, 19, 1), (20, 20, 0)]
    {
        check::<P>(
            backend,
            Case {
                name: "offsets",
                bases: &bases,
                scalars: &scalars,
                base_offset,
                scalar_offset,
                len,
            },
        );
    }
    let zero = P::ScalarField::zero();
    let special: [(&str, Vec<P::ScalarField>); 6] = [
        ("zero scalars", vec![zero; 9]),
        ("scalar −1", vec![-P::ScalarField::from(1u64); 9]),
        ("equal scalars", vec![scalars[0]; 9]),
        (
            "top bits set",
            (1..=9).map(|k| -P::ScalarField::from(k as u64)).collect(),
        ),
        (
            "some zero",
            (0..9)
                .map(|i| if i % 2 == 0 { zero } else { scalars[i] })
                .collect(),
        ),
        (
            "top bit of the modulus",
            (0..9)
                .map(|k| {
                    let top = P::ScalarField::MODULUS_BIT_SIZE as u64 - 1;
                    P::ScalarField::from(2u64).pow([top]) + P::ScalarField::from(k as u64)
                })
                .collect(),
        ),
    ];
    for (name, s) in &special {
        check::<P>(
            backend,
            Case {
                name,
                bases: &bases,
                scalars: s,
                base_offset: 0,
                scalar_offset: 0,
                len: 9,
            },
        );
    }
    let mut with_identity = bases.clone();
    for i in [0, 3, 4, 8] {
        with_identity[i] = Affine::<P>::identity();
    }
    check::<P>(
        backend,
        Case {
            name: "identity bases",
            bases: &with_identity,
            scalars: &scalars,
            base_offset: 0,
            scalar_offset: 0,
            len: 9,
        },
    );
    let all_identity = vec![Affine::<P>::identity(); 5];
    check::<P>(
        backend,
        Case {
            name: "all identity",
            bases: &all_identity,
            scalars: &scalars,
            base_offset: 0,
            scalar_offset: 0,
            len: 5,
        },
    );
    let repeated = vec![bases[0]; 9];
    check::<P>(
        backend,
        Case {
            name: "repeated bases",
            bases: &repeated,
            scalars: &scalars,
            base_offset: 0,
            scalar_offset: 0,
            len: 9,
        },
    );
    // P and −P with equal scalars cancel in every bucket.
    let opposite: Vec<Affine<P>> = (0..8)
        .map(|i| if i % 2 == 0 { bases[i] } else { -bases[i - 1] })
        .collect();
    check::<P>(
        backend,
        Case {
            name: "opposite bases",
            bases: &opposite,
            scalars: &special[2].1,
            base_offset: 0,
            scalar_offset: 0,
            len: 8,
        },
    );
}

/// The edge cases and lengths around 32 and 64 over G1 of `P`'s curve.
fn g1_cases<P: Curve>(backend: &dyn ProverBackend<P::E>, rng: &mut impl Rng) {
    edge_cases::<P>(backend, rng);
    let bases = points::<P>(rng, 70);
    let scalars: Vec<P::ScalarField> = (0..70).map(|_| P::ScalarField::rand(rng)).collect();
    for len in [31, 32, 33, 63, 64, 65] {
        check::<P>(
            backend,
            Case {
                name: "random",
                bases: &bases,
                scalars: &scalars,
                base_offset: 70 - len,
                scalar_offset: 0,
                len,
            },
        );
    }
}

/// The edge cases, every term in one bucket, and lengths around 32 over G2.
fn g2_cases<P: Curve>(backend: &dyn ProverBackend<P::E>, rng: &mut impl Rng) {
    edge_cases::<P>(backend, rng);
    let bases = points::<P>(rng, 34);
    let scalars: Vec<P::ScalarField> = (0..34).map(|_| P::ScalarField::rand(rng)).collect();
    // Every term in one bucket of every window: 19 tasks per bucket, merged in 5 rounds.
    let many = points::<P>(rng, 300);
    let equal = vec![scalars[0]; 300];
    check::<P>(
        backend,
        Case {
            name: "300 equal scalars",
            bases: &many,
            scalars: &equal,
            base_offset: 0,
            scalar_offset: 0,
            len: 300,
        },
    );
    for len in [31, 32, 33] {
        check::<P>(
            backend,
            Case {
                name: "random",
                bases: &bases,
                scalars: &scalars,
                base_offset: 1,
                scalar_offset: 34 - len,
                len,
            },
        );
    }
}

/// Spans across chunks of the bases and MSMs in two batches, on `backend` with
/// bindings of 512 KiB (`g2_batch` the most G2 terms a batch holds there).
fn chunked_cases<G1: Curve, G2: Curve<E = G1::E, ScalarField = G1::ScalarField>>(
    backend: &dyn ProverBackend<G1::E>,
    rng: &mut impl Rng,
    (g1_chunk, g2_chunk, g2_batch): (usize, usize, usize),
) {
    let g1_bases = points::<G1>(rng, g1_chunk + 4);
    let scalars: Vec<G1::ScalarField> = (0..g2_batch + 13)
        .map(|_| G1::ScalarField::rand(rng))
        .collect();
    check::<G1>(
        backend,
        Case {
            name: "across a chunk",
            bases: &g1_bases,
            scalars: &scalars,
            base_offset: g1_chunk - 6,
            scalar_offset: 3,
            len: 10,
        },
    );
    let g2_bases = points::<G2>(rng, g2_chunk + 12);
    check::<G2>(
        backend,
        Case {
            name: "across a chunk",
            bases: &g2_bases,
            scalars: &scalars,
            base_offset: g2_chunk - 8,
            scalar_offset: 0,
            len: 20,
        },
    );
    let plan = backend
        .scratch_plan(&ScratchNeed {
            msm_g2: g2_batch + 3,
            ..ScratchNeed::default()
        })
        .to_string();
    assert!(
        plan.contains(&format!("batches of at most {g2_batch}")),
        "the plan says how the MSM is split:\n{plan}"
    );
    check::<G2>(
        backend,
        Case {
            name: "two batches",
            bases: &g2_bases,
            scalars: &scalars,
            base_offset: 5,
            scalar_offset: 2,
            len: g2_batch + 3,
        },
    );
}

#[test]
fn g1_msm_matches_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::backend("g1_msm_matches_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    g1_cases::<g1::Config>(backend, &mut rng);
}

#[test]
fn g2_msm_matches_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::backend("g2_msm_matches_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    g2_cases::<g2::Config>(backend, &mut rng);
}

#[test]
fn chunked_and_batched_msm_matches_arkworks() {
    let _serial = common::serial();
    // 512 KiB bindings: G1 bases in chunks of 4096, G2 of 2048, and G2 MSMs in batches
    // of at most 127 terms.
    let Some(backend) =
        common::small_binding_backend("chunked_and_batched_msm_matches_arkworks", 512 << 10)
    else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    chunked_cases::<g1::Config, g2::Config>(backend, &mut rng, (4096, 2048, 127));
}

#[test]
fn bn254_g1_msm_matches_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::bn254_backend("bn254_g1_msm_matches_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    g1_cases::<ark_bn254::g1::Config>(backend, &mut rng);
}

#[test]
fn bn254_g2_msm_matches_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::bn254_backend("bn254_g2_msm_matches_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    g2_cases::<ark_bn254::g2::Config>(backend, &mut rng);
}

#[test]
fn bn254_chunked_and_batched_msm_matches_arkworks() {
    let _serial = common::serial();
    // 512 KiB bindings: BN254's G1 bases (64 bytes) in chunks of 8192, G2 (128 bytes)
    // of 4096, and G2 MSMs in batches of at most 255 terms (projective points of 192
    // bytes against BLS12-381's 288: the next window-size range fits).
    let Some(backend) = common::bn254_small_binding_backend(
        "bn254_chunked_and_batched_msm_matches_arkworks",
        512 << 10,
    ) else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    chunked_cases::<ark_bn254::g1::Config, ark_bn254::g2::Config>(
        backend,
        &mut rng,
        (8192, 4096, 255),
    );
}
