// curve.cuh — short Weierstrass points with a = 0 over F = Fq (G1: y^2 = x^3 + b)
// or F = Fq2 (G2: y^2 = x^3 + b'), b and b' those of field.cuh's curve block. The
// formulas never use b.
//
// Affine<F> {F x; F y;}            G1: 2 N u32, G2: 4 N u32 (N = CRU_FQ_LIMBS: 12 for
//                                  BLS12-381, 8 for BN254). Infinity is x = y = 0
//                                  (all-zero limbs; (0, 0) is on neither curve: b != 0).
// Xyzz<F>   {F x; F y; F zz; F zzz;} G1: 4 N u32, G2: 8 N u32: the affine point
//                                  (X/ZZ, Y/ZZZ) with ZZ^3 = ZZZ^2; ZZ = 0 is infinity
//                                  (xyzz_identity() is all zeros). The host turns one
//                                  into arkworks' Jacobian (X·ZZ·ZZZ², Y·ZZ³·ZZZ², ZZ·ZZZ).
// All fields are in Montgomery form. Formulas: EFD's "xyzz" shape for a = 0
// (add-2008-s 12M+2S, madd-2008-s 8M+2S, dbl-2008-s-1 6M+3S, mdbl-2008-s-1),
// with the cases they do not cover handled: either operand infinity, P + P
// (doubling), P + (-P) (infinity).
// Requires field.cuh and fq2.cuh before it.
#ifndef CRUCIBLE_CURVE_CUH
#define CRUCIBLE_CURVE_CUH
#ifndef CRUCIBLE_FQ2_CUH
#include "fq2.cuh"
#endif

// Parts of a kernel file, each compiled as an NVRTC program of its own so that the
// programs compile concurrently (kernels.rs): a part's kernels sit under
// `#if CRU_WITH(PART)`. The host compiles such a file once per part it names, with
// -DCRU_SELECT=1 -DCRU_ONLY_<PART>=1; kernels outside every part are in each of those
// programs. Without CRU_SELECT (g++, or every file in one program) every part is in.
// Each program is a module of its own: kernels that share a mutable __device__ variable
// must be in one part (the constant tables of field.cuh are fine in every module).
// (In #if, an identifier that is not a macro reads as 0: CRU_ONLY_X is 0 unless set.)
#ifndef CRU_SELECT
#define CRU_SELECT 0
#endif
#define CRU_WITH(part) (!CRU_SELECT || CRU_ONLY_##part)

template <class F> struct Affine { F x, y; };
template <class F> struct Xyzz { F x, y, zz, zzz; };

typedef Affine<Fq> G1Affine;
typedef Affine<Fq2> G2Affine;
typedef Xyzz<Fq> G1Xyzz;
typedef Xyzz<Fq2> G2Xyzz;

template <class F> CRU_DEV Xyzz<F> xyzz_identity() {
    Xyzz<F> r; r.x = F::zero(); r.y = F::zero(); r.zz = F::zero(); r.zzz = F::zero(); return r;
}
template <class F> CRU_DEV bool xyzz_is_identity(const Xyzz<F>& p) { return fis_zero(p.zz); }
template <class F> CRU_DEV bool aff_is_identity(const Affine<F>& a) { return fis_zero(a.x) && fis_zero(a.y); }

template <class F> CRU_DEV Xyzz<F> xyzz_from_affine(const Affine<F>& a) {
    if (aff_is_identity(a)) return xyzz_identity<F>();
    Xyzz<F> r; r.x = a.x; r.y = a.y; r.zz = F::one(); r.zzz = F::one(); return r;
}

template <class F> CRU_DEV Affine<F> aff_neg(const Affine<F>& a) {
    Affine<F> r; r.x = a.x; r.y = fneg(a.y); return r;  // (0, 0) stays (0, 0)
}

// How a formula takes its field products (fmul_of / fsqr_of below):
//   CRU_PRODUCTS_CALL_FQ2  Fq products inlined, Fq2 products calls (fq2.cuh's fmul);
//   CRU_PRODUCTS_INLINE    every product inlined, the Fq2 ones too (fmul_inline);
//   CRU_PRODUCTS_CALLS     (G1) every Fq product a call (field.cuh's fmul_call): for
//                          formulas off the hot paths, a few a thread, where the cost
//                          that matters is NVRTC's (ptxas compiles a kernel's callees
//                          into each kernel, and a G1 addition with its 14 products
//                          inlined took NVRTC about 10 CPU seconds; as calls about 3),
//                          and for the G1 bucket sums, where the inlined products
//                          outgrow the instruction cache (msm.cu's SumsProducts).
#define CRU_PRODUCTS_CALL_FQ2 0
#define CRU_PRODUCTS_INLINE 1
#define CRU_PRODUCTS_CALLS 2

