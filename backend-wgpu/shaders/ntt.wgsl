// Radix-2 NTT over Fr, in place, natural order in and out, and the pointwise ops.
//
// A buffer larger than one storage binding is split into chunks of 2^log_chunk
// elements; a dispatch binds at most two of them (`lo` and `hi`, the same chunk bound
// twice when only one is needed) and addresses elements by their global index.
// Forward: bit-reversal permutation, then log n decimation-in-time stages (stage s
// joins i and i + 2^s, i's bit s clear, with w^((i mod 2^s) << (log n − 1 − s))).
//
// Two ways to run the stages (ntt/mod.rs chooses by the adapter's workgroup storage):
// - passes (adapters with less than 16 KiB of workgroup storage): `bitrev`, then one `butterfly` dispatch per stage and chunk (pair), the
//   twiddle w^e = lo[e mod 2^h] · hi[e >> h] from two small tables in `tw`, so no
//   table ever needs more than one binding; the scalings as `scale` passes.
// - workgroup: `tile_stages` dispatches, each doing up to 9 stages on tiles of up to
//   2^9 elements held in workgroup memory (16 KiB, WebGPU's default limit): one global
//   round trip per dispatch, three at 2^20 and 2^24. With the reversal fused (on one
//   chunk; crucible_core::ntt_tiles's `fused_plan`), as the CUDA backend's tiles do: the first
//   dispatches read and write element i at bitrev(i), one dispatch
//   centered on the middle stages (2·stage + k = log n) reads at bitrev(i) and writes
//   at i, each workgroup doing a tile and its mirror image (TILE_PAIRED: the tile
//   whose fixed bits are reversed, which bitrev maps it onto), and the rest run on
//   natural order: every workgroup writes exactly the places it read. Otherwise
//   `bitrev` (or `bitrev_powers`, the coset forward's scaling fused in) runs first. The
//   twiddles come from one precomputed table `tw` of w'^m, m < 2^(table_log − 1), w'
//   the 2^table_log-th root of the transform's direction (`twiddle_table` builds it
//   once per domain; the inverse reads it mirrored: w'^−m = −w'^(half − m)). Stages
//   at or above table_log (their pairs in two chunks) run as passes. The inverses'
//   scaling rides on the last dispatch's stores; the coset forward's on the first
//   dispatch's loads when the reversal is fused. (A whole domain in one tile is read
//   reversed and written in place, as one workgroup reads all of it first.)

// NttParams is generated from params.rs and placed before this file.

// tile_stages' flags (TILE_INVERSE, TILE_SCALE_BY_C, TILE_SCALE_BY_POWERS,
// TILE_LOAD_REVERSED, TILE_STORE_REVERSED, TILE_PAIRED: a workgroup does tile b and its
// partner, see `workgroup_tiles`; TILE_SCALE_LOADS_BY_POWERS) are generated from
// crucible_core::ntt_tiles, whose tile planner the CUDA kernels share, and placed
// before this file.
// The workgroup path's kernels multiply with `ntt_mul`: fr.wgsl's loop in module Ntt
// (shaders/ntt_mul_loop.wgsl), its unrolled form in module NttUnrolled
// (shaders/ntt_mul_unrolled.wgsl, fr_code.rs); the same values either way.

@group(0) @binding(0) var<uniform> params: NttParams;
@group(0) @binding(1) var<storage, read_write> lo: array<u32>;
@group(0) @binding(2) var<storage, read_write> hi: array<u32>;
@group(0) @binding(3) var<storage, read_write> tw: array<u32>;
@group(0) @binding(4) var<storage, read_write> pw: array<u32>;

// Most elements of a tile: 2^9 Fr of 8 words, 16 KiB, within WebGPU's default
// maxComputeWorkgroupStorageSize. Word k of tile element x is at k·TILE_MAX + x: the
// threads of a stage touch consecutive x, in distinct banks.
const TILE_MAX: u32 = 512u;
var<workgroup> tile: array<u32, 4096>;

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

fn ld_pw(i: u32) -> Fr {
    var w: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        w[k] = pw[i * 8u + k];
    }
    return fr_unpack(w);
}

fn st_tw(i: u32, a: Fr) {
    var w = fr_pack(a);
    for (var k = 0u; k < 8u; k++) {
        tw[i * 8u + k] = w[k];
    }
}

// The power table's entry i: c·g^i (see NttParams::pow_log_lo).
fn power_at(i: u32) -> Fr {
    let lo_mask = (1u << params.pow_log_lo) - 1u;
    return ntt_mul(ld_pw(i & lo_mask), ld_pw((1u << params.pow_log_lo) + (i >> params.pow_log_lo)));
}

