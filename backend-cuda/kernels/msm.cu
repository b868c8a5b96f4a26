// msm.cu — multi-scalar multiplication sum_i s_i * P_i over G1 and G2: Pippenger with
// signed c-bit digits, (point, sign) entries sorted by bucket with a counting sort,
// buckets summed in equal chunks of the sorted entries (balanced whatever the digit
// distribution), then each bucket window reduced to a few points whose weighted sum the
// host takes (a short serial chain, which one CPU core runs far faster than one GPU
// thread).
// Prepend field.cuh, fq2.cuh, curve.cuh (NVRTC concatenation); g++ finds them by #include.
//
// Window planes (optional): when the bases come with planes of multiples, plane j
// holding 2^(c wp j) P_i at bases[j stride + i] (planes.cu builds them), window w's
// digits multiply the plane-(w / wp) point and share the buckets of window w % wp: the
// MSM is sum_{v < wp} 2^(c v) (window v's bucket sum), with wp windows of buckets to
// reduce instead of W. Without planes, wp = W and stride is unused (0).
//
// Inputs: bases  G1Affine[] / G2Affine[] (Fq / Fq2 Montgomery, infinity = (0, 0)):
//         point i of plane j at bases[j stride + i], j < ceil(W / wp);
//         scalars Fr[n] (Montgomery, < r). 1 <= n < 2^31, W * n < 2^32, every entry
//         (j stride + i) < 2^31.
// Output: window v's sum sum_b (b + 1) B_b (B_b: bucket b's sum), v < wp; the MSM is
//         sum_v 2^(c v) (window v's sum). Steps 6-7 leave each window's sum as terms for
//         the host to weigh (see there).
//
// Parameters (host's choice):
//   c         window bits, 1 <= c <= 24. W = ceil(D / c) digit windows, D =
//             CRU_SCALAR_DIGIT_BITS (field.cuh's curve block: BLS12-381 256, BN254 255;
//             W c >= D leaves room for the last digit's carry). Signed digits d in
//             [-2^(c-1), 2^(c-1)]; B = 2^(c-1) buckets per window, bucket b holds digit
//             magnitude b + 1.
//   wp        bucket windows, 1 <= wp <= W: M = wp B buckets in all, window-major
//             (bucket k = v B + b).
//   stride    points per plane (wp < W only).
//   chunk     entries summed by one thread in step 5 (e.g. 128).
//   seg_bits  0 <= seg_bits <= c - 1: step 6 reduces segments of L = 2^seg_bits
//             buckets; S = B / L segments per window.
//
// Scratch (element counts; Xyzz = G1Xyzz or G2Xyzz):
//   digits       u32[W n]        digit codes, window-major: magnitude | sign << 31, 0 = none
//   bucket_count u32[M]          MUST BE ZEROED before step 1; step 4 counts it back to 0
//   bucket_start u32[M + 1]      exclusive prefix sum of the counts; [M] = T, the total
//   scan         u32[...]        the prefix sum's partial sums (see step 2)
//   sorted       u32[W n]        entry (j stride + i) | sign << 31, grouped by bucket, k ascending
//   buckets      Xyzz[M]         written for non-empty buckets only
//   carries      Xyzz[ceil(W n / chunk)]
//   max_span     u32[1]          MUST BE ZEROED before step 5
//   tickets      u32[ceil(W n / chunk)]  MUST BE ZEROED before step 5b
//   reduce_a, reduce_b  Xyzz[...] each: step 6-7's (see there)
//
// Launch sequence (one stream, in this order). "grid (X, Y)": gridDim.x =
// max(1, ceil(X / blockDim.x)), gridDim.y = Y; "THREADS = T": 1-D, T threads. Any
// blockDim.x works for steps 1-5b (those kernels ignore out-of-range indices); 256 is
// suggested for steps 1-4, 128 for the curve kernels (msm_g2_* use up to 255
// registers). Steps 6-7 fix their blocks.
//   1. msm_digits(const Fr* scalars, u32* digits, u32* bucket_count, u32 n, u32 c, u32 wp)
//                                                                          THREADS = n
//      or msm_digits_indexed(const Fr* scalars, const u32* index, u32* digits,
//        u32* bucket_count, u32 n, u32 c, u32 wp): term i is scalar index[i] (index u32[n],
//        each < the scalars' count; ones.cu's list of the rest), and step 4 is then
//        msm_scatter_indexed with the same index, so that entries name point index[i].
//   2. the exclusive prefix sum of bucket_count[0..M) into bucket_start[0..M], with
//      u32_chunk_sums / u32_block_scan / u32_chunk_scan below: scan(in, out, m) = if
//      m <= CH: u32_chunk_scan(in, zero, out, m, CH) with THREADS = 1 (zero: a u32
//      holding 0); else u32_chunk_sums(in, sums, m, CH) with THREADS = ceil(m / CH),
//      u32_block_scan(sums, ceil(m / CH)) in one block of CRU_SCAN_BLOCK threads,
//      u32_chunk_scan(in, sums, out, m, CH) with THREADS = ceil(m / CH): three launches.
//   3. (none: step 2 leaves bucket_start[M] = T)
//   4. msm_scatter(const u32* digits, const u32* bucket_start, u32* bucket_count,
//        u32* sorted, u32 n, u32 c, u32 wp, u32 stride)                     grid (n, W)
//      or msm_scatter_indexed(const u32* digits, const u32* index, const u32* bucket_start,
//        u32* bucket_count, u32* sorted, u32 n, u32 c, u32 wp, u32 stride)  grid (n, W)
//   5. msm_g1_accumulate(const G1Affine* bases, const u32* sorted, const u32* bucket_start,
//        G1Xyzz* buckets, G1Xyzz* carries, u32* max_span, u32 m, u32 chunk)
//                                                              THREADS = ceil(W n / chunk)
//        Thread t sums the entries [t chunk, min(t chunk + chunk, T)) run by run (a run:
//        the entries of one bucket). A run that starts its bucket is written to
//        buckets[k]; the first run, when its bucket began in an earlier chunk, to
//        carries[t]. So bucket k = buckets[k] + carries[t] for the chunks t strictly
//        after the one holding bucket_start[k], up to the one holding its last entry.
//        *max_span (MUST BE ZEROED before) ends as the largest number of carries of one
//        bucket.
//   5b. msm_g1_fold_tree(G1Xyzz* carries, const u32* bucket_start, u32* tickets, u32 m,
//        u32 chunk)                                             THREADS = ceil(W n / chunk)
//        in one launch whatever the spans: afterwards each bucket's carries are summed
//        into the first of them.
//   6-7, bit sums. Window v's sum, with b = s L + j:
//          sum_b (b + 1) B_b = G + L sum_s s T_s = G + sum_{k < log2 S} 2^(seg_bits + k) U_k,
//        G = sum_s A_s, A_s = sum_j (j + 1) B_{sL+j} (segment s's running sums),
//        T_s = sum_j B_{sL+j}, U_k = sum of the T_s whose s has bit k set.
//        G and every U_k are plain sums, each a tree of depth log2 S; the host applies the
//        weights 2^(seg_bits + k) (a double-and-add chain of c - 1 doublings).
//        Records: window v's record array of `items` plain items and one total, N
//        records each: point (v (items + 1) + q) N + g is item q of record g; item 0 is
//        a partial G, item 1 + k a partial U_k, item `items` a partial sum of the T_s
//        (the total).
//        Tiles: blockDim.x = TL = min(S, tile) with tile the largest power of two <=
//        CRU_REDUCE_SHARED_BYTES / (2 sizeof(Xyzz)) (G1 128, G2 64, on both curves);
//        blockDim.x a power of two in every step-7 launch.
//   6. msm_g1_reduce_tiles(const G1Xyzz* buckets, const G1Xyzz* carries,
//        const u32* bucket_start, G1Xyzz* out, u32 c, u32 seg_bits, u32 chunk)
//                                                   grid (S, wp), blockDim.x = TL
//        out = reduce_a: records of items = 1 + log2 TL, N = S / TL (record g: the
//        segments [g TL, g TL + TL), bits of s below log2 TL).
//   7. while N > 1: msm_g1_reduce_records(const G1Xyzz* in, G1Xyzz* out, u32 items)
//        grid (N / T', (items + 1) wp), blockDim.x = T' = min(N, tile); in and out swap
//        between reduce_a and reduce_b. Block (h, y = v (items + 1) + q) sums item q of
//        records [h T', h T' + T'); for q = items (the totals) also the bit sums of the
//        record index's bits, as new items. Then items += log2 T', N /= T'.
//      Afterwards (N = 1) the last buffer written holds, for window v, item q at
//      v (items + 1) + q: G at q = 0, U_k at q = 1 + k (items = 1 + log2 S).
//      Sizes (points): reduce_a wp (2 + log2 TL) S / TL; reduce_b the largest step-7
//      output written to it (each pass's output is smaller than its input).
// G2: steps 5-7 (and 5b) named msm_g2_* with G2Affine / G2Xyzz; steps 1-4 are shared, and
// depend only on the scalars, c, wp and stride.
#ifndef CRUCIBLE_CURVE_CUH
#include "curve.cuh"
#endif

