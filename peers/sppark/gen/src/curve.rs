// One curve's generator: included by main.rs once per curve, inside a module that
// names the arkworks curve crate `curve` (ark_bls12_381 or ark_bn254). The code is
// the same for both; only the field widths differ (Fq: 48 or 32 bytes, Fr: 32).

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::time::Instant;

use ark_ec::{AffineRepr, CurveGroup, VariableBaseMSM};
use ark_ff::{UniformRand, Zero};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use curve::{Fq, Fq2, Fr, G1Projective, G2Projective};
use rayon::prelude::*;

use super::{put_limbs, seed_of, write_items, Args, Op, CHUNK};

/// Bytes of one base-field element (arkworks' Montgomery limbs, 8 bytes each).
const FQ_BYTES: usize = std::mem::size_of::<Fq>();
/// Bytes of one scalar.
const FR_BYTES: usize = std::mem::size_of::<Fr>();

fn put_fq(out: &mut [u8], x: &Fq) {
    // x.0 is the Montgomery form (BigInt<N>), x.0 .0 its little-endian u64 limbs.
    put_limbs(&mut out[..FQ_BYTES], &x.0 .0);
}

fn put_fq2(out: &mut [u8], x: &Fq2) {
    put_fq(&mut out[..FQ_BYTES], &x.c0);
    put_fq(&mut out[FQ_BYTES..2 * FQ_BYTES], &x.c1);
}

fn put_fr(out: &mut [u8], x: &Fr) {
    put_limbs(&mut out[..FR_BYTES], &x.0 .0);
}

type Affine<G> = <<G as Group>::P as CurveGroup>::Affine;

/// A group whose affine points the harness reads (a marker type: G1Projective and
/// G2Projective are projections the coherence checker cannot tell apart).
trait Group {
    type P: CurveGroup<ScalarField = Fr> + VariableBaseMSM;
    const NAME: &'static str;
    const BYTES: usize;
    fn put_affine(out: &mut [u8], p: &Affine<Self>);
}

struct G1;
struct G2;

impl Group for G1 {
    type P = G1Projective;
    const NAME: &'static str = "g1";
    const BYTES: usize = 2 * FQ_BYTES;
    fn put_affine(out: &mut [u8], p: &Affine<Self>) {
        match p.xy() {
            None => out[..Self::BYTES].fill(0),
            Some((x, y)) => {
                put_fq(&mut out[..FQ_BYTES], &x);
                put_fq(&mut out[FQ_BYTES..2 * FQ_BYTES], &y);
            }
        }
    }
}

impl Group for G2 {
    type P = G2Projective;
    const NAME: &'static str = "g2";
    const BYTES: usize = 4 * FQ_BYTES;
    fn put_affine(out: &mut [u8], p: &Affine<Self>) {
        match p.xy() {
            None => out[..Self::BYTES].fill(0),
            Some((x, y)) => {
                put_fq2(&mut out[..2 * FQ_BYTES], &x);
                put_fq2(&mut out[2 * FQ_BYTES..4 * FQ_BYTES], &y);
            }
        }
    }
}

/// `n` uniform random non-zero scalars, reproducible from `seed`.
fn random_scalars(n: usize, seed: u64) -> Vec<Fr> {
    let mut v = vec![Fr::zero(); n];
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let mut rng = StdRng::seed_from_u64(seed_of(&[seed, c as u64]));
        for x in chunk {
            *x = loop {
                let s = Fr::rand(&mut rng);
                if !s.is_zero() {
                    break s;
                }
            };
        }
    });
    v
}

/// `n` points P_0 + i*Q (random P_0, Q), one addition each, normalized in one batch.
fn random_bases<G: Group>(n: usize, seed: u64) -> (G::P, G::P, Vec<Affine<G>>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (start, step) = loop {
        let (a, b) = (G::P::rand(&mut rng), G::P::rand(&mut rng));
        if !a.is_zero() && !b.is_zero() {
            break (a, b);
        }
    };
    let mut points = vec![G::P::zero(); n];
    points
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut p = start + step * Fr::from((c * CHUNK) as u64);
            for x in chunk {
                *x = p;
                p += step;
            }
        });
    let affine = G::P::normalize_batch(&points);
    (start, step, affine)
}

/// (sum s_i, sum i*s_i).
fn moments(scalars: &[Fr]) -> (Fr, Fr) {
    scalars
        .par_iter()
        .enumerate()
        .with_min_len(CHUNK)
        .map(|(i, s)| (*s, *s * Fr::from(i as u64)))
        .reduce(|| (Fr::zero(), Fr::zero()), |a, b| (a.0 + b.0, a.1 + b.1))
}

