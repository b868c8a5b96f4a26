//! The pointwise products of scalar buffers (`mul_assign`, `sub_mul_assign`), one
//! dispatch per chunk of shaders/ntt.wgsl's `mul` or `sub_mul`, in one submission.

use crucible_core::{ElementKind, Lease, Result, ScalarBuf};

use crate::device::batch::{Batch, ParamsBuffer};
use crate::device::context::Context;
use crate::error::check_len;
use crate::memory::{check_kind, finish, DeviceBuffer};
use crate::wgsl::params::NttParams;
use crate::wgsl::Module;

use crate::field::{fr_words, DeviceScalar};

/// The pointwise kernel (module `Ntt`): `sub_mul` when the difference is scaled, else
/// `mul`.
fn pointwise_entry(scaled: bool) -> &'static str {
    if scaled {
        "sub_mul"
    } else {
        "mul"
    }
}

/// Both pointwise kernels' pipelines, for a warm-up.
pub fn pipelines() -> Vec<(Module, &'static str)> {
    [false, true]
        .map(|scaled| (Module::Ntt, pointwise_entry(scaled)))
        .into()
}

/// `dst[i] *= rhs[i]`, or with `k`, `dst[i] = (dst[i] − rhs[i])·k`.
pub fn pointwise<F: DeviceScalar>(
    ctx: &Context,
    lease: &mut Lease,
    dst: ScalarBuf,
    rhs: ScalarBuf,
    k: Option<F>,
) -> Result<()> {
    let (chunks, chunk_len) = {
        let d = lease.get::<DeviceBuffer>(dst.id())?;
        let r = lease.get::<DeviceBuffer>(rhs.id())?;
        check_kind(d, ElementKind::Scalar)?;
        check_kind(r, ElementKind::Scalar)?;
        check_len("pointwise operand", d.len, r.len)?;
        (d.chunks.len(), d.chunk_len)
    };
    if chunks == 0 {
        return Ok(());
    }
    let params = ParamsBuffer::kept(ctx, lease)?;
    let result = (|| -> Result<()> {
        let d = lease.get::<DeviceBuffer>(dst.id())?;
        let r = lease.get::<DeviceBuffer>(rhs.id())?;
        let entry = pointwise_entry(k.is_some());
        let pipeline = ctx.pipeline(Module::Ntt, entry)?;
        let mut batch = Batch::new(ctx, Some(lease.get::<ParamsBuffer>(params)?), entry);
        for c in 0..chunks {
            let p = NttParams {
                count: d.chunk_elems(c) as u32,
                base: (c * chunk_len) as u32,
                lo_chunk: c as u32,
                hi_chunk: c as u32,
                log_chunk: chunk_len.trailing_zeros(),
                c: fr_words(k.unwrap_or_default()),
                ..NttParams::default()
            };
            batch.dispatch(
                pipeline.clone(),
                &p,
                vec![(1, &d.chunks[c]), (2, &r.chunks[c])],
                p.count,
            )?;
        }
        batch.submit()?;
        Ok(())
    })();
    match result {
        // The product stays queued; the parameters stay in the lease.
        Ok(()) => Ok(()),
        Err(e) => finish(ctx, lease, Err(e), &[params]),
    }
}
