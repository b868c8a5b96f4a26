//! Device buffers allocated under a lease, split into chunks that each fit one shader
//! binding, with staging (host to device) and readback.

use crucible_core::{plain_bytes, BufferId, ElementKind, Lease, PlanKey, Result};

use crate::device::context::Context;
use crate::device::upload::Uploads;
use crate::error::WgpuError;
use crate::field::{DeviceElement, FR_WORDS};
use crate::wgsl::curve::CurveParams;

/// Most bytes a scalar buffer's readback staging buffer holds; longer reads go in pieces.
pub const READBACK_BYTES: u64 = 4 << 20;

/// A buffer of `len` elements: `chunks` of `chunk_len` elements each (the last may be
/// shorter), every chunk small enough for one storage binding.
pub struct DeviceBuffer {
    /// What the elements are.
    pub kind: ElementKind,
    /// Number of elements.
    pub len: usize,
    /// Elements per chunk (a power of two).
    pub chunk_len: usize,
    /// The chunks, in order.
    pub chunks: Vec<wgpu::Buffer>,
    /// Host-readable staging for [`read`] (scalar buffers only; `read_scalars` gets no
    /// `&mut Lease` to allocate one then, so it is part of the buffer's allocation).
    pub readback: Option<wgpu::Buffer>,
}

impl DeviceBuffer {
    /// Elements held by chunk `c`.
    pub fn chunk_elems(&self, c: usize) -> usize {
        self.chunk_len.min(self.len - c * self.chunk_len)
    }

    /// The chunk holding element `i`, and `i`'s index in it.
    pub fn locate(&self, i: usize) -> (usize, usize) {
        (i / self.chunk_len, i % self.chunk_len)
    }
}

/// Bytes of a scalar buffer's readback staging.
pub fn readback_bytes(curve: &CurveParams, len: usize) -> u64 {
    (len as u64 * curve.element_bytes(ElementKind::Scalar)).min(READBACK_BYTES)
}

/// Bytes a buffer of `len` elements of `kind` of `curve` takes, staging included.
pub fn buffer_bytes(
    curve: &CurveParams,
    kind: ElementKind,
    len: usize,
) -> crucible_core::Result<u64> {
    let data = plain_bytes(curve.element_bytes(kind), len)?;
    Ok(match kind {
        ElementKind::Scalar => data.saturating_add(readback_bytes(curve, len)),
        ElementKind::G1 | ElementKind::G2 | ElementKind::Index => data,
    })
}

/// Allocates `len` elements of `kind` from plan item `item`.
pub fn alloc(
    ctx: &Context,
    lease: &mut Lease,
    item: PlanKey,
    kind: ElementKind,
    len: usize,
) -> Result<BufferId> {
    let each = ctx.curve.element_bytes(kind);
    let chunk_len = ctx.limits.chunk_len(each);
    lease.allocate(item, buffer_bytes(&ctx.curve, kind, len)?, || {
        let mut buffer = DeviceBuffer {
            kind,
            len,
            chunk_len,
            chunks: Vec::new(),
            readback: None,
        };
        let count = len.div_ceil(chunk_len);
        for c in 0..count {
            let bytes = buffer.chunk_elems(c) as u64 * each;
            buffer.chunks.push(ctx.create_buffer(
                format!("{item}[{c}]"),
                bytes,
                wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
            )?);
        }
        if kind == ElementKind::Scalar && len > 0 {
            buffer.readback = Some(ctx.create_buffer(
                format!("{item} readback"),
                readback_bytes(&ctx.curve, len),
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            )?);
        }
        Ok(buffer)
    })
}

/// Checks that `buffer` holds elements of `kind`.
pub fn check_kind(buffer: &DeviceBuffer, kind: ElementKind) -> Result<(), WgpuError> {
    if buffer.kind == kind {
        Ok(())
    } else {
        Err(WgpuError::Kind {
            expected: kind,
            got: buffer.kind,
        })
    }
}

