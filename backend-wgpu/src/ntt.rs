//! NTTs (natural order in and out, as arkworks' `Radix2EvaluationDomain`) and the
//! pointwise ops, as dispatches of shaders/ntt.wgsl.

use crucible_core::{
    Domain, ElementKind, Fr, Lease, MemoryPlan, NttKind, PlanKey, Result, ScalarBuf,
};

use crate::batch::Batch;
use crate::context::Context;
use crate::error::{check_len, WgpuError};
use crate::field::{element_bytes, DeviceElement, FR_WORDS};
use crate::memory::{check_kind, DeviceBuffer};
use crate::params::NttParams;
use crate::shaders::Module;

/// Plan item of the twiddle tables.
pub const TWIDDLES_ITEM: PlanKey = PlanKey::new("wgpu", "ntt_twiddles");

/// Plan item of the uniform buffer holding every dispatch's parameters.
pub const PARAMS_ITEM: PlanKey = PlanKey::new("wgpu", "params");

fn words(x: Fr) -> [u32; FR_WORDS] {
    let mut w = [0u32; FR_WORDS];
    x.write_words(&mut w);
    w
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    Twiddles,
    Scale,
    Bitrev,
    Butterfly,
}

impl Kernel {
    fn entry(self) -> &'static str {
        match self {
            Kernel::Twiddles => "twiddles",
            Kernel::Scale => "scale",
            Kernel::Bitrev => "bitrev",
            Kernel::Butterfly => "butterfly",
        }
    }
}

struct Step {
    kernel: Kernel,
    params: NttParams,
}

/// log2 of the low twiddle table's length for a transform of 2^log_n points.
fn tw_log_lo(log_n: u32) -> u32 {
    log_n / 2
}

/// Entries of both twiddle tables: w^e for e < n/2 = 2^m is lo[e mod 2^h]·hi[e >> h].
fn twiddle_entries(log_n: u32) -> usize {
    if log_n == 0 {
        return 0;
    }
    let m = log_n - 1;
    let h = tw_log_lo(log_n);
    (1usize << h) + (1usize << (m - h))
}

/// Every dispatch of one NTT of `domain` over a buffer of `chunk_len`-element chunks.
fn steps(domain: &Domain, kind: NttKind, chunk_len: usize) -> Vec<Step> {
    let k = domain.log_size;
    if k == 0 {
        // One point: every transform is the identity (g^0 = 1, 1/n = 1).
        return Vec::new();
    }
    let n = domain.size;
    let chunk = chunk_len.min(n);
    let chunks = n / chunk;
    let log_chunk = chunk.trailing_zeros();
    let inverse = matches!(kind, NttKind::Inverse | NttKind::CosetInverse);
    let base = NttParams {
        log_n: k,
        log_chunk,
        tw_log_lo: tw_log_lo(k),
        ..NttParams::default()
    };
    let mut out = Vec::new();
    out.push(Step {
        kernel: Kernel::Twiddles,
        params: NttParams {
            count: twiddle_entries(k) as u32,
            h: words(if inverse {
                domain.omega_inv
            } else {
                domain.omega
            }),
            ..base
        },
    });
    let scale = |out: &mut Vec<Step>, c: Fr, h: Option<Fr>| {
        for ch in 0..chunks {
            out.push(Step {
                kernel: Kernel::Scale,
                params: NttParams {
                    count: chunk as u32,
                    base: (ch * chunk) as u32,
                    stage: u32::from(h.is_some()),
                    lo_chunk: ch as u32,
                    hi_chunk: ch as u32,
                    c: words(c),
                    h: words(h.unwrap_or(Fr::from(1u64))),
                    ..base
                },
            });
        }
    };
    if kind == NttKind::CosetForward {
        scale(&mut out, Fr::from(1u64), Some(domain.coset_gen));
    }
    for a in 0..chunks {
        for b in a..chunks {
            out.push(Step {
                kernel: Kernel::Bitrev,
                params: NttParams {
                    count: chunk as u32,
                    base: (a * chunk) as u32,
                    lo_chunk: a as u32,
                    hi_chunk: b as u32,
                    ..base
                },
            });
        }
    }
    for s in 0..k {
        let half = 1usize << s;
        if 2 * half <= chunk {
            // Both ends of every butterfly lie in the same chunk.
            for c in 0..chunks {
                out.push(Step {
                    kernel: Kernel::Butterfly,
                    params: NttParams {
                        count: (chunk / 2) as u32,
                        base: (c * chunk / 2) as u32,
                        stage: s,
                        lo_chunk: c as u32,
                        hi_chunk: c as u32,
                        ..base
                    },
                });
            }
        } else {
            // Chunk a's elements pair with chunk a + half/chunk's.
            for a in (0..chunks).filter(|a| (a * chunk) & half == 0) {
                let first = a * chunk;
                out.push(Step {
                    kernel: Kernel::Butterfly,
                    params: NttParams {
                        count: chunk as u32,
                        base: (((first >> (s + 1)) << s) + (first & (half - 1))) as u32,
                        stage: s,
                        lo_chunk: a as u32,
                        hi_chunk: (a + half / chunk) as u32,
                        ..base
                    },
                });
            }
        }
    }
    match kind {
        NttKind::Inverse => scale(&mut out, domain.size_inv, None),
        NttKind::CosetInverse => scale(&mut out, domain.size_inv, Some(domain.coset_gen_inv)),
        NttKind::Forward | NttKind::CosetForward => {}
    }
    out
}

