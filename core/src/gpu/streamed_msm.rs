//! MSMs over bases that stay on the host: the bases go through two device slots,
//! chunk by chunk, and the partial sums are added on the host. Written once here for
//! every backend, on the trait's staging and MSM calls.
//!
//! While the MSM of chunk k runs (its call returns once the device is done), a second
//! thread stages chunk k + 1 into the other slot, so the host's conversion and the
//! copy overlap the device's work; each slot is its own lease, so the two threads
//! never borrow one lease both ways. Staged on one thread before the current MSM is
//! queued, each chunk's host conversion would leave the device idle (every backend
//! converts on the host when it stages).
//!
//! [`streamed_msm`] streams the bases only (a proof's scalars are on the device
//! already); [`HostMsm`] streams bases and scalars, the one-shot MSM of a caller with
//! nothing staged.

use std::ops::Range;

use ark_ff::Zero;

use crate::group::{MsmGroup, ScalarOf};
use crate::{BufferUse, ElementKind, Error, Lease, MemoryPlan, MsmSpan, PlanKey};
use crate::{ProverBackend, Result, ScalarBuf};

/// `Σ scalars[scalar_offset + i]·bases[i]` over all of `bases` (on the host), streamed
/// through `buffers` (buffer `j` in `chunk_leases[j]`, equal lengths: the chunk size);
/// the scalars and the MSM's scratch are in `work`.
pub fn streamed_msm<G: MsmGroup>(
    backend: &dyn ProverBackend<G::Curve>,
    work: &mut Lease,
    chunk_leases: [&mut Lease; 2],
    buffers: [G::Buf; 2],
    bases: &[G::Affine],
    scalars: ScalarBuf,
    scalar_offset: usize,
) -> Result<G::Projective> {
    let chunk = G::buf_len(&buffers[0]).min(G::buf_len(&buffers[1]));
    if bases.is_empty() {
        return Ok(G::Projective::zero());
    }
    if chunk == 0 {
        return Err(Error::InvalidInput(
            "a streamed MSM needs chunk buffers of at least one point".into(),
        ));
    }
    let in_range = scalar_offset
        .checked_add(bases.len())
        .is_some_and(|end| end <= scalars.len());
    if !in_range {
        return Err(Error::InvalidInput(format!(
            "streamed MSM of {} terms from scalar {scalar_offset} of {}",
            bases.len(),
            scalars.len()
        )));
    }
    let chunks: Vec<Range<usize>> = (0..bases.len().div_ceil(chunk))
        .map(|i| i * chunk..((i + 1) * chunk).min(bases.len()))
        .collect();
    pipelined::<G, Lease>(
        &chunks,
        chunk_leases,
        |i, lease| G::stage(backend, lease, buffers[i % 2], &bases[chunks[i].clone()]),
        |i, lease| {
            let span = MsmSpan {
                bases: buffers[i % 2],
                base_offset: 0,
                scalars,
                scalar_offset: scalar_offset + chunks[i].start,
                len: chunks[i].len(),
            };
            G::msm(backend, work, lease, span)
        },
    )
}

/// Runs `msm(k, slot)` for each chunk k over slot k % 2 once `stage(k, slot)` has
/// filled it, staging chunk k + 1 into the other slot on a scoped thread while chunk
/// k's MSM runs; returns the sum. An error stops the pipeline once both threads are
/// back (nothing is left staging into a slot).
fn pipelined<G: MsmGroup, S: Send>(
    chunks: &[Range<usize>],
    slots: [&mut S; 2],
    stage: impl Fn(usize, &mut S) -> Result<()> + Sync,
    mut msm: impl FnMut(usize, &mut S) -> Result<G::Projective>,
) -> Result<G::Projective> {
    let [even, odd] = slots;
    let mut sum = G::Projective::zero();
    if chunks.is_empty() {
        return Ok(sum);
    }
    stage(0, even)?;
    for k in 0..chunks.len() {
        let (now, next) = if k % 2 == 0 {
            (&mut *even, &mut *odd)
        } else {
            (&mut *odd, &mut *even)
        };
        let stage = &stage;
        let (part, staged) = std::thread::scope(|scope| {
            let staging = (k + 1 < chunks.len()).then(|| scope.spawn(move || stage(k + 1, next)));
            let part = msm(k, now);
            let staged = staging.map(|thread| {
                thread.join().unwrap_or_else(|_| {
                    Err(Error::InvalidInput(format!(
                        "staging chunk {} of a streamed MSM panicked",
                        k + 1
                    )))
                })
            });
            (part, staged)
        });
        sum += part?;
        staged.transpose()?;
    }
    Ok(sum)
}

