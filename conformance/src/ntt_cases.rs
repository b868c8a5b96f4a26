//! NTT and pointwise cases against ark-poly.

use ark_ff::{FftField, UniformRand};
use ark_poly::EvaluationDomain;
use ark_std::rand::rngs::StdRng;
use crucible_core::{Domain, Fr, MemoryPlan, NttKind, ProverBackend, ScratchNeed};

use crate::items;
use crate::suite::Runner;

fn kind_name(kind: NttKind) -> &'static str {
    match kind {
        NttKind::Forward => "forward",
        NttKind::Inverse => "inverse",
        NttKind::CosetForward => "coset-forward",
        NttKind::CosetInverse => "coset-inverse",
    }
}

/// arkworks' answer.
pub fn reference(values: &mut Vec<Fr>, domain: &Domain, kind: NttKind) {
    let d = domain.to_ark();
    let coset = d
        .get_coset(Fr::GENERATOR)
        .expect("coset of a radix-2 domain");
    match kind {
        NttKind::Forward => d.fft_in_place(values),
        NttKind::Inverse => d.ifft_in_place(values),
        NttKind::CosetForward => coset.fft_in_place(values),
        NttKind::CosetInverse => coset.ifft_in_place(values),
    }
}

fn random(rng: &mut StdRng, n: usize) -> Vec<Fr> {
    (0..n).map(|_| Fr::rand(rng)).collect()
}

/// First index where two vectors differ, as a message.
pub fn first_difference(got: &[Fr], want: &[Fr]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} instead of {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(format!(
            "element {i} of {} differs: got {}, want {}",
            got.len(),
            got[i],
            want[i]
        )),
    }
}

/// A plan for scalar buffers `(item, length)` plus the scratch of `need`.
pub(crate) fn scalar_plan(
    backend: &dyn ProverBackend,
    buffers: &[(crucible_core::PlanKey, usize)],
    need: ScratchNeed,
) -> MemoryPlan {
    let mut plan = MemoryPlan::new("conformance");
    for (name, len) in buffers {
        plan.item(
            *name,
            items::bytes(backend, crucible_core::ElementKind::Scalar, *len),
        );
    }
    plan.merge(&backend.scratch_plan(&need));
    plan
}

fn ntt_case(
    backend: &dyn ProverBackend,
    rng: &mut StdRng,
    domain: Domain,
    kind: NttKind,
) -> Result<(), String> {
    let input = random(rng, domain.size);
    let mut want = input.clone();
    reference(&mut want, &domain, kind);
    let plan = scalar_plan(
        backend,
        &[(items::X, domain.size)],
        ScratchNeed {
            ntt: Some(domain),
            ..Default::default()
        },
    );
    let mut lease = backend.allocate(plan).map_err(|e| e.to_string())?;
    let x = backend
        .alloc_scalars(&mut lease, items::X, domain.size)
        .map_err(|e| e.to_string())?;
    backend
        .stage_scalars(&mut lease, x, &input)
        .map_err(|e| e.to_string())?;
    backend
        .ntt(&mut lease, x, &domain, kind)
        .map_err(|e| e.to_string())?;
    let got = backend.read_scalars(&lease, x).map_err(|e| e.to_string())?;
    lease.release().map_err(|e| e.to_string())?;
    first_difference(&got, &want)
}

fn pointwise_case(
    backend: &dyn ProverBackend,
    rng: &mut StdRng,
    n: usize,
    sub: bool,
) -> Result<(), String> {
    let a = random(rng, n);
    let b = random(rng, n);
    let k = Fr::rand(rng);
    let want: Vec<Fr> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| if sub { (*x - y) * k } else { *x * y })
        .collect();
    let plan = scalar_plan(
        backend,
        &[(items::A, n), (items::B, n)],
        ScratchNeed::default(),
    );
    let mut lease = backend.allocate(plan).map_err(|e| e.to_string())?;
    let da = backend
        .alloc_scalars(&mut lease, items::A, n)
        .map_err(|e| e.to_string())?;
    let db = backend
        .alloc_scalars(&mut lease, items::B, n)
        .map_err(|e| e.to_string())?;
    backend
        .stage_scalars(&mut lease, da, &a)
        .map_err(|e| e.to_string())?;
    backend
        .stage_scalars(&mut lease, db, &b)
        .map_err(|e| e.to_string())?;
    if sub {
        backend.sub_mul_assign(&mut lease, da, db, k)
    } else {
        backend.mul_assign(&mut lease, da, db)
    }
    .map_err(|e| e.to_string())?;
    let got = backend
        .read_scalars(&lease, da)
        .map_err(|e| e.to_string())?;
    lease.release().map_err(|e| e.to_string())?;
    first_difference(&got, &want)
}

/// Every NTT kind at every size up to the configured maximum, plus pointwise ops.
pub fn run(r: &mut Runner<'_>) {
    let backend = r.backend;
    for log in 0..=r.config.max_log_size {
        let domain = match Domain::with_log_size(log) {
            Ok(d) => d,
            Err(e) => {
                r.case(&format!("ntt/2^{log}"), |_| Err(e.to_string()));
                continue;
            }
        };
        for kind in NttKind::ALL {
            r.case(&format!("ntt/{}/2^{log}", kind_name(kind)), |rng| {
                ntt_case(backend, rng, domain, kind)
            });
        }
    }
    for n in [1usize, 7, 1 << r.config.max_log_size.min(16)] {
        r.case(&format!("pointwise/mul/{n}"), |rng| {
            pointwise_case(backend, rng, n, false)
        });
        r.case(&format!("pointwise/sub-mul/{n}"), |rng| {
            pointwise_case(backend, rng, n, true)
        });
    }
}
