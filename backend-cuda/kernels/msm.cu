// msm.cu — multi-scalar multiplication sum_i s_i * P_i over G1 and G2 (Pippenger,
// unsigned c-bit windows, buckets sorted by a counting sort).
// Prepend field.cuh, fq2.cuh, curve.cuh (NVRTC concatenation); g++ finds them by #include.
//
// Inputs: bases  G1Affine[n] / G2Affine[n] (Fq / Fq2 Montgomery, infinity = (0, 0));
//         scalars Fr[n] (Montgomery, < r). Any n >= 0, including 0.
// Output: out[0], ONE Jacobian point (G1Jac = 36 u32, G2Jac = 72 u32, Montgomery)
//         normalized: (x, y, 1) for a finite point, (1, 1, 0) for infinity, so the
//         bytes do not depend on the order in which the device added the points.
//
// Parameters (host's choice):
//   c         window bits, 1 <= c <= 24.  W = ceil(255 / c) windows; B = 2^c buckets
//             per window (bucket 0 is never filled). E.g. c = clamp(ilog2(max(n, 1)) - 3, 1, 16).
//   seg_bits  0 <= seg_bits <= c: each window's buckets are reduced by S = 2^seg_bits
//             threads of L = 2^(c - seg_bits) buckets each. E.g. seg_bits = c / 2.
//
// Scratch (device buffers the host allocates; element counts, Jac = G1Jac or G2Jac):
//   canon        Fr [n]          canonical scalars
//   bucket_start u32[W * B]
//   bucket_end   u32[W * B]      MUST BE ZEROED by the host before msm_count_digits
//   sorted       u32[W * n]      point indices grouped by bucket, window-major
//   buckets      Jac[W * B]
//   seg_sum      Jac[W * S]
//   seg_acc      Jac[W * S]
//   window_sums  Jac[W]
//   out          Jac[1]
// A buffer of 0 elements (n = 0) is never touched; allocate 1 if the allocator needs it.
// Bytes: Fr 32, u32 4, G1Jac 144, G2Jac 288; e.g. G1 with n = 2^20, c = 16, seg_bits = 8:
// W = 16: canon 32 MiB, bucket_start/end 4 MiB each, sorted 64 MiB, buckets 144 MiB.
//
// Launch sequence (one stream, in this order). "grid (X, W)" means a 2-D grid:
// gridDim.x = max(1, ceil(X / blockDim.x)), gridDim.y = W, blockDim = (bx, 1, 1).
// "THREADS = T" means a 1-D grid covering T threads: gridDim.x = max(1, ceil(T / bx)).
// Every kernel ignores out-of-range indices, so any bx works within the register
// limit: the msm_g2_* kernels use up to 255 registers per thread (ptxas, sm_90), so
// bx <= 256 is required there; 128 is suggested for msm_g1_* / msm_g2_*, 256 for
// steps 1-4.
//   1. msm_scalars_to_canonical(const Fr* scalars, Fr* canon, u32 n)                  THREADS = n
//   2. msm_count_digits(const Fr* canon, u32* bucket_end, u32 n, u32 c)                grid (n, W)
//        bucket_end[w*B + d] += #{i : digit_w(s_i) = d}, d != 0 (atomics)
//   3. msm_prefix_sum(u32* bucket_start, u32* bucket_end, u32 c)                       THREADS = W
//        per window, exclusive prefix sum: bucket_start = bucket_end = start offset
//   4. msm_scatter(const Fr* canon, u32* bucket_end, u32* sorted, u32 n, u32 c)        grid (n, W)
//        sorted[w*n + bucket_end[w*B+d]++] = i; afterwards bucket_end is each bucket's end
//   5. msm_g1_bucket_accumulate(const G1Affine* bases, const u32* sorted,
//        const u32* bucket_start, const u32* bucket_end, G1Jac* buckets, u32 n, u32 c) grid (B, W)
//        buckets[w*B + b] = sum of the bases in bucket b of window w
//   6. msm_g1_bucket_reduce(const G1Jac* buckets, G1Jac* seg_sum, G1Jac* seg_acc,
//        u32 c, u32 seg_bits)                                                          grid (S, W)
//        segment s = buckets s*L .. s*L+L-1: seg_sum = sum_k B_{sL+k}, seg_acc = sum_k k*B_{sL+k}
//   7. msm_g1_window_reduce(const G1Jac* seg_sum, const G1Jac* seg_acc,
//        G1Jac* window_sums, u32 c, u32 seg_bits)                                      THREADS = W
//        window_sums[w] = sum_b b*B_b = L * sum_s s*seg_sum_s + sum_s seg_acc_s
//   8. msm_g1_final(const G1Jac* window_sums, G1Jac* out, u32 c)                       THREADS = 1
//        out[0] = normalize(sum_w 2^(c*w) window_sums[w])   (Horner)
// G2: the same steps 5-8 named msm_g2_* with G2Affine / G2Jac; steps 1-4 are shared.
// Steps 1-4 depend only on the scalars and c: one run serves a G1 and a G2 MSM over
// the same scalars with the same c.
#ifndef CRUCIBLE_CURVE_CUH
#include "curve.cuh"
#endif

