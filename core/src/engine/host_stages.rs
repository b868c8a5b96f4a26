//! What a proof costs the host before a device takes it: its synthesis and, where the
//! schedule evaluates on the host, A·z, B·z and C·z. The engine's synthesis threads do
//! both for one proof at a time, so `threads / (synthesis + evaluation)` proofs a
//! second is the most the host feeds a device, whatever the device could do; the
//! chooser takes the lesser of the two rates ([`crate::groth16::ScheduledPlan`]).
//!
//! On the H200 machine (16 Xeon cores, four synthesis threads, two workers) the
//! bit-heavy 2^24 circuit evaluated on the host ran at 1.275 proofs/s against this
//! model's 1.34 (1.92 s synthesis + 1.07 s evaluation a proof, on four threads), while
//! its device alone was predicted 1.67/s (4938042:BENCHMARKS.md#on-the-h200).

/// Host evaluation: nanoseconds a matrix entry, a proof's three sparse products over
/// all rows together, with the engine's other threads busy beside it. Fitted on the
/// H200 machine's 16 cores with four synthesis threads: 1073 ms for the bit-heavy
/// 2^24 circuit's 5.2·10^7 entries, 1260 ms for the full-width one's, 69 ms at 2^20
/// (20.6, 25 and 21 ns an entry).
pub const EVALUATION_NS_PER_ENTRY: f64 = 21.0;

/// The host's side of a device's proofs: its share of the synthesis threads and what
/// one proof's synthesis takes on one of them.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct HostStages {
    /// Synthesis threads feeding this device (the engine's, divided among its
    /// devices; may be fractional).
    pub threads: f64,
    /// Seconds of one proof's synthesis on one thread (0 where unknown: then only the
    /// host evaluation is counted).
    pub synthesis_seconds: f64,
}

impl HostStages {
    /// Seconds of one proof's host evaluation over `entries` matrix entries.
    pub fn evaluation_seconds(entries: u64) -> f64 {
        entries as f64 * EVALUATION_NS_PER_ENTRY * 1e-9
    }

    /// Proofs per second the host supplies when each also needs a host evaluation of
    /// `entries` entries (0 where the device evaluates); infinite where nothing is
    /// counted.
    pub fn proofs_per_second(&self, entries: u64) -> f64 {
        let seconds = self.synthesis_seconds + Self::evaluation_seconds(entries);
        if seconds <= 0.0 {
            f64::INFINITY
        } else {
            self.threads.max(1e-9) / seconds
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_rate_is_its_threads_over_a_proofs_host_seconds() {
        let host = HostStages {
            threads: 4.0,
            synthesis_seconds: 1.92,
        };
        // The bit-heavy 2^24 circuit evaluated on the host: 1.92 + 1.09 s a proof.
        let entries = 52_000_000;
        let rate = host.proofs_per_second(entries);
        assert!((rate - 4.0 / (1.92 + 1.092)).abs() < 1e-9, "{rate}");
        // Evaluated on the device, synthesis alone.
        assert!((host.proofs_per_second(0) - 4.0 / 1.92).abs() < 1e-9);
        let unknown = HostStages {
            threads: 2.0,
            synthesis_seconds: 0.0,
        };
        assert_eq!(unknown.proofs_per_second(0), f64::INFINITY);
    }
}