template <int HOW, class F> CRU_DEV F fmul_of(const F& a, const F& b) {
    if constexpr (HOW == CRU_PRODUCTS_INLINE) return fmul_inline(a, b);
    else if constexpr (HOW == CRU_PRODUCTS_CALLS) return fmul_call(a, b);
    else return fmul(a, b);
}
template <int HOW, class F> CRU_DEV F fsqr_of(const F& a) {
    if constexpr (HOW == CRU_PRODUCTS_INLINE) return fsqr_inline(a);
    else if constexpr (HOW == CRU_PRODUCTS_CALLS) return fsqr_call(a);
    else return fsqr(a);
}

// a b - c d (every formula's y), its products taken as HOW says. With every product a
// call (G1), one call that reduces once (field.cuh's fmul_sub): a tenth fewer
// reductions in the bucket sums' addition, and on the H100 MSM G1 2^20 / 2^24 ran in
// 8.42 / 106.0 ms against 8.79 / 110.9 with two reduced products.
template <int HOW, class F> CRU_DEV F fmul_sub_of(const F& a, const F& b, const F& c, const F& d) {
    if constexpr (HOW == CRU_PRODUCTS_CALLS) return fmul_sub_call(a, b, c, d);
    else return fsub(fmul_of<HOW>(a, b), fmul_of<HOW>(c, d));
}

// dbl-2008-s-1: 2P. Infinity in gives ZZ = 0 out.
template <int HOW, class F> CRU_DEV Xyzz<F> xyzz_double_formula(const Xyzz<F>& p) {
    const F u = fdbl(p.y);
    const F v = fsqr_of<HOW>(u);
    const F w = fmul_of<HOW>(u, v);
    const F s = fmul_of<HOW>(p.x, v);
    const F xx = fsqr_of<HOW>(p.x);
    const F m = fadd(fdbl(xx), xx);
    Xyzz<F> r;
    r.x = fsub(fsub(fsqr_of<HOW>(m), s), s);
    r.y = fmul_sub_of<HOW>(m, fsub(s, r.x), w, p.y);
    r.zz = fmul_of<HOW>(v, p.zz);
    r.zzz = fmul_of<HOW>(w, p.zzz);
    return r;
}

// 2P as a call (one copy per instantiation and kernel).
template <class F> CRU_CALL Xyzz<F> xyzz_double(const Xyzz<F>& p) {
    return xyzz_double_formula<CRU_PRODUCTS_CALL_FQ2>(p);
}

// mdbl-2008-s-1: 2·(x, y) for an affine point that is not infinity. y = 0 gives
// ZZ = 0, infinity (2-torsion).
template <int HOW, class F> CRU_DEV Xyzz<F> xyzz_double_affine_formula(const Affine<F>& a) {
    const F u = fdbl(a.y);
    const F v = fsqr_of<HOW>(u);
    const F w = fmul_of<HOW>(u, v);
    const F s = fmul_of<HOW>(a.x, v);
    const F xx = fsqr_of<HOW>(a.x);
    const F m = fadd(fdbl(xx), xx);
    Xyzz<F> r;
    r.x = fsub(fsub(fsqr_of<HOW>(m), s), s);
    r.y = fmul_sub_of<HOW>(m, fsub(s, r.x), w, a.y);
    r.zz = v;
    r.zzz = w;
    return r;
}

// 2·(x, y) as a call (planes.cu's first doubling of each point).
template <class F> CRU_CALL Xyzz<F> xyzz_double_affine(const Affine<F>& a) {
    return xyzz_double_affine_formula<CRU_PRODUCTS_CALL_FQ2>(a);
}

