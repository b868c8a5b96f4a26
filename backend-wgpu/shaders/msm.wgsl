// MSM, curve part, for G1 and G2 alike (the point addition is a program.wgsl program,
// coordinates `ext` Fq each): bucket sums by tasks, then each group of buckets reduced
// to two points that the host combines.

@group(0) @binding(7) var<storage, read> bases: array<u32>;
// partials[w·max_tasks + k]: the sum of task k of window w (projective).
@group(0) @binding(8) var<storage, read_write> partials: array<u32>;
// groups[2(w·groups + g)]: S = Σ_j B_j and then U = Σ_j j·B_j over group g's buckets
// B_j = bucket g·group_len + j.
@group(0) @binding(9) var<storage, read_write> groups: array<u32>;

// P += Q on the point registers.
fn add_q_into_p() {
    run_program(params.prog_start, params.prog_len);
    regs_copy(0u, 6u * params.ext, 3u * params.ext);
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

// regs[at, at + 3·ext) = partial i.
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

fn store_group(i: u32, p: array<Fq, 6>) {
    let n = 3u * params.ext;
    var q = p;
    for (var r = 0u; r < n; r++) {
        var w = fq_pack(q[r]);
        for (var k = 0u; k < 12u; k++) {
            groups[(i * n + r) * 12u + k] = w[k];
        }
    }
}

// One thread per (window, task): the sum of at most task_size points of one bucket.
@compute @workgroup_size(64)
fn accumulate(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let w = t / params.max_tasks;
    let k = t % params.max_tasks;
    let task_base = w * (params.buckets + 1u);
    if k >= task_off[task_base + params.buckets] {
        return;
    }
    // The bucket b with task_off[b] ≤ k < task_off[b + 1].
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
    let b = lo;
    let end = atomicLoad(&cursor[w * params.buckets + b]);
    let start = end - atomicLoad(&counts[w * params.buckets + b]);
    let first = start + (k - task_off[task_base + b]) * params.task_size;
    let last = min(first + params.task_size, end);
    regs_set_identity(0u, params.ext);
    for (var pos = first; pos < last; pos++) {
        if load_base_into_q(params.base_offset + sorted[w * params.n + pos]) {
            add_q_into_p();
        }
    }
    store_partial(w * params.max_tasks + k, 0u);
}

// One thread per (window, group): running sums over the group's buckets, top down.
@compute @workgroup_size(64)
fn bucket_reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let e = params.ext;
    let n = 3u * e;
    let w = t / params.groups;
    let g = t % params.groups;
    let task_base = w * (params.buckets + 1u);
    var running: array<Fq, 6>;
    var acc: array<Fq, 6>;
    regs_set_identity(0u, e);
    for (var r = 0u; r < n; r++) {
        running[r] = regs[r];
        acc[r] = regs[r];
    }
    // For j from group_len − 1 down to 0: running += B_j (one addition per task of
    // bucket j), then, for j > 0, acc += running.
    var j = params.group_len - 1u;
    var k = task_off[task_base + g * params.group_len + j];
    loop {
        let b = g * params.group_len + j;
        let into_running = k < task_off[task_base + b + 1u];
        if into_running {
            for (var r = 0u; r < n; r++) {
                regs[r] = running[r];
            }
            load_partial(n, w * params.max_tasks + k);
            k += 1u;
        } else if j == 0u {
            break;
        } else {
            for (var r = 0u; r < n; r++) {
                regs[r] = acc[r];
                regs[n + r] = running[r];
            }
            j -= 1u;
            k = task_off[task_base + b - 1u];
        }
        run_program(params.prog_start, params.prog_len);
        for (var r = 0u; r < n; r++) {
            if into_running {
                running[r] = regs[2u * n + r];
            } else {
                acc[r] = regs[2u * n + r];
            }
        }
    }
    store_group(2u * t, running);
    store_group(2u * t + 1u, acc);
}
