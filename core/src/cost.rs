//! The rates a schedule's time is predicted from: how fast a backend stages bytes,
//! transforms and multiplies. Each backend reports its own, fitted to measurements
//! (BENCHMARKS.md says where each number comes from).

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
    /// True when a staging copy runs beside compute already queued (a copy
    /// stream): a streamed chunk's copy then hides behind the previous chunk's MSM.
    pub overlaps_staging: bool,
    /// The sparse product (A·z, B·z, C·z on the device): nanoseconds per matrix entry.
    pub sparse_ns_per_entry: f64,
}

impl Default for CostModel {
    /// The CPU reference's rates, fitted on the H200 machine's 16 Xeon cores (MSM G1
    /// 2^20 1849 ms, G2 2^20 5017 ms, NTT 2^20 63.8 ms; BENCHMARKS.md, CPU backend on
    /// the H200 machine); staging is a host copy.
    fn default() -> Self {
        CostModel {
            msm_g1_ns_per_term: 1763.0,
            msm_g2_ns_per_term: 4785.0,
            msm_g1_call_ns: 50_000.0,
            msm_g2_call_ns: 50_000.0,
            ntt_ns_per_butterfly_stage: 3.04,
            stage_bytes_per_second: 4.0e9,
            overlaps_staging: false,
            sparse_ns_per_entry: 1.0,
        }
    }
}

impl CostModel {
    /// Predicted seconds of one MSM call over `terms` terms (G2 when `g2`).
    pub fn msm_seconds(&self, terms: usize, g2: bool) -> f64 {
        if terms == 0 {
            return 0.0;
        }
        let (call, per_term) = if g2 {
            (self.msm_g2_call_ns, self.msm_g2_ns_per_term)
        } else {
            (self.msm_g1_call_ns, self.msm_g1_ns_per_term)
        };
        (call + per_term * terms as f64) * 1e-9
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
}