// The doublings of the additions' rare P = Q case (below). For G1 with every product
// a call: inlined, their products were about 40 % of NVVM's time over the bucket
// sums' kernel (`--fdevice-time-trace`), and made the G1 addition cost NVRTC about 3
// more CPU seconds in each kernel that calls it; the sums' kernel body kept its
// wide multiply-adds and spills (SASS, NVRTC 13.5: 11 instructions more). For G2 the
// doublings' Fq2 products are calls already: making their Fq products calls too grew
// the sums' kernel body by 500 instructions and 28 local-memory accesses, for about 1
// CPU second of NVRTC, so G2 keeps them.
template <class F> struct RareProducts { static constexpr int HOW = CRU_PRODUCTS_CALL_FQ2; };
template <> struct RareProducts<Fq> { static constexpr int HOW = CRU_PRODUCTS_CALLS; };
template <class F> CRU_CALL Xyzz<F> xyzz_double_affine_rare(const Affine<F>& a) {
    return xyzz_double_affine_formula<RareProducts<F>::HOW>(a);
}
template <class F> CRU_CALL Xyzz<F> xyzz_double_rare(const Xyzz<F>& p) {
    return xyzz_double_formula<RareProducts<F>::HOW>(p);
}

// madd-2008-s: P + q for an affine q (which may be the (0, 0) infinity). Inlined
// into the MSM's bucket sums, its hottest loop: as a call, ptxas allocates its
// registers apart from the caller's and fuses fewer of the Fq products' multiply
// pairs into wide multiply-adds (field.cuh), and passes the points through the stack.
// For G2 its Fq2 products are inlined too (fmul_inline): as calls they passed their
// operands through a 1.5 KB stack frame, and MSM G2 2^20 took 40.3 ms on the H200
// instead of 34.7 (NVRTC then takes about 10 s longer over msm.cu).
// Its P = q case is 2q = 2P. G2 doubles P there instead (MaddDoublesP): q then dies
// after its two products instead of living through them for the rare doubling, but
// P's address goes to the call, so ptxas keeps the bucket sums' accumulator in local
// memory. NVRTC 12.9, G2 sums' kernel body: spill stores 8 bytes instead of 180 (with
// fq2.cuh's lazy product: 0 instead of 240), 456 (702) fewer SASS instructions, and the
// accumulator's 384 bytes stored and its fields loaded at each entry; on the H200, MSM
// G2 2^20 26.16 ms against 26.59 (d32de65:BENCHMARKS.md). G1 doubles q: doubling P
// there gave its sums (products inlined) 128 registers instead of 152, 78 more
// instructions, and no speed (9.23 / 119.2 ms at 2^20 / 2^24 against 9.10 / 119.9).
template <class F> struct MaddDoublesP { static constexpr bool value = false; };
template <> struct MaddDoublesP<Fq2> { static constexpr bool value = true; };
template <int HOW, class F> CRU_DEV Xyzz<F> xyzz_add_affine_formula(const Xyzz<F>& p, const Affine<F>& q) {
    if (aff_is_identity(q)) return p;
    if (xyzz_is_identity(p)) return xyzz_from_affine(q);
    const F pp_ = fsub(fmul_of<HOW>(q.x, p.zz), p.x);   // P
    const F rr = fsub(fmul_of<HOW>(q.y, p.zzz), p.y);   // R
    if (fis_zero(pp_)) {
        if constexpr (MaddDoublesP<F>::value) {
            if (fis_zero(rr)) return xyzz_double_rare(p);
        } else {
            if (fis_zero(rr)) return xyzz_double_affine_rare(q);
        }
        return xyzz_identity<F>();
    }
    const F pp = fsqr_of<HOW>(pp_);
    const F ppp = fmul_of<HOW>(pp_, pp);
    const F qq = fmul_of<HOW>(p.x, pp);
    Xyzz<F> r;
    r.x = fsub(fsub(fsqr_of<HOW>(rr), ppp), fdbl(qq));
    r.y = fmul_sub_of<HOW>(rr, fsub(qq, r.x), p.y, ppp);
    r.zz = fmul_of<HOW>(p.zz, pp);
    r.zzz = fmul_of<HOW>(p.zzz, ppp);
    return r;
}

// The mixed addition with every product inlined.
template <class F> CRU_DEV Xyzz<F> xyzz_add_affine_inline(const Xyzz<F>& p, const Affine<F>& q) {
    return xyzz_add_affine_formula<CRU_PRODUCTS_INLINE>(p, q);
}

// The same as a call, for the places where the formula is not hot.
template <class F> CRU_CALL Xyzz<F> xyzz_add_affine(const Xyzz<F>& p, const Affine<F>& q) {
    return xyzz_add_affine_inline(p, q);
}

