//! A bounded queue of jobs in front of one engine: the engine pulls from it as a
//! blocking iterator (so one `Prover::run` serves for as long as the key is
//! resident), while the service can still cancel a queued job or close the queue and
//! take back everything not yet started.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crucible_core::engine::Job;

/// The answer to [`JobFeed::try_push`].
pub enum Push<C> {
    /// Queued.
    Queued,
    /// Full: the job is handed back, with the jobs queued or in flight.
    Busy {
        /// The job, not queued.
        job: Job<C>,
        /// Jobs queued or in flight.
        depth: usize,
    },
    /// Closed: the job is handed back.
    Closed(Job<C>),
}

struct State<C> {
    queue: VecDeque<Job<C>>,
    // Taken by the engine and not yet reported finished.
    in_flight: usize,
    closed: bool,
}

/// Jobs waiting for one engine.
pub struct JobFeed<C> {
    state: Mutex<State<C>>,
    ready: Condvar,
    capacity: usize,
}

impl<C> JobFeed<C> {
    /// A feed holding at most `capacity` jobs queued or in flight.
    pub fn new(capacity: usize) -> Arc<Self> {
        Arc::new(JobFeed {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                in_flight: 0,
                closed: false,
            }),
            ready: Condvar::new(),
            capacity,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State<C>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The most jobs it holds at once.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Queues `job` unless the feed is full or closed.
    pub fn try_push(&self, job: Job<C>) -> Push<C> {
        let mut state = self.lock();
        if state.closed {
            return Push::Closed(job);
        }
        let depth = state.queue.len() + state.in_flight;
        if depth >= self.capacity {
            return Push::Busy { job, depth };
        }
        state.queue.push_back(job);
        self.ready.notify_one();
        Push::Queued
    }

    /// Removes a queued job (not one the engine has taken).
    pub fn remove(&self, id: u64) -> Option<Job<C>> {
        let mut state = self.lock();
        let at = state.queue.iter().position(|j| j.id == id)?;
        state.queue.remove(at)
    }

    /// Says a job the engine took has finished.
    pub fn finished(&self) {
        let mut state = self.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
    }

    /// Jobs queued, and jobs taken by the engine and not finished.
    pub fn depth(&self) -> (usize, usize) {
        let state = self.lock();
        (state.queue.len(), state.in_flight)
    }

    /// Closes the feed: nothing more is queued, the engine's iterator ends once it
    /// has nothing left, and the jobs not yet taken are returned.
    pub fn close(&self) -> Vec<Job<C>> {
        let mut state = self.lock();
        state.closed = true;
        self.ready.notify_all();
        state.queue.drain(..).collect()
    }

    /// The engine's side: blocks for the next job, calling `on_take` with its id as
    /// it is taken; ends when the feed is closed.
    pub fn jobs<F: FnMut(u64)>(self: &Arc<Self>, on_take: F) -> Jobs<C, F> {
        Jobs {
            feed: Arc::clone(self),
            on_take,
        }
    }
}

/// The iterator [`JobFeed::jobs`] returns.
pub struct Jobs<C, F> {
    feed: Arc<JobFeed<C>>,
    on_take: F,
}

impl<C, F: FnMut(u64)> Iterator for Jobs<C, F> {
    type Item = Job<C>;

    fn next(&mut self) -> Option<Job<C>> {
        let mut state = self.feed.lock();
        loop {
            if let Some(job) = state.queue.pop_front() {
                state.in_flight += 1;
                drop(state);
                (self.on_take)(job.id);
                return Some(job);
            }
            if state.closed {
                return None;
            }
            state = self
                .feed
                .ready
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crucible_core::Fr;

    fn job(id: u64) -> Job<u64> {
        Job {
            id,
            circuit: id,
            r: Fr::from(1u64),
            s: Fr::from(2u64),
        }
    }

    #[test]
    fn bounds_queued_plus_in_flight_and_hands_back_on_close() {
        let feed = JobFeed::new(3);
        for id in 0..3 {
            assert!(matches!(feed.try_push(job(id)), Push::Queued));
        }
        assert!(matches!(feed.try_push(job(9)), Push::Busy { depth: 3, .. }));
        let mut taken = Vec::new();
        let mut jobs = feed.jobs(|id| taken.push(id));
        assert_eq!(jobs.next().map(|j| j.id), Some(0));
        drop(jobs);
        assert_eq!(taken, vec![0]);
        // Still full: one in flight, two queued.
        assert_eq!(feed.depth(), (2, 1));
        assert!(matches!(feed.try_push(job(9)), Push::Busy { depth: 3, .. }));
        feed.finished();
        assert!(matches!(feed.try_push(job(3)), Push::Queued));
        assert_eq!(feed.remove(2).map(|j| j.id), Some(2));
        assert!(feed.remove(2).is_none());
        let back: Vec<u64> = feed.close().iter().map(|j| j.id).collect();
        assert_eq!(back, vec![1, 3]);
        assert!(matches!(feed.try_push(job(4)), Push::Closed(_)));
        assert!(feed.jobs(|_| ()).next().is_none());
    }

    #[test]
    fn the_engine_side_waits_for_jobs_and_ends_on_close() {
        let feed = JobFeed::new(8);
        let engine = {
            let feed = Arc::clone(&feed);
            std::thread::spawn(move || feed.jobs(|_| ()).map(|j| j.id).collect::<Vec<_>>())
        };
        for id in 0..5 {
            while !matches!(feed.try_push(job(id)), Push::Queued) {
                std::thread::yield_now();
            }
        }
        // Let the engine drain before closing, so close() hands nothing back.
        while feed.depth().0 > 0 {
            std::thread::yield_now();
        }
        assert!(feed.close().is_empty());
        assert_eq!(engine.join().unwrap(), vec![0, 1, 2, 3, 4]);
    }
}
