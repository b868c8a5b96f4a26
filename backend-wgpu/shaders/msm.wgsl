// MSM, curve part, for G1 and G2 alike (the point addition is a program.wgsl program,
// coordinates `ext` Fq each): bucket sums by tasks, the tasks of each bucket merged,
// then every window reduced to Σ_b b·B_b by levels of groups of LEVEL_GROUP.
//
// A level turns elements (A_j, C_j), whose value is Σ_j j·A_j + Σ_j C_j, into
// (A'_g, C'_g) for groups g of LEVEL_GROUP consecutive j = g·L + i:
// A'_g = L·Σ_i A_j and C'_g = Σ_i i·A_j + Σ_i C_j, with the same value. Level 0 starts
// from A_b = bucket b's sum, C_b = 0; the last level leaves one element per window,
// whose C is the window's sum.

const LEVEL_GROUP: u32 = 4u;

@group(0) @binding(7) var<storage, read> bases: array<u32>;
// partials[w·max_tasks + k]: the sum of task k of window w (projective); after the
// merge rounds, a bucket's first task holds the bucket's sum.
@group(0) @binding(8) var<storage, read_write> partials: array<u32>;
// Levels' (A, C) pairs: level_in[2(w·m_in + j)], level_out[2(w·m_out + g)].
@group(0) @binding(9) var<storage, read_write> level_in: array<u32>;
@group(0) @binding(10) var<storage, read_write> level_out: array<u32>;

// regs[dst, dst + 3·ext) += regs[src, src + 3·ext).
fn add_regs(dst: u32, src: u32) {
    let n = 3u * params.ext;
    regs_copy(0u, dst, n);
    regs_copy(n, src, n);
    run_program(params.prog_start, params.prog_len);
    regs_copy(dst, 2u * n, n);
}

// Q = base i (stored affine, Z = 1); false for the stored identity (0, 0).
fn load_base_into_q(i: u32) -> bool {
    let e = params.ext;
    let o = i * 24u * e;
    var any = 0u;
    for (var k = 0u; k < 24u * e; k++) {
        any |= bases[o + k];
    }
    if any == 0u {
        return false;
    }
    for (var r = 0u; r < 2u * e; r++) {
        var w: array<u32, 12>;
        for (var k = 0u; k < 12u; k++) {
            w[k] = bases[o + 12u * r + k];
        }
        regs[3u * e + r] = fq_unpack(w);
    }
    regs[5u * e] = fq_one();
    if e == 2u {
        regs[5u * e + 1u] = fq_zero();
    }
    return true;
}

// regs[at, at + 3·ext) = point i of `partials`.
fn load_partial(at: u32, i: u32) {
    let n = 3u * params.ext;
    for (var r = 0u; r < n; r++) {
        var w: array<u32, 12>;
        for (var k = 0u; k < 12u; k++) {
            w[k] = partials[(i * n + r) * 12u + k];
        }
        regs[at + r] = fq_unpack(w);
    }
}

fn store_partial(i: u32, at: u32) {
    let n = 3u * params.ext;
    for (var r = 0u; r < n; r++) {
        var w = fq_pack(regs[at + r]);
        for (var k = 0u; k < 12u; k++) {
            partials[(i * n + r) * 12u + k] = w[k];
        }
    }
}

fn load_level(at: u32, i: u32) {
    let n = 3u * params.ext;
    for (var r = 0u; r < n; r++) {
        var w: array<u32, 12>;
        for (var k = 0u; k < 12u; k++) {
            w[k] = level_in[(i * n + r) * 12u + k];
        }
        regs[at + r] = fq_unpack(w);
    }
}

fn store_level(i: u32, at: u32) {
    let n = 3u * params.ext;
    for (var r = 0u; r < n; r++) {
        var w = fq_pack(regs[at + r]);
        for (var k = 0u; k < 12u; k++) {
            level_out[(i * n + r) * 12u + k] = w[k];
        }
    }
}