CRU_DEV u32 msm_num_windows(u32 c) { return (CRU_SCALAR_DIGIT_BITS + c - 1) / c; }

// Bits [bit, bit + c) of the canonical scalar s (CRU_FR_LIMBS limbs, little-endian;
// bits past the last limb read as 0), c <= 24.
CRU_DEV u32 msm_bits(const u32* s, u32 bit, u32 c) {
    const u32 limb = bit >> 5;
    const u32 shift = bit & 31;
    if (limb >= CRU_FR_LIMBS) return 0;
    u64 v = (u64)s[limb] >> shift;
    if (shift + c > 32 && limb + 1 < CRU_FR_LIMBS) v |= (u64)s[limb + 1] << (32 - shift);
    return (u32)v & ((1u << c) - 1);
}

// Window w's digits go to the buckets of window w % wp, and name the point of plane
// w / wp (msm_scatter): with window planes (header), wp < W. Term i is scalar i, or,
// INDEXED, scalar index[i] (msm_digits_indexed: the rest of a witness-aware MSM, ones.cu).
template <bool INDEXED>
CRU_DEV void msm_digits_of(const Fr* scalars, const u32* index, u32* digits, u32* bucket_count, u32 n, u32 c,
                           u32 wp) {
    const u32 i = CRU_THREAD_X;
    if (i >= n) return;
    const Fr s = from_mont(scalars[INDEXED ? index[i] : i]);
    const u32 nw = msm_num_windows(c);
    const u32 half = 1u << (c - 1);
    u32 carry = 0;
    for (u32 w = 0; w < nw; w++) {
        const u32 raw = msm_bits(s.l, w * c, c) + carry;  // <= 2^c
        u32 code = 0;
        if (raw > half) {
            carry = 1;
            const u32 mag = (1u << c) - raw;  // digit raw - 2^c < 0; 0 when raw = 2^c
            if (mag != 0) code = mag | 0x80000000u;
        } else {
            carry = 0;
            code = raw;
        }
        digits[(u64)w * n + i] = code;
        if (code != 0) atomicAdd(&bucket_count[((u64)(w % wp) << (c - 1)) + (code & 0x7fffffffu) - 1], 1u);
    }
}