/// Terms from which [`HostMsm`] pipelines by default: below it one chunk (an MSM of a
/// few milliseconds gains less from overlap than smaller MSMs cost).
pub const PIPELINE_FROM: usize = 1 << 22;

/// One slot of a [`HostMsm`]: a chunk's bases in `bases`, its scalars and the MSM's
/// scratch in `work` (two leases, as the MSM reads the one and writes the other).
struct Slot<G: MsmGroup> {
    bases: Lease,
    work: Lease,
    bases_buf: G::Buf,
    scalars: ScalarBuf,
}

/// Plan items of a [`HostMsm`]'s slots.
const BASES: PlanKey = PlanKey::new("host-msm", "bases");
const SCALARS: PlanKey = PlanKey::new("host-msm", "scalars");

/// One-shot MSMs of bases and scalars that are both on the host (what sppark's
/// `mult_pippenger` does): the terms are cut into chunks that grow geometrically
/// ([`HostMsm::chunks`]), each chunk's bases and scalars are staged into one of two
/// slots while the device sums the chunk before it, and the chunks' sums are added on
/// the host. So only the first, small chunk's staging is not overlapped, and the device
/// holds three quarters of the terms at most instead of all of them.
///
/// Its leases are allocated once by [`HostMsm::allocate`] (one budget acquisition)
/// and reused by every [`HostMsm::msm`] up to the length they were made for, as a
/// caller summing many one-shot MSMs of one size would; [`HostMsm::release`] hands
/// them back (dropping does too, reporting errors to the budget).
pub struct HostMsm<G: MsmGroup> {
    slots: [Slot<G>; 2],
    slot_lens: [usize; 2],
    max_len: usize,
    pipeline_from: usize,
}

impl<G: MsmGroup> HostMsm<G> {
    /// The chunks of an MSM of `len` terms: one below `pipeline_from` (and below 8),
    /// else eighths growing by doubling, `len/8, len/8, len/4, len/2` (the last takes
    /// the remainder). On the H200 a plain G1 MSM took 19.7 ms at 2^21, 36.8 at 2^22 and
    /// 71.9 at 2^23, while staging 2^23 terms took about 30 ms: each chunk's staging
    /// fits under the MSM before it, so a 2^24 MSM is predicted at the first chunk's
    /// staging plus the four MSMs, about 156 ms, against 180 unpipelined.
    pub fn chunks(len: usize, pipeline_from: usize) -> Vec<Range<usize>> {
        if len < pipeline_from.max(8) {
            return std::iter::once(0..len).collect();
        }
        let eighth = len / 8;
        let ends = [eighth, 2 * eighth, 4 * eighth, len];
        let mut start = 0;
        ends.iter()
            .map(|&end| {
                let chunk = start..end;
                start = end;
                chunk
            })
            .collect()
    }