/// Scratch of the largest NTT of `domain`: the twiddle tables and, when the domain is
/// larger than one binding, a note saying how it is chunked.
pub fn scratch_plan(ctx: &Context, domain: &Domain) -> MemoryPlan {
    let mut plan = MemoryPlan::new("wgpu NTT scratch");
    if domain.log_size > 0 {
        plan.item(
            TWIDDLES_ITEM,
            (twiddle_entries(domain.log_size) * FR_WORDS * 4) as u64,
        );
    }
    let chunk_len = ctx.limits.chunk_len(element_bytes(ElementKind::Scalar));
    if domain.size > chunk_len {
        plan.note(format!(
            "wgpu: scalar buffers in {} chunks of 2^{} (binding limit {} B)",
            domain.size / chunk_len,
            chunk_len.trailing_zeros(),
            ctx.limits.binding_bytes
        ));
    }
    plan
}

fn uniform_buffer(ctx: &Context, bytes: u64) -> Result<wgpu::Buffer> {
    Ok(ctx.create_buffer(
        PARAMS_ITEM,
        bytes,
        wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
    )?)
}

/// Waits for the queue, then frees `ids`: scratch memory is really free only once the
/// dispatches that used it have finished. The first error wins.
pub fn finish(
    ctx: &Context,
    lease: &mut Lease,
    result: Result<()>,
    ids: &[crucible_core::BufferId],
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

/// In-place NTT of `buf` over `domain`.
pub fn ntt(
    ctx: &Context,
    lease: &mut Lease,
    buf: ScalarBuf,
    domain: &Domain,
    kind: NttKind,
) -> Result<()> {
    if domain.log_size >= 32 {
        return Err(WgpuError::Unsupported(format!(
            "NTT of 2^{} points: the wgpu backend indexes with 32-bit integers",
            domain.log_size
        ))
        .into());
    }
    let chunk_len = {
        let data = lease.get::<DeviceBuffer>(buf.id())?;
        check_kind(data, ElementKind::Scalar)?;
        check_len("NTT input", domain.size, data.len)?;
        data.chunk_len
    };
    let steps = steps(domain, kind, chunk_len);
    if steps.is_empty() {
        return Ok(());
    }
    let tw_bytes = (twiddle_entries(domain.log_size) * FR_WORDS * 4) as u64;
    if tw_bytes > ctx.limits.binding_bytes {
        return Err(WgpuError::Unsupported(format!(
            "NTT of 2^{}: its twiddle tables ({tw_bytes} B) exceed one binding ({} B)",
            domain.log_size, ctx.limits.binding_bytes
        ))
        .into());
    }
    let tw = lease.allocate(TWIDDLES_ITEM, tw_bytes, || {
        Ok(ctx.create_buffer(TWIDDLES_ITEM, tw_bytes, wgpu::BufferUsages::STORAGE)?)
    })?;
    let params_bytes = ctx.limits.params_bytes();
    let params = match lease.allocate(PARAMS_ITEM, params_bytes, || {
        uniform_buffer(ctx, params_bytes)
    }) {
        Ok(id) => id,
        Err(e) => return finish(ctx, lease, Err(e), &[tw]),
    };
    let result = (|| -> Result<()> {
        let data = lease.get::<DeviceBuffer>(buf.id())?;
        let tw_buf = lease.get::<wgpu::Buffer>(tw)?;
        let params_buf = lease.get::<wgpu::Buffer>(params)?;
        let mut batch = Batch::new(
            ctx,
            Some(params_buf),
            format!("{kind:?} NTT of 2^{}", domain.log_size),
        );
        for step in &steps {
            let p = step.params;
            let lo = &data.chunks[p.lo_chunk as usize];
            let hi = &data.chunks[p.hi_chunk as usize];
            let bindings = match step.kernel {
                Kernel::Twiddles => vec![(3, tw_buf)],
                Kernel::Scale => vec![(1, lo)],
                Kernel::Bitrev => vec![(1, lo), (2, hi)],
                Kernel::Butterfly => vec![(1, lo), (2, hi), (3, tw_buf)],
            };
            let pipeline = ctx.pipeline(Module::Ntt, step.kernel.entry())?;
            batch.dispatch(pipeline, &p, bindings, p.count)?;
        }
        batch.submit()?;
        Ok(())
    })();
    finish(ctx, lease, result, &[tw, params])
}

/// `dst[i] *= rhs[i]`, or with `k`, `dst[i] = (dst[i] − rhs[i])·k`.
pub fn pointwise(
    ctx: &Context,
    lease: &mut Lease,
    dst: ScalarBuf,
    rhs: ScalarBuf,
    k: Option<Fr>,
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
    let params_bytes = ctx.limits.params_bytes();
    let params = lease.allocate(PARAMS_ITEM, params_bytes, || {
        uniform_buffer(ctx, params_bytes)
    })?;
    let result = (|| -> Result<()> {
        let d = lease.get::<DeviceBuffer>(dst.id())?;
        let r = lease.get::<DeviceBuffer>(rhs.id())?;
        let entry = if k.is_some() { "sub_mul" } else { "mul" };
        let pipeline = ctx.pipeline(Module::Ntt, entry)?;
        let mut batch = Batch::new(ctx, Some(lease.get::<wgpu::Buffer>(params)?), entry);
        for c in 0..chunks {
            let p = NttParams {
                count: d.chunk_elems(c) as u32,
                base: (c * chunk_len) as u32,
                lo_chunk: c as u32,
                hi_chunk: c as u32,
                log_chunk: chunk_len.trailing_zeros(),
                c: words(k.unwrap_or_default()),
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
    finish(ctx, lease, result, &[params])
}
