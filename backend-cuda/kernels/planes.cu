// planes.cu — window planes of the MSM bases: plane j of base i is 2^(shift j) P_i,
// affine, so that an MSM over the planes needs fewer windows per scalar.
// Prepend field.cuh, fq2.cuh, curve.cuh (NVRTC concatenation); g++ finds them by #include.
//
// Table: Affine<F> table[planes * stride] (G1Affine / G2Affine: Fq / Fq2 Montgomery,
//        infinity = (0, 0), all-zero limbs), plane-major: entry i of plane j at
//        table[j * stride + i]. Plane 0 = the bases, written by the host (staged).
//        n <= stride; planes * stride fits u64 indices (the kernel computes them in
//        u64; n itself is a u32). Entries n .. stride - 1 of each plane are never read
//        or written.
// Parameters: 1 <= plane < planes, 1 <= shift <= 256.
//
// Launch sequence (one stream, in this order): for plane = 1, 2, ..., planes - 1
//   planes_g1(G1Affine* table, u32 n, u32 stride, u32 plane, u32 shift)
//   planes_g2(G2Affine* table, u32 n, u32 stride, u32 plane, u32 shift)
//                                                      THREADS = ceil(n / PLANES_BATCH)
//   1-D, any blockDim.x, gridDim.x = max(1, ceil(THREADS / blockDim.x)); threads past
//   the last batch return at once. (planes = 1: no launch.)
//   Each launch reads plane - 1 and writes plane: table[plane stride + i] =
//   2^shift table[(plane - 1) stride + i] for i < n (infinity stays (0, 0)).
//   Thread t takes the points i = t PLANES_BATCH .. min(n, (t + 1) PLANES_BATCH) - 1:
//   `shift` XYZZ doublings each, then one field inversion for the whole batch
//   (Montgomery's trick) to write them affine.
// PLANES_BATCH (16) trades the inversion (~480 Fq products, once per thread) against
// the batch's local memory (PLANES_BATCH XYZZ points: for BLS12-381 3 KB for G1, 6 KB
// for G2, per thread). The Rust host sizes its launches by 16 (planes.rs BATCH), so only the host
// tests set another value (-DPLANES_BATCH=k, k >= 1, in their portable build).
#ifndef CRUCIBLE_CURVE_CUH
#include "curve.cuh"
#endif

#ifndef PLANES_BATCH
#define PLANES_BATCH 16
#endif

template <class F>
CRU_DEV void planes_step(Affine<F>* table, u32 n, u32 stride, u32 plane, u32 shift) {
    const u64 lo = (u64)CRU_THREAD_X * PLANES_BATCH;
    if (lo >= n) return;
    const u32 count = n - lo < PLANES_BATCH ? (u32)(n - lo) : (u32)PLANES_BATCH;
    const Affine<F>* src = table + (u64)(plane - 1) * stride + lo;
    Affine<F>* dst = table + (u64)plane * stride + lo;

    // Infinity, (0, 0), needs no branch: its y = 0 makes ZZ = 0 in the first doubling
    // (as for any 2-torsion point), and ZZ stays 0 through the rest.
    Xyzz<F> pts[PLANES_BATCH];
    CRU_NO_UNROLL for (u32 k = 0; k < count; k++) {
        Xyzz<F> d = xyzz_double_affine(src[k]);
        CRU_NO_UNROLL for (u32 s = 1; s < shift; s++) d = xyzz_double(d);
        pts[k] = d;
    }

    // Montgomery's trick over d_k = ZZ_k ZZZ_k of the finite points: prefix[k] is the
    // product of the d_j, j < k, then one inversion of the total, walked back.
    F prefix[PLANES_BATCH];
    F acc = F::one();
    CRU_NO_UNROLL for (u32 k = 0; k < count; k++) {
        prefix[k] = acc;
        if (!xyzz_is_identity(pts[k])) acc = fmul(acc, fmul(pts[k].zz, pts[k].zzz));
    }
    F inv = finv(acc);  // 1 / prod d_k
    CRU_NO_UNROLL for (u32 k = count; k-- > 0;) {
        const Xyzz<F>& p = pts[k];
        Affine<F> r;
        if (xyzz_is_identity(p)) {
            r.x = F::zero();
            r.y = F::zero();
        } else {
            const F dinv = fmul(inv, prefix[k]);         // 1 / d_k
            inv = fmul(inv, fmul(p.zz, p.zzz));          // 1 / prod_{j<k} d_j
            r.x = fmul(p.x, fmul(dinv, p.zzz));          // X / ZZ
            r.y = fmul(p.y, fmul(dinv, p.zz));           // Y / ZZZ
        }
        dst[k] = r;
    }
}

#define CRU_PLANES_GROUP(G, F)                                                                         \
    extern "C" __global__ void planes_##G(Affine<F>* table, u32 n, u32 stride, u32 plane, u32 shift) { \
        planes_step<F>(table, n, stride, plane, shift);                                                \
    }

#if CRU_WITH(G1)
CRU_PLANES_GROUP(g1, Fq)
#endif
#if CRU_WITH(G2)
CRU_PLANES_GROUP(g2, Fq2)
#endif
