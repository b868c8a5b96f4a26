// ones.cu — the witness-aware part of an MSM (msm.cu). Most witness values of real
// circuits are 0 or 1: the scalars are classified on the device, the indices of the
// scalars equal to 1 ("ones") and of the other nonzero ones ("the rest") compacted into
// one list [ones | rest], each part in increasing index order, zeros dropped. The ones
// are summed here, by a plain sum of their bases (no digits, no buckets); only the rest
// go through msm.cu's Pippenger (msm_digits_indexed / msm_scatter_indexed over the
// rest's part of the list). The MSM is the ones' sum plus Pippenger over the rest.
// Prepend field.cuh, fq2.cuh, curve.cuh (NVRTC concatenation); g++ finds them by #include.
//
// Inputs: scalars Fr[n] (Montgomery, < r: 1 is R mod r, 0 is all-zero limbs),
//         1 <= n < 2^31;
//         bases G1Affine[] / G2Affine[] (plane 0 of the MSM's bases: the points).
// Parameters (host's choice):
//   chunk     scalars one thread classifies (e.g. 64); T = ceil(n / chunk).
//   leaves    threads of the ones' sum, 1 <= leaves < 2^31; count = the ones.
//   group_bits  the ones' sum ends in one sum per group of 2^group_bits consecutive
//             leaves, G = ceil(leaves / 2^group_bits) groups (0 <= group_bits <= 30).
// Scratch:
//   class_count  u32[2T]          written by step 1
//   class_start  u32[2T + 1]      step 2: class_start[t] = the first list position of
//                                 chunk t's ones, class_start[T + t] of its rest;
//                                 class_start[T] = ones, class_start[2T] = ones + rest
//   list         u32[n]           step 3 writes [0, ones + rest)
//   partials     Xyzz[leaves]     step 4's tree nodes (any contents before)
//   tickets      u32[max(leaves - 1, 1)]  MUST BE ZEROED before step 4
//   sums         Xyzz[G]          step 4's output
//
// Launch sequence (one stream, in this order; THREADS as in msm.cu's header):
//   1. msm_classify_count(const Fr* scalars, u32* class_count, u32 n, u32 chunk)   THREADS = T
//      class_count[t] = the ones among scalars [t chunk, (t + 1) chunk),
//      class_count[T + t] = the rest among them.
//   2. the exclusive prefix sum of class_count[0..2T) into class_start (msm.cu step 2).
//   (the host reads class_start[T] and class_start[2T]; when every scalar is in the
//   rest it needs no list, and stops here.)
//   3. msm_classify_scatter(const Fr* scalars, const u32* class_start, u32* list, u32 n,
//        u32 chunk)                                                          THREADS = T
//   4. msm_g1_ones_sum(const G1Affine* bases, const u32* ones, G1Xyzz* partials,
//        u32* tickets, G1Xyzz* sums, u32 count, u32 leaves, u32 group_bits)
//                                                                       THREADS = leaves
//      ones = list (its first count entries). Leaf t sums bases[ones[k]] for
//      k = t, t + leaves, ...; each group's leaves are added up a binary tree within
//      the same launch (below) into sums[g]: sum_g sums[g] = sum_{k < count} bases[ones[k]].
// G2: step 4 named msm_g2_ones_sum with G2Affine / G2Xyzz.
#ifndef CRUCIBLE_CURVE_CUH
#include "curve.cuh"
#endif

// 0 for a zero scalar, 1 for one (Montgomery R mod r), 2 for any other.
CRU_DEV u32 msm_class_of(const Fr& s) {
    if (fis_zero(s)) return 0;
    return feq(s, Fr::one()) ? 1 : 2;
}

CRU_DEV u32 msm_class_chunks(u32 n, u32 chunk) { return (u32)(((u64)n + chunk - 1) / chunk); }

// Scalars a thread loads before it classifies them: independent loads in flight, so
// that 2^14 threads (2^20 scalars in chunks of 64) keep the memory busy instead of
// waiting out one load's latency per scalar.
#define ONES_BATCH 8

// The classes of scalars [i, i + ONES_BATCH) that lie below hi (0 past it).
CRU_DEV void msm_classes_at(const Fr* scalars, u64 i, u64 hi, u32* k) {
    Fr s[ONES_BATCH];
    CRU_UNROLL for (u32 j = 0; j < ONES_BATCH; j++) s[j] = i + j < hi ? scalars[i + j] : Fr::zero();
    CRU_UNROLL for (u32 j = 0; j < ONES_BATCH; j++) k[j] = msm_class_of(s[j]);
}

