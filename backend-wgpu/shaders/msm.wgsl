// MSM, curve part, for G1 and G2 alike (the point addition is a program.wgsl program,
// coordinates `ext` Fq each): bucket sums by tasks, the tasks of each bucket merged,
// then every window reduced to Σ_b b·B_b by levels of groups of LEVEL_GROUP (what a
// level computes, and the merge's pairing, are in msm_common.wgsl).

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
    let o = i * 2u * FQ_WORDS * e;
    var any = 0u;
    for (var k = 0u; k < 2u * FQ_WORDS * e; k++) {
        any |= bases[o + k];
    }
    if any == 0u {
        return false;
    }
    for (var r = 0u; r < 2u * e; r++) {
        var w: array<u32, FQ_WORDS>;
        for (var k = 0u; k < FQ_WORDS; k++) {
            w[k] = bases[o + FQ_WORDS * r + k];
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
        var w: array<u32, FQ_WORDS>;
        for (var k = 0u; k < FQ_WORDS; k++) {
            w[k] = partials[(i * n + r) * FQ_WORDS + k];
        }
        regs[at + r] = fq_unpack(w);
    }
}

fn store_partial(i: u32, at: u32) {
    let n = 3u * params.ext;
    for (var r = 0u; r < n; r++) {
        var w = fq_pack(regs[at + r]);
        for (var k = 0u; k < FQ_WORDS; k++) {
            partials[(i * n + r) * FQ_WORDS + k] = w[k];
        }
    }
}

fn load_level(at: u32, i: u32) {
    let n = 3u * params.ext;
    for (var r = 0u; r < n; r++) {
        var w: array<u32, FQ_WORDS>;
        for (var k = 0u; k < FQ_WORDS; k++) {
            w[k] = level_in[(i * n + r) * FQ_WORDS + k];
        }
        regs[at + r] = fq_unpack(w);
    }
}

fn store_level(i: u32, at: u32) {
    let n = 3u * params.ext;
    for (var r = 0u; r < n; r++) {
        var w = fq_pack(regs[at + r]);
        for (var k = 0u; k < FQ_WORDS; k++) {
            level_out[(i * n + r) * FQ_WORDS + k] = w[k];
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

// One thread per (window, task): one round of merging a bucket's tasks pairwise.
@compute @workgroup_size(64)
fn merge_tasks(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if !merges_this_round(t) {
        return;
    }
    let n = 3u * params.ext;
    load_partial(0u, t);
    load_partial(n, t + (1u << params.round));
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
    var walk = reduce_walk(t % params.m_out);
    loop {
        let step = reduce_next(&walk);
        if step.op == STEP_DONE {
            break;
        }
        if step.load {
            load_element(w, step.j, a_at, cj_at);
        }
        // dst += src; S += S unless the step says otherwise.
        var dst = s_at;
        var src = s_at;
        switch step.op {
            case STEP_C_PLUS_CI: {
                dst = c_at;
                src = cj_at;
            }
            case STEP_S_PLUS_AI: {
                src = a_at;
            }
            case STEP_U_PLUS_S: {
                dst = u_at;
            }
            case STEP_C_PLUS_U: {
                dst = c_at;
                src = u_at;
            }
            default: {}
        }
        add_regs(dst, src);
    }
    store_level(2u * t, s_at);
    store_level(2u * t + 1u, c_at);
}
