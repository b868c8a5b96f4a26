// fq2.cuh — Fq2 = Fq[u] / (u^2 + 1), the base field of G2.
// Layout: {Fq c0; Fq c1;} = c0 + c1*u, 24 u32 (arkworks' QuadExtField<Fp2Config> order).
// Requires field.cuh before it (NVRTC concatenation order: field, fq2, curve, *.cu).
#ifndef CRUCIBLE_FQ2_CUH
#define CRUCIBLE_FQ2_CUH
#ifndef CRUCIBLE_FIELD_CUH
#include "field.cuh"
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

// Karatsuba: 3 Fq products.
// (a0 + a1 u)(b0 + b1 u) = (a0 b0 - a1 b1) + ((a0+a1)(b0+b1) - a0 b0 - a1 b1) u
CRU_DEV Fq2 fmul_inline(const Fq2& a, const Fq2& b) {
    const Fq v0 = fmul(a.c0, b.c0);
    const Fq v1 = fmul(a.c1, b.c1);
    const Fq s = fmul(fadd(a.c0, a.c1), fadd(b.c0, b.c1));
    return make_fq2(fsub(v0, v1), fsub(fsub(s, v0), v1));
}

// (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u: 2 Fq products.
CRU_DEV Fq2 fsqr_inline(const Fq2& a) {
    const Fq m = fmul(a.c0, a.c1);
    return make_fq2(fmul(fadd(a.c0, a.c1), fsub(a.c0, a.c1)), fdbl(m));
}

// The Fq2 product and square everywhere but the hottest loop are calls (their Fq
// products inlined inside): inlined into every curve formula, msm.cu took minutes
// of NVRTC.
CRU_CALL Fq2 fmul(const Fq2& a, const Fq2& b) { return fmul_inline(a, b); }
CRU_CALL Fq2 fsqr(const Fq2& a) { return fsqr_inline(a); }

// 1 / (c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2): one Fq inversion. The norm is 0 only
// for a = 0 (-1 is not a square mod p), and then finv gives 0, so 0 maps to 0.
CRU_CALL Fq2 finv(const Fq2& a) {
    const Fq t = finv(fadd(fsqr(a.c0), fsqr(a.c1)));
    return make_fq2(fmul(a.c0, t), fneg(fmul(a.c1, t)));
}

#endif  // CRUCIBLE_FQ2_CUH
