// MSM, curve-independent part: scalars out of Montgomery form, then a counting sort of
// the terms by bucket in every window.

@group(0) @binding(1) var<storage, read> scalars: array<u32>;
// canon[8i..8i+8]: term i's scalar as a canonical 256-bit integer (little-endian words).
@group(0) @binding(2) var<storage, read_write> canon: array<u32>;

fn digit(i: u32, w: u32) -> u32 {
    let bit = w * params.window_bits;
    let q = bit / 32u;
    let s = bit % 32u;
    var v = canon[i * 8u + q] >> s;
    if s + params.window_bits > 32u && q + 1u < 8u {
        v |= canon[i * 8u + q + 1u] << (32u - s);
    }
    return v & (params.buckets - 1u);
}

@compute @workgroup_size(64)
fn to_canonical(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    var w: array<u32, 8>;
    let o = (params.scalar_offset + t) * 8u;
    for (var k = 0u; k < 8u; k++) {
        w[k] = scalars[o + k];
    }
    var c = fr_pack(fr_from_mont(fr_unpack(w)));
    for (var k = 0u; k < 8u; k++) {
        canon[t * 8u + k] = c[k];
    }
}

// One thread per (window, term).
@compute @workgroup_size(64)
fn histogram(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let i = t % params.n;
    let w = t / params.n;
    let d = digit(i, w);
    if d != 0u {
        atomicAdd(&counts[w * params.buckets + d], 1u);
    }
}

// One thread per window: bucket starts (into `cursor`) and task numbering.
@compute @workgroup_size(64)
fn scan(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let w = thread_index(wid, lid, nwg);
    if w >= params.count {
        return;
    }
    var start = 0u;
    var tasks = 0u;
    let base = w * params.buckets;
    let task_base = w * (params.buckets + 1u);
    for (var b = 0u; b < params.buckets; b++) {
        let c = atomicLoad(&counts[base + b]);
        atomicStore(&cursor[base + b], start);
        task_off[task_base + b] = tasks;
        start += c;
        tasks += (c + params.task_size - 1u) / params.task_size;
    }
    task_off[task_base + params.buckets] = tasks;
}

// One thread per (window, term): its place in the window's bucket order.
@compute @workgroup_size(64)
fn scatter(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let i = t % params.n;
    let w = t / params.n;
    let d = digit(i, w);
    if d != 0u {
        let pos = atomicAdd(&cursor[w * params.buckets + d], 1u);
        sorted[w * params.n + pos] = i;
    }
}