#if CRU_WITH(SORT)
extern "C" __global__ void msm_digits(const Fr* scalars, u32* digits, u32* bucket_count, u32 n, u32 c, u32 wp) {
    msm_digits_of<false>(scalars, nullptr, digits, bucket_count, n, c, wp);
}

extern "C" __global__ void msm_digits_indexed(const Fr* scalars, const u32* index, u32* digits, u32* bucket_count,
                                              u32 n, u32 c, u32 wp) {
    msm_digits_of<true>(scalars, index, digits, bucket_count, n, c, wp);
}
#endif

#if CRU_WITH(SORT)
extern "C" __global__ void u32_chunk_sums(const u32* in, u32* sums, u32 m, u32 chunk) {
    const u32 t = CRU_THREAD_X;
    const u64 lo = (u64)t * chunk;
    if (lo >= m) return;
    const u64 hi = lo + chunk < m ? lo + chunk : m;
    u32 run = 0;
    for (u64 k = lo; k < hi; k++) run += in[k];
    sums[t] = run;
}

// out[k] = offsets[t] + sum of in[t chunk .. k); the thread holding k = m - 1 also
// writes out[m] (the total). out may be in (each thread reads in[k] before writing out[k]).
extern "C" __global__ void u32_chunk_scan(const u32* in, const u32* offsets, u32* out, u32 m, u32 chunk) {
    const u32 t = CRU_THREAD_X;
    const u64 lo = (u64)t * chunk;
    if (lo >= m) return;
    const u64 hi = lo + chunk < m ? lo + chunk : m;
    u32 run = offsets[t];
    for (u64 k = lo; k < hi; k++) {
        const u32 v = in[k];
        out[k] = run;
        run += v;
    }
    if (hi == m) out[m] = run;
}
#endif

