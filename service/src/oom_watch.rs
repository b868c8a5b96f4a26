//! Why a worker stopped heartbeating, where this machine can tell: a worker killed by
//! the kernel's out-of-memory killer sends no last word, and its lease only expires.
//! Each worker samples its cgroups' kill counter ([`cgroup_oom_kills`]) as it checks
//! leases; when a lease expires shortly after the counter rose, the lost attempt's
//! record names out-of-memory as the likely cause. Workers in one container or
//! systemd unit share the counter; a worker elsewhere sees no rise and adds nothing.

use std::time::{Duration, Instant};

use crate::cgroup_memory::cgroup_oom_kills;

/// The counter's rises this worker has seen.
#[derive(Debug, Default)]
pub struct OomWatch {
    last: Option<u64>,
    /// When a rise was seen, from what count to what.
    rises: Vec<(Instant, u64, u64)>,
}

impl OomWatch {
    /// Reads the counter now.
    pub fn sample(&mut self) {
        if let Some(count) = cgroup_oom_kills() {
            self.record(Instant::now(), count);
        }
    }

    fn record(&mut self, at: Instant, count: u64) {
        if let Some(last) = self.last.filter(|&last| count > last) {
            self.rises.push((at, last, count));
        }
        self.last = Some(count);
    }

    /// What a lease that expired after `lease_timeout` may be blamed on: the rises seen
    /// in the last `lease_timeout` and `slack` (the checks' interval); empty when none.
    pub fn note(&mut self, now: Instant, lease_timeout: Duration, slack: Duration) -> String {
        let window = lease_timeout + slack;
        self.rises
            .retain(|(at, _, _)| now.saturating_duration_since(*at) <= window);
        let (Some(first), Some(last)) = (self.rises.first(), self.rises.last()) else {
            return String::new();
        };
        format!(
            "; likely out of memory: the kernel's out-of-memory killer killed {} process(es) of this machine's cgroup in the {:.0} s before (oom_kill {} -> {})",
            last.2 - first.1,
            window.as_secs_f64(),
            first.1,
            last.2
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rise_within_the_lease_names_out_of_memory_and_an_old_one_does_not() {
        let start = Instant::now();
        let at = |s: u64| start + Duration::from_secs(s);
        let (lease, slack) = (Duration::from_secs(30), Duration::from_secs(5));
        let mut watch = OomWatch::default();
        watch.record(at(0), 2);
        watch.record(at(10), 2);
        assert_eq!(watch.note(at(10), lease, slack), "");
        watch.record(at(20), 3);
        watch.record(at(25), 4);
        let note = watch.note(at(50), lease, slack);
        assert!(note.contains("out of memory"), "{note}");
        assert!(
            note.contains("killed 2 process(es)") && note.contains("oom_kill 2 -> 4"),
            "{note}"
        );
        // Long after, the rises no longer explain an expiry.
        assert_eq!(watch.note(at(100), lease, slack), "");
    }
}
