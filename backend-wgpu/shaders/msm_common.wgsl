// Bindings and parameters shared by the MSM's scalar-sorting module (msm_sort.wgsl)
// and its accumulation modules (msm.wgsl, interpreted; msm_values.wgsl, straight-line).
//
// Bucket method over `windows` windows of `window_bits` bits, digits unsigned (bucket
// b = digit b, 2^window_bits buckets) or signed (msm_sort.wgsl's signed_digits: digits
// in [−2^(c−1), 2^(c−1)], bucket b = |digit|, 2^(c−1) + 1 buckets, a negative digit's
// point negated as it is added); digit 0 is skipped. Per window, points are counted
// per bucket, sorted by bucket (counting sort), and each bucket's points are summed by
// tasks of at most `task_size` points;
// the tasks of one bucket are then merged pairwise, one round per dispatch, so a
// bucket that holds every point (all scalars equal) is still spread over many threads.
// Tasks of window w are numbered from task_off[w][bucket].
//
// Every thread does a bounded amount of work whatever the scalars: besides balancing
// the load, this keeps each invocation under llvmpipe's limit of 65535 loop
// iterations (past it, loops silently stop early), and under desktop GPUs' watchdogs.

// MsmParams is generated from params.rs and placed before this file.
@group(0) @binding(0) var<uniform> params: MsmParams;
// counts[w·buckets + b]: points of window w in bucket b.
@group(0) @binding(3) var<storage, read_write> counts: array<atomic<u32>>;
// cursor[w·buckets + b]: after the scatter, the end of bucket b in sorted[w].
@group(0) @binding(4) var<storage, read_write> cursor: array<atomic<u32>>;
// task_off[w·(buckets + 1) + b]: first task of bucket b; the last entry is the total.
// After every window's entries, task_off[windows·(buckets + 1) + w]: the most tasks
// one bucket of window w has (merge rounds past it have nothing to do).
@group(0) @binding(5) var<storage, read_write> task_off: array<u32>;
// sorted[w·n + k]: term indices of window w, ordered by bucket, SIGN_BIT set where the
// term's digit is negative.
@group(0) @binding(6) var<storage, read_write> sorted: array<u32>;

const SIGN_BIT: u32 = 0x80000000u;

fn thread_index(wid: vec3<u32>, lid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return (wid.y * nwg.x + wid.x) * 64u + lid.x;
}

// The bucket b of window w with task_off[b] ≤ k < task_off[b + 1] (k < the total).
fn bucket_of_task(task_base: u32, k: u32) -> u32 {
    var lo = 0u;
    var hi = params.buckets;
    while hi - lo > 1u {
        let mid = (lo + hi) / 2u;
        if task_off[task_base + mid] <= k {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// The most tasks one bucket of window w has (written by the scan).
fn most_tasks(w: u32) -> u32 {
    return task_off[params.windows * (params.buckets + 1u) + w];
}

// The entries of `sorted` that thread t sums in an accumulate kernel (one thread per
// (window, task); its partial sum goes to partials[t]): window w's positions
// [first, last). `live` is false for a thread past the dispatch or past its window's
// tasks, which writes nothing.
struct TaskSpan {
    live: bool,
    w: u32,
    first: u32,
    last: u32,
}

fn task_span(t: u32) -> TaskSpan {
    if t >= params.count {
        return TaskSpan(false, 0u, 0u, 0u);
    }
    let w = t / params.max_tasks;
    let k = t % params.max_tasks;
    let task_base = w * (params.buckets + 1u);
    if k >= task_off[task_base + params.buckets] {
        return TaskSpan(false, w, 0u, 0u);
    }
    let b = bucket_of_task(task_base, k);
    let end = atomicLoad(&cursor[w * params.buckets + b]);
    let start = end - atomicLoad(&counts[w * params.buckets + b]);
    let first = start + (k - task_off[task_base + b]) * params.task_size;
    return TaskSpan(true, w, first, min(first + params.task_size, end));
}
