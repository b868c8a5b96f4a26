//! The server's jobs: each one's state and, once it has ended, its result, which
//! `Await` callers wait on. Ended jobs are kept for a bounded number of later jobs,
//! so the table never grows without bound.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::watch;

use crate::proto::{JobResult, JobState};

/// Whether a job has ended (done, failed or cancelled).
pub fn has_ended(state: JobState) -> bool {
    matches!(
        state,
        JobState::Done | JobState::Failed | JobState::Cancelled
    )
}

struct Entry {
    key_id: String,
    /// The identity that submitted it: the only one that may see it.
    owner: String,
    /// Witness bytes held until the job ends.
    witness_bytes: u64,
    submitted: Instant,
    result: watch::Sender<JobResult>,
}

struct Inner {
    jobs: HashMap<u64, Entry>,
    ended: VecDeque<u64>,
    /// Witness bytes of the jobs not ended.
    witness_bytes: u64,
}

/// Every job the server knows.
pub struct JobTable {
    inner: Mutex<Inner>,
    retain: usize,
    max_witness_bytes: u64,
}

impl JobTable {
    /// A table keeping the results of the last `retain` ended jobs, whose unended
    /// jobs hold at most `max_witness_bytes` of witnesses together.
    pub fn new(retain: usize, max_witness_bytes: u64) -> Self {
        JobTable {
            inner: Mutex::new(Inner {
                jobs: HashMap::new(),
                ended: VecDeque::new(),
                witness_bytes: 0,
            }),
            retain: retain.max(1),
            max_witness_bytes,
        }
    }

    /// Witness bytes the jobs not ended hold.
    pub fn witness_bytes(&self) -> u64 {
        self.lock().witness_bytes
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a new queued job of key `key_id` holding `witness_bytes`; refused
    /// (with the bytes already held) when they would pass the table's limit.
    pub fn insert(
        &self,
        id: u64,
        key_id: &str,
        owner: &str,
        witness_bytes: u64,
    ) -> Result<(), u64> {
        let mut inner = self.lock();
        let held = inner.witness_bytes;
        if held.saturating_add(witness_bytes) > self.max_witness_bytes {
            return Err(held);
        }
        inner.witness_bytes = held + witness_bytes;
        let (result, _) = watch::channel(JobResult {
            job_id: id,
            state: JobState::Queued.into(),
            ..JobResult::default()
        });
        inner.jobs.insert(
            id,
            Entry {
                key_id: key_id.to_string(),
                owner: owner.to_string(),
                witness_bytes,
                submitted: Instant::now(),
                result,
            },
        );
        Ok(())
    }

    /// Forgets a job that was never queued.
    pub fn remove(&self, id: u64) {
        let mut inner = self.lock();
        if let Some(entry) = inner.jobs.remove(&id) {
            if !has_ended(entry.result.borrow().state()) {
                inner.witness_bytes -= entry.witness_bytes;
            }
        }
    }

    /// Marks a queued job as proving.
    pub fn set_proving(&self, id: u64) {
        if let Some(entry) = self.lock().jobs.get(&id) {
            entry.result.send_modify(|r| {
                if r.state() == JobState::Queued {
                    r.set_state(JobState::Proving);
                }
            });
        }
    }

    /// Ends a job with `result` (its id and seconds since submission filled in);
    /// returns those seconds, or `None` if the job is unknown or had already ended.
    pub fn finish(&self, id: u64, mut result: JobResult) -> Option<f64> {
        let mut inner = self.lock();
        let entry = inner.jobs.get(&id)?;
        if has_ended(entry.result.borrow().state()) {
            return None;
        }
        let seconds = entry.submitted.elapsed().as_secs_f64();
        let bytes = entry.witness_bytes;
        result.job_id = id;
        result.seconds = seconds;
        entry.result.send_replace(result);
        inner.witness_bytes -= bytes;
        inner.ended.push_back(id);
        while inner.ended.len() > self.retain {
            if let Some(old) = inner.ended.pop_front() {
                inner.jobs.remove(&old);
            }
        }
        Some(seconds)
    }

    /// Whether a job with this id is known.
    pub fn contains(&self, id: u64) -> bool {
        self.lock().jobs.contains_key(&id)
    }

    /// The job's key and its current state and result, if `owner` submitted it.
    pub fn get(&self, id: u64, owner: &str) -> Option<(String, JobResult)> {
        self.lock()
            .jobs
            .get(&id)
            .filter(|e| e.owner == owner)
            .map(|e| (e.key_id.clone(), e.result.borrow().clone()))
    }

    /// A receiver that sees the job's result change, if `owner` submitted it.
    pub fn subscribe(&self, id: u64, owner: &str) -> Option<watch::Receiver<JobResult>> {
        self.lock()
            .jobs
            .get(&id)
            .filter(|e| e.owner == owner)
            .map(|e| e.result.subscribe())
    }

    /// Jobs of key `key_id` that have not ended.
    pub fn unended_of(&self, key_id: &str) -> Vec<u64> {
        self.lock()
            .jobs
            .iter()
            .filter(|(_, e)| e.key_id == key_id && !has_ended(e.result.borrow().state()))
            .map(|(id, _)| *id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(state: JobState) -> JobResult {
        JobResult {
            state: state.into(),
            ..JobResult::default()
        }
    }

    #[test]
    fn a_job_ends_once_and_old_results_are_dropped() {
        let table = JobTable::new(2, 100);
        for id in 1..=3 {
            table.insert(id, "k", "alice", 30).unwrap();
        }
        // 90 of 100 bytes held: a fourth job of 30 is refused, one of 10 fits.
        assert_eq!(table.insert(4, "k", "alice", 30), Err(90));
        table.insert(5, "k", "alice", 10).unwrap();
        table.remove(5);
        assert_eq!(table.witness_bytes(), 90);
        table.set_proving(1);
        assert_eq!(table.get(1, "alice").unwrap().1.state(), JobState::Proving);
        assert!(table.get(1, "bob").is_none());
        assert_eq!(table.unended_of("k").len(), 3);
        assert!(table.finish(1, ended(JobState::Done)).is_some());
        assert!(table.finish(1, ended(JobState::Failed)).is_none());
        assert_eq!(table.witness_bytes(), 60);
        assert_eq!(table.get(1, "alice").unwrap().1.state(), JobState::Done);
        table.set_proving(1);
        assert_eq!(table.get(1, "alice").unwrap().1.state(), JobState::Done);
        table.finish(2, ended(JobState::Cancelled));
        table.finish(3, ended(JobState::Failed));
        // Only the last two ended jobs are kept.
        assert!(table.get(1, "alice").is_none());
        assert_eq!(table.get(3, "alice").unwrap().1.job_id, 3);
        assert!(table.unended_of("k").is_empty());
        assert_eq!(table.witness_bytes(), 0);
    }

    #[tokio::test]
    async fn awaiting_sees_the_end() {
        let table = std::sync::Arc::new(JobTable::new(8, 1 << 20));
        table.insert(7, "k", "alice", 8).unwrap();
        assert!(table.subscribe(7, "bob").is_none());
        let mut rx = table.subscribe(7, "alice").unwrap();
        let t = std::sync::Arc::clone(&table);
        std::thread::spawn(move || {
            t.set_proving(7);
            t.finish(7, ended(JobState::Done));
        });
        let result = rx.wait_for(|r| has_ended(r.state())).await.unwrap().clone();
        assert_eq!(result.state(), JobState::Done);
        assert_eq!(result.job_id, 7);
    }
}
