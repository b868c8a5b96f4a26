// Radix-2 NTT over Fr, in place, natural order in and out, and the pointwise ops.
//
// A buffer larger than one storage binding is split into chunks of 2^log_chunk
// elements; a dispatch binds at most two of them (`lo` and `hi`, the same chunk bound
// twice when only one is needed) and addresses elements by their global index.
// Forward: bit-reversal permutation, then log n decimation-in-time stages. Twiddles
// come from two small tables (w^e = lo[e mod 2^h] · hi[e >> h]), so no table ever
// needs more than one binding.

// NttParams is generated from params.rs and placed before this file.
@group(0) @binding(0) var<uniform> params: NttParams;
@group(0) @binding(1) var<storage, read_write> lo: array<u32>;
@group(0) @binding(2) var<storage, read_write> hi: array<u32>;
@group(0) @binding(3) var<storage, read_write> tw: array<u32>;

fn thread_index(wid: vec3<u32>, lid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return (wid.y * nwg.x + wid.x) * 64u + lid.x;
}

fn param_c() -> Fr {
    var w: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        w[k] = params.c[k / 4u][k % 4u];
    }
    return fr_unpack(w);
}

fn param_h() -> Fr {
    var w: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        w[k] = params.h[k / 4u][k % 4u];
    }
    return fr_unpack(w);
}

fn chunk_of(i: u32) -> u32 {
    return i >> params.log_chunk;
}

fn local_word(i: u32) -> u32 {
    return (i & ((1u << params.log_chunk) - 1u)) * 8u;
}

fn ld_lo(i: u32) -> Fr {
    var w: array<u32, 8>;
    let o = local_word(i);
    for (var k = 0u; k < 8u; k++) {
        w[k] = lo[o + k];
    }
    return fr_unpack(w);
}

fn ld_hi(i: u32) -> Fr {
    var w: array<u32, 8>;
    let o = local_word(i);
    for (var k = 0u; k < 8u; k++) {
        w[k] = hi[o + k];
    }
    return fr_unpack(w);
}

fn st_lo(i: u32, a: Fr) {
    var w = fr_pack(a);
    let o = local_word(i);
    for (var k = 0u; k < 8u; k++) {
        lo[o + k] = w[k];
    }
}

fn st_hi(i: u32, a: Fr) {
    var w = fr_pack(a);
    let o = local_word(i);
    for (var k = 0u; k < 8u; k++) {
        hi[o + k] = w[k];
    }
}

// Element i of the transform, from whichever bound chunk holds it.
fn ld(i: u32) -> Fr {
    if chunk_of(i) == params.lo_chunk {
        return ld_lo(i);
    }
    return ld_hi(i);
}

fn st(i: u32, a: Fr) {
    if chunk_of(i) == params.lo_chunk {
        st_lo(i, a);
    } else {
        st_hi(i, a);
    }
}

fn ld_tw(i: u32) -> Fr {
    var w: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        w[k] = tw[i * 8u + k];
    }
    return fr_unpack(w);
}

// tw[i] = root^i for i < 2^h, then root^((i − 2^h)·2^h).
@compute @workgroup_size(64)
fn twiddles(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let n_lo = 1u << params.tw_log_lo;
    var e = t;
    if t >= n_lo {
        e = (t - n_lo) << params.tw_log_lo;
    }
    var w = fr_pack(fr_pow(param_h(), e));
    for (var k = 0u; k < 8u; k++) {
        tw[t * 8u + k] = w[k];
    }
}

// x[i] *= c · h^i (h^i only when `stage` is 1), over one chunk bound as `lo`.
@compute @workgroup_size(64)
fn scale(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let i = params.base + t;
    var f = param_c();
    if params.stage == 1u {
        f = fr_mul(f, fr_pow(param_h(), i));
    }
    st_lo(i, fr_mul(ld_lo(i), f));
}

// Swaps x[i] and x[rev(i)] for i in chunk `lo_chunk` whose partner is in `hi_chunk`.
@compute @workgroup_size(64)
fn bitrev(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let i = params.base + t;
    let j = reverseBits(i) >> (32u - params.log_n);
    if chunk_of(j) != params.hi_chunk || j <= i {
        return;
    }
    let a = ld_lo(i);
    let b = ld(j);
    st_lo(i, b);
    st(j, a);
}

// One decimation-in-time stage: butterfly p joins i0 and i0 + 2^s with w^(j·n/2^(s+1)).
@compute @workgroup_size(64)
fn butterfly(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let p = params.base + t;
    let s = params.stage;
    let half = 1u << s;
    let j = p & (half - 1u);
    let i0 = ((p >> s) << (s + 1u)) + j;
    let i1 = i0 + half;
    let e = j << (params.log_n - 1u - s);
    let e_lo = e & ((1u << params.tw_log_lo) - 1u);
    let e_hi = e >> params.tw_log_lo;
    let w = fr_mul(ld_tw(e_lo), ld_tw((1u << params.tw_log_lo) + e_hi));
    let u = ld(i0);
    let v = fr_mul(ld(i1), w);
    st(i0, fr_add(u, v));
    st(i1, fr_sub(u, v));
}

// lo[i] *= hi[i] (matching chunks of two buffers).
@compute @workgroup_size(64)
fn mul(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let i = params.base + t;
    st_lo(i, fr_mul(ld_lo(i), ld_hi(i)));
}

// lo[i] = (lo[i] − hi[i]) · c.
@compute @workgroup_size(64)
fn sub_mul(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let i = params.base + t;
    st_lo(i, fr_mul(fr_sub(ld_lo(i), ld_hi(i)), param_c()));
}
