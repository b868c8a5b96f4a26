//! Case results and the run summary.

use std::fmt;
use std::time::Duration;

/// How one case ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It matched arkworks.
    Passed,
    /// It did not; the message says where.
    Failed(String),
    /// The backend answered `Unsupported` (an operation or a size it does not
    /// implement), with its message: not a pass, and a failure for a backend named
    /// in `CRUCIBLE_REQUIRE`.
    Unsupported(String),
    /// It could not run (backend unavailable), with the reason.
    Skipped(String),
}

/// A [`CaseError::Failed`] with a `format!` message.
macro_rules! fail {
    ($($arg:tt)*) => {
        $crate::CaseError::Failed(format!($($arg)*))
    };
}

/// Why a case did not pass: what a case body returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseError {
    /// A wrong result or an error where none was due; the message says which.
    Failed(String),
    /// The backend answered [`crucible_core::Error::Unsupported`].
    Unsupported(String),
}

impl From<String> for CaseError {
    fn from(why: String) -> Self {
        CaseError::Failed(why)
    }
}

impl From<&str> for CaseError {
    fn from(why: &str) -> Self {
        CaseError::Failed(why.to_string())
    }
}

impl From<crucible_core::Error> for CaseError {
    fn from(e: crucible_core::Error) -> Self {
        match (&e, e.root()) {
            (crucible_core::Error::Unsupported(why), _) => CaseError::Unsupported(why.clone()),
            // Tagged with a phase: the phase says where.
            (_, crucible_core::Error::Unsupported(_)) => CaseError::Unsupported(e.to_string()),
            _ => CaseError::Failed(e.to_string()),
        }
    }
}

impl CaseError {
    /// Prefixes a failure's message with `what` (an unsupported answer stays as it is).
    pub fn context(self, what: &str) -> CaseError {
        match self {
            CaseError::Failed(why) => CaseError::Failed(format!("{what}: {why}")),
            unsupported => unsupported,
        }
    }

    /// `Unsupported` if `e` is the backend's `Unsupported` answer, else a failure saying
    /// that `e` is the wrong error (for cases that expect a particular error).
    pub fn wrong_error(e: crucible_core::Error) -> CaseError {
        match CaseError::from(e) {
            CaseError::Failed(why) => CaseError::Failed(format!("wrong error: {why}")),
            unsupported => unsupported,
        }
    }
}

/// One case's result.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// Backend label (`cuda:0`) or name when unavailable.
    pub backend: String,
    /// Case name, e.g. `ntt/coset-inverse/2^12`.
    pub name: String,
    /// Result.
    pub outcome: Outcome,
    /// Wall time of the case.
    pub duration: Duration,
}

impl fmt::Display for CaseResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.duration.as_secs_f64() * 1e3;
        match &self.outcome {
            Outcome::Passed => write!(f, "ok      {:<8} {} ({ms:.1} ms)", self.backend, self.name),
            Outcome::Failed(why) => write!(f, "FAILED  {:<8} {}: {why}", self.backend, self.name),
            Outcome::Unsupported(why) => {
                write!(f, "unsupported {:<8} {}: {why}", self.backend, self.name)
            }
            Outcome::Skipped(why) => write!(f, "skipped {:<8} {}: {why}", self.backend, self.name),
        }
    }
}

/// Counts of a run, with the failures and skips spelled out.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Seed the inputs were drawn from.
    pub seed: u64,
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Cases the backend answered `Unsupported` (neither passed nor failed).
    pub unsupported: usize,
    /// Cases (or whole backends) skipped.
    pub skipped: usize,
    /// `backend name: message` of each failure.
    pub failures: Vec<String>,
    /// `backend name: message` of each unsupported case.
    pub unsupported_cases: Vec<String>,
    /// `backend name: reason` of each skip.
    pub skips: Vec<String>,
}

impl Summary {
    /// Adds one case.
    pub fn record(&mut self, case: &CaseResult) {
        let line = format!("{} {}", case.backend, case.name);
        match &case.outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::Failed(why) => {
                self.failed += 1;
                self.failures.push(format!("{line}: {why}"));
            }
            Outcome::Unsupported(why) => {
                self.unsupported += 1;
                self.unsupported_cases.push(format!("{line}: {why}"));
            }
            Outcome::Skipped(why) => {
                self.skipped += 1;
                self.skips.push(format!("{line}: {why}"));
            }
        }
    }

    /// Adds another summary's counts.
    pub fn absorb(&mut self, other: Summary) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.unsupported += other.unsupported;
        self.skipped += other.skipped;
        self.failures.extend(other.failures);
        self.unsupported_cases.extend(other.unsupported_cases);
        self.skips.extend(other.skips);
    }

    /// True when nothing failed (unsupported and skipped cases are not failures,
    /// unless their backend was required: then they were recorded as failed).
    pub fn ok(&self) -> bool {
        self.failed == 0
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} unsupported, {} skipped (seed {})",
            self.passed, self.failed, self.unsupported, self.skipped, self.seed
        )
    }
}