// Threads of u32_block_scan's one block (at most; any power of two up to it works).
#define CRU_SCAN_BLOCK 1024

// In-place exclusive prefix sum of v[0 .. count) by one block (blockDim.x a power of
// two <= CRU_SCAN_BLOCK; any count): thread t runs over v[t per, t per + per), per =
// ceil(count / blockDim.x), once for its total, and once more, from its offset in the
// block's scan of the totals (in shared memory), to write the prefix sums.
extern "C" __global__ void u32_block_scan(u32* v, u32 count) {
    __shared__ u32 sh[CRU_SCAN_BLOCK];
    const u32 t = threadIdx.x, T = blockDim.x;
    const u32 per = (count + T - 1) / T;
    const u64 lo = (u64)t * per, end = lo + per;
    const u64 hi = end < count ? end : count;
    u32 run = 0;
    for (u64 k = lo; k < hi; k++) run += v[k];
    sh[t] = run;
    __syncthreads();
    // Hillis-Steele: after the step of distance d, sh[t] sums the totals (t - 2d, t].
    for (u32 d = 1; d < T; d <<= 1) {
        const u32 add = t >= d ? sh[t - d] : 0;
        __syncthreads();
        sh[t] += add;
        __syncthreads();
    }
    u32 at = sh[t] - run;
    for (u64 k = lo; k < hi; k++) {
        const u32 x = v[k];
        v[k] = at;
        at += x;
    }
}

// Entries fill each bucket from its end: the order within a bucket depends on atomic
// timing; the bucket's sum does not. An entry names point i (INDEXED: index[i]) of
// plane w / wp.
template <bool INDEXED>
CRU_DEV void msm_scatter_of(const u32* digits, const u32* index, const u32* bucket_start, u32* bucket_count,
                            u32* sorted, u32 n, u32 c, u32 wp, u32 stride) {
    const u32 i = CRU_THREAD_X;
    const u32 w = blockIdx.y;
    if (i >= n || w >= msm_num_windows(c)) return;
    const u32 code = digits[(u64)w * n + i];
    if (code == 0) return;
    const u64 k = ((u64)(w % wp) << (c - 1)) + (code & 0x7fffffffu) - 1;
    const u32 pos = bucket_start[k] + atomicSub(&bucket_count[k], 1u) - 1;
    sorted[pos] = ((w / wp) * stride + (INDEXED ? index[i] : i)) | (code & 0x80000000u);
}

#if CRU_WITH(SORT)
extern "C" __global__ void msm_scatter(const u32* digits, const u32* bucket_start, u32* bucket_count,
                                       u32* sorted, u32 n, u32 c, u32 wp, u32 stride) {
    msm_scatter_of<false>(digits, nullptr, bucket_start, bucket_count, sorted, n, c, wp, stride);
}