    /// Points each slot holds for MSMs of up to `len` terms: the largest chunk of each
    /// parity of an MSM of `len` (at least one: a slot no chunk uses still holds a
    /// buffer). A shorter MSM whose chunks do not fit these slots is cut to the slots
    /// instead ([`HostMsm::chunks_in`]), so the slots stay at three quarters of the
    /// terms.
    pub fn slot_lens(len: usize, pipeline_from: usize) -> [usize; 2] {
        let mut lens = [1usize; 2];
        for (k, chunk) in Self::chunks(len, pipeline_from).iter().enumerate() {
            lens[k % 2] = lens[k % 2].max(chunk.len());
        }
        lens
    }

    /// The chunks of an MSM of `len` terms in slots of `slots` points: its
    /// [`HostMsm::chunks`] when each fits its slot, else cuts that fill the slots in
    /// turn. The second case serves the shorter MSMs of slots made for a longer one: an
    /// MSM just below the pipelining threshold (one chunk, longer than either slot),
    /// and one whose last chunk is a few terms longer than the made-for length's
    /// (`len − 4·⌊len/8⌋` is not monotone in `len`).
    pub fn chunks_in(len: usize, pipeline_from: usize, slots: [usize; 2]) -> Vec<Range<usize>> {
        let chunks = Self::chunks(len, pipeline_from);
        if chunks
            .iter()
            .enumerate()
            .all(|(k, c)| c.len() <= slots[k % 2])
        {
            return chunks;
        }
        let mut out = Vec::new();
        let mut start = 0;
        while start < len {
            let end = len.min(start + slots[out.len() % 2].max(1));
            out.push(start..end);
            start = end;
        }
        out
    }

    /// The plans of the leases [`HostMsm::allocate`] takes for MSMs of up to `len`
    /// terms: each slot's bases, then its scalars and scratch.
    pub fn plans(backend: &dyn ProverBackend<G::Curve>, len: usize) -> Result<Vec<MemoryPlan>> {
        Self::plans_pipelined_from(backend, len, PIPELINE_FROM)
    }

    /// The plans [`HostMsm::allocate_pipelined_from`] takes with the same arguments.
    pub fn plans_pipelined_from(
        backend: &dyn ProverBackend<G::Curve>,
        len: usize,
        pipeline_from: usize,
    ) -> Result<Vec<MemoryPlan>> {
        Self::slot_plans(backend, Self::slot_lens(len, pipeline_from))
    }

    /// The plans of slots holding `lens` terms.
    fn slot_plans(
        backend: &dyn ProverBackend<G::Curve>,
        lens: [usize; 2],
    ) -> Result<Vec<MemoryPlan>> {
        let mut plans = Vec::with_capacity(4);
        for (slot, n) in lens.into_iter().enumerate() {
            let mut bases = MemoryPlan::new(format!("one-shot {} MSM bases, slot {slot}", G::NAME));
            bases.item(BASES, backend.buffer_bytes(G::KIND, n, BufferUse::Plain)?);
            let mut work = MemoryPlan::new(format!(
                "one-shot {} MSM of {n} terms, slot {slot}",
                G::NAME
            ));
            work.item(
                SCALARS,
                backend.buffer_bytes(ElementKind::Scalar, n, BufferUse::Plain)?,
            );
            work.merge(&backend.scratch_plan(&G::need(n)));
            plans.push(bases);
            plans.push(work);
        }
        Ok(plans)
    }

    /// Allocates the slots for MSMs of up to `max_len` terms (waiting for room in the
    /// budget, failing at once when they can never fit).
    pub fn allocate(backend: &dyn ProverBackend<G::Curve>, max_len: usize) -> Result<Self> {
        Self::allocate_pipelined_from(backend, max_len, PIPELINE_FROM)
    }

