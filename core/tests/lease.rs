//! Lease invariants that need no backend: refusals, and the release order
//! (buffers freed, then device synced, then the permit returned).

use std::sync::{Arc, Mutex};

use crucible_core::{DeviceBudget, DeviceSync, Error, Lease, MemoryPlan, PlanKey, Result};

/// Records each event with the budget's bytes in use at that moment.
#[derive(Default)]
struct Log(Mutex<Vec<(&'static str, u64)>>);

struct TrackedBuffer {
    log: Arc<Log>,
    budget: Arc<DeviceBudget>,
}

impl Drop for TrackedBuffer {
    fn drop(&mut self) {
        self.log
            .0
            .lock()
            .unwrap()
            .push(("free", self.budget.in_use()));
    }
}

struct TrackedSync {
    log: Arc<Log>,
    budget: Arc<DeviceBudget>,
    fail: bool,
}

impl DeviceSync for TrackedSync {
    fn synchronize(&self) -> Result<()> {
        self.log
            .0
            .lock()
            .unwrap()
            .push(("sync", self.budget.in_use()));
        if self.fail {
            Err(Error::device("test", "sync failed"))
        } else {
            Ok(())
        }
    }
}

fn lease_with_two_buffers(fail_sync: bool) -> (Lease, Arc<Log>, Arc<DeviceBudget>) {
    let budget = DeviceBudget::new("test", 1000);
    let log = Arc::new(Log::default());
    let mut plan = MemoryPlan::new("two buffers");
    plan.item(PlanKey::new("test", "a"), 300)
        .item(PlanKey::new("test", "b"), 200);
    let permit = budget.acquire(plan.total_bytes()).unwrap();
    let sync = Arc::new(TrackedSync {
        log: log.clone(),
        budget: budget.clone(),
        fail: fail_sync,
    });
    let mut lease = Lease::new(plan, permit, sync).unwrap();
    for (item, bytes) in [
        (PlanKey::new("test", "a"), 300),
        (PlanKey::new("test", "b"), 200),
    ] {
        let (log, budget) = (log.clone(), budget.clone());
        lease
            .allocate(item, bytes, move || Ok(TrackedBuffer { log, budget }))
            .unwrap();
    }
    (lease, log, budget)
}

fn assert_order(log: &Log, budget: &DeviceBudget) {
    let events = log.0.lock().unwrap().clone();
    let names: Vec<_> = events.iter().map(|(e, _)| *e).collect();
    assert_eq!(names, ["free", "free", "sync"], "events: {events:?}");
    // While buffers were freed and the device synced, the permit was still held.
    assert!(
        events.iter().all(|(_, in_use)| *in_use == 500),
        "events: {events:?}"
    );
    assert_eq!(budget.in_use(), 0, "permit returned after the sync");
}

#[test]
fn release_frees_buffers_then_syncs_then_returns_the_permit() {
    let (lease, log, budget) = lease_with_two_buffers(false);
    let usage = lease.release().unwrap();
    assert_eq!((usage.planned, usage.peak), (500, 500));
    assert_order(&log, &budget);
}

#[test]
fn drop_keeps_the_same_order_and_records_sync_errors() {
    let (lease, log, budget) = lease_with_two_buffers(true);
    drop(lease);
    assert_order(&log, &budget);
    let deferred = budget.take_deferred_errors();
    assert_eq!(
        deferred.len(),
        1,
        "the sync error of Drop is recorded: {deferred:?}"
    );
}

#[test]
fn plan_larger_than_budget_fails_at_once_naming_both_sizes() {
    let budget = DeviceBudget::new("small", 1000);
    let err = budget.acquire(1001).unwrap_err();
    assert!(matches!(
        err,
        Error::OutOfBudget {
            needed: 1001,
            capacity: 1000,
            ..
        }
    ));
    let msg = err.to_string();
    assert!(msg.contains("1001") && msg.contains("1000"), "{msg}");
}

#[test]
fn allocation_beyond_the_plan_names_the_buffer() {
    let (mut lease, _, _) = lease_with_two_buffers(false);
    let err = lease
        .allocate(PlanKey::new("test", "a"), 1, || Ok(0u8))
        .unwrap_err();
    assert!(
        matches!(&err, Error::LeaseExceeded { buffer, requested: 1, remaining: 0 } if buffer == "test.a")
    );
    assert!(err.to_string().contains("`test.a`"), "{err}");
    let err = lease
        .allocate(PlanKey::new("test", "c"), 1, || Ok(0u8))
        .unwrap_err();
    assert!(matches!(&err, Error::LeaseExceeded { buffer, .. } if buffer == "test.c"));
}

#[test]
fn freed_buffer_bytes_are_reusable_and_a_failed_make_allocates_nothing() {
    let budget = DeviceBudget::new("reuse", 100);
    let mut plan = MemoryPlan::new("scratch");
    plan.item(PlanKey::new("test", "scratch"), 64);
    let permit = budget.acquire(64).unwrap();
    let mut lease = Lease::new(plan, permit, Arc::new(crucible_core::HostSync)).unwrap();
    let err = lease
        .allocate(PlanKey::new("test", "scratch"), 64, || -> Result<u8> {
            Err(Error::device("t", "oom"))
        })
        .unwrap_err();
    assert!(matches!(err, Error::Device { .. }));
    assert_eq!(lease.allocated(), 0);
    let a = lease
        .allocate(PlanKey::new("test", "scratch"), 64, || Ok(1u8))
        .unwrap();
    assert!(lease
        .allocate(PlanKey::new("test", "scratch"), 1, || Ok(2u8))
        .is_err());
    lease.free(a).unwrap();
    let b = lease
        .allocate(PlanKey::new("test", "scratch"), 64, || Ok(3u8))
        .unwrap();
    assert_eq!(*lease.get::<u8>(b).unwrap(), 3);
    assert!(
        lease.get::<u16>(b).is_err(),
        "wrong type is an error, not a panic"
    );
    lease.release().unwrap();
    assert_eq!(budget.in_use(), 0);
}

#[test]
fn waiting_acquire_resumes_when_memory_returns() {
    let budget = DeviceBudget::new("wait", 100);
    let first = budget.acquire(80).unwrap();
    assert!(budget.try_acquire(80).unwrap().is_none());
    let b2 = budget.clone();
    let waiter = std::thread::spawn(move || b2.acquire(80).map(|p| p.bytes()));
    std::thread::sleep(std::time::Duration::from_millis(50));
    drop(first);
    assert_eq!(waiter.join().unwrap().unwrap(), 80);
    let stats = budget.stats();
    assert_eq!((stats.in_use, stats.high_water), (0, 80));
    assert!(stats.waited > std::time::Duration::ZERO);
}

#[test]
fn buffer_of_finds_the_live_buffer_of_an_item() {
    let budget = DeviceBudget::new("find", 100);
    let mut plan = MemoryPlan::new("tables");
    plan.item(PlanKey::new("test", "table"), 32)
        .item(PlanKey::new("test", "other"), 32);
    let permit = budget.acquire(plan.total_bytes()).unwrap();
    let mut lease = Lease::new(plan, permit, Arc::new(crucible_core::HostSync)).unwrap();
    assert_eq!(
        lease.buffer_of(PlanKey::new("test", "table")),
        None,
        "nothing allocated yet"
    );
    assert_eq!(lease.buffer_of(PlanKey::new("test", "unplanned")), None);
    let other = lease
        .allocate(PlanKey::new("test", "other"), 32, || Ok(1u8))
        .unwrap();
    let table = lease
        .allocate(PlanKey::new("test", "table"), 32, || Ok(2u8))
        .unwrap();
    assert_eq!(lease.buffer_of(PlanKey::new("test", "table")), Some(table));
    assert_eq!(lease.buffer_of(PlanKey::new("test", "other")), Some(other));
    lease.free(table).unwrap();
    assert_eq!(
        lease.buffer_of(PlanKey::new("test", "table")),
        None,
        "a freed buffer is not found"
    );
    // A new buffer of the item may take another slot; it is the one found.
    lease.free(other).unwrap();
    let again = lease
        .allocate(PlanKey::new("test", "table"), 32, || Ok(3u8))
        .unwrap();
    assert_eq!(lease.buffer_of(PlanKey::new("test", "table")), Some(again));
    assert_eq!(*lease.get::<u8>(again).unwrap(), 3);
    lease.release().unwrap();
}

/// A device whose wait panics (foreign driver code can).
struct PanickingSync;

impl DeviceSync for PanickingSync {
    fn synchronize(&self) -> Result<()> {
        panic!("driver panicked in sync")
    }
}

fn lease_whose_sync_panics(budget: &Arc<DeviceBudget>) -> Lease {
    let mut plan = MemoryPlan::new("panicking sync");
    plan.item(PlanKey::new("test", "a"), 100);
    let permit = budget.acquire(100).unwrap();
    let mut lease = Lease::new(plan, permit, Arc::new(PanickingSync)).unwrap();
    lease
        .allocate(PlanKey::new("test", "a"), 100, || Ok(vec![0u8; 100]))
        .unwrap();
    lease
}

#[test]
fn a_panic_in_the_device_sync_is_an_error_and_the_permit_still_returns() {
    let budget = DeviceBudget::new("sync-panics", 1000);
    let released = lease_whose_sync_panics(&budget).release();
    let e = released.expect_err("a panicked sync is an error");
    assert!(
        matches!(&e, Error::Device { backend, message } if backend == "sync-panics" && message.contains("driver panicked in sync")),
        "{e}"
    );
    assert_eq!(budget.in_use(), 0, "the permit returned");
    // Dropped instead of released (an error path): recorded, never a panic in Drop.
    drop(lease_whose_sync_panics(&budget));
    assert_eq!(budget.in_use(), 0);
    let deferred = budget.take_deferred_errors();
    assert_eq!(deferred.len(), 1, "{deferred:?}");
    assert!(deferred[0].to_string().contains("panicked while waiting"));
}