extern "C" __global__ void msm_scatter_indexed(const u32* digits, const u32* index, const u32* bucket_start,
                                               u32* bucket_count, u32* sorted, u32 n, u32 c, u32 wp, u32 stride) {
    msm_scatter_of<true>(digits, index, bucket_start, bucket_count, sorted, n, c, wp, stride);
}
#endif

// The bucket holding sorted entry `pos` < total: the largest k with bucket_start[k] <= pos.
CRU_DEV u32 msm_bucket_of(const u32* bucket_start, u32 m, u32 pos) {
    u32 k = 0, span = m;
    while (span > 1) {
        const u32 half = span >> 1;
        if (bucket_start[k + half] <= pos) k += half;
        span -= half;
    }
    return k;
}

// A carry of bucket [begin, end): notes how many chunks' carries the bucket has.
CRU_DEV void msm_note_span(u32* max_span, u32 begin, u32 end, u32 chunk) {
    atomicMax(max_span, (end - 1) / chunk - begin / chunk);
}

// How the bucket sums take their products: for G1 as calls (one copy of the product and
// the square in the kernel). Inlined, the ten products are tens of KB of straight-line
// code a warp runs through at each entry, and a fifth of the sums' stalls waited for
// instructions (ncu). As calls they pass their operands through the stack (130
// registers, 768 bytes of frame, 10.6 % more instructions), and on the H200 MSM G1
// 2^24 took 111.2 ms instead of 119.9, 2^20 9.01 instead of 9.10; by value (field.cuh's
// fmul_call), less (d32de65:BENCHMARKS.md). G2's: its Fq2 products as calls, its Fq
// products inlined in them: all inlined, 17 152 SASS instructions against 6 256, and
// on the H200 MSM G2 2^20 took 26.36 ms against 23.71 with the calls.
template <class F> struct SumsProducts;
template <> struct SumsProducts<Fq> { static constexpr int value = CRU_PRODUCTS_CALLS; };
template <> struct SumsProducts<Fq2> { static constexpr int value = CRU_PRODUCTS_CALL_FQ2; };

// One loop over the chunk's entries with the run boundaries as a branch inside it, so
// the threads of a warp add points together whatever their runs' lengths.
template <class F>
CRU_DEV void msm_accumulate(const Affine<F>* bases, const u32* sorted, const u32* bucket_start,
                            Xyzz<F>* buckets, Xyzz<F>* carries, u32* max_span, u32 m, u32 chunk) {
    const u32 t = CRU_THREAD_X;
    const u32 total = bucket_start[m];
    const u64 lo64 = (u64)t * chunk;
    if (lo64 >= total) return;
    const u32 lo = (u32)lo64;
    const u32 hi = total - lo < chunk ? total : lo + chunk;
    // The bucket holding entry lo (non-empty, since bucket_start[k + 1] > lo).
    u32 k = msm_bucket_of(bucket_start, m, lo);
    u32 run_start = lo;
    u32 bucket_begin = bucket_start[k];
    u32 bucket_end = bucket_start[k + 1];
    Xyzz<F> acc = xyzz_identity<F>();
    for (u32 pos = lo; pos < hi; pos++) {
        if (pos == bucket_end) {
            if (run_start == bucket_begin) buckets[k] = acc;
            else { carries[t] = acc; msm_note_span(max_span, bucket_begin, bucket_end, chunk); }
            acc = xyzz_identity<F>();
            run_start = pos;
            do { k++; bucket_begin = bucket_end; bucket_end = bucket_start[k + 1]; } while (bucket_end == pos);
        }
        const u32 e = sorted[pos];
        Affine<F> p = bases[e & 0x7fffffffu];
        if (e & 0x80000000u) p = aff_neg(p);
        acc = xyzz_add_affine_formula<SumsProducts<F>::value>(acc, p);
    }
    if (run_start == bucket_begin) buckets[k] = acc;
    else { carries[t] = acc; msm_note_span(max_span, bucket_begin, bucket_end, chunk); }
}