fn bitrev_of(i: u32) -> u32 {
    return reverseBits(i) >> (32u - params.log_n);
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

// pw[i] = c·root^i for i < 2^pow_log_lo, then root^((i − 2^pow_log_lo)·2^pow_log_lo).
@compute @workgroup_size(64)
fn powers(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let n_lo = 1u << params.pow_log_lo;
    if t < n_lo {
        st_pw(t, fr_mul(param_c(), fr_pow(param_h(), t)));
    } else {
        st_pw(t, fr_pow(param_h(), (t - n_lo) << params.pow_log_lo));
    }
}

fn st_pw(i: u32, a: Fr) {
    var w = fr_pack(a);
    for (var k = 0u; k < 8u; k++) {
        pw[i * 8u + k] = w[k];
    }
}

// tw[m] = w'^m for m < count, from w'^m's two power tables in pw (c = 1).
@compute @workgroup_size(64)
fn twiddle_table(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    st_tw(t, power_at(t));
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

// x[i] ← x[bitrev(i)] · pw(bitrev(i)) for i in chunk `lo_chunk` and every i: the
// coset forward's scaling fused into the reversal. Thread i swaps the pair (i, j) for
// j = bitrev(i) > i in chunk `hi_chunk`, and scales x[i] alone for j == i.
@compute @workgroup_size(64)
fn bitrev_powers(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let i = params.base + t;
    let j = bitrev_of(i);
    if chunk_of(j) != params.hi_chunk || j < i {
        return;
    }
    if j == i {
        st_lo(i, ntt_mul(ld_lo(i), power_at(i)));
        return;
    }
    let a = ld_lo(i);
    let b = ld(j);
    st_lo(i, ntt_mul(b, power_at(j)));
    st(j, ntt_mul(a, power_at(i)));
}

// x[i] *= c (TILE_SCALE_BY_C) · pw(i) (TILE_SCALE_BY_POWERS), over one chunk bound as
// `lo`: the inverses' scaling when their last stages ran as passes.
@compute @workgroup_size(64)
fn scale_powers(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let i = params.base + t;
    st_lo(i, scaled_result(i, ld_lo(i)));
}

fn scaled_result(i: u32, a: Fr) -> Fr {
    var v = a;
    if (params.flags & TILE_SCALE_BY_C) != 0u {
        v = ntt_mul(v, param_c());
    }
    if (params.flags & TILE_SCALE_BY_POWERS) != 0u {
        v = ntt_mul(v, power_at(i));
    }
    return v;
}

fn low_mask(w: u32) -> u32 {
    return select((1u << w) - 1u, 0xffffffffu, w >= 32u);
}

// The index of element x of tile b: x's low w1 bits are index bits p1 .., the rest
// bits p2 ..; b's bits fill the other index bits in order.
fn tile_index(b: u32, x: u32) -> u32 {
    let p1 = params.p1;
    let w1 = params.w1;
    let p2 = params.p2;
    let gap = p2 - p1 - w1;
    let fixed = (b & low_mask(p1)) | (((b >> p1) & low_mask(gap)) << (p1 + w1)) | ((b >> (p1 + gap)) << (p2 + params.w2));
    return fixed | ((x & low_mask(w1)) << p1) | ((x >> w1) << p2);
}

fn tile_ld(x: u32) -> Fr {
    var w: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        w[k] = tile[k * TILE_MAX + x];
    }
    return fr_unpack(w);
}

fn tile_st(x: u32, a: Fr) {
    var w = fr_pack(a);
    for (var k = 0u; k < 8u; k++) {
        tile[k * TILE_MAX + x] = w[k];
    }
}

// x with a zero bit inserted at bit p.
fn insert_zero(x: u32, p: u32) -> u32 {
    return (x & low_mask(p)) | ((x >> p) << (p + 1u));
}

// A tile's elements: (u, v) of one butterfly, or what it leaves at its two positions.
struct TilePair {
    a: Fr,
    b: Fr,
}

// The butterfly of a pair whose first element's global index is g, at stage s: v
// scaled by w^m (no product for m = 0), and what goes to the first and the second
// position. w'^−m = −w'^(half − m): the inverse's butterflies swap their outputs.
fn tile_butterfly(u: Fr, v_in: Fr, g: u32, s: u32, half: u32, inverse: bool) -> TilePair {
    let m = (g & low_mask(s)) << (params.table_log - 1u - s);
    let mirrored = inverse && m != 0u;
    var v = v_in;
    if m != 0u {
        v = ntt_mul(v, ld_tw(select(m, half - m, mirrored)));
    }
    if mirrored {
        return TilePair(fr_sub(u, v), fr_add(u, v));
    }
    return TilePair(fr_add(u, v), fr_sub(u, v));
}

// The tiles of one workgroup: tile b, and in a paired launch its partner pb, whose
// elements follow b's in workgroup memory (`size` elements in all).
struct Tiles {
    b: u32,
    pb: u32,
    size: u32,
}

// The tiles of the workgroup doing the launch's tile `local_tile`. A paired launch is
// centered (2·stage + k = log n, no batch bits): bitrev maps tile b onto the tile whose
// fixed bits (`stage` below the stages, `stage` above) are b's reversed, its partner;
// the lower of two partners does both (the other nothing: pb < b), a tile that is its
// own partner only itself.
fn workgroup_tiles(local_tile: u32) -> Tiles {
    let b = params.base + local_tile;
    let size = 1u << (params.w1 + params.w2);
    if (params.flags & TILE_PAIRED) == 0u {
        return Tiles(b, b, size);
    }
    let s = params.stage;
    let pb = (reverseBits(b >> s) >> (32u - s)) | ((reverseBits(b & low_mask(s)) >> (32u - s)) << s);
    return Tiles(b, pb, select(2u * size, size, pb == b));
}

// The index of the workgroup's element x: in tile b, or past its elements in pb.
fn element_index(t: Tiles, x: u32) -> u32 {
    let bits = params.w1 + params.w2;
    return tile_index(select(t.b, t.pb, (x >> bits) != 0u), x & low_mask(bits));
}

// Reads the workgroup's tiles into workgroup memory (bit-reversed and scaled as
// `flags` say).
fn tile_read(t: Tiles, flags: u32, lid: u32) {
    for (var x = lid; x < t.size; x += 64u) {
        var p = element_index(t, x);
        if (flags & TILE_LOAD_REVERSED) != 0u {
            p = bitrev_of(p);
        }
        var v = ld_lo(p);
        if (flags & TILE_SCALE_LOADS_BY_POWERS) != 0u {
            v = ntt_mul(v, power_at(p));
        }
        tile_st(x, v);
    }
}

// Writes the workgroup's tiles back (bit-reversed and scaled as `flags` say).
fn tile_write(t: Tiles, flags: u32, lid: u32) {
    for (var x = lid; x < t.size; x += 64u) {
        var i = element_index(t, x);
        if (flags & TILE_STORE_REVERSED) != 0u {
            i = bitrev_of(i);
        }
        st_lo(i, scaled_result(i, tile_ld(x)));
    }
}

// The tile bit of the launch's first stage: its stages are range 1 unless the batch
// is below.
fn tile_first_bit() -> u32 {
    return select(params.w1, 0u, params.p1 == params.stage);
}

// Stage `stage + st` of the workgroup's tiles, whose bit is `bit`, one butterfly at a
// time.
fn tile_stage(t: Tiles, st: u32, bit: u32, lid: u32, half: u32, inverse: bool) {
    let s = params.stage + st;
    for (var q = lid; q < t.size / 2u; q += 64u) {
        let x0 = insert_zero(q, bit);
        let x1 = x0 | (1u << bit);
        let r = tile_butterfly(tile_ld(x0), tile_ld(x1), element_index(t, x0), s, half, inverse);
        tile_st(x0, r.a);
        tile_st(x1, r.b);
    }
}

// Stages `stage` .. stage + k − 1 on `count` tiles from tile `base`, one workgroup a
// tile (or a pair), all inside chunk `lo_chunk`: the tile is read into workgroup
// memory, the stages run two a round, and the results are written back (bit-reversed
// and scaled as `flags` say): all reads before any write. Each thread of a round takes
// four elements (the two stages' bits 00, 01, 10, 11) and runs both stages' four
// butterflies in registers, so a pair of stages costs one workgroup-memory round trip
// and one barrier (an odd last stage runs alone).
@compute @workgroup_size(64)
fn tile_stages(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    // Uniform across the workgroup: the grid may round up by whole workgroups.
    let local_tile = wid.y * nwg.x + wid.x;
    if local_tile >= params.count {
        return;
    }
    let t = workgroup_tiles(local_tile);
    if t.pb < t.b {
        return;
    }
    tile_read(t, params.flags, lid.x);
    workgroupBarrier();
    let half = 1u << (params.table_log - 1u);
    let inverse = (params.flags & TILE_INVERSE) != 0u;
    var st = 0u;
    for (; st + 2u <= params.k; st += 2u) {
        let s = params.stage + st;
        let bit = tile_first_bit() + st;
        for (var q = lid.x; q < t.size / 4u; q += 64u) {
            let x00 = insert_zero(insert_zero(q, bit), bit + 1u);
            let x01 = x00 | (1u << bit);
            let x10 = x00 | (2u << bit);
            let x11 = x00 | (3u << bit);
            let g00 = element_index(t, x00);
            let lo = tile_butterfly(tile_ld(x00), tile_ld(x01), g00, s, half, inverse);
            let hi = tile_butterfly(tile_ld(x10), tile_ld(x11), element_index(t, x10), s, half, inverse);
            let e = tile_butterfly(lo.a, hi.a, g00, s + 1u, half, inverse);
            let f = tile_butterfly(lo.b, hi.b, element_index(t, x01), s + 1u, half, inverse);
            tile_st(x00, e.a);
            tile_st(x10, e.b);
            tile_st(x01, f.a);
            tile_st(x11, f.b);
        }
        workgroupBarrier();
    }
    if st < params.k {
        tile_stage(t, st, tile_first_bit() + st, lid.x, half, inverse);
        workgroupBarrier();
    }
    tile_write(t, params.flags, lid.x);
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
