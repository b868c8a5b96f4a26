//! Streamed bases copied straight from a page-locked host copy of a proving key
//! ([`ProverBackend::pin_g1_bases`](crucible_core::ProverBackend::pin_g1_bases)).
//!
//! A streamed query is restaged for every proof. Through the staging buffers
//! (`staging.rs`) every point is converted on the host, on every core, for every
//! proof, beside the synthesis that needs those cores, and copied twice. But
//! arkworks' BLS12-381 points are their coordinates' Montgomery limbs and nothing else,
//! which are the device's words (checked on values, `driver::g1_device_words`), so a
//! pinned key is copied as it lies, one DMA per chunk at the link's speed, with no
//! host work per point.
//!
//! The memory is registered `PORTABLE`, once per process for every context, and kept
//! until the last pin of it drops: every device and every worker streams from the one
//! pinned copy of the key. A build whose points do not lie as the device's words pins
//! nothing, and every copy goes through the staging buffers.

use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use crucible_core::{BufferId, Error, HostPin, Lease, Result};
use cudarc::driver::{CudaContext, CudaStream};

use crate::driver;
use crate::error::CudaError;
use crate::msm::BasesBuffer;

/// One pinned range of the process and the pins that hold it.
struct Registered {
    range: Range<usize>,
    holders: usize,
    ctx: Arc<CudaContext>,
}

/// Every range pinned for streamed bases, by any device of the process.
static REGISTERED: Mutex<Vec<Registered>> = Mutex::new(Vec::new());

fn registered() -> std::sync::MutexGuard<'static, Vec<Registered>> {
    REGISTERED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The address range of `words`.
fn range_of(words: &[u32]) -> Range<usize> {
    let start = words.as_ptr() as usize;
    start..start + std::mem::size_of_val(words)
}

/// Pins the host memory of bases, given as their device words (`None` where this
/// build's points are not the device's words: `driver::g1_device_words`), for every
/// context's copies, or joins the pin that another device (or another staging of the
/// same key) made of the same memory. `None`: nothing pinned (no such words, none at
/// all, memory pinned by someone else, or a host that cannot lock that much memory:
/// then the copies go through the staging buffers).
pub fn pin(ctx: &Arc<CudaContext>, words: Option<&[u32]>) -> Result<Option<Box<dyn HostPin>>> {
    let Some(words) = words else {
        return Ok(None);
    };
    let range = range_of(words);
    if range.is_empty() {
        return Ok(None);
    }
    // Held across the registration, so that two devices pinning the same key at once
    // register it once.
    let mut all = registered();
    if let Some(r) = all.iter_mut().find(|r| r.range == range) {
        r.holders += 1;
        return Ok(Some(Box::new(BasesPin { range })));
    }
    // Pinning only speeds the copies up: where the driver refuses (memory pinned
    // already, more than the host will lock, anything else), the bases stream as
    // any others, and a broken context shows in the next checked call.
    if let Err(e) = driver::host_register_portable(ctx, range.start, range.len()) {
        tracing::warn!(
            "{} bytes of streamed bases stay unpinned ({e}): they are converted on the host for every proof",
            range.len()
        );
        return Ok(None);
    }
    all.push(Registered {
        range: range.clone(),
        holders: 1,
        ctx: ctx.clone(),
    });
    Ok(Some(Box::new(BasesPin { range })))
}

/// Whether all of `words` lies in one pinned range.
fn covered(words: &[u32]) -> bool {
    let r = range_of(words);
    !r.is_empty()
        && registered()
            .iter()
            .any(|p| p.range.start <= r.start && r.end <= p.range.end)
}

/// One holder of a pinned range: the range is unregistered when its last holder drops.
struct BasesPin {
    range: Range<usize>,
}

impl HostPin for BasesPin {}

impl Drop for BasesPin {
    // A copy from the range has completed when the staging call that made it returns,
    // so the last holder's drop finds no copy in flight. A failure is kept by the
    // context for its next checked call.
    fn drop(&mut self) {
        let mut all = registered();
        let Some(i) = all.iter().position(|r| r.range == self.range) else {
            return;
        };
        all[i].holders -= 1;
        if all[i].holders == 0 {
            let r = all.swap_remove(i);
            r.ctx
                .record_err(driver::host_unregister(&r.ctx, r.range.start));
        }
    }
}

/// Copies bases, given as their device words, to the front of bases buffer `id` in one
/// copy on `copy`, straight from pinned memory, and waits for it (the caller may drop
/// the key once this returns). Returns false, having done nothing, where the words are
/// not pinned (or not given).
pub fn upload(
    copy: &Arc<CudaStream>,
    lease: &mut Lease,
    id: BufferId,
    words: Option<&[u32]>,
) -> Result<bool> {
    let Some(words) = words.filter(|w| covered(w)) else {
        return Ok(false);
    };
    let buf = lease.get_mut::<BasesBuffer>(id)?;
    let capacity = buf.words.len();
    let mut dst = buf.words.try_slice_mut(..words.len()).ok_or_else(|| {
        Error::InvalidInput(format!(
            "copying {} words of points into a buffer of {capacity} words",
            words.len()
        ))
    })?;
    copy.memcpy_htod(words, &mut dst).map_err(CudaError::from)?;
    // Only this copy is waited for: other workers' copies share the stream.
    copy.record_event(None)
        .and_then(|e| e.synchronize())
        .map_err(CudaError::from)?;
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
        let mut want = vec![0u32; g1.len() * crate::field::G1_WORDS];
        crate::field::g1_to_words(&g1, &mut want);
        assert_eq!(driver::g1_device_words(&g1), Some(&want[..]));
        let g2: Vec<G2Affine> = (0..9)
            .map(|i| {
                if i == 4 {
                    G2Affine::identity()
                } else {
                    G2Projective::rand(&mut rng).into_affine()
                }
            })
            .collect();
        let mut want = vec![0u32; g2.len() * crate::field::G2_WORDS];
        crate::field::g2_to_words(&g2, &mut want);
        assert_eq!(driver::g2_device_words(&g2), Some(&want[..]));
    }

    #[test]
    fn memory_nobody_pinned_is_not_covered() {
        use crucible_core::G1Affine;
        let points = vec![G1Affine::identity(); 4];
        let words = driver::g1_device_words(&points).unwrap();
        assert!(!covered(words));
        assert!(!covered(&[]));
    }
}
