//! MSM over G1 and G2 against arkworks through the `ProverBackend` trait: lengths 0,
//! 1, 2, 2^k − 1, 2^k, 2^k + 1 with base and scalar offsets; zero scalars, −1, equal
//! scalars, scalars with the top bits set; identity and repeated bases; spans across
//! buffer chunks and MSMs split into batches by a small binding limit.

use crate::common;

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::{UniformRand, Zero};
use ark_std::rand::Rng;
use crucible_core::ark_bls12_381::{g1, g2};
use crucible_core::{
    BufferUse, ElementKind, Fr, G1Affine, G2Affine, MemoryPlan, MsmSpan, PlanKey, ProverBackend,
    ScratchNeed,
};

/// One MSM case: scalars[scalar_offset..][..len] against bases[base_offset..][..len].
pub(crate) struct Case<'a, A> {
    name: &'a str,
    bases: &'a [A],
    scalars: &'a [Fr],
    base_offset: usize,
    scalar_offset: usize,
    len: usize,
}

pub(crate) trait Curve: SWCurveConfig<ScalarField = Fr> {
    const KIND: ElementKind;
    fn run(backend: &dyn ProverBackend, case: &Case<'_, Affine<Self>>) -> Projective<Self>;
}

macro_rules! curve {
    ($config:ty, $kind:expr, $affine:ty, $alloc:ident, $stage:ident, $msm:ident, $need:ident) => {
        impl Curve for $config {
            const KIND: ElementKind = $kind;

            fn run(backend: &dyn ProverBackend, case: &Case<'_, $affine>) -> Projective<Self> {
                let mut key_plan = MemoryPlan::new("bases");
                key_plan.item(
                    PlanKey::new("test", "bases"),
                    backend
                        .buffer_bytes($kind, case.bases.len(), BufferUse::Resident)
                        .unwrap(),
                );
                let mut key = (backend as &dyn ProverBackend).allocate(key_plan).unwrap();
                let bases = (backend as &dyn ProverBackend)
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
                let mut work = (backend as &dyn ProverBackend).allocate(plan).unwrap();
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
    ElementKind::G1,
    G1Affine,
    alloc_g1,
    stage_g1,
    msm_g1,
    msm_g1
);
curve!(
    g2::Config,
    ElementKind::G2,
    G2Affine,
    alloc_g2,
    stage_g2,
    msm_g2,
    msm_g2
);

fn check<P: Curve>(backend: &dyn ProverBackend, case: Case<'_, Affine<P>>) {
    let got = P::run(backend, &case);
    let bases = &case.bases[case.base_offset..][..case.len];
    let scalars = &case.scalars[case.scalar_offset..][..case.len];
    let want = Projective::<P>::msm(bases, scalars).unwrap();
    assert_eq!(
        got,
        want,
        "{:?} MSM `{}` of {} terms",
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
    backend: &dyn ProverBackend,
    rng: &mut impl Rng,
    name: &str,
    n: usize,
) {
    let bases = points::<P>(rng, n);
    let scalars: Vec<Fr> = (0..n).map(|_| Fr::rand(rng)).collect();
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

pub(crate) fn edge_cases<P: Curve>(backend: &dyn ProverBackend, rng: &mut impl Rng) {
    let bases = points::<P>(rng, 20);
    let scalars: Vec<Fr> = (0..20).map(|_| Fr::rand(rng)).collect();
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
    let special: [(&str, Vec<Fr>); 5] = [
        ("zero scalars", vec![Fr::zero(); 9]),
        ("scalar −1", vec![-Fr::from(1u64); 9]),
        ("equal scalars", vec![scalars[0]; 9]),
        (
            "top bits set",
            (1..=9).map(|k| -Fr::from(k as u64)).collect(),
        ),
        (
            "some zero",
            (0..9)
                .map(|i| if i % 2 == 0 { Fr::zero() } else { scalars[i] })
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

#[test]
fn g1_msm_matches_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::backend("g1_msm_matches_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    edge_cases::<g1::Config>(backend, &mut rng);
    let bases = points::<g1::Config>(&mut rng, 70);
    let scalars: Vec<Fr> = (0..70).map(|_| Fr::rand(&mut rng)).collect();
    for len in [31, 32, 33, 63, 64, 65] {
        check::<g1::Config>(
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

#[test]
fn g2_msm_matches_arkworks() {
    let _serial = common::serial();
    let Some(backend) = common::backend("g2_msm_matches_arkworks") else {
        return;
    };
    let (mut rng, _seed) = common::rng();
    edge_cases::<g2::Config>(backend, &mut rng);
    let bases = points::<g2::Config>(&mut rng, 34);
    let scalars: Vec<Fr> = (0..34).map(|_| Fr::rand(&mut rng)).collect();
    // Every term in one bucket of every window: 19 tasks per bucket, merged in 5 rounds.
    let many = points::<g2::Config>(&mut rng, 300);
    let equal = vec![scalars[0]; 300];
    check::<g2::Config>(
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
        check::<g2::Config>(
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
    let g1_bases = points::<g1::Config>(&mut rng, 4100);
    let scalars: Vec<Fr> = (0..140).map(|_| Fr::rand(&mut rng)).collect();
    check::<g1::Config>(
        backend,
        Case {
            name: "across a chunk",
            bases: &g1_bases,
            scalars: &scalars,
            base_offset: 4090,
            scalar_offset: 3,
            len: 10,
        },
    );
    let g2_bases = points::<g2::Config>(&mut rng, 2060);
    check::<g2::Config>(
        backend,
        Case {
            name: "across a chunk",
            bases: &g2_bases,
            scalars: &scalars,
            base_offset: 2040,
            scalar_offset: 0,
            len: 20,
        },
    );
    let plan = backend
        .scratch_plan(&ScratchNeed {
            msm_g2: 130,
            ..ScratchNeed::default()
        })
        .to_string();
    assert!(
        plan.contains("batches of at most 127"),
        "the plan says how the MSM is split:\n{plan}"
    );
    check::<g2::Config>(
        backend,
        Case {
            name: "two batches",
            bases: &g2_bases,
            scalars: &scalars,
            base_offset: 5,
            scalar_offset: 2,
            len: 130,
        },
    );
}