    /// [`HostMsm::allocate`], pipelining MSMs from `pipeline_from` terms instead of
    /// [`PIPELINE_FROM`] (tests, and callers that measured their own threshold).
    pub fn allocate_pipelined_from(
        backend: &dyn ProverBackend<G::Curve>,
        max_len: usize,
        pipeline_from: usize,
    ) -> Result<Self> {
        let lens = Self::slot_lens(max_len, pipeline_from);
        let plans = Self::slot_plans(backend, lens)?;
        let mut leases = backend.allocate_together(plans)?.into_iter();
        let mut slot = |n: usize| -> Result<Slot<G>> {
            let (Some(mut bases), Some(mut work)) = (leases.next(), leases.next()) else {
                return Err(Error::InvalidInput("a one-shot MSM has four leases".into()));
            };
            let bases_buf = G::alloc(backend, &mut bases, BASES, n, BufferUse::Plain)?;
            let scalars = backend.alloc_scalars(&mut work, SCALARS, n)?;
            Ok(Slot {
                bases,
                work,
                bases_buf,
                scalars,
            })
        };
        let even = slot(lens[0])?;
        let odd = slot(lens[1])?;
        Ok(HostMsm {
            slots: [even, odd],
            slot_lens: lens,
            max_len,
            pipeline_from,
        })
    }

    /// `Σ scalars[i]·bases[i]`, both on the host, of any length up to the one the
    /// slots were made for.
    pub fn msm(
        &mut self,
        backend: &dyn ProverBackend<G::Curve>,
        bases: &[G::Affine],
        scalars: &[ScalarOf<G>],
    ) -> Result<G::Projective> {
        if bases.len() != scalars.len() || bases.len() > self.max_len {
            return Err(Error::InvalidInput(format!(
                "one-shot MSM of {} bases and {} scalars in slots for {} terms",
                bases.len(),
                scalars.len(),
                self.max_len
            )));
        }
        let chunks = Self::chunks_in(bases.len(), self.pipeline_from, self.slot_lens);
        let [even, odd] = &mut self.slots;
        pipelined::<G, Slot<G>>(
            &chunks,
            [even, odd],
            |k, slot| {
                let chunk = chunks[k].clone();
                G::stage(
                    backend,
                    &mut slot.bases,
                    slot.bases_buf,
                    &bases[chunk.clone()],
                )?;
                backend.stage_scalars(&mut slot.work, slot.scalars, &scalars[chunk])
            },
            |k, slot| {
                let span = MsmSpan {
                    bases: slot.bases_buf,
                    base_offset: 0,
                    scalars: slot.scalars,
                    scalar_offset: 0,
                    len: chunks[k].len(),
                };
                G::msm(backend, &mut slot.work, &slot.bases, span)
            },
        )
    }