// One thread per (window, task): the sum of at most task_size points of one bucket.
@compute @workgroup_size(64)
fn accumulate(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    let span = task_span(t);
    if !span.live {
        return;
    }
    let w = span.w;
    let e = params.ext;
    regs_set_identity(0u, e);
    // The task's first point starts the sum (one addition fewer a task).
    var empty = true;
    for (var pos = span.first; pos < span.last; pos++) {
        let entry = sorted[w * params.n + pos];
        if load_base_into_q(params.base_offset + (entry & ~SIGN_BIT)) {
            // A negative digit adds −Q = (x, −y).
            if (entry & SIGN_BIT) != 0u {
                for (var r = 0u; r < e; r++) {
                    regs[4u * e + r] = fq_sub(fq_zero(), regs[4u * e + r]);
                }
            }
            if empty {
                regs_copy(0u, 3u * e, 3u * e);
                empty = false;
            } else {
                run_program(params.prog_start, params.prog_len);
                regs_copy(0u, 6u * e, 3u * e);
            }
        }
    }
    store_partial(t, 0u);
}

// One thread per (window, task); round r: the task q (of its bucket) with q divisible
// by 2^(r+1) adds task q + 2^r, if the bucket has it.
@compute @workgroup_size(64)
fn merge_tasks(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let w = t / params.max_tasks;
    // Nothing to merge in this round: no bucket of the window has more than 2^round tasks.
    if (1u << params.round) >= most_tasks(w) {
        return;
    }
    let k = t % params.max_tasks;
    let task_base = w * (params.buckets + 1u);
    if k >= task_off[task_base + params.buckets] {
        return;
    }
    let b = bucket_of_task(task_base, k);
    let q = k - task_off[task_base + b];
    let tasks = task_off[task_base + b + 1u] - task_off[task_base + b];
    let step = 1u << params.round;
    if (q & (2u * step - 1u)) != 0u || q + step >= tasks {
        return;
    }
    let n = 3u * params.ext;
    load_partial(0u, w * params.max_tasks + k);
    load_partial(n, w * params.max_tasks + k + step);
    run_program(params.prog_start, params.prog_len);
    store_partial(t, 2u * n);
}

// Element j of window w at this level: A (a bucket's sum at level 0) and C (0 there).
fn load_element(w: u32, j: u32, a_at: u32, c_at: u32) {
    if params.level == 0u {
        let task_base = w * (params.buckets + 1u);
        let k = task_off[task_base + j];
        if k == task_off[task_base + j + 1u] {
            regs_set_identity(a_at, params.ext);
        } else {
            load_partial(a_at, w * params.max_tasks + k);
        }
        regs_set_identity(c_at, params.ext);
    } else {
        load_level(a_at, 2u * (w * params.m_in + j));
        load_level(c_at, 2u * (w * params.m_in + j) + 1u);
    }
}

// One thread per (window, group of LEVEL_GROUP elements): one level of the reduction.
@compute @workgroup_size(64)
fn reduce_level(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let e = params.ext;
    let n = 3u * e;
    let w = t / params.m_out;
    let g = t % params.m_out;
    // Registers past the programs' own: running sum S, U = Σ i·A, Σ C, and the
    // element's A and C.
    let s_at = PROGRAM_REGS;
    let u_at = s_at + n;
    let c_at = u_at + n;
    let a_at = c_at + n;
    let cj_at = a_at + n;
    regs_set_identity(s_at, e);
    regs_set_identity(u_at, e);
    regs_set_identity(c_at, e);
    // Elements i from count − 1 down to 0, each: C += C_i, S += A_i and, for i > 0,
    // U += S (so U = Σ i·A_i); then A' = LEVEL_GROUP·S (S += S twice) and C' = C + U.
    // One loop over the additions keeps a single inlined copy of the interpreter.
    let first = g * LEVEL_GROUP;
    let count = min(LEVEL_GROUP, params.m_in - first);
    var left = count;
    var op = 0u;
    var tail = 0u;
    loop {
        var dst = s_at;
        var src = s_at;
        if left > 0u {
            let i = left - 1u;
            let j = first + i;
            if op == 0u {
                load_element(w, j, a_at, cj_at);
                dst = c_at;
                src = cj_at;
            } else if op == 1u {
                src = a_at;
            } else {
                dst = u_at;
            }
            op += 1u;
            if op == 3u || (op == 2u && i == 0u) {
                op = 0u;
                left -= 1u;
            }
        } else {
            if tail == 3u {
                break;
            }
            if tail == 2u {
                dst = c_at;
                src = u_at;
            }
            tail += 1u;
        }
        add_regs(dst, src);
    }
    store_level(2u * t, s_at);
    store_level(2u * t + 1u, c_at);
}
