//! Host<->device copies through page-locked (pinned) host buffers, allocated once per
//! backend and direction and reused by every copy: the driver copies pinned memory at
//! the link's speed, while a copy from or to pageable memory goes through the
//! driver's own bounce buffer, and a fresh pageable destination pays a page fault per
//! 4 KiB on the copying thread (read-backs of 32 MiB ran at about 1.2 GB/s that way).
//!
//! A transfer is cut into chunks of at most one staging buffer each (a quarter of the
//! transfer where that fits, see [`transfer_chunk_words`]), double-buffered: on the
//! way in the host converts chunk k + 1 into one buffer (on every core, `field.rs`)
//! while the device reads chunk k from the other; on the way out the device writes
//! chunk k + 1 while the host converts chunk k into its destination. Host memory, so
//! not under a lease; it is freed when the backend drops, once the copies that use it
//! are done, and on every error path (each buffer frees itself when dropped).

use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use crucible_core::{BufferId, Error, Lease, Result};
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, PinnedHostSlice};

use crate::driver;
use crate::error::CudaError;
use crate::memory::{CudaBuffer, DeviceWords};

/// Staging buffers per direction: one filled by the host while the other is copied.
const SLOTS: usize = 2;

/// A transfer is cut into at least this many chunks where the buffers allow, so that
/// the first chunk's conversion and the last chunk's copy, which nothing overlaps, are
/// a quarter of it at most: the NTT of 2^20 (32 MiB each way) ran host in, host out in
/// 3.84 ms through 8 MiB chunks against 4.08 through one 32 MiB chunk.
const MIN_PIECES: usize = 4;

/// Words of the smallest chunk worth its per-chunk cost (1 MiB).
const MIN_CHUNK_WORDS: usize = 1 << 18;

/// Words of one staging buffer of `mib` MiB.
pub fn chunk_words(mib: u32) -> usize {
    (mib as usize) << 18
}

/// Words per chunk of a transfer of `total` words through buffers of `buffer` words: a
/// [`MIN_PIECES`]th of it, at least [`MIN_CHUNK_WORDS`], at most a buffer.
fn transfer_chunk_words(total: usize, buffer: usize) -> usize {
    (total / MIN_PIECES).clamp(MIN_CHUNK_WORDS.min(buffer), buffer)
}

/// How a staging pair's host memory is mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostMapping {
    /// Write-combined: fast for the host to write and the device to read, very slow
    /// for the host to read (uploads).
    WriteCombined,
    /// Ordinary cached memory (read-backs, which the host reads).
    Cached,
}

/// How `len` elements of `words_per` words each split into chunks of at most one
/// staging buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunks {
    len: usize,
    per_chunk: usize,
}

impl Chunks {
    /// The chunks of `len` elements of `words_per` words through buffers of
    /// `chunk_words` words; an error when one element does not fit a buffer.
    pub fn new(len: usize, words_per: usize, chunk_words: usize) -> Result<Chunks> {
        if words_per == 0 || words_per > chunk_words {
            return Err(Error::InvalidInput(format!(
                "elements of {words_per} words cannot be staged through buffers of {chunk_words} words"
            )));
        }
        Ok(Chunks {
            len,
            per_chunk: chunk_words / words_per,
        })
    }

    /// Number of chunks (0 for no elements).
    pub fn count(&self) -> usize {
        self.len.div_ceil(self.per_chunk)
    }

    /// The elements of chunk `i` (`i < count()`).
    pub fn range(&self, i: usize) -> Range<usize> {
        let start = i * self.per_chunk;
        start..(start + self.per_chunk).min(self.len)
    }
}

/// One direction's pinned buffers, each with the event of the last copy that used it.
pub struct Staging {
    done: [CudaEvent; SLOTS],
    buffers: [PinnedHostSlice<u32>; SLOTS],
}

