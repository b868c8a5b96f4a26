//! `Lease`: the one type through which every device byte is allocated.
//!
//! A lease holds a budget permit for its plan's bytes and owns every buffer allocated
//! under it. Release frees every buffer, waits for the device to finish with them,
//! and only then returns the permit; `Drop` does the same on error paths.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::{BudgetPermit, Error, MemoryPlan, PlanKey, Result};

/// A backend's device memory object (a CUDA slice, a wgpu buffer, a host `Vec`).
/// Dropping it frees the memory.
pub trait DeviceAllocation: Any + Send + Sync {}
impl<T: Any + Send + Sync> DeviceAllocation for T {}

/// Waits for a device's queued work: called after a lease frees its buffers and
/// before the permit returns, so freed memory is really free when others get it.
pub trait DeviceSync: Send + Sync {
    /// Blocks until every operation queued on the device has finished.
    fn synchronize(&self) -> Result<()>;
}

/// A [`DeviceSync`] for backends whose operations finish before they return.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostSync;

impl DeviceSync for HostSync {
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}

/// Names one buffer of one lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferId {
    lease: u64,
    slot: u32,
}

struct Slot {
    item: usize,
    bytes: u64,
    memory: Box<dyn DeviceAllocation>,
}

/// What a lease used, reported when it is released.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LeaseUsage {
    /// Bytes the plan reserved.
    pub planned: u64,
    /// Most bytes allocated at once.
    pub peak: u64,
}

static NEXT_LEASE: AtomicU64 = AtomicU64::new(1);

/// Device memory reserved for one plan; every allocation goes through it.
pub struct Lease {
    id: u64,
    plan: MemoryPlan,
    item_use: Vec<u64>,
    slots: Vec<Option<Slot>>,
    allocated: u64,
    peak: u64,
    sync: Arc<dyn DeviceSync>,
    // Returned to the budget last, in `finish`, after buffers are freed and synced.
    permit: Option<BudgetPermit>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("id", &self.id)
            .field("plan", &self.plan.label)
            .field("allocated", &self.allocated)
            .field("peak", &self.peak)
            .finish()
    }
}

impl Lease {
    /// A lease for `plan`, holding `permit` (which must cover the plan's bytes).
    pub fn new(plan: MemoryPlan, permit: BudgetPermit, sync: Arc<dyn DeviceSync>) -> Result<Lease> {
        if permit.bytes() < plan.total_bytes() {
            return Err(Error::InvalidInput(format!(
                "permit of {} bytes does not cover plan `{}` of {} bytes",
                permit.bytes(),
                plan.label,
                plan.total_bytes()
            )));
        }
        Ok(Lease {
            id: NEXT_LEASE.fetch_add(1, Ordering::Relaxed),
            item_use: vec![0; plan.items().len()],
            plan,
            slots: Vec::new(),
            allocated: 0,
            peak: 0,
            sync,
            permit: Some(permit),
        })
    }

    /// The plan this lease reserves.
    pub fn plan(&self) -> &MemoryPlan {
        &self.plan
    }

    /// Bytes allocated now.
    pub fn allocated(&self) -> u64 {
        self.allocated
    }

    /// Usage so far.
    pub fn usage(&self) -> LeaseUsage {
        LeaseUsage {
            planned: self.plan.total_bytes(),
            peak: self.peak,
        }
    }

    /// Allocates `bytes` from plan item `key`; `make` performs the real allocation
    /// and is only called once the plan has room. Beyond the plan: [`Error::LeaseExceeded`].
    pub fn allocate<T: DeviceAllocation>(
        &mut self,
        key: PlanKey,
        bytes: u64,
        make: impl FnOnce() -> Result<T>,
    ) -> Result<BufferId> {
        let Some(index) = self.plan.find(key) else {
            return Err(Error::LeaseExceeded {
                buffer: key.to_string(),
                requested: bytes,
                remaining: 0,
            });
        };
        let remaining = self.plan.items()[index].bytes - self.item_use[index];
        if bytes > remaining {
            return Err(Error::LeaseExceeded {
                buffer: key.to_string(),
                requested: bytes,
                remaining,
            });
        }
        let memory = make()?;
        self.item_use[index] += bytes;
        self.allocated += bytes;
        self.peak = self.peak.max(self.allocated);
        let slot = Slot {
            item: index,
            bytes,
            memory: Box::new(memory),
        };
        // Slots are never reused, so a handle to a freed buffer cannot name a newer
        // buffer of another size.
        let slot_index = self.slots.len();
        self.slots.push(Some(slot));
        Ok(BufferId {
            lease: self.id,
            slot: slot_index as u32,
        })
    }

    /// Frees one buffer now; its bytes return to the plan item for reuse.
    pub fn free(&mut self, id: BufferId) -> Result<()> {
        let index = self.slot_index(id)?;
        let slot = self
            .slots
            .get_mut(index)
            .and_then(Option::take)
            .ok_or_else(|| Error::InvalidInput("buffer already freed or unknown".into()))?;
        self.item_use[slot.item] -= slot.bytes;
        self.allocated -= slot.bytes;
        Ok(())
    }