// Whether chunk t's first run is a carry (its bucket began in an earlier chunk); then
// that bucket's chunks are *t0 < t <= *t1.
CRU_DEV bool msm_carry_of(const u32* bucket_start, u32 m, u32 chunk, u32 t, u32* t0, u32* t1) {
    const u32 total = bucket_start[m];
    if ((u64)t * chunk >= total) return false;
    const u32 k = msm_bucket_of(bucket_start, m, t * chunk);
    *t0 = bucket_start[k] / chunk;
    *t1 = (bucket_start[k + 1] - 1) / chunk;
    return *t0 != t;  // chunk t starts its bucket: its first run is no carry
}

// Step 5b, all levels in one launch: bucket k's carries (chunks t0 + 1 .. t1)
// summed by xyzz_climb (curve.cuh) into carries[t0 + 1], leaf r = carries[t0 + 1 + r].
// The nodes of bucket k take tickets[t0 + 1 .. t1 - 1]: the ranges of different buckets
// are disjoint. A bucket spanning thousands of chunks costs log2 of that many dependent
// additions and no launch per level, and the host needs no read-back of the longest span.
template <class F>
CRU_DEV void msm_fold_tree(Xyzz<F>* carries, const u32* bucket_start, u32* tickets, u32 m, u32 chunk) {
    const u32 t = CRU_THREAD_X;
    u32 t0, t1;
    if (!msm_carry_of(bucket_start, m, chunk, t, &t0, &t1) || t1 == t0 + 1) return;
    const u32 first = t0 + 1;
    Xyzz<F> acc = carries[t];
    if (xyzz_climb(carries + first, tickets + first, t - first, t1 - t0, acc, xyzz_add<F>)) carries[first] = acc;
}

// Bucket k: its owner's partial sum plus its carries, which step 5b folded into the
// first of them.
template <class F>
CRU_DEV Xyzz<F> msm_load_bucket(const Xyzz<F>* buckets, const Xyzz<F>* carries, const u32* bucket_start,
                                u64 k, u32 chunk) {
    const u32 begin = bucket_start[k], end = bucket_start[k + 1];
    if (begin == end) return xyzz_identity<F>();
    Xyzz<F> v = buckets[k];
    const u32 t0 = begin / chunk, t1 = (end - 1) / chunk;
    if (t1 > t0) v = xyzz_add(v, carries[t0 + 1]);
    return v;
}

// Shared memory of one reduction block: 2 points a thread for tile threads, 48 KiB at
// most (the most a kernel declares statically): tiles of 128 threads for G1, 64 for G2
// (msm/passes.rs reads this constant). BLS12-381's points fill it; BN254's smaller ones
// fit 192 and 96, which the tiles' power of two rounds down to the same 128 and 64.
#define CRU_REDUCE_SHARED_BYTES 49152

// The reduction kernels' additions: calls (one copy of the formula a kernel; inlined,
// a reduction's segments took 2.0 ms at 2^20 on the H200 instead of 1.4).
template <class F> CRU_DEV Xyzz<F> msm_reduce_add(const Xyzz<F>& p, const Xyzz<F>& q) {
    return xyzz_add(p, q);
}

// The largest power of two <= x (x >= 1), at compile time.
__host__ __device__ constexpr u32 msm_floor_pow2(u32 x) { return x < 2 ? x : 2 * msm_floor_pow2(x / 2); }

// The most threads of a reduction block: the largest power of two whose two points a
// thread fit in CRU_REDUCE_SHARED_BYTES (every step-7 block is a power of two).
template <class F> struct MsmReduceTile {
    enum : u32 { value = msm_floor_pow2(CRU_REDUCE_SHARED_BYTES / (2 * sizeof(Xyzz<F>))) };
};
template <class F> CRU_DEV u32 msm_reduce_tile() { return MsmReduceTile<F>::value; }

// log2 of blockDim.x (a power of two).
CRU_DEV u32 msm_block_bits() {
    u32 bits = 0;
    while ((1u << bits) < blockDim.x) bits++;
    return bits;
}