impl Staging {
    /// Allocates the buffers, `chunk_words` words each, mapped as `mapping` says.
    pub fn new(
        ctx: &Arc<CudaContext>,
        mapping: HostMapping,
        chunk_words: usize,
    ) -> Result<Staging> {
        let alloc = || match mapping {
            HostMapping::WriteCombined => driver::alloc_pinned_write_combined(ctx, chunk_words),
            HostMapping::Cached => driver::alloc_pinned_cached(ctx, chunk_words),
        };
        let event = || ctx.new_event(None).map_err(CudaError::from);
        // A failure frees what was allocated before it (each buffer frees on drop).
        Ok(Staging {
            buffers: [alloc()?, alloc()?],
            done: [event()?, event()?],
        })
    }

    /// Words of each buffer.
    pub fn chunk_words(&self) -> usize {
        self.buffers[0].len()
    }

    /// The first `words` words of buffer `slot`, once the last copy that used it is
    /// done (an event never recorded counts as done).
    fn slot_mut(&mut self, slot: usize, words: usize) -> Result<&mut [u32]> {
        self.done[slot].synchronize().map_err(CudaError::from)?;
        let host = self.buffers[slot].as_mut_slice().map_err(CudaError::from)?;
        Ok(&mut host[..words])
    }

    /// Marks buffer `slot` busy until the work queued on `stream` so far is done.
    fn record(&self, slot: usize, stream: &CudaStream) -> Result<()> {
        Ok(self.done[slot].record(stream).map_err(CudaError::from)?)
    }
}

impl Drop for Staging {
    // The buffers must outlive the copies that read or write them. A failure is kept
    // by the context, which reports it at its next checked call.
    fn drop(&mut self) {
        for event in &self.done {
            event.context().record_err(event.synchronize());
        }
    }
}

/// One direction's staging buffers of a backend: allocated by the first copy that
/// needs them, reused by every later one, freed with the backend. Copies in one
/// direction take turns; the two directions never wait for each other.
pub struct SharedStaging {
    mapping: HostMapping,
    chunk_words: usize,
    buffers: Mutex<Option<Staging>>,
}

impl SharedStaging {
    /// No buffers yet; they will hold `chunk_words` words each.
    pub fn new(mapping: HostMapping, chunk_words: usize) -> SharedStaging {
        SharedStaging {
            mapping,
            chunk_words,
            buffers: Mutex::new(None),
        }
    }

    /// Runs `copy` with the buffers, allocating them on first use.
    pub fn with<T>(
        &self,
        ctx: &Arc<CudaContext>,
        copy: impl FnOnce(&mut Staging) -> Result<T>,
    ) -> Result<T> {
        // A copy that panicked (a conversion) leaves nothing half-done that a later
        // copy could trip on: each buffer is waited on before it is reused.
        let mut guard = self.buffers.lock().unwrap_or_else(PoisonError::into_inner);
        let staging = match &mut *guard {
            Some(staging) => staging,
            None => guard.insert(Staging::new(ctx, self.mapping, self.chunk_words)?),
        };
        copy(staging)
    }
}

/// The error when `len` elements of `words_per` words do not fit `capacity` words.
fn check_fits(len: usize, words_per: usize, capacity: usize) -> Result<usize> {
    len.checked_mul(words_per)
        .filter(|&words| words <= capacity)
        .ok_or_else(|| {
            Error::InvalidInput(format!(
                "copying {len} elements of {words_per} words with a buffer of {capacity} words"
            ))
        })
}

/// The chunks of a copy of `len` elements of `words_per` words to or from a buffer of
/// `capacity` words through `staging`; an error when they do not fit the buffer.
fn transfer_chunks(
    len: usize,
    words_per: usize,
    capacity: usize,
    staging: &Staging,
) -> Result<Chunks> {
    let total = check_fits(len, words_per, capacity)?;
    let most = transfer_chunk_words(total, staging.chunk_words()).max(words_per);
    Chunks::new(len, words_per, most)
}

