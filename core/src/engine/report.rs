//! Per-proof reports: who made the proof, how long each phase took, how much memory.

use std::time::Duration;

use crate::{BudgetStats, ProofShape};

pub(crate) fn serialize_duration<S: serde::Serializer>(
    d: &Duration,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

/// Wall time of each phase of one proof (serialized in milliseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct PhaseTimes {
    /// Circuit synthesis (host).
    #[serde(serialize_with = "serialize_duration")]
    pub synthesize: Duration,
    /// A·z, B·z, C·z on the host; zero where the device evaluates them (its sparse
    /// products are then part of `ntt`).
    #[serde(serialize_with = "serialize_duration")]
    pub evaluate: Duration,
    /// Budget acquisition and device allocation (includes waiting for memory).
    #[serde(serialize_with = "serialize_duration")]
    pub allocate: Duration,
    /// Host time inside the staging calls (converting and queueing the copies; on a
    /// backend with a copy stream, the device runs the previous vector's transforms
    /// meanwhile).
    #[serde(serialize_with = "serialize_duration")]
    pub stage: Duration,
    /// NTTs and pointwise ops (and the sparse products of a device evaluation): the
    /// rest of the wall time from the first staging call to the end of the transforms,
    /// so `stage + ntt` is that whole span.
    #[serde(serialize_with = "serialize_duration")]
    pub ntt: Duration,
    /// The five MSMs.
    #[serde(serialize_with = "serialize_duration")]
    pub msm: Duration,
    /// Freeing and synchronizing.
    #[serde(serialize_with = "serialize_duration")]
    pub release: Duration,
    /// Pairing check of the finished proof (zero when verification is off).
    #[serde(serialize_with = "serialize_duration")]
    pub verify: Duration,
    /// Synthesized and evaluated, waiting for a device worker (the engine's queue):
    /// time the host was ahead of the devices. Not work, so not in [`Self::total`].
    #[serde(serialize_with = "serialize_duration")]
    pub queued: Duration,
}

impl PhaseTimes {
    /// Names and values in pipeline order (the queue wait between the host's phases
    /// and the device's).
    pub fn named(&self) -> [(&'static str, Duration); 9] {
        [
            ("synthesize", self.synthesize),
            ("evaluate", self.evaluate),
            ("queued", self.queued),
            ("allocate", self.allocate),
            ("stage", self.stage),
            ("ntt", self.ntt),
            ("msm", self.msm),
            ("release", self.release),
            ("verify", self.verify),
        ]
    }

    /// Staging plus device compute (stage, NTT and MSM phases): the proof's time on
    /// the backend once the witness is known.
    pub fn stage_and_compute(&self) -> Duration {
        self.stage + self.ntt + self.msm
    }

    /// Sum of all phases (the queue wait left out).
    pub fn total(&self) -> Duration {
        self.named()
            .iter()
            .filter(|(name, _)| *name != "queued")
            .map(|(_, d)| *d)
            .sum()
    }
}

/// Everything known about one finished proof.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ProofReport {
    /// Backend label, e.g. `cuda:0`.
    pub backend: String,
    /// Device name.
    pub device: String,
    /// The proof's sizes (domain included).
    pub shape: ProofShape,
    /// The schedule the proof ran (which bases were resident, which streamed).
    pub schedule: String,
    /// The reduction of the key (`Libsnark` or `Circom`).
    pub reduction: String,
    /// Per-phase wall times.
    pub times: PhaseTimes,
    /// Bytes the proof's memory plan reserved.
    pub bytes_planned: u64,
    /// Most bytes the proof's lease had allocated at once.
    pub peak_bytes: u64,
    /// Bytes held by the staged proving key (shared across proofs).
    pub key_bytes: u64,
    /// Whether the proof was checked with the verifier before being returned.
    pub verified: bool,
    /// The device budget's counters when the proof finished.
    pub budget: BudgetStats,
}
