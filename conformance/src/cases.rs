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
    /// It could not run (backend unavailable, size unsupported), with the reason.
    Skipped(String),
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
    /// Cases (or whole backends) skipped.
    pub skipped: usize,
    /// `backend name: message` of each failure.
    pub failures: Vec<String>,
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
        self.skipped += other.skipped;
        self.failures.extend(other.failures);
        self.skips.extend(other.skips);
    }

    /// True when nothing failed.
    pub fn ok(&self) -> bool {
        self.failed == 0
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped (seed {})",
            self.passed, self.failed, self.skipped, self.seed
        )
    }
}