// The block's sums, in shared memory, for T = blockDim.x (a power of two): on entry
// sh[t] = X_t and (if `plain`) sh[T + t] = Y_t; on exit sh[0] = sum_t X_t, sh[T] =
// sum_t Y_t and (if `bits`) sh[2^k] = the sum of the X_t whose t has bit k set, k <
// log2 T. Level j merges groups of h = 2^j threads in pairs: a group based at g keeps
// its X sum at sh[g], its bit-k sums at sh[g + 2^k] (k < j) and its Y sum at sh[T + g].
// Merging lo (based at g) with hi (at g + h) adds hi's X sum, Y sum and bit-k sums into
// lo's; hi's X sum, at sh[g + h], is the merged group's bit-j sum as it is. The j + 2
// additions of a merge go to j + 2 different threads of the merged group (task q by
// thread g + q: 0 the X sum, 1 the Y sum, 2 + k bit k), so each level is one addition
// deep, and the block's chain is log2 T additions. A level writes only lo slots and
// reads only hi slots.
template <class F>
CRU_DEV void msm_block_sums(Xyzz<F>* sh, bool plain, bool bits) {
    const u32 t = threadIdx.x, T = blockDim.x;
    for (u32 j = 0; (1u << j) < T; j++) {
        const u32 h = 1u << j;
        const u32 g = t & ~(2 * h - 1), q = t - g;
        u32 dst = 2 * T;  // none
        if (q == 0) dst = g;
        else if (q == 1) dst = plain ? T + g : dst;
        else if (bits && q - 2 < j) dst = g + (1u << (q - 2));
        if (dst < 2 * T) sh[dst] = msm_reduce_add(sh[dst], sh[dst + h]);
        __syncthreads();
    }
}

// Step 6: thread t of block (g, v) runs the running sums of segment s = g T + t
// (from the top: after B_j has been added to `run` for j = L-1 .. 0, `acc` has seen B_j
// j + 1 times), so A_s = acc and T_s = run; then the block sums them (msm_block_sums)
// into record g: G's part sum_t A_s, the bit sums of t, the total sum_t T_s.
template <class F>
CRU_DEV void msm_reduce_tiles(const Xyzz<F>* buckets, const Xyzz<F>* carries, const u32* bucket_start,
                              Xyzz<F>* out, u32 c, u32 seg_bits, u32 chunk) {
    __shared__ Xyzz<F> sh[2 * MsmReduceTile<F>::value];
    const u32 t = threadIdx.x, T = blockDim.x, v = blockIdx.y;
    const u64 s = (u64)blockIdx.x * T + t;
    const u64 first = ((u64)v << (c - 1)) + (s << seg_bits);
    Xyzz<F> run = xyzz_identity<F>();
    Xyzz<F> acc = xyzz_identity<F>();
    for (u32 j = 1u << seg_bits; j-- > 0;) {
        run = msm_reduce_add(run, msm_load_bucket(buckets, carries, bucket_start, first + j, chunk));
        acc = msm_reduce_add(acc, run);
    }
    sh[t] = run;
    sh[T + t] = acc;
    __syncthreads();
    msm_block_sums(sh, true, true);
    const u32 tau = msm_block_bits(), items = 1 + tau, records = gridDim.x;
    const u64 base = (u64)v * (items + 1) * records + blockIdx.x;
    for (u32 q = t; q <= items; q += T)
        out[base + (u64)q * records] = q == 0 ? sh[T] : q == items ? sh[0] : sh[1u << (q - 1)];
}

// Step 7: block (h, y) of T threads over records [h T, h T + T) of item q of
// window v (y = v (items + 1) + q): the sum of the T points into record h of the output,
// and for the totals (q = items) also the bit sums of the record index's low log2 T bits,
// as items items .. items + log2 T - 1 of the output (whose total is item items + log2 T).
template <class F>
CRU_DEV void msm_reduce_records(const Xyzz<F>* in, Xyzz<F>* out, u32 items) {
    __shared__ Xyzz<F> sh[2 * MsmReduceTile<F>::value];
    const u32 t = threadIdx.x, T = blockDim.x, h = blockIdx.x, records = gridDim.x;
    const u32 v = blockIdx.y / (items + 1), q = blockIdx.y % (items + 1);
    const bool totals = q == items;
    sh[t] = in[((u64)v * (items + 1) + q) * records * T + (u64)h * T + t];
    __syncthreads();
    msm_block_sums(sh, false, totals);
    const u32 tau = msm_block_bits(), items_out = items + tau;
    const u64 base = (u64)v * (items_out + 1) * records + h;
    if (!totals) {
        if (t == 0) out[base + (u64)q * records] = sh[0];
        return;
    }
    for (u32 k = t; k <= tau; k += T) out[base + (u64)(items + k) * records] = k == tau ? sh[0] : sh[1u << k];
}

