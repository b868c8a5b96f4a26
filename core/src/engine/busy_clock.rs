//! How long a device had work: the union of the intervals in which at least one proof
//! was in flight there, so two overlapping proofs count their overlap once.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Accumulates the time during which at least one [`BusyClock::enter`] guard is alive.
#[derive(Debug, Default)]
pub struct BusyClock {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    in_flight: usize,
    since: Option<Instant>,
    total: Duration,
}

/// Marks one piece of work in flight until dropped (also when its work panics).
pub struct InFlight<'a> {
    clock: &'a BusyClock,
}

impl BusyClock {
    /// Starts one piece of work; the clock runs while any is in flight.
    pub fn enter(&self) -> InFlight<'_> {
        let mut s = self.lock();
        if s.in_flight == 0 {
            s.since = Some(Instant::now());
        }
        s.in_flight += 1;
        InFlight { clock: self }
    }

    /// Busy time so far, the interval now open included.
    pub fn total(&self) -> Duration {
        let s = self.lock();
        s.total + s.since.map_or(Duration::ZERO, |t| t.elapsed())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent whatever panicked while it was held.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut s = self.clock.lock();
        s.in_flight -= 1;
        if s.in_flight == 0 {
            if let Some(t) = s.since.take() {
                s.total += t.elapsed();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_work_counts_once_and_idle_time_not_at_all() {
        let clock = BusyClock::default();
        assert_eq!(clock.total(), Duration::ZERO);
        {
            let _a = clock.enter();
            std::thread::sleep(Duration::from_millis(30));
            let _b = clock.enter();
            std::thread::sleep(Duration::from_millis(30));
        }
        let busy = clock.total();
        assert!(busy >= Duration::from_millis(60), "{busy:?}");
        assert!(
            busy < Duration::from_millis(60 * 2),
            "overlap counted twice: {busy:?}"
        );
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(clock.total(), busy, "idle time counted");
    }
}
