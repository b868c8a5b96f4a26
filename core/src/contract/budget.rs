//! The device's memory budget, shared by every worker on one device.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::{Error, Result};

/// Memory accounting for one physical device, shared (`Arc`) by all its workers.
///
/// Capacity is what the device reports minus headroom (or a user's limit). Acquiring
/// waits until the bytes are free; a request that can never fit fails at once.
#[derive(Debug)]
pub struct DeviceBudget {
    name: String,
    capacity: u64,
    state: Mutex<BudgetState>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct BudgetState {
    in_use: u64,
    high_water: u64,
    waited: Duration,
    deferred_errors: Vec<Error>,
    // Deferred errors beyond `MAX_DEFERRED_ERRORS`, counted instead of kept.
    deferred_dropped: u64,
}

/// Deferred errors a budget keeps until they are taken; later ones are only counted.
pub const MAX_DEFERRED_ERRORS: usize = 64;

impl BudgetState {
    // `in_use` never exceeds the capacity, so the subtraction cannot wrap, and the
    // comparison cannot overflow however large `bytes` is.
    fn has_room(&self, capacity: u64, bytes: u64) -> bool {
        bytes <= capacity - self.in_use
    }
}

/// A snapshot of a budget's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BudgetStats {
    /// Capacity in bytes.
    pub capacity: u64,
    /// Bytes held by live permits now.
    pub in_use: u64,
    /// Most bytes ever held at once.
    pub high_water: u64,
    /// Total time callers spent waiting for memory.
    #[serde(serialize_with = "crate::report::serialize_duration")]
    pub waited: Duration,
}

impl DeviceBudget {
    /// A budget of `capacity` bytes named after its device.
    pub fn new(name: impl Into<String>, capacity: u64) -> Arc<Self> {
        Arc::new(DeviceBudget {
            name: name.into(),
            capacity,
            state: Mutex::new(BudgetState::default()),
            freed: Condvar::new(),
        })
    }

    /// The budget's name (its device).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BudgetState> {
        // A worker that panicked while holding the lock left consistent counters
        // (every update is a single assignment), so the poison is safe to ignore.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes held now.
    pub fn in_use(&self) -> u64 {
        self.lock().in_use
    }

    /// Counters snapshot.
    pub fn stats(&self) -> BudgetStats {
        let s = self.lock();
        BudgetStats {
            capacity: self.capacity,
            in_use: s.in_use,
            high_water: s.high_water,
            waited: s.waited,
        }
    }

    /// Waits until `bytes` are free and reserves them. Fails at once with
    /// [`Error::OutOfBudget`] if `bytes` exceeds the capacity.
    pub fn acquire(self: &Arc<Self>, bytes: u64) -> Result<BudgetPermit> {
        self.check_fits(bytes)?;
        let start = Instant::now();
        let mut s = self.lock();
        let mut waited = false;
        while !s.has_room(self.capacity, bytes) {
            waited = true;
            s = self.freed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        if waited {
            s.waited += start.elapsed();
        }
        s.in_use += bytes;
        s.high_water = s.high_water.max(s.in_use);
        Ok(BudgetPermit {
            budget: Arc::clone(self),
            bytes,
        })
    }

    /// Reserves `bytes` if they are free now, else returns `None`.
    pub fn try_acquire(self: &Arc<Self>, bytes: u64) -> Result<Option<BudgetPermit>> {
        self.check_fits(bytes)?;
        let mut s = self.lock();
        if !s.has_room(self.capacity, bytes) {
            return Ok(None);
        }
        s.in_use += bytes;
        s.high_water = s.high_water.max(s.in_use);
        Ok(Some(BudgetPermit {
            budget: Arc::clone(self),
            bytes,
        }))
    }

    /// Fails with [`Error::OutOfBudget`] if `bytes` can never fit.
    pub fn check_fits(&self, bytes: u64) -> Result<()> {
        if bytes > self.capacity {
            return Err(Error::OutOfBudget {
                budget: self.name.clone(),
                needed: bytes,
                capacity: self.capacity,
            });
        }
        Ok(())
    }

    /// Records an error that happened where it could not be returned (in `Drop`).
    /// At most [`MAX_DEFERRED_ERRORS`] are kept until taken; later ones are counted.
    pub fn record_deferred_error(&self, error: Error) {
        let mut s = self.lock();
        if s.deferred_errors.len() < MAX_DEFERRED_ERRORS {
            s.deferred_errors.push(error);
        } else {
            s.deferred_dropped += 1;
        }
    }

    /// Takes the errors recorded by [`DeviceBudget::record_deferred_error`] (with one
    /// more saying how many were not kept, if any were dropped).
    pub fn take_deferred_errors(&self) -> Vec<Error> {
        let mut s = self.lock();
        let mut errors = std::mem::take(&mut s.deferred_errors);
        let dropped = std::mem::take(&mut s.deferred_dropped);
        if dropped > 0 {
            errors.push(Error::device(
                self.name.clone(),
                format!("{dropped} more errors while releasing were not kept"),
            ));
        }
        errors
    }

    fn give_back(&self, bytes: u64) {
        let mut s = self.lock();
        s.in_use -= bytes;
        drop(s);
        self.freed.notify_all();
    }
}

/// Bytes reserved from a [`DeviceBudget`]; returned when dropped.
#[derive(Debug)]
pub struct BudgetPermit {
    budget: Arc<DeviceBudget>,
    bytes: u64,
}

impl BudgetPermit {
    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The budget it came from.
    pub fn budget(&self) -> &Arc<DeviceBudget> {
        &self.budget
    }

    /// Moves `bytes` of this permit into a new one (both return their bytes when
    /// dropped): one acquisition pays for several leases, so nothing holds part of
    /// its memory while waiting for the rest.
    pub fn split_off(&mut self, bytes: u64) -> Result<BudgetPermit> {
        if bytes > self.bytes {
            return Err(Error::InvalidInput(format!(
                "cannot split {bytes} bytes off a permit of {}",
                self.bytes
            )));
        }
        self.bytes -= bytes;
        Ok(BudgetPermit {
            budget: Arc::clone(&self.budget),
            bytes,
        })
    }
}

impl Drop for BudgetPermit {
    fn drop(&mut self) {
        self.budget.give_back(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_request_beside_a_huge_permit_waits_instead_of_wrapping() {
        let budget = DeviceBudget::new("huge", u64::MAX);
        let held = budget.acquire(u64::MAX - 1).unwrap();
        // `in_use + bytes` would overflow: the request must not fit (nor panic).
        assert!(budget.try_acquire(10).unwrap().is_none());
        assert!(budget.try_acquire(1).unwrap().is_some());
        drop(held);
        assert_eq!(budget.in_use(), 0);
        assert!(budget.try_acquire(u64::MAX).unwrap().is_some());
    }

    #[test]
    fn deferred_errors_are_bounded_and_the_rest_counted() {
        let budget = DeviceBudget::new("errors", 1);
        for i in 0..MAX_DEFERRED_ERRORS + 5 {
            budget.record_deferred_error(Error::device("x", i));
        }
        let errors = budget.take_deferred_errors();
        assert_eq!(errors.len(), MAX_DEFERRED_ERRORS + 1);
        let last = errors[MAX_DEFERRED_ERRORS].to_string();
        assert!(last.contains("5 more errors"), "{last}");
        assert!(budget.take_deferred_errors().is_empty());
    }
}
