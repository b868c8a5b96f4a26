//! MSMs over bases that stay on the host: the bases go through two device chunk
//! buffers, chunk by chunk, and the partial sums are added on the host. Written once
//! here for every backend, on the trait's staging and MSM calls.
//!
//! The next chunk is staged before the current chunk's MSM is queued: on a backend
//! whose staging returns once the copy is queued (CUDA's copy stream), that copy runs
//! while the device computes the current chunk. A chunk buffer is restaged only after
//! the MSM that read it has returned.

use ark_ff::Zero;

use crate::group::MsmGroup;
use crate::{Error, Lease, MsmSpan, ProverBackend, Result, ScalarBuf};

/// `Σ scalars[scalar_offset + i]·bases[i]` over all of `bases` (on the host), streamed
/// through `buffers` (in `chunk_lease`, equal lengths: the chunk size); the scalars
/// and the MSM's scratch are in `work`.
pub fn streamed_msm<G: MsmGroup>(
    backend: &dyn ProverBackend,
    work: &mut Lease,
    chunk_lease: &mut Lease,
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
    let chunks: Vec<&[G::Affine]> = bases.chunks(chunk).collect();
    G::stage(backend, chunk_lease, buffers[0], chunks[0])?;
    let mut sum = G::Projective::zero();
    for (i, part) in chunks.iter().enumerate() {
        if let Some(next) = chunks.get(i + 1) {
            G::stage(backend, chunk_lease, buffers[(i + 1) % 2], next)?;
        }
        let span = MsmSpan {
            bases: buffers[i % 2],
            base_offset: 0,
            scalars,
            scalar_offset: scalar_offset + i * chunk,
            len: part.len(),
        };
        sum += G::msm(backend, work, chunk_lease, span)?;
    }
    Ok(sum)
}
