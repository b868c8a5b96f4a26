//! Streamed bases copied straight from a page-locked host copy of a proving key
//! ([`ProverBackend::pin_g1_bases`](crucible_core::ProverBackend::pin_g1_bases)).
//!
//! A streamed query is restaged for every proof. Through the staging buffers
//! (`staging.rs`) every point is converted on the host, on every core, for every
//! proof, beside the synthesis that needs those cores, and copied twice. But
//! arkworks' points (BLS12-381's and BN254's) are their coordinates' Montgomery limbs
//! and nothing else, which are the device's words (checked on values, per type,
//! `driver::point_device_words`), so a
//! pinned key is copied as it lies, one DMA per chunk at the link's speed, with no
//! host work per point.
//!
//! The memory is registered `PORTABLE`, once per process for every context, and kept
//! until the last pin of it drops: every device and every worker streams from the one
//! pinned copy of the key. Registering tens of GiB takes seconds, so it runs on a
//! thread of its own: the first proofs' copies go through the staging buffers until it
//! is done, rather than wait for it. A build whose points do not lie as the device's
//! words pins nothing, and where the driver refuses (memory pinned by someone else,
//! more than the host will lock) every copy goes through the staging buffers.

use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use crucible_core::{BufferId, HostPin, Lease, Result};
use cudarc::driver::{CudaContext, CudaStream};

use crate::driver;
use crate::msm::BasesBuffer;
use crate::pinned;

/// What registers host memory with the driver and unregisters it (a context).
trait Registrar: Send + Sync {
    /// Page-locks `range` for every context's copies, or says why not.
    fn register(&self, range: &Range<usize>) -> std::result::Result<(), String>;
    /// Undoes a registration that succeeded.
    fn unregister(&self, range: &Range<usize>);
}

struct CudaRegistrar(Arc<CudaContext>);

impl Registrar for CudaRegistrar {
    fn register(&self, range: &Range<usize>) -> std::result::Result<(), String> {
        driver::host_register_portable(&self.0, range.start, range.len()).map_err(|e| e.to_string())
    }

    // No copy of the range is in flight (see `BasesPin`); a failure is kept by the
    // context for its next checked call.
    fn unregister(&self, range: &Range<usize>) {
        self.0
            .record_err(driver::host_unregister(&self.0, range.start));
    }
}

/// How far a range's registration has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Its thread is registering it: copies go through the staging buffers meanwhile.
    Pending,
    /// Registered: copies read it straight.
    Ready,
    /// The driver refused it: copies go through the staging buffers.
    Refused,
}

/// One range, the pins that hold it, and what registered it.
struct Entry {
    range: Range<usize>,
    holders: usize,
    state: State,
    registrar: Arc<dyn Registrar>,
}

/// The ranges pinned, or being pinned, for streamed bases.
struct Registry {
    entries: Mutex<Vec<Entry>>,
}

/// Every device's ranges: one registration serves every context of the process.
static PROCESS: Registry = Registry::new();

