// MSM, curve-independent part: scalars out of Montgomery form into signed digits, then
// a counting sort of the terms by bucket in every window (signed_digits, histogram,
// scan, scatter; msm/sort.rs dispatches them).

@group(0) @binding(1) var<storage, read> scalars: array<u32>;
// digits[w·n + i], term i's digit in window w as |digit|, SIGN_BIT set
// if it is negative.
@group(0) @binding(11) var<storage, read_write> digits: array<u32>;

// One thread per term: its scalar's signed digits in every window. Window w's bits
// plus the carry from below, v in [0, 2^c]; above 2^(c−1) it becomes v − 2^c (carry 1
// into the next window). The windows cover 256 ≥ 255 bits with the top window's
// value at most 2^(c−1) (msm/windows.rs: c·windows ≥ 256), so the top window never carries.
@compute @workgroup_size(64)
fn signed_digits(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    var m: array<u32, 8>;
    let o = (params.scalar_offset + t) * 8u;
    for (var k = 0u; k < 8u; k++) {
        m[k] = scalars[o + k];
    }
    var c = fr_pack(fr_from_mont(fr_unpack(m)));
    let full = 1u << params.window_bits;
    let half = full >> 1u;
    var carry = 0u;
    for (var w = 0u; w < params.windows; w++) {
        let bit = w * params.window_bits;
        let q = bit / 32u;
        let s = bit % 32u;
        var v = c[q] >> s;
        if s + params.window_bits > 32u && q + 1u < 8u {
            v |= c[q + 1u] << (32u - s);
        }
        v = (v & (full - 1u)) + carry;
        var d = v;
        carry = 0u;
        if v > half {
            d = (full - v) | SIGN_BIT;
            carry = 1u;
        }
        digits[w * params.n + t] = d;
    }
}

// One thread per (window, term).
@compute @workgroup_size(64)
fn histogram(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let b = digits[t] & ~SIGN_BIT;
    if b != 0u {
        atomicAdd(&counts[(t / params.n) * params.buckets + b], 1u);
    }
}

// One thread per (window, term): its place in the window's bucket
// order, with its digit's sign.
@compute @workgroup_size(64)
fn scatter(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let d = digits[t];
    let b = d & ~SIGN_BIT;
    if b != 0u {
        let w = t / params.n;
        let pos = atomicAdd(&cursor[w * params.buckets + b], 1u);
        sorted[w * params.n + pos] = (t % params.n) | (d & SIGN_BIT);
    }
}

var<workgroup> scan_points: array<u32, 64>;
var<workgroup> scan_tasks: array<u32, 64>;
var<workgroup> scan_most: array<u32, 64>;

// One workgroup of 64 threads per window (count: windows): the bucket starts (into
// `cursor`) and the task numbering, each thread over a 64th of the buckets (their
// points and tasks summed, the 64 sums scanned in workgroup memory, then the bucket
// starts written).
@compute @workgroup_size(64)
fn scan(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let w = wid.y * nwg.x + wid.x;
    let l = lid.x;
    let live = w < params.count;
    let per = (params.buckets + 63u) / 64u;
    let lo = min(l * per, params.buckets);
    let hi = min(lo + per, params.buckets);
    let base = w * params.buckets;
    var points = 0u;
    var tasks = 0u;
    var most = 0u;
    if live {
        for (var b = lo; b < hi; b++) {
            let c = atomicLoad(&counts[base + b]);
            points += c;
            let bucket_tasks = (c + params.task_size - 1u) / params.task_size;
            tasks += bucket_tasks;
            most = max(most, bucket_tasks);
        }
    }
    scan_points[l] = points;
    scan_tasks[l] = tasks;
    scan_most[l] = most;
    workgroupBarrier();
    // Inclusive scan of the 64 sums (Hillis and Steele), and their maximum alike.
    for (var step = 1u; step < 64u; step *= 2u) {
        var p = 0u;
        var q = 0u;
        var m = 0u;
        if l >= step {
            p = scan_points[l - step];
            q = scan_tasks[l - step];
            m = scan_most[l - step];
        }
        workgroupBarrier();
        scan_points[l] += p;
        scan_tasks[l] += q;
        scan_most[l] = max(scan_most[l], m);
        workgroupBarrier();
    }
    if live {
        var start = scan_points[l] - points;
        var task = scan_tasks[l] - tasks;
        let task_base = w * (params.buckets + 1u);
        for (var b = lo; b < hi; b++) {
            let c = atomicLoad(&counts[base + b]);
            atomicStore(&cursor[base + b], start);
            task_off[task_base + b] = task;
            start += c;
            task += (c + params.task_size - 1u) / params.task_size;
        }
        if l == 63u {
            task_off[task_base + params.buckets] = scan_tasks[63];
            task_off[params.windows * (params.buckets + 1u) + w] = scan_most[63];
        }
    }
}