// Fr < 2^255: 255 bits of every scalar are enough.
CRU_DEV u32 msm_num_windows(u32 c) { return (255 + c - 1) / c; }

// Bits [w*c, w*c + c) of the canonical scalar s (8 limbs, little-endian), c <= 31.
CRU_DEV u32 msm_digit(const u32* s, u32 w, u32 c) {
    const u32 bit = w * c;
    const u32 limb = bit >> 5;
    const u32 shift = bit & 31;
    u64 v = (u64)s[limb] >> shift;  // limb <= 7 since bit < 255
    if (shift + c > 32 && limb + 1 < 8) v |= (u64)s[limb + 1] << (32 - shift);
    return (u32)v & ((1u << c) - 1);
}

extern "C" __global__ void msm_scalars_to_canonical(const Fr* scalars, Fr* canon, u32 n) {
    const u32 i = CRU_THREAD_X;
    if (i < n) canon[i] = from_mont(scalars[i]);
}

extern "C" __global__ void msm_count_digits(const Fr* canon, u32* bucket_end, u32 n, u32 c) {
    const u32 i = CRU_THREAD_X;
    const u32 w = blockIdx.y;
    if (i >= n || w >= msm_num_windows(c)) return;
    const u32 d = msm_digit(canon[i].l, w, c);
    if (d != 0) atomicAdd(&bucket_end[((u64)w << c) + d], 1u);
}

extern "C" __global__ void msm_prefix_sum(u32* bucket_start, u32* bucket_end, u32 c) {
    const u32 w = CRU_THREAD_X;
    if (w >= msm_num_windows(c)) return;
    const u64 base = (u64)w << c;
    u32 run = 0;
    for (u32 b = 0; b < (1u << c); b++) {
        const u32 count = bucket_end[base + b];
        bucket_start[base + b] = run;
        bucket_end[base + b] = run;  // becomes the scatter cursor
        run += count;
    }
}

// Order within a bucket depends on atomic timing; the sum does not (and out[0] is
// normalized).
extern "C" __global__ void msm_scatter(const Fr* canon, u32* bucket_end, u32* sorted, u32 n, u32 c) {
    const u32 i = CRU_THREAD_X;
    const u32 w = blockIdx.y;
    if (i >= n || w >= msm_num_windows(c)) return;
    const u32 d = msm_digit(canon[i].l, w, c);
    if (d == 0) return;
    const u32 pos = atomicAdd(&bucket_end[((u64)w << c) + d], 1u);
    sorted[(u64)w * n + pos] = i;
}

// One thread per bucket; a bucket with many points (e.g. equal scalars) makes its
// thread long. Correct for any distribution; balancing is a speed matter.
template <class F>
CRU_DEV void msm_bucket_accumulate(const Affine<F>* bases, const u32* sorted, const u32* bucket_start,
                                   const u32* bucket_end, Jacobian<F>* buckets, u32 n, u32 c) {
    const u32 b = CRU_THREAD_X;
    const u32 w = blockIdx.y;
    if (b >= (1u << c) || w >= msm_num_windows(c)) return;
    const u64 slot = ((u64)w << c) + b;
    const u32* idx = sorted + (u64)w * n;
    Jacobian<F> acc = jac_identity<F>();
    for (u32 k = bucket_start[slot]; k < bucket_end[slot]; k++) acc = jac_add_mixed(acc, bases[idx[k]]);
    buckets[slot] = acc;
}

