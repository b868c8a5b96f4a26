//! Fresh random inputs: full-width scalars (as a real witness's), scalars of which a
//! share is 0 or 1 (as a bit-decomposition-heavy witness's), and curve points.

use std::fmt;
use std::str::FromStr;

use ark_ff::PrimeField;
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use crucible_core::ScalarMix;
use rayon::prelude::*;

const CHUNK: usize = 1 << 12;

/// `len` values of `draw`, in parallel chunks, each from its own RNG seeded by `rng`.
fn draw_parallel<F: PrimeField>(
    len: usize,
    rng: &mut impl Rng,
    draw: impl Fn(&mut StdRng) -> F + Sync,
) -> Vec<F> {
    let seeds: Vec<u64> = (0..len.div_ceil(CHUNK)).map(|_| rng.gen()).collect();
    let mut out = vec![F::zero(); len];
    out.par_chunks_mut(CHUNK)
        .zip(seeds)
        .for_each(|(chunk, seed)| {
            let mut rng = StdRng::seed_from_u64(seed);
            chunk.iter_mut().for_each(|x| *x = draw(&mut rng));
        });
    out
}

/// `len` uniformly random scalars (full width), drawn in parallel from `rng`.
pub fn random_scalars<F: PrimeField>(len: usize, rng: &mut impl Rng) -> Vec<F> {
    draw_parallel(len, rng, F::rand)
}

/// `len` random scalars of `mix`, drawn in parallel from `rng`.
pub fn mixed_scalars<F: PrimeField>(len: usize, mix: ScalarMix, rng: &mut impl Rng) -> Vec<F> {
    if mix == ScalarMix::FULL {
        return random_scalars(len, rng);
    }
    draw_parallel(len, rng, |rng| {
        if rng.gen_bool(mix.bits()) {
            F::from(u64::from(rng.gen::<bool>()))
        } else {
            F::rand(rng)
        }
    })
}

/// Random bases: core's, which synthetic keys share.
pub use crucible_core::fixtures::random_points::random_bases;

#[cfg(test)]
mod tests {
    use super::*;
    use crucible_core::Fr;

    #[test]
    fn a_bit_heavy_mix_has_its_share_of_zeros_and_ones() {
        let mut rng = StdRng::seed_from_u64(3);
        let mix: ScalarMix = "bits=0.9".parse().unwrap();
        let s: Vec<Fr> = mixed_scalars(20_000, mix, &mut rng);
        let bits = s
            .iter()
            .filter(|x| **x == Fr::from(0u64) || **x == Fr::from(1u64))
            .count();
        assert!((17_600..18_400).contains(&bits), "{bits} of 20000 are bits");
    }

    #[test]
    fn scalars_are_fresh_and_full_width() {
        let mut rng = StdRng::seed_from_u64(7);
        let a: Vec<Fr> = random_scalars(100, &mut rng);
        let b: Vec<Fr> = random_scalars(100, &mut rng);
        assert_ne!(a, b);
        let top_bits = a
            .iter()
            .filter(|x| ark_ff::PrimeField::into_bigint(**x).0[3] >> 60 != 0);
        assert!(top_bits.count() > 50);
    }
}

/// Where a host-in/host-out transform's vectors live: ordinary (pageable) memory, or
/// pinned by the backend for its copies (`ProverBackend::pin_scalars`, untimed, as a
/// caller that reuses its vectors pins them once; sppark's harness times its pinned
/// mode the same way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HostMemory {
    /// Plain vectors: the backend copies them through its staging buffers.
    #[default]
    Pageable,
    /// Vectors pinned by the backend before the clock starts.
    Pinned,
}

/// `pageable` or `pinned`.
impl FromStr for HostMemory {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<HostMemory, String> {
        match s {
            "pageable" => Ok(HostMemory::Pageable),
            "pinned" => Ok(HostMemory::Pinned),
            _ => Err(format!(
                "`{s}` is not a kind of host memory (expected `pageable` or `pinned`)"
            )),
        }
    }
}

impl fmt::Display for HostMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HostMemory::Pageable => "pageable",
            HostMemory::Pinned => "pinned",
        })
    }
}