/// Copies `src` into the front of `dst` (at most its length), converted to the device
/// layout, through the backend's upload buffers; the copies are queued.
pub fn stage<T: DeviceElement + Sync>(
    ctx: &Context,
    uploads: &Uploads,
    dst: &DeviceBuffer,
    kind: ElementKind,
    src: &[T],
) -> Result<(), WgpuError> {
    check_kind(dst, kind)?;
    if src.len() > dst.len {
        return Err(WgpuError::Length {
            what: "staged data",
            expected: dst.len,
            got: src.len(),
        });
    }
    for (c, chunk) in dst.chunks.iter().enumerate() {
        let start = c * dst.chunk_len;
        if start >= src.len() {
            break;
        }
        let values = &src[start..src.len().min(start + dst.chunk_elems(c))];
        uploads.write(ctx, chunk, 0, values)?;
    }
    Ok(())
}

/// Sets the elements of `dst` from `from` on to zero on the device (a proof's domain
/// vectors are zero past their constraints' rows: the host copies only the rest).
pub fn zero_from(ctx: &Context, dst: &DeviceBuffer, from: usize) -> Result<(), WgpuError> {
    let each = ctx.curve.element_bytes(dst.kind);
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("zeroing"),
        });
    let mut any = false;
    for (c, chunk) in dst.chunks.iter().enumerate() {
        let start = c * dst.chunk_len;
        let end = start + dst.chunk_elems(c);
        if end <= from {
            continue;
        }
        let skip = from.saturating_sub(start);
        encoder.clear_buffer(chunk, skip as u64 * each, None);
        any = true;
    }
    if any {
        ctx.scoped("zeroing data", || ctx.submit(encoder.finish()))?;
    }
    Ok(())
}

/// Reads `bytes` of `src` from `offset` through the host-readable `staging` buffer.
pub fn read_words(
    ctx: &Context,
    src: &wgpu::Buffer,
    offset: u64,
    bytes: u64,
    staging: &wgpu::Buffer,
) -> Result<Vec<u32>, WgpuError> {
    let mut words = Vec::with_capacity((bytes / 4) as usize);
    let mut done = 0;
    while done < bytes {
        let n = (bytes - done).min(staging.size());
        let mut batch = crate::device::batch::Batch::new(ctx, None, "reading back");
        batch.copy(src, offset + done, staging, n);
        batch.submit()?;
        crate::device::readback::map_words(ctx, staging, n, &mut words)?;
        done += n;
    }
    Ok(words)
}

/// Reads every element of a scalar buffer back to the host.
pub fn read<T: DeviceElement>(ctx: &Context, src: &DeviceBuffer) -> Result<Vec<T>, WgpuError> {
    check_kind(src, ElementKind::Scalar)?;
    let Some(staging) = src.readback.as_ref() else {
        return Ok(Vec::new());
    };
    debug_assert_eq!(T::WORDS, FR_WORDS);
    let mut out = Vec::with_capacity(src.len);
    for (c, chunk) in src.chunks.iter().enumerate() {
        let bytes = (src.chunk_elems(c) * T::WORDS * 4) as u64;
        let words = read_words(ctx, chunk, 0, bytes, staging)?;
        for w in words.chunks_exact(T::WORDS) {
            out.push(T::read_words(w)?);
        }
    }
    Ok(out)
}

/// Waits for the queue, then frees `ids`: scratch memory is really free only once the
/// dispatches that used it have finished. The first error wins.
pub fn finish(
    ctx: &Context,
    lease: &mut Lease,
    result: Result<()>,
    ids: &[BufferId],
) -> Result<()> {
    let waited = ctx.wait();
    let mut freed = Ok(());
    for id in ids {
        if let Err(e) = lease.free(*id) {
            freed = freed.and(Err(e));
        }
    }
    result.and(waited.map_err(Into::into)).and(freed)
}