// Running sums from the top of the segment: after adding B_k to `run` for k = L-1..1,
// `acc` has seen B_k exactly k times.
template <class F>
CRU_DEV void msm_bucket_reduce(const Jacobian<F>* buckets, Jacobian<F>* seg_sum, Jacobian<F>* seg_acc,
                               u32 c, u32 seg_bits) {
    const u32 s = CRU_THREAD_X;
    const u32 w = blockIdx.y;
    if (s >= (1u << seg_bits) || w >= msm_num_windows(c)) return;
    const u32 lbits = c - seg_bits;
    const Jacobian<F>* seg = buckets + ((u64)w << c) + ((u64)s << lbits);
    Jacobian<F> run = jac_identity<F>();
    Jacobian<F> acc = jac_identity<F>();
    for (u32 k = (1u << lbits) - 1; k >= 1; k--) {
        run = jac_add(run, seg[k]);
        acc = jac_add(acc, run);
    }
    run = jac_add(run, seg[0]);
    const u64 out = ((u64)w << seg_bits) + s;
    seg_sum[out] = run;
    seg_acc[out] = acc;
}

// sum_b b*B_b over b = s*L + k  =  L * sum_s s*T_s  +  sum_s sum_k k*B_{sL+k}.
template <class F>
CRU_DEV void msm_window_reduce(const Jacobian<F>* seg_sum, const Jacobian<F>* seg_acc, Jacobian<F>* window_sums,
                               u32 c, u32 seg_bits) {
    const u32 w = CRU_THREAD_X;
    if (w >= msm_num_windows(c)) return;
    const u32 nseg = 1u << seg_bits;
    const Jacobian<F>* ts = seg_sum + ((u64)w << seg_bits);
    const Jacobian<F>* as = seg_acc + ((u64)w << seg_bits);
    Jacobian<F> run = jac_identity<F>();
    Jacobian<F> acc = jac_identity<F>();
    for (u32 s = nseg - 1; s >= 1; s--) {
        run = jac_add(run, ts[s]);
        acc = jac_add(acc, run);
    }
    for (u32 k = 0; k < c - seg_bits; k++) acc = jac_double(acc);
    for (u32 s = 0; s < nseg; s++) acc = jac_add(acc, as[s]);
    window_sums[w] = acc;
}

template <class F>
CRU_DEV void msm_final(const Jacobian<F>* window_sums, Jacobian<F>* out, u32 c) {
    if (CRU_THREAD_X != 0) return;
    const u32 nw = msm_num_windows(c);
    Jacobian<F> res = window_sums[nw - 1];
    for (u32 w = nw - 1; w-- > 0;) {
        for (u32 k = 0; k < c; k++) res = jac_double(res);
        res = jac_add(res, window_sums[w]);
    }
    out[0] = jac_normalize(res);
}

// extern "C" entry points: the templates above, instantiated per group.
#define CRU_MSM_GROUP(G, F)                                                                              \
    extern "C" __global__ void msm_##G##_bucket_accumulate(const Affine<F>* bases, const u32* sorted,     \
            const u32* bucket_start, const u32* bucket_end, Jacobian<F>* buckets, u32 n, u32 c) {        \
        msm_bucket_accumulate<F>(bases, sorted, bucket_start, bucket_end, buckets, n, c);                 \
    }                                                                                                    \
    extern "C" __global__ void msm_##G##_bucket_reduce(const Jacobian<F>* buckets, Jacobian<F>* seg_sum, \
            Jacobian<F>* seg_acc, u32 c, u32 seg_bits) {                                                 \
        msm_bucket_reduce<F>(buckets, seg_sum, seg_acc, c, seg_bits);                                    \
    }                                                                                                    \
    extern "C" __global__ void msm_##G##_window_reduce(const Jacobian<F>* seg_sum,                       \
            const Jacobian<F>* seg_acc, Jacobian<F>* window_sums, u32 c, u32 seg_bits) {                 \
        msm_window_reduce<F>(seg_sum, seg_acc, window_sums, c, seg_bits);                                \
    }                                                                                                    \
    extern "C" __global__ void msm_##G##_final(const Jacobian<F>* window_sums, Jacobian<F>* out, u32 c) { \
        msm_final<F>(window_sums, out, c);                                                               \
    }

CRU_MSM_GROUP(g1, Fq)
CRU_MSM_GROUP(g2, Fq2)
