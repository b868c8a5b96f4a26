//! A section's elements read in bulk and decoded over all cores: large reads (a
//! whole section, or blocks of [`BLOCK_BYTES`] for larger ones), each block's
//! elements decoded and validated in parallel straight into the output, and the
//! first bad element, by index, reported whichever thread found it.

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;

use crate::binfile::SectionReader;
use crucible_core::Result;

/// The most bytes read at once: a section up to this size is one read, a larger one
/// is read and decoded in blocks, so loading holds at most this much of the raw
/// file beside the decoded key.
pub const BLOCK_BYTES: usize = 64 << 20;

/// Elements a core decodes at a time (points take tens of microseconds each, so
/// this is well above rayon's per-task cost and still balances across cores).
pub(crate) const MIN_CHUNK: usize = 64;

/// Decodes `bytes`, elements of `size` bytes each, appending them to `out` in order;
/// on failure `out` is left as it was and the lowest failing index within `bytes`
/// is returned with its error. Elements after a known failure are not decoded.
pub fn decode_all<T: Send + Default, E: Send>(
    bytes: &[u8],
    size: usize,
    decode: impl Fn(&[u8]) -> Result<T, E> + Sync,
    out: &mut Vec<T>,
) -> Result<(), (usize, E)> {
    let first_bad = AtomicUsize::new(usize::MAX);
    let error: Mutex<Option<(usize, E)>> = Mutex::new(None);
    let start = out.len();
    out.par_extend(
        bytes
            .par_chunks_exact(size)
            .enumerate()
            .with_min_len(MIN_CHUNK)
            .map(|(i, element)| {
                if i > first_bad.load(Ordering::Relaxed) {
                    return T::default();
                }
                decode(element).unwrap_or_else(|e| {
                    first_bad.fetch_min(i, Ordering::Relaxed);
                    // A poisoned lock only means another decode panicked; its
                    // contents are still an index and an error.
                    let mut slot = error.lock().unwrap_or_else(|p| p.into_inner());
                    if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                        *slot = Some((i, e));
                    }
                    T::default()
                })
            }),
    );
    match error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        None => Ok(()),
        Some(bad) => {
            out.truncate(start);
            Err(bad)
        }
    }
}

/// Reads `count` elements of `size` bytes each from a section in bulk and decodes
/// them in parallel; the first bad element is an error naming the file, the section
/// and its index.
pub fn read_all<R: Read, T: Send + Default, E: std::fmt::Display + Send>(
    section: &mut SectionReader<'_, R>,
    count: usize,
    size: usize,
    decode: impl Fn(&[u8]) -> Result<T, E> + Sync,
) -> Result<Vec<T>> {
    let needed = (count as u64).checked_mul(size as u64);
    if size == 0 || needed.is_none_or(|n| n > section.remaining()) {
        return Err(section.name.error(format!(
            "section `{}` holds {} bytes, too few for {count} elements of {size} bytes",
            section.what,
            section.remaining()
        )));
    }
    let per_block = (BLOCK_BYTES / size).max(1);
    let mut out = Vec::with_capacity(count);
    let mut buf = vec![0u8; per_block.min(count) * size];
    let mut done = 0;
    while done < count {
        let n = per_block.min(count - done);
        let bytes = &mut buf[..n * size];
        section.bytes(bytes)?;
        decode_all(bytes, size, &decode, &mut out).map_err(|(i, e)| {
            section.name.error(format!(
                "section `{}`, element {} of {count}: {e}",
                section.what,
                done + i
            ))
        })?;
        done += n;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(e: &[u8]) -> Result<u32, String> {
        let v = u32::from_le_bytes(e.try_into().expect("4 bytes"));
        if v % 1000 == 999 {
            Err(format!("bad value {v}"))
        } else {
            Ok(v)
        }
    }

    #[test]
    fn decodes_in_order_and_names_the_lowest_failing_index() {
        let values: Vec<u32> = (0..100_000u32).map(|i| i * 10).collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = vec![7];
        decode_all(&bytes, 4, parse, &mut out).unwrap();
        assert_eq!(out[0], 7);
        assert_eq!(&out[1..], values.as_slice());

        // Bad values at indexes 60_000 and 90_000 and 30_000: the lowest is named,
        // whichever core met its element first, and the output is left as it was.
        let mut bad = bytes.clone();
        for i in [60_000usize, 90_000, 30_000] {
            bad[4 * i..4 * i + 4].copy_from_slice(&(1999 + i as u32 * 1000).to_le_bytes());
        }
        for _ in 0..20 {
            let mut out = vec![7];
            let (i, e) = decode_all(&bad, 4, parse, &mut out).unwrap_err();
            assert_eq!((i, e.as_str()), (30_000, "bad value 30001999"));
            assert_eq!(out, [7]);
        }
    }
}
