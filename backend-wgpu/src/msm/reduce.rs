//! Steps 5-7 of a batch, in the curve's module: the bucket tasks summed (XYZZ mixed
//! additions where the curve runs the straight form, shaders/msm_xyzz.wgsl; the
//! complete projective formula otherwise), the tasks of each bucket merged pairwise,
//! and each window's Σ b·B_b by levels of groups of four buckets, so that no thread's
//! work depends on the scalars.
//!
//! A straight curve (G1 on hardware) reduces its buckets in the registers form (its
//! registers-form module, [`Module::MsmG1Registers`]): both forms keep scratch in one
//! layout, so the registers kernel reads the partials the straight accumulation and
//! merges wrote. On the H200 G1's straight reduction was the slowest pipeline of a
//! proof to compile (6.1 s against 0.5) and ran slower too (6.0 ms against 4.9).

use std::marker::PhantomData;

use ark_ec::short_weierstrass::SWCurveConfig;
use crucible_core::{ElementKind, Lease, Result};

use crate::device::batch::Batch;
use crate::device::context::Context;
use crate::field::{DeviceCurve, DeviceElement};
use crate::wgsl::params::MsmParams;
use crate::wgsl::programs::Program;
use crate::wgsl::{Formulas, Module};

use super::layout::{items, Config, Scratch};

/// Which group an MSM runs on: G1 or G2 of a curve.
pub trait MsmCurve {
    /// The group's curve parameters.
    type Config: SWCurveConfig<BaseField: DeviceElement>;
    /// Its point-addition program.
    const ADD: Program;
    /// Its bases' element kind.
    const KIND: ElementKind;
    /// The straight-line module's entry summing bucket tasks in XYZZ coordinates, if
    /// it has one (shaders/msm_xyzz.wgsl).
    const XYZZ_ACCUMULATE: Option<&'static str>;
}

/// G1 of the curve `E`.
pub struct G1<E>(PhantomData<fn() -> E>);

/// G2 of the curve `E`.
pub struct G2<E>(PhantomData<fn() -> E>);

impl<E: DeviceCurve> MsmCurve for G1<E> {
    type Config = E::G1Config;
    const ADD: Program = Program::G1Add;
    const KIND: ElementKind = ElementKind::G1;
    const XYZZ_ACCUMULATE: Option<&'static str> = Some("accumulate_xyzz");
}

impl<E: DeviceCurve> MsmCurve for G2<E> {
    type Config = E::G2Config;
    const ADD: Program = Program::G2Add;
    const KIND: ElementKind = ElementKind::G2;
    // G2 never runs the straight form: its kernels take a driver minutes to compile.
    const XYZZ_ACCUMULATE: Option<&'static str> = None;
}

/// The curve modules' pipelines of an MSM over `C`: accumulation and merge from the
/// curve's module, the reduction from the module of its reduction's form
/// ([`Formulas::reduction`]). What the MSM prepares and runs, and the warm-up creates.
pub fn curve_entries<C: MsmCurve>(ctx: &Context) -> [(Module, &'static str); 3] {
    let module = Module::msm_buckets(C::ADD, ctx.formulas);
    let curve = ctx.formulas.of(C::ADD);
    // The reduction departs from the curve's form only from straight G1 to registers.
    let reduce = if curve.reduction() == curve {
        module
    } else {
        Module::MsmG1Registers
    };
    [
        (module, accumulate_entry::<C>(ctx)),
        (module, "merge_tasks"),
        (reduce, "reduce_level"),
    ]
}

/// The entry point summing bucket tasks: XYZZ where the curve runs the straight form
/// and its module has it, else the projective `accumulate`.
pub fn accumulate_entry<C: MsmCurve>(ctx: &Context) -> &'static str {
    match (ctx.formulas.of(C::ADD), C::XYZZ_ACCUMULATE) {
        (Formulas::Straight, Some(entry)) => entry,
        _ => "accumulate",
    }
}