// add-2008-s: P + Q, written where it is used, its products taken as HOW says.
template <int HOW, class F> CRU_DEV Xyzz<F> xyzz_add_formula(const Xyzz<F>& p, const Xyzz<F>& q) {
    if (xyzz_is_identity(p)) return q;
    if (xyzz_is_identity(q)) return p;
    const F u1 = fmul_of<HOW>(p.x, q.zz);
    const F s1 = fmul_of<HOW>(p.y, q.zzz);
    const F pp_ = fsub(fmul_of<HOW>(q.x, p.zz), u1);    // P = U2 - U1
    const F rr = fsub(fmul_of<HOW>(q.y, p.zzz), s1);    // R = S2 - S1
    if (fis_zero(pp_)) {
        if (fis_zero(rr)) return xyzz_double_rare(p);
        return xyzz_identity<F>();
    }
    const F pp = fsqr_of<HOW>(pp_);
    const F ppp = fmul_of<HOW>(pp_, pp);
    const F qq = fmul_of<HOW>(u1, pp);
    Xyzz<F> r;
    r.x = fsub(fsub(fsqr_of<HOW>(rr), ppp), fdbl(qq));
    r.y = fmul_sub_of<HOW>(rr, fsub(qq, r.x), s1, ppp);
    r.zz = fmul_of<HOW>(fmul_of<HOW>(p.zz, q.zz), pp);
    r.zzz = fmul_of<HOW>(fmul_of<HOW>(p.zzz, q.zzz), ppp);
    return r;
}

// add-2008-s: P + Q, as a call (one copy per instantiation; the Fq2 products calls too).
template <class F> CRU_CALL Xyzz<F> xyzz_add(const Xyzz<F>& p, const Xyzz<F>& q) {
    return xyzz_add_formula<CRU_PRODUCTS_CALL_FQ2>(p, q);
}

// P + Q with every product a call (CRU_PRODUCTS_CALLS): off the hot paths.
template <class F> CRU_CALL Xyzz<F> xyzz_add_cold(const Xyzz<F>& p, const Xyzz<F>& q) {
    return xyzz_add_formula<CRU_PRODUCTS_CALLS>(p, q);
}

// A tree node's value, written by one thread and read by another, possibly on another
// SM: through volatile words, so that the read comes from L2 and not from a stale line
// of this SM's L1 (the store side is write-through; the fences order it).
template <class F> CRU_DEV void xyzz_publish(Xyzz<F>* slot, const Xyzz<F>& v) {
    volatile u32* dst = (volatile u32*)slot;
    const u32* src = (const u32*)&v;
    for (u32 k = 0; k < sizeof(Xyzz<F>) / 4; k++) dst[k] = src[k];
}

template <class F> CRU_DEV Xyzz<F> xyzz_read_published(const Xyzz<F>* slot) {
    Xyzz<F> v;
    const volatile u32* src = (const volatile u32*)slot;
    u32* dst = (u32*)&v;
    for (u32 k = 0; k < sizeof(Xyzz<F>) / 4; k++) dst[k] = src[k];
    return v;
}

// Sums `leaves` values (1 <= leaves < 2^31) up a binary tree within one launch, no
// launch per level: leaf `at`'s thread calls this with its value in `acc`. A node of
// span 2h over leaves [a, a + 2h) waits for its two children; the thread that finishes
// second (ticket a + h - 1, the node's in-order index, unique among the nodes) adds the
// first one's value and climbs on, the first stops. A node whose right child would
// start past the last leaf is its left child. The value of the node a thread stands on
// is kept at slot[its leftmost leaf] (slot[0 .. leaves), any contents before);
// tickets[0 .. leaves - 1) MUST BE ZEROED. Returns true in the one thread that reaches
// the root, with acc = the leaves' sum in leaf order; false in the others. No thread
// waits for another, so any order of the threads (the host harness's one at a time
// included) is a valid schedule. `add(p, q)` is the addition (xyzz_add, or a colder
// form off the hot paths). Users: ones.cu's ones' sum, msm.cu's step 5b "tree".
template <class F, class Add>
CRU_DEV bool xyzz_climb(Xyzz<F>* slot, u32* tickets, u32 at, u32 leaves, Xyzz<F>& acc, Add add) {
    for (u32 half = 1; half < leaves; half <<= 1) {  // half <= 2^30: no overflow
        const u32 node = at & ~(2 * half - 1);
        const u32 partner = at == node ? node + half : node;
        if (partner >= leaves) continue;
        xyzz_publish(&slot[at], acc);
        __threadfence();
        if (atomicAdd(&tickets[node + half - 1], 1u) == 0) return false;
        __threadfence();
        const Xyzz<F> other = xyzz_read_published(&slot[partner]);
        acc = at == node ? add(acc, other) : add(other, acc);
        at = node;
    }
    return true;
}

#endif  // CRUCIBLE_CURVE_CUH
