//! The CPU backend's cost model, measured on the host it runs on: the rates depend on
//! the cores and their speed more than on anything a fixed table could know.
//!
//! The first call times one G1 MSM of 2^12 terms (once with full-width scalars, once
//! with scalars of 0 and 1, the terms of a bit-decomposition witness), one G2 MSM of
//! 2^11 and one NTT of 2^14 through the same arkworks calls the backend proves with (a quarter of a second
//! on two cores), and keeps the rates for the life of the process and in the cache
//! directory for the next ones on this machine ([`crate::cost_cache`]). An MSM's cost a term
//! falls slowly with its size as Pippenger's windows widen; the model scales the
//! measured rates to each length by arkworks' window choice
//! ([`MsmScaling::Windowed`]).

use std::sync::OnceLock;
use std::time::Instant;

use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::{PrimeField, UniformRand};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use crucible_core::ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use crucible_core::fixtures::random_points::random_bases;
use crucible_core::{CostModel, Fr, G1Projective, G2Projective, MsmScaling};

use crate::cost_cache::{self, Rates};

/// Terms of the timed G1 MSM.
const G1_TERMS: usize = 1 << 12;
/// Terms of the timed G2 MSM (a G2 term costs about three G1 terms).
const G2_TERMS: usize = 1 << 11;
/// log2 of the timed NTT's size.
const NTT_LOG: u32 = 14;

/// The rates measured on this host: once per process, read from the cache directory
/// where an earlier process on this machine measured them.
pub fn measured() -> CostModel {
    static MODEL: OnceLock<CostModel> = OnceLock::new();
    *MODEL.get_or_init(|| {
        let dir = crucible_core::cache_dir::cache_folder(cost_cache::FOLDER);
        model(cost_cache::remembered_or(&dir, measure))
    })
}

/// The cost model of the timed calls' `rates`.
fn model(rates: Rates) -> CostModel {
    let fixed = CostModel::default();
    let Rates {
        g1_ns: g1,
        g1_bits_ns: g1_bits,
        g2_ns: g2,
        ntt_ns,
    } = rates;
    let n = 1usize << NTT_LOG;
    let per_term = |ns: f64, call: f64, terms: usize| ((ns - call) / terms as f64).max(1.0);
    CostModel {
        msm_g1_ns_per_term: per_term(g1, fixed.msm_g1_call_ns, G1_TERMS),
        msm_g2_ns_per_term: per_term(g2, fixed.msm_g2_call_ns, G2_TERMS),
        ntt_ns_per_butterfly_stage: (ntt_ns / (n as f64 * f64::from(NTT_LOG))).max(0.01),
        msm_bit_term_cost: ((g1_bits - fixed.msm_g1_call_ns) / (g1 - fixed.msm_g1_call_ns))
            .clamp(0.02, 1.0),
        msm_scaling: MsmScaling::Windowed {
            g1_terms: G1_TERMS,
            g2_terms: G2_TERMS,
        },
        ..fixed
    }
}

/// Times the MSMs and the NTT the model is made of.
fn measure() -> Rates {
    let mut rng = StdRng::seed_from_u64(0x0c05_7a7e);
    let g1_ns = msm_ns::<G1Projective>(G1_TERMS, false, &mut rng);
    let g1_bits_ns = msm_ns::<G1Projective>(G1_TERMS, true, &mut rng);
    let g2_ns = msm_ns::<G2Projective>(G2_TERMS, false, &mut rng);
    let n = 1usize << NTT_LOG;
    let domain = Radix2EvaluationDomain::<Fr>::new(n).expect("2^14 is within the two-adicity");
    let mut values: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    // The faster of two runs: a first run pays for cold caches and, on a loaded
    // machine, for other processes.
    let ntt_ns = (0..2)
        .map(|_| {
            let start = Instant::now();
            domain.fft_in_place(&mut values);
            start.elapsed().as_nanos() as f64
        })
        .fold(f64::INFINITY, f64::min);
    Rates {
        g1_ns,
        g1_bits_ns,
        g2_ns,
        ntt_ns,
    }
}

/// Nanoseconds of one MSM of `terms` random terms of `G` (the faster of two runs),
/// with scalars of 0 and 1 where `bits`, full-width ones otherwise.
fn msm_ns<G: CurveGroup<ScalarField = Fr> + VariableBaseMSM>(
    terms: usize,
    bits: bool,
    rng: &mut StdRng,
) -> f64 {
    let bases = random_bases::<G>(terms, rng);
    let scalars: Vec<_> = (0..terms)
        .map(|_| {
            if bits {
                Fr::from(rng.gen::<bool>()).into_bigint()
            } else {
                Fr::rand(rng).into_bigint()
            }
        })
        .collect();
    (0..2)
        .map(|_| {
            let start = Instant::now();
            let sum = G::msm_bigint(&bases, &scalars);
            let ns = start.elapsed().as_nanos() as f64;
            std::hint::black_box(sum);
            ns
        })
        .fold(f64::INFINITY, f64::min)
}
