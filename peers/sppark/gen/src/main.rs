//! sppark-gen: inputs and expected outputs for the peer harnesses (../harness.cu and
//! ../../icicle/harness.cpp), for BLS12-381 (the default) or BN254.
//!
//! Usage: sppark-gen OUT_DIR [--curve bls12-381|bn254] [--seed N] [--sets K]
//!                   [--ark-msm-max LOG] SPEC...
//!   SPEC: g1:LOG | g2:LOG | ntt:LOG | LOG (all three at 2^LOG); "2^LOG" also accepted.
//!
//! Byte layout (what sppark's device types hold, checked against sppark's headers):
//!   * every field element is arkworks' own Montgomery representation, little-endian
//!     u64 limbs. BLS12-381: Fq R = 2^384 (48 bytes), Fr R = 2^256 (32 bytes); BN254
//!     (sppark's alt_bn128): Fq and Fr R = 2^256 (32 bytes each). sppark's mont_t
//!     (device) and blst_384_t/blst_256_t (host) use the same moduli, the same R and
//!     the same limb order, so this is a plain copy.
//!   * G1 affine: X | Y (2 Fq: 96 or 64 bytes), sppark's Affine_t<fp_t>; the point at
//!     infinity is all zero bytes (Affine_t::is_inf() is X == 0 && Y == 0).
//!   * G2 affine: X.c0 | X.c1 | Y.c0 | Y.c1 (4 Fq: 192 or 128 bytes), sppark's
//!     Affine_t<fp2_t>; both curves' Fq2 is Fq[u]/(u^2 + 1).
//!   * scalars: Fr in Montgomery form; the harness passes mont=true, so sppark's
//!     breakdown kernel converts them on the device (s.from()), as supraseal-c2 does.
//!
//! Files (n = 2^LOG, k = scalar set 0..K-1; widths for BLS12-381 / BN254):
//!   scalars_LOG_k.bin  n x 32        uniform random non-zero Fr (shared by g1, g2 and ntt)
//!   g1_bases_LOG.bin   n x 96 / 64   P_i = P_0 + i*Q, random P_0, Q (batch-normalized)
//!   g1_msm_LOG_k.bin   96 / 64       sum_i s_i P_i, affine
//!   g2_bases_LOG.bin   n x 192 / 128
//!   g2_msm_LOG_k.bin   192 / 128
//!   ntt_out_LOG_k.bin  n x 32        ark-poly Radix2EvaluationDomain(n).fft(scalars_LOG_k)
//!                                    (forward, natural order in and out)
//!   manifest.txt       the curve, what was written and how each expected value was computed
//!
//! Expected MSMs: with P_i = P_0 + i*Q, sum s_i P_i = (sum s_i) P_0 + (sum i s_i) Q
//! exactly, so every size gets an exact expected value in milliseconds. For sizes up
//! to 2^(--ark-msm-max) (default 20) the expected value is computed with arkworks'
//! VariableBaseMSM as well and the two must agree (the generator aborts otherwise);
//! every size also has 16 of its points spot-checked against P_0 + i*Q.
//!
//! For BLS12-381 the files are byte for byte those of the generator before it had a
//! BN254 mode (same seeds, same order of draws).

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use rayon::prelude::*;

/// BLS12-381 (sppark's FEATURE_BLS12_381).
mod bls12_381 {
    use ark_bls12_381 as curve;
    include!("curve.rs");
}

/// BN254 (sppark's alt_bn128, FEATURE_BN254).
mod bn254 {
    use ark_bn254 as curve;
    include!("curve.rs");
}

/// Elements one rayon task generates with one RNG / one scalar multiplication.
const CHUNK: usize = 1 << 12;
/// Elements converted to bytes per write.
const WRITE_CHUNK: usize = 1 << 18;

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn seed_of(parts: &[u64]) -> u64 {
    parts.iter().fold(0x5eed_0f_5ba7u64, |acc, &p| splitmix(acc ^ splitmix(p)))
}

fn put_limbs(out: &mut [u8], limbs: &[u64]) {
    for (o, l) in out.chunks_exact_mut(8).zip(limbs) {
        o.copy_from_slice(&l.to_le_bytes());
    }
}