impl Registry {
    const fn new() -> Registry {
        Registry {
            entries: Mutex::new(Vec::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Holds `range` until the returned pin drops: the first holder starts its
    /// registration with `registrar` on a thread of its own, later ones share it.
    /// `None` where every holder of the same range left while it was registering:
    /// that registration may hold the pages of memory freed since, so it is undone
    /// once done and never shared.
    fn hold(&'static self, range: Range<usize>, registrar: Arc<dyn Registrar>) -> Option<BasesPin> {
        let mut all = self.lock();
        if let Some(e) = all.iter_mut().find(|e| e.range == range) {
            if e.holders == 0 {
                return None;
            }
            e.holders += 1;
            return Some(BasesPin {
                registry: self,
                range,
            });
        }
        all.push(Entry {
            range: range.clone(),
            holders: 1,
            state: State::Pending,
            registrar: Arc::clone(&registrar),
        });
        drop(all);
        let pinning = range.clone();
        std::thread::spawn(move || self.registered(pinning, registrar));
        Some(BasesPin {
            registry: self,
            range,
        })
    }

    /// `range`'s registration has ended: ready for copies, refused, or undone at once
    /// where every holder left meanwhile.
    fn registered(&self, range: Range<usize>, registrar: Arc<dyn Registrar>) {
        let result = registrar.register(&range);
        let mut all = self.lock();
        let i = all.iter().position(|e| e.range == range);
        match (result, i) {
            (Ok(()), Some(i)) if all[i].holders > 0 => all[i].state = State::Ready,
            (Ok(()), i) => {
                if let Some(i) = i {
                    all.swap_remove(i);
                }
                drop(all);
                registrar.unregister(&range);
            }
            (Err(why), i) => {
                tracing::warn!(
                    "{} bytes of streamed bases stay unpinned ({why}): they are converted on the host for every proof",
                    range.len()
                );
                match i {
                    Some(i) if all[i].holders > 0 => all[i].state = State::Refused,
                    Some(i) => {
                        all.swap_remove(i);
                    }
                    None => {}
                }
            }
        }
    }

    /// Whether all of `r` lies in one registered range.
    fn covers(&self, r: &Range<usize>) -> bool {
        !r.is_empty()
            && self.lock().iter().any(|e| {
                e.state == State::Ready && e.range.start <= r.start && r.end <= e.range.end
            })
    }

    /// One holder of `range` left: the last one unregisters it (a pending
    /// registration, its thread once done).
    fn release(&self, range: &Range<usize>) {
        let mut all = self.lock();
        let Some(i) = all.iter().position(|e| e.range == *range) else {
            return;
        };
        all[i].holders -= 1;
        if all[i].holders > 0 || all[i].state == State::Pending {
            return;
        }
        let entry = all.swap_remove(i);
        drop(all);
        if entry.state == State::Ready {
            entry.registrar.unregister(range);
        }
    }
}

/// The address range of `words`.
fn range_of(words: &[u32]) -> Range<usize> {
    let start = words.as_ptr() as usize;
    start..start + std::mem::size_of_val(words)
}

/// Pins the host memory of bases, given as their device words (`None` where this
/// build's points are not the device's words: `driver::point_device_words`), for every
/// context's copies, or joins the pin that another device (or another staging of the
/// same key) made of the same memory; copies read it straight once it is registered
/// (in the background). `None`: nothing pinned (no such words, none at all, or memory
/// at the address of an abandoned registration, `Registry::hold`).
pub fn pin(ctx: &Arc<CudaContext>, words: Option<&[u32]>) -> Result<Option<Box<dyn HostPin>>> {
    let Some(range) = words.map(range_of).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let registrar: Arc<dyn Registrar> = Arc::new(CudaRegistrar(ctx.clone()));
    Ok(PROCESS
        .hold(range, registrar)
        .map(|pin| Box::new(pin) as Box<dyn HostPin>))
}

/// Bytes of streamed bases registered and ready for straight copies, over every
/// device of the process.
pub fn ready_bytes() -> usize {
    PROCESS
        .lock()
        .iter()
        .filter(|e| e.state == State::Ready)
        .map(|e| e.range.len())
        .sum()
}

/// Whether all of `words` lies in one registered range.
fn covered(words: &[u32]) -> bool {
    PROCESS.covers(&range_of(words))
}

/// One holder of a range. A copy from the range has completed when the staging call
/// that made it returns, and a proof that stages from a key holds the key's pin, so
/// the last holder's drop finds no copy in flight.
struct BasesPin {
    registry: &'static Registry,
    range: Range<usize>,
}

impl HostPin for BasesPin {}

impl Drop for BasesPin {
    fn drop(&mut self) {
        self.registry.release(&self.range);
    }
}

/// Copies bases, given as their device words, to the front of bases buffer `id` in one
/// copy on `copy`, straight from pinned memory (`pinned::upload`). Returns false,
/// having done nothing, where the words are not pinned (or not given).
pub fn upload(
    copy: &Arc<CudaStream>,
    lease: &mut Lease,
    id: BufferId,
    words: Option<&[u32]>,
) -> Result<bool> {
    let Some(words) = words.filter(|w| covered(w)) else {
        return Ok(false);
    };
    pinned::upload::<BasesBuffer>(copy, lease, id, words)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arkworks_points_are_the_device_words_in_memory() {
        use ark_ec::{CurveGroup, PrimeGroup};
        use ark_std::rand::{rngs::StdRng, SeedableRng};
        use ark_std::UniformRand;
        use crucible_core::{G1Affine, G1Projective, G2Affine, G2Projective};
        let mut rng = StdRng::seed_from_u64(crucible_core::run_seed::run_seed());
        let mut g1: Vec<G1Affine> = (0..17)
            .map(|_| G1Projective::rand(&mut rng).into_affine())
            .collect();
        g1.push(G1Projective::generator().into_affine());
        g1.insert(3, G1Affine::identity());
        let mut want = vec![0u32; g1.len() * 24];
        crate::field::to_words(&g1, &mut want);
        assert_eq!(driver::point_device_words(&g1), Some(&want[..]));
        let g2: Vec<G2Affine> = (0..9)
            .map(|i| {
                if i == 4 {
                    G2Affine::identity()
                } else {
                    G2Projective::rand(&mut rng).into_affine()
                }
            })
            .collect();
        let mut want = vec![0u32; g2.len() * 48];
        crate::field::to_words(&g2, &mut want);
        assert_eq!(driver::point_device_words(&g2), Some(&want[..]));
    }

    /// Counts registrations and undoings; each registration waits for a go.
    struct Fake {
        registered: AtomicUsize,
        unregistered: AtomicUsize,
        refuse: bool,
        go: Mutex<std::sync::mpsc::Receiver<()>>,
    }

    impl Registrar for Fake {
        fn register(&self, _: &Range<usize>) -> std::result::Result<(), String> {
            let _ = self.go.lock().unwrap().recv();
            self.registered.fetch_add(1, Ordering::SeqCst);
            if self.refuse {
                Err("refused".into())
            } else {
                Ok(())
            }
        }
        fn unregister(&self, _: &Range<usize>) {
            self.unregistered.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn fake(refuse: bool) -> (Arc<Fake>, std::sync::mpsc::Sender<()>) {
        let (tx, rx) = std::sync::mpsc::channel();
        let fake = Arc::new(Fake {
            registered: AtomicUsize::new(0),
            unregistered: AtomicUsize::new(0),
            refuse,
            go: Mutex::new(rx),
        });
        (fake, tx)
    }

    /// Waits until `registry` has no registration pending.
    fn settle(registry: &Registry) {
        let start = std::time::Instant::now();
        while registry.lock().iter().any(|e| e.state == State::Pending) {
            assert!(start.elapsed().as_secs() < 20, "a registration never ended");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn holders_share_one_registration_that_the_last_one_undoes() {
        let registry: &'static Registry = Box::leak(Box::new(Registry::new()));
        let (fake, go) = fake(false);
        let range = 4096..8192;
        let first = registry.hold(range.clone(), fake.clone()).unwrap();
        let second = registry.hold(range.clone(), fake.clone()).unwrap();
        // Pending: copies go through the staging buffers.
        assert!(!registry.covers(&(5000..6000)));
        go.send(()).unwrap();
        settle(registry);
        assert_eq!(fake.registered.load(Ordering::SeqCst), 1);
        assert!(registry.covers(&(5000..6000)));
        assert!(registry.covers(&range));
        assert!(
            !registry.covers(&(4000..6000)),
            "a range past the pinned one"
        );
        assert!(!registry.covers(&(5000..5000)), "an empty range");
        drop(first);
        assert!(registry.covers(&range), "the second holder keeps it");
        assert_eq!(fake.unregistered.load(Ordering::SeqCst), 0);
        drop(second);
        assert!(!registry.covers(&range));
        assert_eq!(fake.unregistered.load(Ordering::SeqCst), 1);
        assert!(registry.lock().is_empty());
    }

    #[test]
    fn holders_gone_before_the_registration_ends_undo_it_then() {
        let registry: &'static Registry = Box::leak(Box::new(Registry::new()));
        let (fake, go) = fake(false);
        drop(registry.hold(0..4096, fake.clone()).unwrap());
        assert_eq!(registry.lock().len(), 1, "pending until its thread is done");
        // Memory at that address now may not be what the registration pinned.
        assert!(registry.hold(0..4096, fake.clone()).is_none());
        go.send(()).unwrap();
        let start = std::time::Instant::now();
        while fake.unregistered.load(Ordering::SeqCst) == 0 {
            assert!(start.elapsed().as_secs() < 20, "never undone");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(registry.lock().is_empty());
        assert!(!registry.covers(&(0..4096)));
    }

    #[test]
    fn a_refused_registration_is_never_covered_nor_undone() {
        let registry: &'static Registry = Box::leak(Box::new(Registry::new()));
        let (fake, go) = fake(true);
        let pin = registry.hold(0..4096, fake.clone()).unwrap();
        go.send(()).unwrap();
        settle(registry);
        assert_eq!(fake.registered.load(Ordering::SeqCst), 1);
        assert!(!registry.covers(&(0..4096)));
        drop(pin);
        assert!(registry.lock().is_empty());
        assert_eq!(fake.unregistered.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn memory_nobody_pinned_is_not_covered() {
        use crucible_core::G1Affine;
        let points = vec![G1Affine::identity(); 4];
        let words = driver::point_device_words(&points).unwrap();
        assert!(!covered(words));
        assert!(!covered(&[]));
    }
}
