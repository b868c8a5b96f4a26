//! The witness-aware part of an MSM (kernels/ones.cu): most witness values of real
//! circuits are 0 or 1. The scalars are counted on the device and the host reads the
//! counts back (one small copy), then they are classified into one list of term
//! indices, [ones | rest], zeros dropped, so that Pippenger runs over the rest alone
//! with a window and a chunk chosen for their number, and the ones are summed apart,
//! as a plain sum of their bases. Full-width scalars (no zero, no one) get no list:
//! their MSM pays the count (one read of the scalars, and the copy back) and runs as
//! without it. Every scalar equal to 1 would otherwise be one entry of window 0's bucket 1:
//! one bucket holding most of the terms, whose counts and scatter are atomics on one
//! word and whose carries take a tree of launches.

use std::sync::Arc;

use crucible_core::{BufferId, Lease, MemoryPlan, PlanKey, Result};
use cudarc::driver::{CudaStream, CudaView};

use crate::error::CudaError;
use crate::field::{Group, Which};
use crate::launch::{self, grid_1d, grid_with_block, Dev, Kernel, Kernels};
use crate::memory::{alloc_words, alloc_words_uninit, download, download_at, CudaBuffer};
use crate::msm::layout::scan_words;
use crate::msm::sort::prefix_sum;
use crate::msm::sort_reuse::{Classes, MSM_ONES_LIST};

// The scratch of ones.cu's opening contract (the list is sort_reuse.rs's: it is kept).
const MSM_CLASS_COUNT: PlanKey = PlanKey::new("cuda", "msm_class_count");
const MSM_CLASS_START: PlanKey = PlanKey::new("cuda", "msm_class_start");
const MSM_CLASS_SCAN: PlanKey = PlanKey::new("cuda", "msm_class_scan");
const MSM_ONES_PARTIALS: PlanKey = PlanKey::new("cuda", "msm_ones_partials");
const MSM_ONES_TICKETS: PlanKey = PlanKey::new("cuda", "msm_ones_tickets");
const MSM_ONES_SUMS: PlanKey = PlanKey::new("cuda", "msm_ones_sums");

/// Scalars one thread classifies: 2^14 threads at 2^20 terms, each reading 2 KiB.
const CLASS_CHUNK: usize = 64;
/// Threads of the ones' sum kernel, like the bucket sums' (it uses as many registers).
const ONES_BLOCK: u32 = 128;

/// The most leaves of the ones' sum (the scratch planned for them): about 1.3 waves of
/// the H200's resident threads of the curve kernels (G2's take twice the registers).
/// The sum takes one wave at most (the device's resident threads of the kernel): a
/// second, partial wave cost as long as a full one, and each level of the tree above
/// the leaves one dependent addition (about 30 µs on a nearly idle H200; 16 levels for
/// 2^16 leaves).
fn most_leaves(group: Group) -> usize {
    match group.which {
        Which::G1 => 1 << 16,
        Which::G2 => 1 << 15,
    }
}

/// (item, words, zeroed) of the classification's scratch for `n` scalars.
fn class_items(n: usize) -> [(PlanKey, usize, bool); 3] {
    let chunks = n.div_ceil(CLASS_CHUNK);
    [
        // Step 1 writes every count, the prefix sum every start.
        (MSM_CLASS_COUNT, 2 * chunks, false),
        (MSM_CLASS_START, 2 * chunks + 1, false),
        // Word 0 is the prefix sum's zero.
        (MSM_CLASS_SCAN, scan_words(2 * chunks), true),
    ]
}

/// The most groups of the ones' sum, whose sums the host adds: about 1 µs each
/// on a CPU core, against 30 µs a level of the device's tree that they save (2^5 groups:
/// 5 levels fewer).
const MOST_GROUPS: usize = 32;

/// How the ones' sum runs: its leaves and log2 of the leaves of one group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SumShape {
    leaves: usize,
    group_bits: u32,
}

impl SumShape {
    /// The shape for `ones` ones (at least one) with `resident` threads of the sum
    /// kernel on the device at once.
    fn new(group: Group, ones: usize, resident: usize) -> SumShape {
        let leaves = ones.min(most_leaves(group)).min(resident.max(1));
        SumShape {
            leaves,
            group_bits: ceil_log2(leaves.div_ceil(MOST_GROUPS)),
        }
    }

    /// The groups, each one sum.
    fn groups(&self) -> usize {
        self.leaves.div_ceil(1 << self.group_bits)
    }
}

/// log2 of the smallest power of two >= `x` (0 for 0 and 1).
fn ceil_log2(x: usize) -> u32 {
    x.next_power_of_two().trailing_zeros()
}