    /// Releases the slots' leases (waiting for the device to be done with them).
    pub fn release(self) -> Result<()> {
        let mut first = Ok(());
        for slot in self.slots {
            for lease in [slot.bases, slot.work] {
                if let Err(e) = lease.release() {
                    first = first.and(Err(e));
                }
            }
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::G1;

    use std::sync::Mutex;

    use ark_ec::PrimeGroup;

    use crate::{Fr, G1Projective};

    /// Runs `pipelined` over `n` chunks where chunk k's "MSM" is (k + 1)·g, failing
    /// the stage or the MSM of chunk `fail`; returns the result and the events.
    fn run(
        n: usize,
        fail_stage: Option<usize>,
        fail_msm: Option<usize>,
    ) -> (Result<G1Projective>, Vec<String>) {
        let chunks: Vec<Range<usize>> = (0..n).map(|k| k..k + 1).collect();
        let events = Mutex::new(Vec::new());
        let log = |e: String| events.lock().unwrap().push(e);
        // Each slot remembers the chunk staged into it.
        let (mut even, mut odd) = (None::<usize>, None::<usize>);
        let result = pipelined::<G1, Option<usize>>(
            &chunks,
            [&mut even, &mut odd],
            |k, slot| {
                if fail_stage == Some(k) {
                    return Err(Error::InvalidInput(format!("stage {k}")));
                }
                *slot = Some(k);
                log(format!("staged {k}"));
                Ok(())
            },
            |k, slot| {
                // The slot holds this chunk: staged before, not overwritten since.
                assert_eq!(*slot, Some(k), "chunk {k} reads its own slot");
                log(format!("summed {k}"));
                if fail_msm == Some(k) {
                    return Err(Error::InvalidInput(format!("msm {k}")));
                }
                Ok(G1Projective::generator() * Fr::from(k as u64 + 1))
            },
        );
        (result, events.into_inner().unwrap())
    }

    #[test]
    fn pipelined_chunks_sum_in_their_own_slots_each_staged_before_its_msm() {
        for n in 0..6 {
            let (got, events) = run(n, None, None);
            let want = G1Projective::generator() * Fr::from((n * (n + 1) / 2) as u64);
            assert_eq!(got.unwrap(), want, "{n} chunks");
            for k in 0..n {
                let staged = events.iter().position(|e| *e == format!("staged {k}"));
                let summed = events.iter().position(|e| *e == format!("summed {k}"));
                assert!(staged < summed, "{n} chunks: {events:?}");
                // Chunk k + 1 is staged only once chunk k - 1's MSM, which read the
                // same slot, has returned.
                if k >= 1 {
                    let before = events
                        .iter()
                        .position(|e| *e == format!("summed {}", k - 1));
                    let next = events
                        .iter()
                        .position(|e| *e == format!("staged {}", k + 1));
                    if k + 1 < n {
                        assert!(before < next, "{n} chunks: {events:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_failed_stage_or_msm_stops_the_pipeline_with_its_error() {
        let (got, events) = run(5, Some(2), None);
        let err = got.unwrap_err().to_string();
        assert!(err.contains("stage 2"), "{err}");
        // Chunk 1's MSM ran beside the failed staging; nothing after it.
        assert!(!events.iter().any(|e| e == "summed 2"), "{events:?}");
        let (got, events) = run(5, None, Some(1));
        let err = got.unwrap_err().to_string();
        assert!(err.contains("msm 1"), "{err}");
        assert!(
            !events.iter().any(|e| e == "summed 2" || e == "staged 3"),
            "{events:?}"
        );
        let (got, _) = run(3, Some(0), None);
        assert!(got.unwrap_err().to_string().contains("stage 0"));
    }

    #[test]
    fn chunks_cover_every_term_once_and_grow_after_the_threshold() {
        for len in [0, 1, 7, PIPELINE_FROM - 1] {
            assert_eq!(
                HostMsm::<G1>::chunks(len, PIPELINE_FROM),
                vec![0..len],
                "{len}"
            );
        }
        for len in [PIPELINE_FROM, PIPELINE_FROM + 13, 1 << 24, (1 << 24) + 7] {
            let chunks = HostMsm::<G1>::chunks(len, PIPELINE_FROM);
            assert_eq!(chunks.len(), 4, "{len}");
            let mut next = 0;
            for c in &chunks {
                assert_eq!(c.start, next, "{len}: {chunks:?}");
                assert!(!c.is_empty(), "{len}: {chunks:?}");
                next = c.end;
            }
            assert_eq!(next, len);
            // Each chunk at least the one before it: its staging hides under that MSM.
            for pair in chunks.windows(2) {
                assert!(pair[1].len() >= pair[0].len(), "{len}: {chunks:?}");
            }
        }
        assert_eq!(
            HostMsm::<G1>::chunks(1 << 24, PIPELINE_FROM),
            vec![
                0..1 << 21,
                1 << 21..1 << 22,
                1 << 22..1 << 23,
                1 << 23..1 << 24
            ]
        );
        // A lower threshold pipelines from 8 terms (no empty chunk).
        assert_eq!(HostMsm::<G1>::chunks(7, 1).len(), 1);
        assert_eq!(HostMsm::<G1>::chunks(9, 1), vec![0..1, 1..2, 2..4, 4..9]);
        // The slots hold the largest chunk of each parity: 3/4 of the terms.
        assert_eq!(
            HostMsm::<G1>::slot_lens(1 << 24, PIPELINE_FROM),
            [1 << 22, 1 << 23]
        );
        assert_eq!(HostMsm::<G1>::slot_lens(5, PIPELINE_FROM), [5, 1]);
    }

    /// Checks that the chunks of an MSM of `len` terms in slots made for `made_for`
    /// cover every term once, in order, each within its slot (an empty MSM: one empty
    /// chunk).
    fn assert_fits(len: usize, made_for: usize, from: usize) {
        let slots = HostMsm::<G1>::slot_lens(made_for, from);
        let chunks = HostMsm::<G1>::chunks_in(len, from, slots);
        let mut next = 0;
        for (k, c) in chunks.iter().enumerate() {
            assert_eq!(
                c.start, next,
                "{len} in slots for {made_for} from {from}: {chunks:?}"
            );
            assert!(
                (len == 0 || !c.is_empty()) && c.len() <= slots[k % 2],
                "{len} in slots {slots:?} for {made_for} from {from}: {chunks:?}"
            );
            next = c.end;
        }
        assert_eq!(next, len, "{len} in slots for {made_for} from {from}");
    }

    #[test]
    fn every_length_up_to_the_made_for_one_fits_the_slots() {
        // Every length, for every made-for length around small thresholds.
        for from in [1, 8, 9, 16, 64] {
            for made_for in 0..=200 {
                for len in 0..=made_for {
                    assert_fits(len, made_for, from);
                }
            }
        }
        // Slots for 65 terms from 64 hold [16, 33]: 63 (one chunk below the threshold)
        // is cut to the slots; 64 and 65 keep their own chunks.
        assert_eq!(HostMsm::<G1>::slot_lens(65, 64), [16, 33]);
        assert_eq!(
            HostMsm::<G1>::chunks_in(63, 64, [16, 33]),
            vec![0..16, 16..49, 49..63]
        );
        assert_eq!(
            HostMsm::<G1>::chunks_in(64, 64, [16, 33]),
            HostMsm::<G1>::chunks(64, 64)
        );
        assert_eq!(
            HostMsm::<G1>::chunks_in(65, 64, [16, 33]),
            HostMsm::<G1>::chunks(65, 64)
        );
        // The default threshold, by the chunks only (no MSM run): slots for 2^22, 2^22 + 1
        // and 2^24 terms against the lengths at the threshold, at multiples of eight
        // (where the last chunk shrinks) and at the made-for length.
        for made_for in [PIPELINE_FROM, PIPELINE_FROM + 1, PIPELINE_FROM + 8, 1 << 24] {
            let mut lens = vec![0, 1, 7, 8, 9, PIPELINE_FROM - 1, PIPELINE_FROM];
            for base in [PIPELINE_FROM, made_for & !7] {
                lens.extend((base.saturating_sub(9)..=base + 9).filter(|&l| l <= made_for));
            }
            lens.extend(made_for.saturating_sub(9)..=made_for);
            for len in lens {
                assert_fits(len, made_for, PIPELINE_FROM);
            }
        }
        // 2^22 − 1 in slots for 2^22: pipelined through slots of 2^20 and 2^21 points,
        // not staged whole into one.
        let slots = HostMsm::<G1>::slot_lens(PIPELINE_FROM, PIPELINE_FROM);
        assert_eq!(slots, [1 << 20, 1 << 21]);
        assert_eq!(
            HostMsm::<G1>::chunks_in(PIPELINE_FROM - 1, PIPELINE_FROM, slots),
            vec![0..1 << 20, 1 << 20..3 << 20, 3 << 20..PIPELINE_FROM - 1]
        );
        // The slots stay at three quarters of the terms.
        assert_eq!(
            HostMsm::<G1>::slot_lens(1 << 24, PIPELINE_FROM),
            [1 << 22, 1 << 23]
        );
    }
}