/// Records steps 5-7 of a batch over `bases`; returns the buffer the last level
/// wrote (each window's pair (A, C)).
#[allow(clippy::too_many_arguments)]
pub fn record<'l, C: MsmCurve>(
    ctx: &Context,
    batch: &mut Batch<'l>,
    work: &'l Lease,
    scratch: &Scratch,
    bases: &'l wgpu::Buffer,
    config: &Config,
    params: MsmParams,
) -> Result<&'l wgpu::Buffer> {
    let buf = |key| scratch.buffer(work, key);
    let (counts, cursor, task_off, sorted) = (
        buf(items::COUNTS)?,
        buf(items::CURSOR)?,
        buf(items::TASK_OFFSETS)?,
        buf(items::SORTED)?,
    );
    let (partials, level_a, level_b) = (
        buf(items::PARTIALS)?,
        buf(items::LEVEL_A)?,
        buf(items::LEVEL_B)?,
    );
    let with_count = |count: usize| MsmParams {
        count: count as u32,
        ..params
    };
    let tasks = config.windows * config.max_tasks;
    let [accumulate, merge, reduce] = curve_entries::<C>(ctx);
    let pipeline = |(module, entry)| ctx.pipeline(module, entry);
    batch.phase("accumulate");
    batch.dispatch(
        pipeline(accumulate)?,
        &with_count(tasks),
        vec![
            (3, counts),
            (4, cursor),
            (5, task_off),
            (6, sorted),
            (7, bases),
            (8, partials),
        ],
        tasks as u32,
    )?;
    batch.phase("merge");
    for round in 0..config.merge_rounds() {
        batch.dispatch(
            pipeline(merge)?,
            &MsmParams {
                round,
                ..with_count(tasks)
            },
            vec![(5, task_off), (8, partials)],
            tasks as u32,
        )?;
    }
    // Level ℓ reads level_b (ℓ odd: level_a) and writes level_a (ℓ odd: level_b).
    batch.phase("reduce");
    let mut m_in = config.buckets;
    let mut last = level_a;
    for (level, m_out) in config.levels().into_iter().enumerate() {
        let (input, output) = if level % 2 == 0 {
            (level_b, level_a)
        } else {
            (level_a, level_b)
        };
        let threads = config.windows * m_out;
        batch.dispatch(
            pipeline(reduce)?,
            &MsmParams {
                level: level as u32,
                m_in: m_in as u32,
                m_out: m_out as u32,
                ..with_count(threads)
            },
            vec![(5, task_off), (8, partials), (9, input), (10, output)],
            threads as u32,
        )?;
        m_in = m_out;
        last = output;
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use ark_ec::{AffineRepr, CurveGroup};
    use ark_ff::{Field, UniformRand, Zero};
    use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
    use crucible_core::{Fq, G1Affine, G1Projective};

    /// shaders/msm_xyzz.wgsl's accumulate_xyzz on the host, step for step, over bases
    /// stored as (x·λ, y·λ) and negated where `negative`: the task's projective sum.
    fn xyzz_task(terms: &[(G1Affine, bool)], lambda: Fq) -> G1Projective {
        struct Xyzz {
            x: Fq,
            y: Fq,
            a: Fq,
            b: Fq,
        }
        let mut acc: Option<Xyzz> = None;
        for (q, negative) in terms {
            if q.is_zero() {
                continue;
            }
            let (qx, mut qy) = (q.x * lambda, q.y * lambda);
            if *negative {
                qy = -qy;
            }
            let Some(p) = acc.take() else {
                let l2 = lambda * lambda;
                acc = Some(Xyzz {
                    x: qx * lambda,
                    y: qy * l2,
                    a: lambda,
                    b: l2,
                });
                continue;
            };
            let mut dp = qx * p.a - p.x;
            let mut r = qy * p.b - p.y;
            let mut minus_ppp = true;
            if dp.is_zero() {
                if !r.is_zero() {
                    continue;
                }
                let xx = p.x * p.x;
                dp = p.y + p.y;
                r = xx + xx + xx;
                minus_ppp = false;
            }
            let pp = dp * dp;
            let ppp = dp * pp;
            let qq = p.x * pp;
            let mut x3 = r * r - (qq + qq);
            if minus_ppp {
                x3 -= ppp;
            }
            let y3 = r * (qq - x3) - p.y * ppp;
            acc = Some(Xyzz {
                x: x3,
                y: y3,
                a: p.a * pp,
                b: p.b * ppp,
            });
        }
        match acc {
            None => G1Projective::zero(),
            Some(p) => {
                // (X·B : Y·A : A·B·λ) as homogeneous projective: x = X'/Z', y = Y'/Z'.
                let z = p.a * p.b * lambda;
                let zi = z.inverse().expect("a sum that is not the identity");
                G1Affine::new(p.x * p.b * zi, p.y * p.a * zi).into()
            }
        }
    }

    #[test]
    fn xyzz_task_sums_match_arkworks_with_repeats_opposites_and_identities() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        // λ = R/R' of 13-bit limbs (2^-6), of R' = R (1), and a random one.
        let lambdas = [
            Fq::from(64u64).inverse().unwrap(),
            Fq::ONE,
            Fq::rand(&mut rng),
        ];
        let point = |rng: &mut StdRng| G1Projective::rand(rng).into_affine();
        for lambda in lambdas {
            for case in 0..40 {
                let p = point(&mut rng);
                let mut terms: Vec<(G1Affine, bool)> = (0..16)
                    .map(|_| (point(&mut rng), rng.gen_bool(0.5)))
                    .collect();
                match case % 5 {
                    // P, P: a doubling.
                    0 => terms[..2].copy_from_slice(&[(p, false), (p, false)]),
                    // P, −P (by sign and by base): the identity, then more terms.
                    1 => terms[3..5].copy_from_slice(&[(p, false), (p, true)]),
                    2 => terms[..2].copy_from_slice(&[(p, false), (-p, false)]),
                    // Identity bases anywhere.
                    3 => {
                        terms[0].0 = G1Affine::identity();
                        terms[7].0 = G1Affine::identity();
                    }
                    _ => {}
                }
                // Repeats after other points: P + Q + (P + Q) needs a doubling too.
                if case % 7 == 6 {
                    terms.truncate(2);
                    terms.push((p, false));
                    terms.push((p, false));
                }
                let want: G1Projective = terms
                    .iter()
                    .map(|(q, negative)| if *negative { -*q } else { *q })
                    .map(G1Projective::from)
                    .sum();
                let got = xyzz_task(&terms, lambda);
                assert_eq!(got, want, "case {case}, λ {lambda} (seed {seed})");
            }
        }
        let p = point(&mut rng);
        assert!(xyzz_task(&[(p, false), (p, true)], lambdas[0]).is_zero());
    }
}
