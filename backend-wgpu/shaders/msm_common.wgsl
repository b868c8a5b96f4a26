// Bindings and parameters shared by the MSM's scalar-sorting module (msm_sort.wgsl)
// and its accumulation modules (msm.wgsl, interpreted; msm_values.wgsl, straight-line).
//
// Bucket method over `windows` windows of `window_bits` bits, signed digits
// (msm_sort.wgsl's signed_digits: digits in [−2^(c−1), 2^(c−1)], bucket b = |digit|,
// 2^(c−1) + 1 buckets, a negative digit's point negated as it is added); digit 0 is
// skipped. Per window, points are counted
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

// merge_tasks, round r (params.round): thread t = w·max_tasks + k is task k of window
// w; the task q (of its bucket) with q divisible by 2^(r+1) adds task q + 2^r into
// partials[t] if the bucket has it. Whether thread t adds anything this round.
fn merges_this_round(t: u32) -> bool {
    if t >= params.count {
        return false;
    }
    let w = t / params.max_tasks;
    // Nothing to merge in this round: no bucket of the window has more than 2^round tasks.
    if (1u << params.round) >= most_tasks(w) {
        return false;
    }
    let k = t % params.max_tasks;
    let task_base = w * (params.buckets + 1u);
    if k >= task_off[task_base + params.buckets] {
        return false;
    }
    let b = bucket_of_task(task_base, k);
    let q = k - task_off[task_base + b];
    let tasks = task_off[task_base + b + 1u] - task_off[task_base + b];
    let step = 1u << params.round;
    return (q & (2u * step - 1u)) == 0u && q + step < tasks;
}

// The reduction (reduce_level, one thread per (window, group of LEVEL_GROUP
// elements)) turns a level's elements (A_j, C_j), whose value is Σ_j j·A_j + Σ_j C_j,
// into (A'_g, C'_g) for groups g of LEVEL_GROUP consecutive j = g·L + i:
// A'_g = L·Σ_i A_j and C'_g = Σ_i i·A_j + Σ_i C_j, with the same value. Level 0 starts
// from A_b = bucket b's sum, C_b = 0; the last level leaves one element per window,
// whose C is the window's sum.
const LEVEL_GROUP: u32 = 4u;

// A group's additions, one per step, over a running sum S, U = Σ i·A_i and C: elements
// i from count − 1 down to 0, each C += C_i (not at level 0, where C_i is the
// identity), S += A_i and, for i > 0, U += S; then A' = LEVEL_GROUP·S (S += S twice)
// and C' = C + U. Each form's kernel makes one addition per step from one call site,
// so the addition is inlined once.
const STEP_C_PLUS_CI: u32 = 0u;
const STEP_S_PLUS_AI: u32 = 1u;
const STEP_U_PLUS_S: u32 = 2u;
const STEP_S_PLUS_S: u32 = 3u;
const STEP_C_PLUS_U: u32 = 4u;
const STEP_DONE: u32 = 5u;

// Where a group's walk through its steps stands.
struct ReduceWalk {
    first: u32,
    left: u32,
    op: u32,
    tail: u32,
}

// One step: which addition, and element j's (A, C) to load before it if `load`.
struct ReduceStep {
    op: u32,
    j: u32,
    load: bool,
}

// The walk of group g of its window.
fn reduce_walk(g: u32) -> ReduceWalk {
    let first = g * LEVEL_GROUP;
    return ReduceWalk(first, min(LEVEL_GROUP, params.m_in - first), 0u, 0u);
}

fn reduce_next(walk: ptr<function, ReduceWalk>) -> ReduceStep {
    if (*walk).left > 0u {
        let i = (*walk).left - 1u;
        var op = (*walk).op;
        let load = op == STEP_C_PLUS_CI;
        if load && params.level == 0u {
            op = STEP_S_PLUS_AI;
        }
        let step = ReduceStep(op, (*walk).first + i, load);
        op += 1u;
        if op == 3u || (op == 2u && i == 0u) {
            op = 0u;
            (*walk).left -= 1u;
        }
        (*walk).op = op;
        return step;
    }
    let tail = (*walk).tail;
    (*walk).tail = tail + 1u;
    if tail == 3u {
        return ReduceStep(STEP_DONE, 0u, false);
    }
    if tail == 2u {
        return ReduceStep(STEP_C_PLUS_U, 0u, false);
    }
    return ReduceStep(STEP_S_PLUS_S, 0u, false);
}
