// fq2.cuh — Fq2 = Fq[u] / (u^2 + 1), the base field of G2 (u^2 = -1 on both curves,
// field.cuh's CRU_FQ2_NONRESIDUE).
// Layout: {Fq c0; Fq c1;} = c0 + c1*u, 2 CRU_FQ_LIMBS u32 (arkworks' QuadExtField<Fp2Config>
// order).
// Requires field.cuh before it (NVRTC concatenation order: field, fq2, curve, *.cu).
#ifndef CRUCIBLE_FQ2_CUH
#define CRUCIBLE_FQ2_CUH
#ifndef CRUCIBLE_FIELD_CUH
#include "field.cuh"
#endif
#if CRU_FQ2_NONRESIDUE != -1
#error "fq2.cuh's product, square and inverse take u^2 = -1"
#endif

struct Fq2 {
    Fq c0, c1;
    static CRU_DEV Fq2 zero() { Fq2 r; r.c0 = Fq::zero(); r.c1 = Fq::zero(); return r; }
    static CRU_DEV Fq2 one()  { Fq2 r; r.c0 = Fq::one();  r.c1 = Fq::zero(); return r; }
};

CRU_DEV Fq2 make_fq2(const Fq& c0, const Fq& c1) { Fq2 r; r.c0 = c0; r.c1 = c1; return r; }

CRU_DEV bool fis_zero(const Fq2& a) { return fis_zero(a.c0) && fis_zero(a.c1); }
CRU_DEV bool feq(const Fq2& a, const Fq2& b) { return feq(a.c0, b.c0) && feq(a.c1, b.c1); }
CRU_DEV Fq2 fadd(const Fq2& a, const Fq2& b) { return make_fq2(fadd(a.c0, b.c0), fadd(a.c1, b.c1)); }
CRU_DEV Fq2 fsub(const Fq2& a, const Fq2& b) { return make_fq2(fsub(a.c0, b.c0), fsub(a.c1, b.c1)); }
CRU_DEV Fq2 fneg(const Fq2& a) { return make_fq2(fneg(a.c0), fneg(a.c1)); }
CRU_DEV Fq2 fdbl(const Fq2& a) { return make_fq2(fdbl(a.c0), fdbl(a.c1)); }

// The Fq2 product by lazy reduction: Karatsuba over the unreduced 2N-word products
// (field.cuh's fmul_plain), then two Montgomery reductions (fredc): for BLS12-381 720
// limb multiply-adds, against 864 for Karatsuba over 3 Montgomery products. In the G2
// bucket sums' kernel body (NVRTC 12.9, sm_90): 7185 IMADs against 8425, 14391 SASS
// instructions against 14885, 240 bytes of spill stores against 180 (its 768-bit
// values at 255 registers); on the H200, MSM G2 2^20 26.59 ms against 27.49
// (d32de65:BENCHMARKS.md). Every G2 kernel takes it (they all call this product). The
// square stays as it is: lazily it would be 2 plain products and 2 reductions all the
// same.
//
// (a0 + a1 u)(b0 + b1 u) = (a0 b0 - a1 b1) + ((a0+a1)(b0+b1) - a0 b0 - a1 b1) u
CRU_DEV Fq2 fmul_inline(const Fq2& a, const Fq2& b) {
    // v0 + v1 and v0 - v1 = (v0 + v1) - 2 v1, so that v0 dies into the sum and v1 into
    // its double (registers: the G2 bucket sums run at 255). The sums a0 + a1, b0 + b1
    // stay unreduced (< 2p): the integer identity (a0+a1)(b0+b1) - v0 - v1 = a0 b1 + a1 b0
    // < 2p^2 holds for them all the same, and both fredc operands are below p 2^(32N)
    // (4p < 2^(32N): field.cuh's two spare bits).
    const FqWide v1 = fmul_plain(a.c1, b.c1);
    const Fq sa = fadd_unreduced(a.c0, a.c1);
    const Fq sb = fadd_unreduced(b.c0, b.c1);
    const FqWide w = fwide_add(fmul_plain(a.c0, b.c0), v1);
    const Fq c0 = fredc(fwide_sub_mod(w, fwide_dbl(v1)));
    return make_fq2(c0, fredc(fwide_sub(fmul_plain(sa, sb), w)));
}

// (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u: 2 Fq products.
CRU_DEV Fq2 fsqr_inline(const Fq2& a) {
    const Fq m = fmul(a.c0, a.c1);
    return make_fq2(fmul(fadd(a.c0, a.c1), fsub(a.c0, a.c1)), fdbl(m));
}

// The Fq2 product and square are calls (their Fq products inlined inside): inlined
// into every curve formula, msm.cu took minutes of NVRTC. Operands by reference: on the
// H200 the G2 bucket sums ran MSM G2 2^20 in 23.62 ms so, 25.50 by value
// (d32de65:BENCHMARKS.md), the opposite of field.cuh's Fq calls.
CRU_CALL Fq2 fmul(const Fq2& a, const Fq2& b) { return fmul_inline(a, b); }
CRU_CALL Fq2 fsqr(const Fq2& a) { return fsqr_inline(a); }

// 1 / (c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2): one Fq inversion of the norm, by
// INV. The norm is 0 only for a = 0 (-1 is not a square mod p), and then both Fq
// inversions give 0, so 0 maps to 0.
template <Fq (*INV)(const Fq&)> CRU_DEV Fq2 finv_by_norm(const Fq2& a) {
    const Fq t = INV(fadd(fsqr(a.c0), fsqr(a.c1)));
    return make_fq2(fmul(a.c0, t), fneg(fmul(a.c1, t)));
}
CRU_CALL Fq2 finv(const Fq2& a) { return finv_by_norm<finv>(a); }

#endif  // CRUCIBLE_FQ2_CUH
