//! The one error type every crucible API returns.

use std::fmt;

/// Convenience alias used throughout crucible.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A prover phase, used to say where a proof failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Running the circuit's `generate_constraints` on the host.
    Synthesize,
    /// Evaluating A·z, B·z and C·z on the host.
    Evaluate,
    /// Acquiring budget and allocating device memory.
    Allocate,
    /// Copying scalars or bases from the host to the device.
    Stage,
    /// Forward, inverse and coset NTTs plus the pointwise quotient.
    Ntt,
    /// Multi-scalar multiplications.
    Msm,
    /// Freeing device memory and returning the budget.
    Release,
    /// Checking the finished proof with the verifier.
    Verify,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Phase::Synthesize => "synthesize",
            Phase::Evaluate => "evaluate",
            Phase::Allocate => "allocate",
            Phase::Stage => "stage",
            Phase::Ntt => "ntt",
            Phase::Msm => "msm",
            Phase::Release => "release",
            Phase::Verify => "verify",
        };
        f.write_str(s)
    }
}

/// Everything that can go wrong in crucible, in variants a caller can act on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The backend cannot run here (no driver, no adapter, not compiled in).
    #[error("backend `{backend}` is unavailable: {reason}")]
    Unavailable {
        /// Backend name, e.g. `cuda`.
        backend: String,
        /// Why it cannot run.
        reason: String,
    },
    /// A memory plan can never fit in the device's budget.
    #[error("memory plan needs {needed} bytes but budget `{budget}` holds only {capacity} bytes")]
    OutOfBudget {
        /// Name of the budget (the device).
        budget: String,
        /// Bytes the plan asked for.
        needed: u64,
        /// Capacity of the budget.
        capacity: u64,
    },
    /// No schedule of the proof fits the budget: it is below the shape's floor.
    #[error(
        "budget `{budget}` of {capacity} bytes is below the floor of {floor} bytes, the smallest \
         budget that proves this shape with {workers} proof(s) at once"
    )]
    BelowFloor {
        /// Name of the budget (the device).
        budget: String,
        /// Bytes the budget holds.
        capacity: u64,
        /// The smallest budget that can prove the shape.
        floor: u64,
        /// Proofs at once the floor is for.
        workers: usize,
    },
    /// The driver ran out of memory inside a lease whose plan the budget had room
    /// for: something outside the budget (another process) took device memory after
    /// the budget was sized. The lease is released; a later proof may succeed.
    #[error("device `{backend}` ran out of memory allocating {bytes} bytes although the budget had room: another process holds device memory ({message})")]
    DeviceOutOfMemory {
        /// Backend label.
        backend: String,
        /// Bytes asked for.
        bytes: u64,
        /// The driver's message.
        message: String,
    },
    /// An allocation went beyond what the lease's plan allows for a buffer.
    #[error(
        "lease exceeded: buffer `{buffer}` asked for {requested} bytes, plan leaves {remaining}"
    )]
    LeaseExceeded {
        /// Plan item (buffer) name.
        buffer: String,
        /// Bytes requested.
        requested: u64,
        /// Bytes still free in that plan item (0 for an item not in the plan).
        remaining: u64,
    },
    /// The device or its driver failed.
    #[error("device error on `{backend}`: {message}")]
    Device {
        /// Backend name.
        backend: String,
        /// The driver's message.
        message: String,
    },
    /// Bad input: mismatched key, unsatisfied witness, corrupt file, bad size.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The circuit's synthesis failed.
    #[error("synthesis failed: {0}")]
    Synthesis(#[from] ark_relations::gr1cs::SynthesisError),
    /// A finished proof failed verification: a backend computed a wrong result.
    #[error("proof rejected by the verifier: {0}")]
    Verification(String),
    /// The backend does not support this operation or size.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An error that happened in a given prover phase.
    #[error("{phase} failed: {source}")]
    InPhase {
        /// Where it happened.
        phase: Phase,
        /// What happened.
        #[source]
        source: Box<Error>,
    },
}

impl Error {
    /// Wraps `self` with the phase it happened in (once: an error already tagged keeps its phase).
    pub fn in_phase(self, phase: Phase) -> Error {
        match self {
            Error::InPhase { .. } => self,
            other => Error::InPhase {
                phase,
                source: Box::new(other),
            },
        }
    }

    /// The phase this error is tagged with, if any.
    pub fn phase(&self) -> Option<Phase> {
        match self {
            Error::InPhase { phase, .. } => Some(*phase),
            _ => None,
        }
    }

    /// The underlying error without its phase tag.
    pub fn root(&self) -> &Error {
        match self {
            Error::InPhase { source, .. } => source.root(),
            other => other,
        }
    }

    /// Shorthand for a device error.
    pub fn device(backend: impl Into<String>, message: impl fmt::Display) -> Error {
        Error::Device {
            backend: backend.into(),
            message: message.to_string(),
        }
    }
}

/// The message of a caught panic (`catch_unwind`'s payload), for error reports.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "non-string panic".into())
}

/// Extension to tag results with the phase they came from.
pub trait PhaseExt<T> {
    /// Tags an error with `phase`.
    fn phase(self, phase: Phase) -> Result<T>;
}

impl<T> PhaseExt<T> for Result<T> {
    fn phase(self, phase: Phase) -> Result<T> {
        self.map_err(|e| e.in_phase(phase))
    }
}
