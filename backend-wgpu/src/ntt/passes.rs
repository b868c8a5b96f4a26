//! The passes path: a bit reversal, then one global dispatch per radix-2 stage and
//! chunk (pair), the twiddles recomputed from two small tables. The path of adapters
//! with less workgroup storage than a tile takes, and of the stages whose pairs lie in
//! two chunks on the workgroup path.

use crucible_core::{Domain, NttKind};

use crate::wgsl::params::NttParams;

use super::steps::{Kernel, Step, Table};
use super::twiddles::{tw_log_lo, twiddle_step};
use crate::field::{fr_words, DeviceScalar};

/// Every dispatch of one NTT of `domain` over a buffer of `chunk_len`-element chunks
/// on the passes path.
pub fn pass_steps<F: DeviceScalar>(
    domain: &Domain<F>,
    kind: NttKind,
    chunk_len: usize,
) -> Vec<Step> {
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
    let mut out = vec![twiddle_step(domain, inverse, base)];
    let scale = |out: &mut Vec<Step>, c: F, h: Option<F>| {
        for ch in 0..chunks {
            out.push(Step::plain(
                Kernel::Scale,
                NttParams {
                    count: chunk as u32,
                    base: (ch * chunk) as u32,
                    stage: u32::from(h.is_some()),
                    lo_chunk: ch as u32,
                    hi_chunk: ch as u32,
                    c: fr_words(c),
                    h: fr_words(h.unwrap_or(F::ONE)),
                    ..base
                },
            ));
        }
    };
    if kind == NttKind::CosetForward {
        scale(&mut out, F::ONE, Some(domain.coset_gen));
    }
    reversal_steps(&mut out, Kernel::Bitrev, chunks, chunk, base);
    butterfly_steps(&mut out, 0..k, chunks, chunk, base);
    match kind {
        NttKind::Inverse => scale(&mut out, domain.size_inv, None),
        NttKind::CosetInverse => scale(&mut out, domain.size_inv, Some(domain.coset_gen_inv)),
        NttKind::Forward | NttKind::CosetForward => {}
    }
    out
}

/// The bit reversal (`kernel`: `bitrev` or `bitrev_powers`), one dispatch per pair of
/// chunks.
pub fn reversal_steps(
    out: &mut Vec<Step>,
    kernel: Kernel,
    chunks: usize,
    chunk: usize,
    base: NttParams,
) {
    for a in 0..chunks {
        for b in a..chunks {
            out.push(Step {
                kernel,
                params: NttParams {
                    count: chunk as u32,
                    base: (a * chunk) as u32,
                    lo_chunk: a as u32,
                    hi_chunk: b as u32,
                    ..base
                },
                tw: Table::Scratch,
                pw: Table::Coset,
            });
        }
    }
}

/// Global radix-2 stages `stages`, one dispatch per stage and chunk (pair), their
/// twiddles from the scratch tables.
pub fn butterfly_steps(
    out: &mut Vec<Step>,
    stages: std::ops::Range<u32>,
    chunks: usize,
    chunk: usize,
    base: NttParams,
) {
    for s in stages {
        let half = 1usize << s;
        if 2 * half <= chunk {
            // Both ends of every butterfly lie in the same chunk.
            for c in 0..chunks {
                out.push(Step::plain(
                    Kernel::Butterfly,
                    NttParams {
                        count: (chunk / 2) as u32,
                        base: (c * chunk / 2) as u32,
                        stage: s,
                        lo_chunk: c as u32,
                        hi_chunk: c as u32,
                        ..base
                    },
                ));
            }
        } else {
            // Chunk a's elements pair with chunk a + half/chunk's.
            for a in (0..chunks).filter(|a| (a * chunk) & half == 0) {
                let first = a * chunk;
                out.push(Step::plain(
                    Kernel::Butterfly,
                    NttParams {
                        count: chunk as u32,
                        base: (((first >> (s + 1)) << s) + (first & (half - 1))) as u32,
                        stage: s,
                        lo_chunk: a as u32,
                        hi_chunk: (a + half / chunk) as u32,
                        ..base
                    },
                ));
            }
        }
    }
}