/// Copies `len` elements of `words_per` words each to the front of buffer `id`, chunk
/// by chunk: `fill(elements, words)` writes the words of that range of elements. The
/// copies go on `copy` (the backend's copy stream) and this returns once the last
/// chunk is queued: kernels queued before it on the compute stream keep running
/// meanwhile. cudarc's buffer events order the copy after the kernels that use the
/// buffer and the kernels queued later after the copy.
pub fn upload_chunked<B: DeviceWords>(
    copy: &Arc<CudaStream>,
    lease: &mut Lease,
    id: BufferId,
    staging: &mut Staging,
    len: usize,
    words_per: usize,
    fill: impl Fn(Range<usize>, &mut [u32]),
) -> Result<()> {
    let words = lease.get_mut::<B>(id)?.words_mut();
    let chunks = transfer_chunks(len, words_per, words.len(), staging)?;
    for i in 0..chunks.count() {
        let range = chunks.range(i);
        let slot = i % SLOTS;
        let host = staging.slot_mut(slot, range.len() * words_per)?;
        fill(range.clone(), host);
        let mut dst = words.slice_mut(range.start * words_per..range.end * words_per);
        copy.memcpy_htod(&*host, &mut dst)
            .map_err(CudaError::from)?;
        staging.record(slot, copy)?;
    }
    Ok(())
}

/// Copies the first `len` elements of `words_per` words each of buffer `id` to the
/// host, chunk by chunk, on `stream` (after the kernels queued there): `take(elements,
/// words)` receives the words of each range of elements, in order, while the next
/// chunk's copy runs. Returns once the last chunk is taken.
pub fn download_chunked(
    stream: &Arc<CudaStream>,
    lease: &Lease,
    id: BufferId,
    staging: &mut Staging,
    len: usize,
    words_per: usize,
    mut take: impl FnMut(Range<usize>, &[u32]),
) -> Result<()> {
    let words = &lease.get::<CudaBuffer>(id)?.words;
    let chunks = transfer_chunks(len, words_per, words.len(), staging)?;
    for step in read_steps(chunks.count()) {
        let (ReadStep::Copy(i) | ReadStep::Take(i)) = step;
        let range = chunks.range(i);
        let slot = i % SLOTS;
        // Waits for the slot's last copy: for a copy, the read-back before it, which
        // is already taken; for a take, the copy of this chunk.
        let host = staging.slot_mut(slot, range.len() * words_per)?;
        match step {
            ReadStep::Copy(_) => {
                let src = words.slice(range.start * words_per..range.end * words_per);
                stream.memcpy_dtoh(&src, host).map_err(CudaError::from)?;
                staging.record(slot, stream)?;
            }
            ReadStep::Take(_) => take(range, host),
        }
    }
    Ok(())
}

/// One step of a chunked read-back: copy chunk `i` into its staging buffer, or hand
/// the host chunk `i` from there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadStep {
    Copy(usize),
    Take(usize),
}