fn gen_msm<G: Group>(
    args: &Args,
    log: u32,
    scalars: &[Vec<Fr>],
    manifest: &mut String,
) -> io::Result<()> {
    let n = 1usize << log;
    let t = Instant::now();
    let (start, step, bases) =
        random_bases::<G>(n, seed_of(&[args.seed, G::BYTES as u64, log as u64]));
    let t_gen = t.elapsed();

    // Spot-check the progression at 16 indices (first, last and random ones).
    let mut rng = StdRng::seed_from_u64(seed_of(&[args.seed, 77, log as u64]));
    let mut idx = vec![0usize, n - 1];
    idx.extend((0..14).map(|_| rng.gen_range(0..n)));
    for &i in &idx {
        let want = (start + step * Fr::from(i as u64)).into_affine();
        assert!(bases[i] == want, "{} base {i} is not P0 + {i}*Q", G::NAME);
    }

    let path = args.out.join(format!("{}_bases_{log}.bin", G::NAME));
    write_items(&path, &bases, G::BYTES, |o, p| G::put_affine(o, p))?;

    for (k, s) in scalars.iter().enumerate() {
        let (s0, s1) = moments(s);
        let closed = (start * s0 + step * s1).into_affine();
        let mut how = "closed form (sum s_i)P0 + (sum i*s_i)Q".to_string();
        if log <= args.ark_msm_max {
            let t = Instant::now();
            let ark = G::P::msm(&bases, s).expect("lengths match").into_affine();
            assert!(
                ark == closed,
                "{} 2^{log} set {k}: arkworks VariableBaseMSM disagrees with the closed form",
                G::NAME
            );
            how = format!(
                "arkworks VariableBaseMSM ({:.2} s), equal to the closed form",
                t.elapsed().as_secs_f64()
            );
        }
        let mut buf = vec![0u8; G::BYTES];
        G::put_affine(&mut buf, &closed);
        fs::write(args.out.join(format!("{}_msm_{log}_{k}.bin", G::NAME)), &buf)?;
        writeln!(manifest, "{}_msm_{log}_{k}.bin: {how}", G::NAME).unwrap();
    }
    writeln!(
        manifest,
        "{}_bases_{log}.bin: {n} points P0 + i*Q ({:.2} s to generate)",
        G::NAME,
        t_gen.as_secs_f64()
    )
    .unwrap();
    eprintln!(
        "sppark-gen: {} 2^{log}: bases + {} expected MSMs in {:.1} s",
        G::NAME,
        scalars.len(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn gen_ntt(args: &Args, log: u32, scalars: &[Vec<Fr>], manifest: &mut String) -> io::Result<()> {
    let t = Instant::now();
    let n = 1usize << log;
    let domain = Radix2EvaluationDomain::<Fr>::new(n).expect("radix-2 domain");
    assert_eq!(domain.size(), n);
    for (k, s) in scalars.iter().enumerate() {
        let out = domain.fft(s);
        let path = args.out.join(format!("ntt_out_{log}_{k}.bin"));
        write_items(&path, &out, FR_BYTES, put_fr)?;
        writeln!(
            manifest,
            "ntt_out_{log}_{k}.bin: ark-poly Radix2EvaluationDomain({n}).fft(scalars_{log}_{k}), \
             group_gen = {}",
            domain.group_gen()
        )
        .unwrap();
    }
    eprintln!(
        "sppark-gen: ntt 2^{log}: {} expected NTTs in {:.1} s",
        scalars.len(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Every file of `args.specs` for this curve, and the manifest.
pub fn run(args: &Args, manifest: &mut String) -> io::Result<()> {
    let mut logs: Vec<u32> = args.specs.iter().map(|s| s.1).collect();
    logs.sort();
    logs.dedup();
    for log in logs {
        let n = 1usize << log;
        let t = Instant::now();
        let scalars: Vec<Vec<Fr>> = (0..args.sets)
            .map(|k| random_scalars(n, seed_of(&[args.seed, 1, log as u64, k as u64])))
            .collect();
        for (k, s) in scalars.iter().enumerate() {
            let path = args.out.join(format!("scalars_{log}_{k}.bin"));
            write_items(&path, s, FR_BYTES, put_fr)?;
            writeln!(manifest, "scalars_{log}_{k}.bin: {n} uniform non-zero Fr (Montgomery)").unwrap();
        }
        eprintln!(
            "sppark-gen: 2^{log}: {} scalar sets in {:.1} s",
            args.sets,
            t.elapsed().as_secs_f64()
        );
        for &(op, l) in &args.specs {
            if l != log {
                continue;
            }
            match op {
                Op::G1 => gen_msm::<G1>(args, log, &scalars, manifest)?,
                Op::G2 => gen_msm::<G2>(args, log, &scalars, manifest)?,
                Op::Ntt => gen_ntt(args, log, &scalars, manifest)?,
            }
        }
    }
    Ok(())
}