    /// The live buffer allocated from plan item `key`, if there is one (the first, if
    /// several are): lets a backend keep a table in the lease between operations and
    /// find it again by its item.
    pub fn buffer_of(&self, key: PlanKey) -> Option<BufferId> {
        let index = self.plan.find(key)?;
        let slot = self
            .slots
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.item == index))?;
        Some(BufferId {
            lease: self.id,
            slot: slot as u32,
        })
    }

    fn slot_index(&self, id: BufferId) -> Result<usize> {
        if id.lease != self.id {
            return Err(Error::InvalidInput(format!(
                "buffer belongs to lease {} but was used with lease {}",
                id.lease, self.id
            )));
        }
        Ok(id.slot as usize)
    }

    fn slot(&self, id: BufferId) -> Result<&Slot> {
        let index = self.slot_index(id)?;
        self.slots
            .get(index)
            .and_then(Option::as_ref)
            .ok_or_else(|| Error::InvalidInput("buffer was freed".into()))
    }

    /// Bytes allocated for the live buffer `id`.
    pub fn buffer_bytes(&self, id: BufferId) -> Result<u64> {
        Ok(self.slot(id)?.bytes)
    }

    /// The backend object behind `id`.
    pub fn get<T: DeviceAllocation>(&self, id: BufferId) -> Result<&T> {
        let memory: &dyn Any = &*self.slot(id)?.memory;
        memory
            .downcast_ref::<T>()
            .ok_or_else(|| Error::InvalidInput("buffer belongs to another backend".into()))
    }

    /// The backend object behind `id`, mutably.
    pub fn get_mut<T: DeviceAllocation>(&mut self, id: BufferId) -> Result<&mut T> {
        let [b] = self.get_disjoint_mut::<T, 1>([id])?;
        Ok(b)
    }

    /// Several distinct buffers at once, mutably.
    pub fn get_disjoint_mut<T: DeviceAllocation, const N: usize>(
        &mut self,
        ids: [BufferId; N],
    ) -> Result<[&mut T; N]> {
        let mut indices = [0usize; N];
        for (i, id) in ids.iter().enumerate() {
            indices[i] = self.slot_index(*id)?;
        }
        let slots = self
            .slots
            .get_disjoint_mut(indices)
            .map_err(|e| Error::InvalidInput(format!("buffers not distinct or unknown: {e}")))?;
        let mut out = Vec::with_capacity(N);
        for slot in slots {
            let slot = slot
                .as_mut()
                .ok_or_else(|| Error::InvalidInput("buffer was freed".into()))?;
            let memory: &mut dyn Any = &mut *slot.memory;
            out.push(
                memory.downcast_mut::<T>().ok_or_else(|| {
                    Error::InvalidInput("buffer belongs to another backend".into())
                })?,
            );
        }
        Ok(out
            .try_into()
            .unwrap_or_else(|_| unreachable!("exactly N buffers were collected")))
    }

    /// One buffer mutably and another one, of any type, shared: e.g. a scratch buffer
    /// written from an input buffer of the same lease.
    pub fn get_mut_and_ref<A: DeviceAllocation, B: DeviceAllocation>(
        &mut self,
        write: BufferId,
        read: BufferId,
    ) -> Result<(&mut A, &B)> {
        let indices = [self.slot_index(write)?, self.slot_index(read)?];
        let [w, r] = self
            .slots
            .get_disjoint_mut(indices)
            .map_err(|e| Error::InvalidInput(format!("buffers not distinct or unknown: {e}")))?;
        let freed = || Error::InvalidInput("buffer was freed".into());
        let other = || Error::InvalidInput("buffer belongs to another backend".into());
        let w: &mut dyn Any = &mut *w.as_mut().ok_or_else(freed)?.memory;
        let r: &dyn Any = &*r.as_ref().ok_or_else(freed)?.memory;
        Ok((
            w.downcast_mut::<A>().ok_or_else(other)?,
            r.downcast_ref::<B>().ok_or_else(other)?,
        ))
    }

    /// Frees every buffer, waits for the device, then returns the permit.
    pub fn release(mut self) -> Result<LeaseUsage> {
        let usage = self.usage();
        self.finish()?;
        Ok(usage)
    }

    // Order matters and is tested: buffers, then device sync, then the permit. A
    // panic in a backend's free or sync (foreign code) becomes an error here, so that
    // the permit still returns and `Drop` never panics during an unwind.
    fn finish(&mut self) -> Result<()> {
        let device = self
            .permit
            .as_ref()
            .map_or_else(|| "device".to_string(), |p| p.budget().name().to_string());
        let caught = |what: &str, panic: Box<dyn Any + Send>| {
            Error::device(
                device.clone(),
                format!("panicked while {what}: {}", crate::panic_message(&*panic)),
            )
        };
        let slots = std::mem::take(&mut self.slots);
        let freed = catch_unwind(AssertUnwindSafe(|| drop(slots)))
            .map_err(|panic| caught("freeing buffers", panic));
        self.item_use.iter_mut().for_each(|u| *u = 0);
        self.allocated = 0;
        let synced = catch_unwind(AssertUnwindSafe(|| self.sync.synchronize()))
            .unwrap_or_else(|panic| Err(caught("waiting for the device", panic)));
        drop(self.permit.take());
        freed.and(synced)
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if self.permit.is_none() {
            return;
        }
        let budget = self.permit.as_ref().map(|p| Arc::clone(p.budget()));
        if let (Err(e), Some(budget)) = (self.finish(), budget) {
            budget.record_deferred_error(e);
        }
    }
}