/// (item, words, zeroed) of the ones' sum's scratch for `shape`.
fn sum_items(group: Group, shape: SumShape) -> [(PlanKey, usize, bool); 3] {
    [
        (MSM_ONES_PARTIALS, shape.leaves * group.xyzz_words(), false),
        (
            MSM_ONES_TICKETS,
            shape.leaves.saturating_sub(1).max(1),
            true,
        ),
        (MSM_ONES_SUMS, shape.groups() * group.xyzz_words(), false),
    ]
}

/// The largest scratch of any sum of up to `n` ones: the most leaves, the most groups.
fn sum_plan_items(group: Group, n: usize) -> [(PlanKey, usize, bool); 3] {
    let leaves = n.min(most_leaves(group));
    let mut items = sum_items(
        group,
        SumShape {
            leaves,
            group_bits: 0,
        },
    );
    items[2].1 = leaves.min(MOST_GROUPS) * group.xyzz_words();
    items
}

/// Scratch items of witness-aware MSMs of up to `n` terms over `group` (every size is
/// largest at `n`).
pub fn scratch_plan(group: Group, n: usize, plan: &mut MemoryPlan) {
    if n == 0 {
        return;
    }
    let list = (MSM_ONES_LIST, n, false);
    for (item, words, _) in class_items(n)
        .into_iter()
        .chain(sum_plan_items(group, n))
        .chain([list])
    {
        plan.at_least(item, (words.max(1) * 4) as u64);
    }
}

/// Allocates `items` from `work`, runs `f` over them and frees them again, on every
/// path (the first error wins).
fn with_buffers<T>(
    stream: &Arc<CudaStream>,
    work: &mut Lease,
    items: &[(PlanKey, usize, bool)],
    f: impl FnOnce(&mut Lease, &[BufferId]) -> Result<T>,
) -> Result<T> {
    let mut ids = Vec::with_capacity(items.len());
    let mut allocated = Ok(());
    for &(item, words, zeroed) in items {
        let id = if zeroed {
            alloc_words(stream, work, item, words)
        } else {
            alloc_words_uninit(stream, work, item, words)
        };
        match id {
            Ok(id) => ids.push(id),
            Err(e) => {
                allocated = Err(e);
                break;
            }
        }
    }
    let out = allocated.and_then(|()| f(work, &ids));
    let mut freed = Ok(());
    for id in ids {
        if let (Err(e), Ok(())) = (work.free(id), &freed) {
            freed = Err(e);
        }
    }
    let out = out?;
    freed?;
    Ok(out)
}

/// Classifies the `n` scalars from word offset `first` of buffer `scalars` (ones.cu
/// steps 1-3): counts them, reads the counts back, and, unless every scalar is in the
/// rest (full-width scalars: the list would name every term), lists them in a buffer
/// allocated from `work` (plan item [`MSM_ONES_LIST`]).
pub fn classify(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    work: &mut Lease,
    scalars: BufferId,
    first: usize,
    n: usize,
) -> Result<Classes> {
    let chunks = n.div_ceil(CLASS_CHUNK);
    let (n32, chunk) = (n as u32, CLASS_CHUNK as u32);
    let list = alloc_words_uninit(stream, work, MSM_ONES_LIST, n)?;
    let classes = with_buffers(stream, work, &class_items(n), |work, ids| {
        let buf = |id: BufferId| -> Result<&CudaBuffer> { work.get::<CudaBuffer>(id) };
        let (count, start, scan) = (buf(ids[0])?, buf(ids[1])?, buf(ids[2])?);
        let words = &buf(scalars)?.words;
        let view = words.slice(first..first + n * crate::field::FR_WORDS);
        launch::msm_classify_count(
            k,
            stream,
            grid_1d(chunks),
            Dev::view(&view),
            Dev::new(&count.words),
            n32,
            chunk,
        )?;
        prefix_sum(
            stream,
            k,
            &count.words,
            &start.words,
            &scan.words,
            2 * chunks,
        )?;
        // class_start[T] = ones, class_start[2T] = ones + rest.
        let counts = download_at(stream, work, ids[1], chunks, chunks + 1)?;
        let (ones, rest) = match (counts.first(), counts.last()) {
            (Some(&ones), Some(&all)) if ones <= all && all as usize <= n => {
                (ones as usize, (all - ones) as usize)
            }
            _ => {
                return Err(CudaError::Size(format!(
                    "the classification of {n} scalars read back {counts:?}"
                ))
                .into())
            }
        };
        if rest < n {
            launch::msm_classify_scatter(
                k,
                stream,
                grid_1d(chunks),
                Dev::view(&view),
                Dev::new(&start.words),
                Dev::new(&buf(list)?.words),
                n32,
                chunk,
            )?;
        }
        Ok(Classes {
            list: (rest < n).then_some(list),
            ones,
            rest,
        })
    });
    if !classes.as_ref().is_ok_and(|c| c.list.is_some()) {
        work.free(list)?;
    }
    classes
}

