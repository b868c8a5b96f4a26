//! The rates a schedule's time is predicted from: how fast a backend stages bytes,
//! transforms and multiplies. Each backend reports its own, fitted to measurements
//! (each backend's `cost.rs` cites the measurements behind its numbers).

use crate::ScalarMix;

/// Fitted rates of one backend on one device.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct CostModel {
    /// G1 MSM: nanoseconds per term, for large MSMs.
    pub msm_g1_ns_per_term: f64,
    /// G2 MSM: nanoseconds per term.
    pub msm_g2_ns_per_term: f64,
    /// Fixed cost of one G1 MSM call in nanoseconds (launches, bucket reduction,
    /// reading the result back): what every extra chunk of a streamed MSM costs.
    pub msm_g1_call_ns: f64,
    /// Fixed cost of one G2 MSM call in nanoseconds (its buckets and their reduction
    /// cost about three times G1's).
    pub msm_g2_call_ns: f64,
    /// NTT: nanoseconds per element and per radix-2 stage (`n·log n` of them).
    pub ntt_ns_per_butterfly_stage: f64,
    /// Host to device staging, bytes per second (conversion and copy together).
    pub stage_bytes_per_second: f64,
    /// A staged key's streamed bases, host to device, bytes per second: the staging
    /// rate where they are converted as any other copy; the link's rate where the
    /// backend pins the key and copies its points as they lie
    /// ([`crate::ProverBackend::pin_g1_bases`]).
    pub streamed_bases_bytes_per_second: f64,
    /// True when a staging copy runs beside compute already queued (a copy
    /// stream): a streamed chunk's copy then hides behind the previous chunk's MSM.
    pub overlaps_staging: bool,
    /// The sparse product (A·z, B·z, C·z on the device): nanoseconds per matrix entry.
    pub sparse_ns_per_entry: f64,
    /// How an MSM's cost a term depends on its length.
    pub msm_scaling: MsmScaling,
    /// What a term whose scalar is 0 or 1 costs, as a share of a full-width term's
    /// cost (1: no cheaper). Bit-decomposition witnesses are mostly such terms.
    pub msm_bit_term_cost: f64,
}

/// How an MSM's cost a term depends on its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum MsmScaling {
    /// The same at every length: the rates are fitted over the lengths a schedule
    /// runs (a GPU sizes its windows to fill the device).
    Flat,
    /// Pippenger with arkworks' windows (`⌊0.69·⌈log2 n⌉⌋ + 2` bits, signed digits):
    /// the rates were measured on MSMs of `g1_terms` and `g2_terms` terms, and another
    /// length scales them by its bucket additions a term, which fall as the windows
    /// widen (about half as many at 2^20 terms as at 2^12).
    Windowed {
        /// Terms of the G1 MSM the G1 rate was measured on.
        g1_terms: usize,
        /// Terms of the G2 MSM the G2 rate was measured on.
        g2_terms: usize,
    },
}

impl MsmScaling {
    /// The cost a term of an MSM of `terms` terms, relative to the rate's (1 when flat).
    pub fn relative_cost(self, terms: usize, g2: bool) -> f64 {
        match self {
            MsmScaling::Flat => 1.0,
            MsmScaling::Windowed { g1_terms, g2_terms } => {
                let measured = if g2 { g2_terms } else { g1_terms };
                windowed_adds_per_term(terms) / windowed_adds_per_term(measured)
            }
        }
    }
}

/// Bucket additions a term of a Pippenger MSM of `terms` terms with arkworks' window
/// choice: each of the `⌈255 / c⌉` windows adds every term into a bucket, then sums
/// its `2^(c-1)` signed buckets in about `2^c` additions.
fn windowed_adds_per_term(terms: usize) -> f64 {
    let terms = terms.max(1);
    let c = if terms < 32 {
        3
    } else {
        (terms.next_power_of_two().trailing_zeros() as usize * 69 / 100) + 2
    };
    let windows = 255usize.div_ceil(c) as f64;
    windows * (1.0 + (1u64 << c) as f64 / terms as f64)
}

impl Default for CostModel {
    /// The CPU reference's rates, fitted on the H200 machine's 16 Xeon cores (MSM G1
    /// 2^20 1849 ms, G2 2^20 5017 ms, NTT 2^20 63.8 ms;
    /// d32de65:BENCHMARKS.md); staging is a host copy.
    fn default() -> Self {
        CostModel {
            msm_g1_ns_per_term: 1763.0,
            msm_g2_ns_per_term: 4785.0,
            msm_g1_call_ns: 50_000.0,
            msm_g2_call_ns: 50_000.0,
            ntt_ns_per_butterfly_stage: 3.04,
            stage_bytes_per_second: 4.0e9,
            streamed_bases_bytes_per_second: 4.0e9,
            overlaps_staging: false,
            sparse_ns_per_entry: 1.0,
            msm_scaling: MsmScaling::Flat,
            msm_bit_term_cost: 1.0,
        }
    }
}

impl CostModel {
    /// Predicted seconds of one MSM call over `terms` terms (G2 when `g2`) whose
    /// scalars are of `mix`.
    pub fn msm_seconds(&self, terms: usize, g2: bool, mix: ScalarMix) -> f64 {
        if terms == 0 {
            return 0.0;
        }
        let (call, per_term) = if g2 {
            (self.msm_g2_call_ns, self.msm_g2_ns_per_term)
        } else {
            (self.msm_g1_call_ns, self.msm_g1_ns_per_term)
        };
        let scale = self.msm_scaling.relative_cost(terms, g2);
        let bits = mix.bits();
        let full_terms = 1.0 - bits + bits * self.msm_bit_term_cost;
        (call + per_term * scale * full_terms * terms as f64) * 1e-9
    }

    /// Predicted seconds of one NTT over `2^log_size` elements.
    pub fn ntt_seconds(&self, log_size: u32) -> f64 {
        let n = (1u64 << log_size) as f64;
        n * f64::from(log_size.max(1)) * self.ntt_ns_per_butterfly_stage * 1e-9
    }

    /// Predicted seconds of sparse products over `entries` matrix entries.
    pub fn sparse_seconds(&self, entries: u64) -> f64 {
        entries as f64 * self.sparse_ns_per_entry * 1e-9
    }

    /// Predicted seconds to stage `bytes` from the host.
    pub fn stage_seconds(&self, bytes: u64) -> f64 {
        bytes as f64 / self.stage_bytes_per_second
    }

    /// Predicted seconds to stream `bytes` of a staged key's bases from the host.
    pub fn stream_seconds(&self, bytes: u64) -> f64 {
        bytes as f64 / self.streamed_bases_bytes_per_second
    }
}