// The bucket sums take no launch bounds: on the H200, G1 at 4 blocks of 128 (128
// registers, 16 warps an SM, a few spilled words) ran MSM G1 2^20 in 12.3 ms against
// 12.0 ms unbounded (156 registers, 12 warps), 2^24 in 143.6 against 136.2 ms; G2
// unbounded takes 222 registers, 8 warps an SM, and at 3 blocks (168 registers) its Fq2
// product's call spills 396 bytes.

// extern "C" entry points: the templates above, instantiated per group. Each kernel
// family of each group is a part of its own (curve.cuh's CRU_WITH), so that NVRTC
// compiles them concurrently: ptxas compiles a kernel's callees (the addition, with
// its inlined products) into each kernel that calls them, and the five reduction
// kernels of a group in one program made it the slowest (28 CPU seconds, NVRTC 13.5,
// sm_90). A curve kernel added here belongs under a part of its own or one of these:
// outside every part it would be compiled into each msm program.
#define CRU_MSM_SUMS(G, F)                                                                              \
    extern "C" __global__ void msm_##G##_accumulate(const Affine<F>* bases, const u32* sorted,           \
            const u32* bucket_start, Xyzz<F>* buckets, Xyzz<F>* carries, u32* max_span, u32 m, u32 chunk) { \
        msm_accumulate<F>(bases, sorted, bucket_start, buckets, carries, max_span, m, chunk);            \
    }
#define CRU_MSM_FOLD(G, F)                                                                               \
    extern "C" __global__ void msm_##G##_fold_tree(Xyzz<F>* carries, const u32* bucket_start, u32* tickets, \
            u32 m, u32 chunk) {                                                                          \
        msm_fold_tree<F>(carries, bucket_start, tickets, m, chunk);                                      \
    }
#define CRU_MSM_TILES(G, F)                                                                              \
    extern "C" __global__ void msm_##G##_reduce_tiles(const Xyzz<F>* buckets, const Xyzz<F>* carries,     \
            const u32* bucket_start, Xyzz<F>* out, u32 c, u32 seg_bits, u32 chunk) {                     \
        msm_reduce_tiles<F>(buckets, carries, bucket_start, out, c, seg_bits, chunk);                    \
    }
#define CRU_MSM_RECORDS(G, F)                                                                            \
    extern "C" __global__ void msm_##G##_reduce_records(const Xyzz<F>* in, Xyzz<F>* out, u32 items) {     \
        msm_reduce_records<F>(in, out, items);                                                           \
    }

#if CRU_WITH(G1_SUMS)
CRU_MSM_SUMS(g1, Fq)
#endif
#if CRU_WITH(G1_FOLD)
CRU_MSM_FOLD(g1, Fq)
#endif
#if CRU_WITH(G1_TILES)
CRU_MSM_TILES(g1, Fq)
#endif
#if CRU_WITH(G1_RECORDS)
CRU_MSM_RECORDS(g1, Fq)
#endif
#if CRU_WITH(G2_SUMS)
CRU_MSM_SUMS(g2, Fq2)
#endif
#if CRU_WITH(G2_FOLD)
CRU_MSM_FOLD(g2, Fq2)
#endif
#if CRU_WITH(G2_TILES)
CRU_MSM_TILES(g2, Fq2)
#endif
#if CRU_WITH(G2_RECORDS)
CRU_MSM_RECORDS(g2, Fq2)
#endif