/// Writes `items` as fixed-width records through a temporary file and a rename.
fn write_items<T: Sync>(
    path: &Path,
    items: &[T],
    width: usize,
    enc: impl Fn(&mut [u8], &T) + Sync,
) -> io::Result<()> {
    let tmp = path.with_extension("part");
    {
        let mut w = BufWriter::with_capacity(1 << 22, File::create(&tmp)?);
        let mut buf = vec![0u8; WRITE_CHUNK.min(items.len().max(1)) * width];
        for chunk in items.chunks(WRITE_CHUNK) {
            let b = &mut buf[..chunk.len() * width];
            b.par_chunks_mut(width)
                .zip(chunk.par_iter())
                .for_each(|(o, x)| enc(o, x));
            w.write_all(b)?;
        }
        w.flush()?;
    }
    fs::rename(&tmp, path)
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Op {
    G1,
    G2,
    Ntt,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Curve {
    Bls12_381,
    Bn254,
}

impl Curve {
    fn name(self) -> &'static str {
        match self {
            Curve::Bls12_381 => "bls12-381",
            Curve::Bn254 => "bn254",
        }
    }
}

struct Args {
    out: PathBuf,
    curve: Curve,
    seed: u64,
    sets: usize,
    ark_msm_max: u32,
    specs: Vec<(Op, u32)>,
}

const USAGE: &str = "usage: sppark-gen OUT_DIR [--curve bls12-381|bn254] [--seed N] [--sets K] \
                     [--ark-msm-max LOG] SPEC...\n  SPEC: g1:LOG | g2:LOG | ntt:LOG | LOG (all three)";

fn parse_log(s: &str) -> Result<u32, String> {
    let t = s.strip_prefix("2^").unwrap_or(s);
    let v: u32 = t.parse().map_err(|_| format!("bad size `{s}` (want LOG or 2^LOG)"))?;
    if !(5..=28).contains(&v) {
        return Err(format!("size 2^{v} out of range (2^5..2^28)"));
    }
    Ok(v)
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mut out = None;
    let mut curve = Curve::Bls12_381;
    let mut seed = 1u64;
    let mut sets = 2usize;
    let mut ark_msm_max = 20u32;
    let mut specs = Vec::new();
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--curve" => {
                curve = match val("--curve")?.as_str() {
                    "bls12-381" | "bls12_381" => Curve::Bls12_381,
                    "bn254" | "alt_bn128" => Curve::Bn254,
                    c => return Err(format!("--curve: unknown curve `{c}` (bls12-381 or bn254)")),
                }
            }
            "--seed" => seed = val("--seed")?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--sets" => sets = val("--sets")?.parse().map_err(|e| format!("--sets: {e}"))?,
            "--ark-msm-max" => ark_msm_max = parse_log(&val("--ark-msm-max")?)?,
            "-h" | "--help" => return Err(USAGE.into()),
            _ if out.is_none()
                && !a.contains(':')
                && a.parse::<u32>().is_err()
                && !a.starts_with("2^") =>
            {
                out = Some(PathBuf::from(a))
            }
            _ => match a.split_once(':') {
                Some((op, log)) => {
                    let op = match op {
                        "g1" | "msm-g1" => Op::G1,
                        "g2" | "msm-g2" => Op::G2,
                        "ntt" => Op::Ntt,
                        _ => return Err(format!("unknown op `{op}` in `{a}`")),
                    };
                    specs.push((op, parse_log(log)?));
                }
                None => {
                    let log = parse_log(&a)?;
                    specs.extend([(Op::G1, log), (Op::G2, log), (Op::Ntt, log)]);
                }
            },
        }
    }
    let out = out.ok_or("missing OUT_DIR")?;
    if specs.is_empty() {
        return Err("no SPEC given".into());
    }
    if sets < 2 {
        return Err("--sets must be at least 2 (runs rotate between sets)".into());
    }
    specs.sort();
    specs.dedup();
    Ok(Args {
        out,
        curve,
        seed,
        sets,
        ark_msm_max,
        specs,
    })
}

fn run(args: &Args) -> io::Result<()> {
    fs::create_dir_all(&args.out)?;
    let mut manifest = String::new();
    writeln!(
        manifest,
        "sppark-gen curve={} seed={} sets={} ark-msm-max=2^{} threads={}",
        args.curve.name(),
        args.seed,
        args.sets,
        args.ark_msm_max,
        rayon::current_num_threads()
    )
    .unwrap();
    match args.curve {
        Curve::Bls12_381 => bls12_381::run(args, &mut manifest)?,
        Curve::Bn254 => bn254::run(args, &mut manifest)?,
    }
    fs::write(args.out.join("manifest.txt"), manifest)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("sppark-gen: {e}");
            return ExitCode::from(2);
        }
    };
    let t = Instant::now();
    eprintln!("sppark-gen: curve {}", args.curve.name());
    if let Err(e) = run(&args) {
        eprintln!("sppark-gen: {e}");
        return ExitCode::FAILURE;
    }
    eprintln!("sppark-gen: done in {:.1} s", t.elapsed().as_secs_f64());
    ExitCode::SUCCESS
}