extern "C" __global__ void msm_classify_count(const Fr* scalars, u32* class_count, u32 n, u32 chunk) {
    const u32 t = CRU_THREAD_X;
    const u32 chunks = msm_class_chunks(n, chunk);
    if (t >= chunks) return;
    const u64 lo = (u64)t * chunk;
    const u64 hi = lo + chunk < n ? lo + chunk : n;
    u32 ones = 0, rest = 0;
    for (u64 i = lo; i < hi; i += ONES_BATCH) {
        u32 k[ONES_BATCH];
        msm_classes_at(scalars, i, hi, k);
        CRU_UNROLL for (u32 j = 0; j < ONES_BATCH; j++) {
            ones += k[j] == 1;
            rest += k[j] == 2;
        }
    }
    class_count[t] = ones;
    class_count[chunks + t] = rest;
}

extern "C" __global__ void msm_classify_scatter(const Fr* scalars, const u32* class_start, u32* list, u32 n,
                                                u32 chunk) {
    const u32 t = CRU_THREAD_X;
    const u32 chunks = msm_class_chunks(n, chunk);
    if (t >= chunks) return;
    const u64 lo = (u64)t * chunk;
    const u64 hi = lo + chunk < n ? lo + chunk : n;
    u32 one = class_start[t], rest = class_start[chunks + t];
    for (u64 i = lo; i < hi; i += ONES_BATCH) {
        u32 k[ONES_BATCH];
        msm_classes_at(scalars, i, hi, k);
        CRU_UNROLL for (u32 j = 0; j < ONES_BATCH; j++) {
            if (k[j] == 1) list[one++] = (u32)(i + j);
            else if (k[j] == 2) list[rest++] = (u32)(i + j);
        }
    }
}

// The tree's additions (below): at most log2(leaves) a thread, off the hot path (the
// leaves' loop). For G1 calls whose products are calls too (curve.cuh's
// CRU_PRODUCTS_CALLS): with its 14 Fq products inlined, the addition was about half
// of NVRTC's time over the group's program. G2's addition has its Fq2 products as
// calls already.
template <class F> struct OnesTreeCalls { static constexpr bool YES = false; };
template <> struct OnesTreeCalls<Fq> { static constexpr bool YES = true; };
template <class F> CRU_DEV Xyzz<F> ones_tree_add(const Xyzz<F>& p, const Xyzz<F>& q) {
    if constexpr (OnesTreeCalls<F>::YES) return xyzz_add_cold(p, q);
    else return xyzz_add(p, q);
}

// Leaf t's sum, then up a tree over the leaves of its group without a launch per level
// (each level's launch cost tens of microseconds in msm.cu's reduction, one dependent
// addition each): xyzz_climb (curve.cuh), over groups of 2^group_bits consecutive
// leaves, each group's sum to sums[its index]. Each level is one dependent addition
// (about 30 µs on a nearly idle H200): the host adds the groups' sums instead of the
// device running the top levels of one tree (a CPU core adds a point in about a
// microsecond).
template <class F>
CRU_DEV void msm_ones_sum(const Affine<F>* bases, const u32* ones, Xyzz<F>* partials, u32* tickets, Xyzz<F>* sums,
                          u32 count, u32 leaves, u32 group_bits) {
    const u32 t = CRU_THREAD_X;
    if (t >= leaves) return;
    Xyzz<F> acc = xyzz_identity<F>();
    // Consecutive threads read consecutive entries (and, for dense ones, nearby points).
    for (u64 k = t; k < count; k += leaves) acc = xyzz_add_affine_inline(acc, bases[ones[k]]);
    const u32 g = t >> group_bits, first = g << group_bits;
    const u32 span = leaves - first < (1u << group_bits) ? leaves - first : 1u << group_bits;
    if (xyzz_climb(partials + first, tickets + first, t - first, span, acc, ones_tree_add<F>)) sums[g] = acc;
}

#define CRU_ONES_GROUP(G, F)                                                                                  \
    extern "C" __global__ void msm_##G##_ones_sum(const Affine<F>* bases, const u32* ones, Xyzz<F>* partials, \
            u32* tickets, Xyzz<F>* sums, u32 count, u32 leaves, u32 group_bits) {                            \
        msm_ones_sum<F>(bases, ones, partials, tickets, sums, count, leaves, group_bits);                    \
    }

// One part per group (curve.cuh's CRU_WITH): the host compiles them as programs of
// their own, in parallel; the classification kernels are in both.
#if CRU_WITH(G1)
CRU_ONES_GROUP(g1, Fq)
#endif
#if CRU_WITH(G2)
CRU_ONES_GROUP(g2, Fq2)
#endif