/// The steps of a read-back of `count` chunks: the first copies fill every buffer,
/// then each take frees its buffer for the copy `SLOTS` chunks on, so the device
/// writes the next chunks while the host takes this one.
fn read_steps(count: usize) -> impl Iterator<Item = ReadStep> {
    let first = (0..count.min(SLOTS)).map(ReadStep::Copy);
    let rest = (0..count).flat_map(move |i| {
        let next = (i + SLOTS < count).then_some(ReadStep::Copy(i + SLOTS));
        std::iter::once(ReadStep::Take(i)).chain(next)
    });
    first.chain(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(c: Chunks) -> Vec<Range<usize>> {
        (0..c.count()).map(|i| c.range(i)).collect()
    }

    #[test]
    fn chunks_cover_every_element_once_in_order_within_a_buffer() {
        for (len, words_per, chunk_words) in [
            (0, 8, 64),
            (1, 8, 64),
            (8, 8, 64),
            (9, 8, 64),
            (17, 8, 64),
            (1000, 24, 100),
            (5, 48, 48),
            (1 << 20, 8, chunk_words(crate::tuning::DEFAULT_STAGING_MIB)),
            ((1 << 20) + 1, 24, chunk_words(1)),
        ] {
            let c = Chunks::new(len, words_per, chunk_words).unwrap();
            let got = ranges(c);
            let mut next = 0;
            for r in &got {
                assert_eq!(r.start, next, "{len} x {words_per} in {chunk_words}");
                assert!(!r.is_empty());
                assert!(r.len() * words_per <= chunk_words);
                next = r.end;
            }
            assert_eq!(next, len);
            // Every chunk but the last fills its buffer as far as whole elements go.
            for r in got.iter().rev().skip(1) {
                assert_eq!(r.len(), chunk_words / words_per);
            }
        }
    }

    #[test]
    fn read_backs_copy_and_take_each_chunk_once_and_reuse_a_buffer_only_once_taken() {
        for count in 0..12 {
            let steps: Vec<ReadStep> = read_steps(count).collect();
            let chunks_of = |copy: bool| -> Vec<usize> {
                let pick = |s: &ReadStep| match *s {
                    ReadStep::Copy(i) => copy.then_some(i),
                    ReadStep::Take(i) => (!copy).then_some(i),
                };
                steps.iter().filter_map(pick).collect()
            };
            let all: Vec<usize> = (0..count).collect();
            assert_eq!(chunks_of(true), all, "{count} chunks copied: {steps:?}");
            assert_eq!(chunks_of(false), all, "{count} chunks taken: {steps:?}");
            // What each buffer holds: a chunk copied and not yet taken.
            let mut held: [Option<usize>; SLOTS] = [None; SLOTS];
            for step in &steps {
                match *step {
                    ReadStep::Copy(i) => {
                        assert_eq!(
                            held[i % SLOTS],
                            None,
                            "{count}: copy {i} over a chunk not taken"
                        );
                        held[i % SLOTS] = Some(i);
                    }
                    ReadStep::Take(i) => {
                        assert_eq!(
                            held[i % SLOTS],
                            Some(i),
                            "{count}: take {i} before its copy"
                        );
                        held[i % SLOTS] = None;
                        // The device is never left idle while there is a chunk to copy.
                        let queued = held.iter().flatten().count();
                        assert_eq!(queued, (count - 1 - i).min(SLOTS - 1), "{count}: take {i}");
                    }
                }
            }
            assert_eq!(held, [None; SLOTS]);
        }
    }

    #[test]
    fn an_element_larger_than_a_buffer_is_refused() {
        assert!(Chunks::new(4, 65, 64).is_err());
        assert!(Chunks::new(4, 0, 64).is_err());
        assert!(Chunks::new(4, 64, 64).is_ok());
    }

    #[test]
    fn copies_larger_than_the_buffer_or_overflowing_are_refused() {
        assert_eq!(check_fits(3, 8, 24).unwrap(), 24);
        assert!(check_fits(4, 8, 24).is_err());
        let err = check_fits(usize::MAX, 8, 24).unwrap_err().to_string();
        assert!(err.contains("24 words"), "{err}");
    }

    #[test]
    fn transfers_are_cut_into_quarters_between_a_mib_and_a_buffer() {
        let buffer = chunk_words(crate::tuning::DEFAULT_STAGING_MIB);
        // The NTT of 2^20 (32 MiB): four chunks of 8 MiB.
        assert_eq!(
            transfer_chunk_words(chunk_words(32), buffer),
            chunk_words(8)
        );
        // A 2^24 G1 bases buffer (1.5 GiB): whole buffers.
        assert_eq!(transfer_chunk_words(chunk_words(1536), buffer), buffer);
        // Small transfers: chunks of a MiB (one chunk when smaller than that).
        assert_eq!(transfer_chunk_words(1000, buffer), MIN_CHUNK_WORDS);
        assert_eq!(
            transfer_chunk_words(chunk_words(2), buffer),
            MIN_CHUNK_WORDS
        );
        // Buffers smaller than a MiB (tests) are filled whole.
        assert_eq!(transfer_chunk_words(1 << 20, 64), 64);
        assert_eq!(transfer_chunk_words(0, 64), 64);
    }

    #[test]
    fn chunk_sizes_are_mib_of_words() {
        assert_eq!(chunk_words(1) * 4, 1 << 20);
        assert_eq!(
            chunk_words(crate::tuning::DEFAULT_STAGING_MIB) * 4,
            32 << 20
        );
    }
}
