// curve.cuh — short Weierstrass points with a = 0 over F = Fq (G1: y^2 = x^3 + 4)
// or F = Fq2 (G2: y^2 = x^3 + 4(1 + u)). The formulas never use b.
//
// Affine<F>   {F x; F y;}       G1: 24 u32, G2: 48 u32. Infinity is x = y = 0
//                               (all-zero limbs; (0, 0) is on neither curve).
// Jacobian<F> {F x; F y; F z;}  G1: 36 u32, G2: 72 u32. (X, Y, Z) is the affine
//                               point (X/Z^2, Y/Z^3), as arkworks' Projective; Z = 0 is
//                               infinity, and jac_identity() is arkworks' zero(): (1, 1, 0).
// All fields are in Montgomery form.
// Requires field.cuh and fq2.cuh before it.
#ifndef CRUCIBLE_CURVE_CUH
#define CRUCIBLE_CURVE_CUH
#ifndef CRUCIBLE_FQ2_CUH
#include "fq2.cuh"
#endif

template <class F> struct Affine { F x, y; };
template <class F> struct Jacobian { F x, y, z; };

typedef Affine<Fq> G1Affine;
typedef Affine<Fq2> G2Affine;
typedef Jacobian<Fq> G1Jac;
typedef Jacobian<Fq2> G2Jac;

template <class F> CRU_DEV Jacobian<F> jac_identity() {
    Jacobian<F> r; r.x = F::one(); r.y = F::one(); r.z = F::zero(); return r;
}
template <class F> CRU_DEV bool jac_is_identity(const Jacobian<F>& p) { return fis_zero(p.z); }
template <class F> CRU_DEV bool aff_is_identity(const Affine<F>& a) { return fis_zero(a.x) && fis_zero(a.y); }

template <class F> CRU_DEV Jacobian<F> jac_from_affine(const Affine<F>& a) {
    if (aff_is_identity(a)) return jac_identity<F>();
    Jacobian<F> r; r.x = a.x; r.y = a.y; r.z = F::one(); return r;
}

template <class F> CRU_DEV Jacobian<F> jac_neg(const Jacobian<F>& p) {
    Jacobian<F> r = p; r.y = fneg(p.y); return r;
}

// dbl-2009-l (EFD, a = 0): 2M + 5S. Z = 0 in gives Z = 0 out; Y = 0 (2-torsion) too.
template <class F> CRU_CALL Jacobian<F> jac_double(const Jacobian<F>& p) {
    const F a = fsqr(p.x);
    const F b = fsqr(p.y);
    const F c = fsqr(b);
    const F d = fdbl(fsub(fsub(fsqr(fadd(p.x, b)), a), c));
    const F e = fadd(fdbl(a), a);
    const F f = fsqr(e);
    Jacobian<F> r;
    r.x = fsub(f, fdbl(d));
    r.y = fsub(fmul(e, fsub(d, r.x)), fdbl(fdbl(fdbl(c))));
    r.z = fdbl(fmul(p.y, p.z));
    return r;
}

// add-2007-bl (EFD): 11M + 5S, with the cases the formula does not cover:
// either operand infinity, P + P (use doubling), P + (-P) (infinity).
template <class F> CRU_CALL Jacobian<F> jac_add(const Jacobian<F>& p, const Jacobian<F>& q) {
    if (jac_is_identity(p)) return q;
    if (jac_is_identity(q)) return p;
    const F z1z1 = fsqr(p.z);
    const F z2z2 = fsqr(q.z);
    const F u1 = fmul(p.x, z2z2);
    const F u2 = fmul(q.x, z1z1);
    const F s1 = fmul(fmul(p.y, q.z), z2z2);
    const F s2 = fmul(fmul(q.y, p.z), z1z1);
    const F h = fsub(u2, u1);
    const F rr = fdbl(fsub(s2, s1));
    if (fis_zero(h)) {
        if (fis_zero(rr)) return jac_double(p);
        return jac_identity<F>();
    }
    const F i = fsqr(fdbl(h));
    const F j = fmul(h, i);
    const F v = fmul(u1, i);
    Jacobian<F> r;
    r.x = fsub(fsub(fsqr(rr), j), fdbl(v));
    r.y = fsub(fmul(rr, fsub(v, r.x)), fdbl(fmul(s1, j)));
    r.z = fmul(fsub(fsub(fsqr(fadd(p.z, q.z)), z1z1), z2z2), h);
    return r;
}

// madd-2007-bl (EFD, Z2 = 1): 7M + 4S; q may be the (0, 0) infinity.
template <class F> CRU_CALL Jacobian<F> jac_add_mixed(const Jacobian<F>& p, const Affine<F>& q) {
    if (aff_is_identity(q)) return p;
    if (jac_is_identity(p)) return jac_from_affine(q);
    const F z1z1 = fsqr(p.z);
    const F u2 = fmul(q.x, z1z1);
    const F s2 = fmul(fmul(q.y, p.z), z1z1);
    const F h = fsub(u2, p.x);
    const F rr = fdbl(fsub(s2, p.y));
    if (fis_zero(h)) {
        if (fis_zero(rr)) return jac_double(p);
        return jac_identity<F>();
    }
    const F hh = fsqr(h);
    const F i = fdbl(fdbl(hh));
    const F j = fmul(h, i);
    const F v = fmul(p.x, i);
    Jacobian<F> r;
    r.x = fsub(fsub(fsqr(rr), j), fdbl(v));
    r.y = fsub(fmul(rr, fsub(v, r.x)), fdbl(fmul(p.y, j)));
    r.z = fsub(fsub(fsqr(fadd(p.z, h)), z1z1), hh);
    return r;
}

// The same point with Z = 1, or exactly (1, 1, 0) for infinity: one canonical
// encoding, so results do not depend on the order in which points were summed.
template <class F> CRU_CALL Jacobian<F> jac_normalize(const Jacobian<F>& p) {
    if (jac_is_identity(p)) return jac_identity<F>();
    const F zi = finv(p.z);
    const F zi2 = fsqr(zi);
    Jacobian<F> r;
    r.x = fmul(p.x, zi2);
    r.y = fmul(p.y, fmul(zi2, zi));
    r.z = F::one();
    return r;
}

#endif  // CRUCIBLE_CURVE_CUH