/// The XYZZ words of the sums whose total is the sum of the bases of the
/// `classes.ones` ones (ones.cu step 4, one sum per group), over `points` (the span's
/// first point on; plane 0), and what `meanwhile` returns. The sum runs on a stream of
/// its own, forked from `stream` and joined back before its read-back, while
/// `meanwhile` launches its work (the rest's Pippenger) on `stream`: a witness-aware
/// MSM's two parts are each a few chains of dependent additions on a mostly idle
/// device at 99 % 0/1 scalars, so they overlap.
#[allow(clippy::too_many_arguments)]
pub fn sum<T>(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    group: Group,
    work: &mut Lease,
    points: &CudaView<'_, u32>,
    classes: &Classes,
    meanwhile: impl FnOnce(&mut Lease) -> Result<T>,
) -> Result<(Vec<u32>, T)> {
    let kernel = match group.which {
        Which::G1 => Kernel::MsmG1OnesSum,
        Which::G2 => Kernel::MsmG2OnesSum,
    };
    let resident = k.resident_threads(stream, kernel, ONES_BLOCK)?;
    let shape = SumShape::new(group, classes.ones, resident);
    let list = classes
        .list
        .ok_or_else(|| CudaError::Size(format!("{} ones and no list", classes.ones)))?;
    let items = sum_items(group, shape);
    let launch = |work: &Lease, ids: &[BufferId], on: &CudaStream| -> Result<()> {
        let buf = |i: usize| -> Result<&CudaBuffer> { work.get::<CudaBuffer>(ids[i]) };
        let list = &work.get::<CudaBuffer>(list)?.words;
        let ones = list.slice(0..classes.ones);
        launch::msm_ones_sum(
            k,
            on,
            grid_with_block(shape.leaves, ONES_BLOCK),
            group,
            Dev::view(points),
            Dev::view(&ones),
            Dev::new(&buf(0)?.words),
            Dev::new(&buf(1)?.words),
            Dev::new(&buf(2)?.words),
            classes.ones as u32,
            shape.leaves as u32,
            shape.group_bits,
        )?;
        Ok(())
    };
    let words = shape.groups() * group.xyzz_words();
    with_buffers(stream, work, &items, |work, ids| {
        // Forked after the scratch's allocation (and its tickets' clearing) on `stream`.
        let side = stream.fork().map_err(CudaError::from)?;
        let during = launch(work, ids, &side).and_then(|()| meanwhile(work));
        // Joined on every path, before the scratch is read or freed.
        stream.join(&side).map_err(CudaError::from)?;
        let during = during?;
        Ok((download(stream, work, ids[2], words)?, during))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::test_groups::{BLS_G1, BLS_G2, BN_G1, BN_G2};

    #[test]
    fn the_plan_holds_the_scratch_of_every_witness_aware_msm_up_to_its_size() {
        for n in [1usize, 2, 63, 64, 65, 1000, (1 << 16) + 1, 1 << 20] {
            for group in [BLS_G1, BLS_G2, BN_G1, BN_G2] {
                let mut plan = MemoryPlan::new("t");
                scratch_plan(group, n, &mut plan);
                for m in [1, n / 2, n.saturating_sub(1), n] {
                    if m == 0 {
                        continue;
                    }
                    let list = (MSM_ONES_LIST, m, false);
                    for resident in [1, 50688, 1 << 24] {
                        let shape = SumShape::new(group, m, resident);
                        for (item, words, _) in class_items(m)
                            .into_iter()
                            .chain(sum_items(group, shape))
                            .chain([list])
                        {
                            assert!(
                                (words.max(1) * 4) as u64 <= plan.bytes_of(item),
                                "n={n} m={m} resident {resident} {item}: {words} words"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_sum_takes_one_wave_and_leaves_few_groups_to_the_host() {
        // G1 2^20 at 99 % bits: ~2^19 ones, 132 SMs x 3 blocks of 128 resident.
        let shape = SumShape::new(BLS_G1, 1 << 19, 50688);
        assert_eq!(shape.leaves, 50688);
        assert_eq!(shape.group_bits, 11);
        assert_eq!(shape.groups(), 25);
        // Fewer ones than resident threads: a leaf each.
        let shape = SumShape::new(BLS_G1, 1000, 50688);
        assert_eq!((shape.leaves, shape.groups()), (1000, 32));
        let shape = SumShape::new(BLS_G2, 1, 33792);
        assert_eq!((shape.leaves, shape.group_bits, shape.groups()), (1, 0, 1));
        // More resident threads than the plan's leaves: the plan's.
        let shape = SumShape::new(BLS_G2, 1 << 20, 1 << 20);
        assert_eq!(shape.leaves, most_leaves(BLS_G2));
        assert!(shape.groups() <= MOST_GROUPS);
    }
}
