// field.cuh — the prime fields Fr and Fq of the chosen curve for crucible's CUDA kernels.
//
// Compiled in two ways:
//   * by NVRTC at run time, as the first part of the concatenation
//     field.cuh + fq2.cuh + curve.cuh + <kernel>.cu (no system headers);
//   * by g++ (-x c++) for the host test harness in host_test/, where the CUDA
//     qualifiers below expand to nothing and the PTX carry chains are emulated.
//
// The curve is chosen at compile time by one define: -DCRU_CURVE_BN254 for BN254
// (alt_bn128), none for BLS12-381. Its block below gives every curve constant the
// kernels use; the code after it is written once over those.
//
// Layout (fixed; identical bytes to arkworks' internal BigInt of u64 limbs):
//   Fr: N = CRU_FR_LIMBS x u32, little-endian, Montgomery form, R = 2^(32N) mod r.
//   Fq: N = CRU_FQ_LIMBS x u32, little-endian, Montgomery form, R = 2^(32N) mod p.
//   BLS12-381: Fr 8 limbs, Fq 12; BN254: both 8.
// Zero is all-zero limbs in both the canonical and the Montgomery form.
//
// Arithmetic: carry chains (add.cc / addc / mad.lo.cc / madc.hi.cc). On the device
// each primitive is one inline-PTX instruction; on the host the carry flag is
// emulated, so the host tests run the very same chain code.
#ifndef CRUCIBLE_FIELD_CUH
#define CRUCIBLE_FIELD_CUH

#if !defined(__CUDACC_RTC__) && !defined(__CUDACC__)
// Host (g++) build: CUDA qualifiers vanish.
#define __host__
#define __device__
#define __global__
#define __constant__
#define __forceinline__ inline
#define __launch_bounds__(...)
#endif

#ifdef __CUDA_ARCH__
#define CRU_UNROLL _Pragma("unroll")
#define CRU_NO_UNROLL _Pragma("unroll 1")
#else
#define CRU_UNROLL
#define CRU_NO_UNROLL
#endif

// Global thread index along x (every grid here has < 2^32 threads along x).
#define CRU_THREAD_X (blockIdx.x * blockDim.x + threadIdx.x)

// Every arithmetic helper is a device function; on the host it is a plain inline one.
// CRU_DEV inlines (limb-level ops, and the Fr / Fq products). CRU_CALL keeps one
// copy per instantiation: the Fq2 product and each curve formula are calls, with
// their Fq products inlined inside them. Inlining the formulas into every caller
// made NVRTC's PTX for msm.cu ~50 MB (minutes of ptxas); calling each Fq product
// instead passed its operands through the stack on every product.
#define CRU_DEV __device__ __forceinline__
#ifdef __CUDA_ARCH__
#define CRU_CALL __device__ __noinline__
#else
#define CRU_CALL inline
#endif

typedef unsigned int u32;
typedef unsigned long long u64;

#if !defined(__CUDACC_RTC__) && !defined(__CUDACC__)
// Host stand-ins for the CUDA built-ins the kernels use. The harness emulates a
// launch by setting these and calling the kernel once per thread: one after the other
// for the kernels without barriers (any order is a valid schedule of those), and one
// host thread per CUDA thread of a block for those with (ntt_tile): the built-ins are
// per host thread, `__shared__` arrays are statics (the harness runs one block at a
// time), and `__syncthreads` waits on the barrier the harness installs.
struct cru_dim3 { u32 x, y, z; };
static thread_local cru_dim3 threadIdx, blockIdx, blockDim, gridDim;
#define __shared__ static
static void (*cru_block_barrier)() = nullptr;
static inline void __syncthreads() { cru_block_barrier(); }
// The warp built-ins (ntt_tile_w), for blocks whose threads run concurrently: a
// barrier among the threads `mask` names of the caller's warp (the harness's), and a
// shuffle as a write to the caller's slot, that barrier, the partner's slot read,
// the barrier again (no slot is rewritten before it is read).
static void (*cru_warp_barrier)(u32 warp, u32 mask) = nullptr;
static inline void __syncwarp(u32 mask = 0xffffffffu) { cru_warp_barrier(threadIdx.x / 32, mask); }
static u32 cru_warp_slots[1024];
static inline u32 __shfl_xor_sync(u32 mask, u32 v, u32 lane_mask) {
    // The partner must shuffle too (on the device: undefined otherwise).
    if (!((mask >> ((threadIdx.x ^ lane_mask) & 31u)) & 1u)) __builtin_trap();
    cru_warp_slots[threadIdx.x] = v;
    __syncwarp(mask);
    const u32 r = cru_warp_slots[threadIdx.x ^ (lane_mask & 31u)];
    __syncwarp(mask);
    return r;
}
// Atomic on the host too: the threads of a block with barriers run concurrently.
static inline u32 atomicAdd(u32* p, u32 v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline u32 atomicSub(u32* p, u32 v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }
static inline u32 atomicMax(u32* p, u32 v) {
    u32 old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return old;
}
// One thread at a time: every write is seen by the threads that run after it.
static inline void __threadfence() {}
#endif

// ---------------------------------------------------------------------------
// Carry-chain primitives. Semantics are PTX's: CF is one carry bit; for the sub
// forms it is the borrow. `*_cc` sets CF, `*c*` consumes it.
// ---------------------------------------------------------------------------
#ifdef __CUDA_ARCH__
// volatile keeps the statements in program order; nothing the compiler emits
// between them touches CC (only explicit .cc instructions do).
CRU_DEV u32 add_cc(u32 a, u32 b)  { u32 r; asm volatile("add.cc.u32 %0, %1, %2;"  : "=r"(r) : "r"(a), "r"(b)); return r; }
CRU_DEV u32 addc_cc(u32 a, u32 b) { u32 r; asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
CRU_DEV u32 addc(u32 a, u32 b)    { u32 r; asm volatile("addc.u32 %0, %1, %2;"    : "=r"(r) : "r"(a), "r"(b)); return r; }
CRU_DEV u32 sub_cc(u32 a, u32 b)  { u32 r; asm volatile("sub.cc.u32 %0, %1, %2;"  : "=r"(r) : "r"(a), "r"(b)); return r; }
CRU_DEV u32 subc_cc(u32 a, u32 b) { u32 r; asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
CRU_DEV u32 subc(u32 a, u32 b)    { u32 r; asm volatile("subc.u32 %0, %1, %2;"    : "=r"(r) : "r"(a), "r"(b)); return r; }
// d = lo(a*b) + c (+CF)          d = hi(a*b) + c (+CF)
CRU_DEV u32 mad_lo_cc(u32 a, u32 b, u32 c)  { u32 r; asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;"  : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
CRU_DEV u32 madc_lo_cc(u32 a, u32 b, u32 c) { u32 r; asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
CRU_DEV u32 mad_hi_cc(u32 a, u32 b, u32 c)  { u32 r; asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;"  : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
CRU_DEV u32 madc_hi_cc(u32 a, u32 b, u32 c) { u32 r; asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
CRU_DEV u32 madc_hi(u32 a, u32 b, u32 c)    { u32 r; asm volatile("madc.hi.u32 %0, %1, %2, %3;"    : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
// (hi:lo) = a*b + (hi:lo) (+CF), CF out: the wide product added as one 64-bit word.
CRU_DEV void madw_cc(u32 a, u32 b, u32& lo, u32& hi) {
    asm volatile("{\n.reg .u64 t, c;\nmov.b64 c, {%0, %1};\nmul.wide.u32 t, %2, %3;\nadd.cc.u64 c, c, t;\nmov.b64 {%0, %1}, c;\n}"
                 : "+r"(lo), "+r"(hi) : "r"(a), "r"(b));
}
CRU_DEV void madwc_cc(u32 a, u32 b, u32& lo, u32& hi) {
    asm volatile("{\n.reg .u64 t, c;\nmov.b64 c, {%0, %1};\nmul.wide.u32 t, %2, %3;\naddc.cc.u64 c, c, t;\nmov.b64 {%0, %1}, c;\n}"
                 : "+r"(lo), "+r"(hi) : "r"(a), "r"(b));
}
#else
// Host emulation of the chains: one carry flag per host thread (per emulated CUDA thread).
static thread_local u32 cru_cf;
CRU_DEV u32 cru_set(u64 s) { cru_cf = (u32)(s >> 32) & 1u; return (u32)s; }
CRU_DEV u32 add_cc(u32 a, u32 b)  { return cru_set((u64)a + b); }
CRU_DEV u32 addc_cc(u32 a, u32 b) { return cru_set((u64)a + b + cru_cf); }
CRU_DEV u32 addc(u32 a, u32 b)    { return (u32)((u64)a + b + cru_cf); }
CRU_DEV u32 sub_cc(u32 a, u32 b)  { return cru_set((u64)a - b); }
CRU_DEV u32 subc_cc(u32 a, u32 b) { return cru_set((u64)a - b - cru_cf); }
CRU_DEV u32 subc(u32 a, u32 b)    { return (u32)((u64)a - b - cru_cf); }
CRU_DEV u32 mad_lo_cc(u32 a, u32 b, u32 c)  { return cru_set((u64)(u32)((u64)a * b) + c); }
CRU_DEV u32 madc_lo_cc(u32 a, u32 b, u32 c) { return cru_set((u64)(u32)((u64)a * b) + c + cru_cf); }
CRU_DEV u32 mad_hi_cc(u32 a, u32 b, u32 c)  { return cru_set((((u64)a * b) >> 32) + c); }
CRU_DEV u32 madc_hi_cc(u32 a, u32 b, u32 c) { return cru_set((((u64)a * b) >> 32) + c + cru_cf); }
CRU_DEV u32 madc_hi(u32 a, u32 b, u32 c)    { return (u32)((((u64)a * b) >> 32) + c + cru_cf); }
CRU_DEV void cru_madw(u32 a, u32 b, u32& lo, u32& hi, u32 cin) {
    const unsigned __int128 s = (unsigned __int128)((u64)a * b) + (((u64)hi << 32) | lo) + cin;
    lo = (u32)s;
    hi = (u32)(s >> 32);
    cru_cf = (u32)(s >> 64);
}
CRU_DEV void madw_cc(u32 a, u32 b, u32& lo, u32& hi)  { cru_madw(a, b, lo, hi, 0); }
CRU_DEV void madwc_cc(u32 a, u32 b, u32& lo, u32& hi) { cru_madw(a, b, lo, hi, cru_cf); }
#endif

// ---------------------------------------------------------------------------
// The curve block: limb counts, -p^-1 mod 2^32, and the constants as canonical
// integers in little-endian u32 limbs. Every modulus leaves two spare top bits
// (p < 2^(32N - 2)): sums of two elements never overflow the limbs, and fq2.cuh's
// lazy product keeps its unreduced sums below p 2^(32N).
// CRU_SCALAR_DIGIT_BITS: the bits an MSM's signed digits must cover, the bits of r
// plus one for the last digit's carry (msm.cu's W = ceil(CRU_SCALAR_DIGIT_BITS / c)).
// CRU_FQ2_NONRESIDUE: u^2 in Fq2 = Fq[u] / (u^2 - CRU_FQ2_NONRESIDUE); fq2.cuh takes -1.
// The curves' b (y^2 = x^3 + b) are here for reference only: no formula uses them.
// ---------------------------------------------------------------------------
#if defined(CRU_CURVE_BN254)
// BN254: G1 y^2 = x^3 + 3 over Fq, G2 y^2 = x^3 + 3/(9 + u) over Fq2; r has 254 bits,
// Fr's two-adicity is 28 (the host's domains stay within it).
#define CRU_FR_LIMBS 8
#define CRU_FR_INV 0xefffffffu
#define CRU_FQ_LIMBS 8
#define CRU_FQ_INV 0xe4866389u
#define CRU_SCALAR_DIGIT_BITS 255
#define CRU_FQ2_NONRESIDUE (-1)
// r = 0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001
__device__ __constant__ const u32 FR_P[8]   = {0xf0000001, 0x43e1f593, 0x79b97091, 0x2833e848, 0x8181585d, 0xb85045b6, 0xe131a029, 0x30644e72};
__device__ __constant__ const u32 FR_ONE[8] = {0x4ffffffb, 0xac96341c, 0x9f60cd29, 0x36fc7695, 0x7879462e, 0x666ea36f, 0x9a07df2f, 0x0e0a77c1}; // 2^256 mod r
__device__ __constant__ const u32 FR_R2[8]  = {0xae216da7, 0x1bb8e645, 0xe35c59e3, 0x53fe3ab1, 0x53bb8085, 0x8c49833d, 0x7f4e44a5, 0x0216d0b1}; // 2^512 mod r
// p = 0x30644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd47
__device__ __constant__ const u32 FQ_P[8]   = {0xd87cfd47, 0x3c208c16, 0x6871ca8d, 0x97816a91, 0x8181585d, 0xb85045b6, 0xe131a029, 0x30644e72};
__device__ __constant__ const u32 FQ_ONE[8] = {0xc58f0d9d, 0xd35d438d, 0xf5c70b3d, 0x0a78eb28, 0x7879462c, 0x666ea36f, 0x9a07df2f, 0x0e0a77c1}; // 2^256 mod p
__device__ __constant__ const u32 FQ_R2[8]  = {0x538afa89, 0xf32cfc5b, 0xd44501fb, 0xb5e71911, 0x0a417ff6, 0x47ab1eff, 0xcab8351f, 0x06d89f71}; // 2^512 mod p
#else
// BLS12-381: G1 y^2 = x^3 + 4 over Fq, G2 y^2 = x^3 + 4(1 + u) over Fq2; r has 255
// bits, Fr's two-adicity is 32.
#define CRU_FR_LIMBS 8
#define CRU_FR_INV 0xffffffffu
#define CRU_FQ_LIMBS 12
#define CRU_FQ_INV 0xfffcfffdu
#define CRU_SCALAR_DIGIT_BITS 256
#define CRU_FQ2_NONRESIDUE (-1)
// r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001
__device__ __constant__ const u32 FR_P[8]   = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402, 0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
__device__ __constant__ const u32 FR_ONE[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa, 0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159}; // 2^256 mod r
__device__ __constant__ const u32 FR_R2[8]  = {0xf3f29c6d, 0xc999e990, 0x87925c23, 0x2b6cedcb, 0x7254398f, 0x05d31496, 0x9f59ff11, 0x0748d9d9}; // 2^512 mod r
// p = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab
__device__ __constant__ const u32 FQ_P[12]   = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0, 0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
__device__ __constant__ const u32 FQ_ONE[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857, 0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3}; // 2^384 mod p
__device__ __constant__ const u32 FQ_R2[12]  = {0x1c341746, 0xf4df1f34, 0x09d104f1, 0x0a76e6a6, 0x4c95b6d5, 0x8de5476c, 0x939d83c0, 0x67eb88a9, 0xb519952d, 0x9a793e85, 0x92cae3aa, 0x11988fe5}; // 2^768 mod p
#endif

// A field is Fp<Cfg>; Cfg gives the limb count, -p^-1 mod 2^32 and the constants.
// Both moduli leave spare top bits (the curve block), so a + b < 2^(32N) never
// overflows the limbs and the Montgomery result before its final subtraction is < 2p.
struct FrCfg {
    static constexpr int N = CRU_FR_LIMBS;
    static constexpr u32 INV = CRU_FR_INV;
    static CRU_DEV u32 p(int i)   { return FR_P[i]; }
    static CRU_DEV u32 one(int i) { return FR_ONE[i]; }
    static CRU_DEV u32 r2(int i)  { return FR_R2[i]; }
};
struct FqCfg {
    static constexpr int N = CRU_FQ_LIMBS;
    static constexpr u32 INV = CRU_FQ_INV;
    static CRU_DEV u32 p(int i)   { return FQ_P[i]; }
    static CRU_DEV u32 one(int i) { return FQ_ONE[i]; }
    static CRU_DEV u32 r2(int i)  { return FQ_R2[i]; }
};

// 16-byte aligned so that loads and stores of whole elements are 16-byte vector
// accesses (every element size here is a multiple of 16 bytes).
template <class C>
struct alignas(16) Fp {
    static constexpr int N = C::N;
    u32 l[C::N];

    static CRU_DEV Fp zero() { Fp r; CRU_UNROLL for (int i = 0; i < N; i++) r.l[i] = 0; return r; }
    static CRU_DEV Fp one()  { Fp r; CRU_UNROLL for (int i = 0; i < N; i++) r.l[i] = C::one(i); return r; }
    static CRU_DEV Fp r2()   { Fp r; CRU_UNROLL for (int i = 0; i < N; i++) r.l[i] = C::r2(i); return r; }
    static CRU_DEV Fp modulus() { Fp r; CRU_UNROLL for (int i = 0; i < N; i++) r.l[i] = C::p(i); return r; }
    // The integer 1 (not Montgomery): multiplying by it leaves Montgomery form.
    static CRU_DEV Fp raw_one() { Fp r = zero(); r.l[0] = 1; return r; }
};

typedef Fp<FrCfg> Fr;
typedef Fp<FqCfg> Fq;

// A double-width integer (2N words, little-endian): a product before its Montgomery
// reduction. fq2.cuh's lazy Fq2 product adds and subtracts these and reduces only the
// two sums (fredc).
template <class C> struct FpWide { u32 l[2 * C::N]; };
typedef FpWide<FqCfg> FqWide;

template <class C> CRU_DEV bool fis_zero(const Fp<C>& a) {
    u32 acc = 0;
    CRU_UNROLL for (int i = 0; i < C::N; i++) acc |= a.l[i];
    return acc == 0;
}

template <class C> CRU_DEV bool feq(const Fp<C>& a, const Fp<C>& b) {
    u32 acc = 0;
    CRU_UNROLL for (int i = 0; i < C::N; i++) acc |= a.l[i] ^ b.l[i];
    return acc == 0;
}

// x mod p for the N words x < 2p: x - p, or x if that borrowed.
template <class C> CRU_DEV Fp<C> reduce_once(const u32* x) {
    constexpr int N = C::N;
    Fp<C> r, d;
    d.l[0] = sub_cc(x[0], C::p(0));
    CRU_UNROLL for (int i = 1; i < N; i++) d.l[i] = subc_cc(x[i], C::p(i));
    const u32 borrow = subc(0, 0);  // 0xffffffff if x < p, else 0
    CRU_UNROLL for (int i = 0; i < N; i++) r.l[i] = (x[i] & borrow) | (d.l[i] & ~borrow);
    return r;
}

template <class C> CRU_DEV Fp<C> fadd(const Fp<C>& a, const Fp<C>& b) {
    constexpr int N = C::N;
    u32 s[N];
    s[0] = add_cc(a.l[0], b.l[0]);
    CRU_UNROLL for (int i = 1; i < N; i++) s[i] = addc_cc(a.l[i], b.l[i]);
    // s < 2p < 2^(32N): no carry out.
    return reduce_once<C>(s);
}

template <class C> CRU_DEV Fp<C> fsub(const Fp<C>& a, const Fp<C>& b) {
    constexpr int N = C::N;
    Fp<C> d;
    d.l[0] = sub_cc(a.l[0], b.l[0]);
    CRU_UNROLL for (int i = 1; i < N; i++) d.l[i] = subc_cc(a.l[i], b.l[i]);
    u32 borrow = subc(0, 0);  // a < b: add p back
    d.l[0] = add_cc(d.l[0], C::p(0) & borrow);
    CRU_UNROLL for (int i = 1; i < N; i++) d.l[i] = addc_cc(d.l[i], C::p(i) & borrow);
    return d;
}

// The end of a row of fmul / fsqr: t / 2^32 = o + e[1] + 2^32 (e >> 64), so the new
// e is o, the new o is e >> 64, and e[1] is pending (added to frame word 0 next row).
template <int N> CRU_DEV void mont_next_row(u32 (&e)[N + 2], u32 (&o)[N + 2], u32& pend) {
    pend = e[1];
    u32 ne[N + 2], no[N + 2];
    CRU_UNROLL for (int k = 0; k < N + 2; k++) ne[k] = o[k];
    CRU_UNROLL for (int k = 0; k < N; k++) no[k] = e[k + 2];
    no[N] = 0; no[N + 1] = 0;
    CRU_UNROLL for (int k = 0; k < N + 2; k++) { e[k] = ne[k]; o[k] = no[k]; }
}

// (hi:lo) += a*b (+CF when C_IN), CF out. Narrow: mad.lo.cc then madc.hi.cc on the
// same operands. WIDE: the 64-bit product added as one 64-bit word. Both are the same
// sum; they differ in what ptxas makes of them: NVRTC 13's ptxas for sm_90 turns a wide
// pair into one IMAD.WIDE.U32.X, but a narrow pair of two register operands inside
// fmul into IMAD, IMAD.HI.U32 and two IADD3.X (a Fr product 472 SASS instructions
// narrow, 232 wide; a Fq product 856 and 440).
template <bool WIDE, bool C_IN> CRU_DEV void mad_pair(u32 a, u32 b, u32& lo, u32& hi) {
    if (WIDE) {
        if (C_IN) madwc_cc(a, b, lo, hi);
        else madw_cc(a, b, lo, hi);
    } else {
        lo = C_IN ? madc_lo_cc(a, b, lo) : mad_lo_cc(a, b, lo);
        hi = madc_hi_cc(a, b, hi);
    }
}

// Montgomery product a*b*2^(-32N) mod p, CIOS with the running sum t split in two:
// t = e + 2^32 o, where e takes the products of the even limbs of a (and of p) and
// o those of the odd limbs. Each product then lands on an aligned pair of words, a
// multiply-add with carry in and out on the pair (mad_pair; WIDE picks its form).
// Dividing t by 2^32 after
// each row is a renaming: e becomes o, o becomes e >> 64, and e's word 1 is added to
// frame word 0 at the start of the next row, its carry absorbed by o's first
// product. Bounds: t < 2p on entry to each row, as in plain CIOS; e and o each stay
// below 2^(32N + 2), so N + 1 words hold them and nothing carries out of word N.
template <class C, bool WIDE = false> CRU_DEV Fp<C> fmul(const Fp<C>& a, const Fp<C>& b) {
    constexpr int N = C::N;
    u32 e[N + 2], o[N + 2];
    CRU_UNROLL for (int k = 0; k < N + 2; k++) { e[k] = 0; o[k] = 0; }
    u32 pend = 0;
    CRU_UNROLL for (int i = 0; i < N; i++) {
        const u32 bi = b.l[i];
        // frame word 0 gets the pending word; its carry goes to frame word 1 = o[0]
        e[0] = add_cc(e[0], pend);
        CRU_UNROLL for (int j = 1; j < N; j += 2) mad_pair<WIDE, true>(a.l[j], bi, o[j - 1], o[j]);
        o[N] = addc(o[N], 0);
        mad_pair<WIDE, false>(a.l[0], bi, e[0], e[1]);
        CRU_UNROLL for (int j = 2; j < N; j += 2) mad_pair<WIDE, true>(a.l[j], bi, e[j], e[j + 1]);
        e[N] = addc(e[N], 0);
        const u32 m = e[0] * C::INV;
        mad_pair<WIDE, false>(m, C::p(0), e[0], e[1]);
        CRU_UNROLL for (int j = 2; j < N; j += 2) mad_pair<WIDE, true>(m, C::p(j), e[j], e[j + 1]);
        e[N] = addc(e[N], 0);
        mad_pair<WIDE, false>(m, C::p(1), o[0], o[1]);
        CRU_UNROLL for (int j = 3; j < N; j += 2) mad_pair<WIDE, true>(m, C::p(j), o[j - 1], o[j]);
        o[N] = addc(o[N], 0);
        mont_next_row<N>(e, o, pend);
    }
    // t = e + pend + 2^32 o < 2p, reduced below p.
    u32 t[N + 1];
    t[0] = add_cc(e[0], pend);
    CRU_UNROLL for (int k = 1; k < N + 1; k++) t[k] = addc_cc(e[k], o[k - 1]);
    return reduce_once<C>(t);
}

// Montgomery square a^2 * 2^(-32N) mod p with each cross product a_i a_j (i < j) taken
// once: fmul's rows with row i adding a_i c_i instead of a b_i, where
// a^2 = sum_i a_i 2^(32i) c_i and c_i = a_i 2^(32i) + 2 sum_{j>i} a_j 2^(32j) has no
// words below i. Word i of c_i is a_i, word i + 1 the low word of 2 a_{i+1}, word
// j > i + 1 word j of 2a (2a < 2^(32N): both moduli leave a spare top bit). Row i
// thus has N - i products: N(N+1)/2 + N^2 in all (12 limbs: 222, fmul(a, a) 288), each
// lo/hi pair on the even/odd split as in fmul, and no 2N-word square is ever held.
// Bounds, as fmul's: c_i <= 2a < 2p takes the place of a < p. Per row, e gains
// a_i c_i,even + m p_even < 2^(32N+1) (even words stop at N - 2) and o, in its own
// weights, (a_i c_i,odd + m p_odd) / 2^32 < 3p; o starts each row as e >> 64, e as o,
// so e < 2^(32N+2) and o < 2^(32N+1): nothing carries out of word N. The result is
// (a^2 + m p) / 2^(32N) with m < 2^(32N) and a^2 < p^2, so < 2p: one subtraction.
template <class C> CRU_DEV Fp<C> fsqr(const Fp<C>& a) {
    constexpr int N = C::N;
    static_assert(N % 2 == 0, "the top word N - 1 must be odd");
    u32 d[N];  // 2a
    d[0] = a.l[0] << 1;
    CRU_UNROLL for (int j = 1; j < N; j++) d[j] = (a.l[j] << 1) | (a.l[j - 1] >> 31);
    u32 e[N + 2], o[N + 2];
    CRU_UNROLL for (int k = 0; k < N + 2; k++) { e[k] = 0; o[k] = 0; }
    u32 pend = 0;
    CRU_UNROLL for (int i = 0; i < N; i++) {
        const u32 ai = a.l[i];
        u32 c[N];  // words i .. N-1 of c_i
        c[i] = ai;
        if (i + 1 < N) c[i + 1] = a.l[i + 1] << 1;
        CRU_UNROLL for (int j = i + 2; j < N; j++) c[j] = d[j];
        // word pair (j, j + 1) of the frame: e[j], e[j+1] for even j, o[j-1], o[j] for odd j
        if (i % 2 == 0) {
            e[i] = mad_lo_cc(ai, c[i], e[i]);
            e[i + 1] = madc_hi_cc(ai, c[i], e[i + 1]);
            CRU_UNROLL for (int j = i + 2; j < N; j += 2) {
                e[j] = madc_lo_cc(ai, c[j], e[j]);
                e[j + 1] = madc_hi_cc(ai, c[j], e[j + 1]);
            }
            e[N] = addc(e[N], 0);
            o[i] = mad_lo_cc(ai, c[i + 1], o[i]);
            o[i + 1] = madc_hi_cc(ai, c[i + 1], o[i + 1]);
            CRU_UNROLL for (int j = i + 3; j < N; j += 2) {
                o[j - 1] = madc_lo_cc(ai, c[j], o[j - 1]);
                o[j] = madc_hi_cc(ai, c[j], o[j]);
            }
            o[N] = addc(o[N], 0);
        } else {
            o[i - 1] = mad_lo_cc(ai, c[i], o[i - 1]);
            o[i] = madc_hi_cc(ai, c[i], o[i]);
            CRU_UNROLL for (int j = i + 2; j < N; j += 2) {
                o[j - 1] = madc_lo_cc(ai, c[j], o[j - 1]);
                o[j] = madc_hi_cc(ai, c[j], o[j]);
            }
            o[N] = addc(o[N], 0);
            if (i + 1 < N) {
                e[i + 1] = mad_lo_cc(ai, c[i + 1], e[i + 1]);
                e[i + 2] = madc_hi_cc(ai, c[i + 1], e[i + 2]);
                CRU_UNROLL for (int j = i + 3; j < N; j += 2) {
                    e[j] = madc_lo_cc(ai, c[j], e[j]);
                    e[j + 1] = madc_hi_cc(ai, c[j], e[j + 1]);
                }
                e[N] = addc(e[N], 0);
            }
        }
        // Frame word 0 took a product only in row 0; from row 1 on it is e[0] + pend.
        const u32 m = (e[0] + pend) * C::INV;
        if (i == 0) {
            o[0] = mad_lo_cc(m, C::p(1), o[0]);
        } else {
            e[0] = add_cc(e[0], pend);  // its carry goes to frame word 1 = o[0]
            o[0] = madc_lo_cc(m, C::p(1), o[0]);
        }
        o[1] = madc_hi_cc(m, C::p(1), o[1]);
        CRU_UNROLL for (int j = 3; j < N; j += 2) {
            o[j - 1] = madc_lo_cc(m, C::p(j), o[j - 1]);
            o[j] = madc_hi_cc(m, C::p(j), o[j]);
        }
        o[N] = addc(o[N], 0);
        e[0] = mad_lo_cc(m, C::p(0), e[0]);
        e[1] = madc_hi_cc(m, C::p(0), e[1]);
        CRU_UNROLL for (int j = 2; j < N; j += 2) {
            e[j] = madc_lo_cc(m, C::p(j), e[j]);
            e[j + 1] = madc_hi_cc(m, C::p(j), e[j + 1]);
        }
        e[N] = addc(e[N], 0);
        mont_next_row<N>(e, o, pend);
    }
    // e + pend + 2^32 o < 2p < 2^(32N): e[N] and o[N-1] are zero.
    u32 u[N];
    u[0] = add_cc(e[0], pend);
    CRU_UNROLL for (int k = 1; k < N - 1; k++) u[k] = addc_cc(e[k], o[k - 1]);
    u[N - 1] = addc(e[N - 1], o[N - 2]);
    return reduce_once<C>(u);
}

// a + b, not reduced: below 2p < 2^(32N) (both moduli leave a spare top bit), an
// operand of fmul_plain.
template <class C> CRU_DEV Fp<C> fadd_unreduced(const Fp<C>& a, const Fp<C>& b) {
    constexpr int N = C::N;
    Fp<C> s;
    s.l[0] = add_cc(a.l[0], b.l[0]);
    CRU_UNROLL for (int i = 1; i < N - 1; i++) s.l[i] = addc_cc(a.l[i], b.l[i]);
    s.l[N - 1] = addc(a.l[N - 1], b.l[N - 1]);
    return s;
}

// The 2N-word product a*b of any a, b < 2^(32N): fmul's rows without their m p half.
// Frame word 0 of row i is final after the row's products (nothing lands below the
// frame): it is word i of the product, kept as the frame moves on; the frame left
// after the last row is the top N words. Bounds: before a row's shift the frame is below
// a 2^32 <= 2^(32(N+1)), so e and o fit N + 1 words, as in fmul. Its multiply-adds and
// fredc's are mad_pair's WIDE form: in the G2 bucket sums (NVRTC 12.9, sm_90) the
// narrow form gave 88 more SASS instructions and 60 more bytes of spills.
template <class C> CRU_DEV FpWide<C> fmul_plain(const Fp<C>& a, const Fp<C>& b) {
    constexpr int N = C::N;
    FpWide<C> r;
    u32 e[N + 2], o[N + 2];
    CRU_UNROLL for (int k = 0; k < N + 2; k++) { e[k] = 0; o[k] = 0; }
    u32 pend = 0;
    CRU_UNROLL for (int i = 0; i < N; i++) {
        const u32 bi = b.l[i];
        e[0] = add_cc(e[0], pend);  // its carry goes to frame word 1 = o[0]
        CRU_UNROLL for (int j = 1; j < N; j += 2) mad_pair<true, true>(a.l[j], bi, o[j - 1], o[j]);
        o[N] = addc(o[N], 0);
        mad_pair<true, false>(a.l[0], bi, e[0], e[1]);
        CRU_UNROLL for (int j = 2; j < N; j += 2) mad_pair<true, true>(a.l[j], bi, e[j], e[j + 1]);
        e[N] = addc(e[N], 0);
        r.l[i] = e[0];
        mont_next_row<N>(e, o, pend);
    }
    // The top half e + pend + 2^32 o < 2^(32N): e[N] and o[N-1] are zero.
    r.l[N] = add_cc(e[0], pend);
    CRU_UNROLL for (int k = 1; k < N - 1; k++) r.l[N + k] = addc_cc(e[k], o[k - 1]);
    r.l[2 * N - 1] = addc(e[N - 1], o[N - 2]);
    return r;
}

// Montgomery reduction t 2^(-32N) mod p of t < p 2^(32N), in [0, p): fmul's rows with
// only their m p half, over the low N words of t (e starts as them); the high N words
// are added after the rows, (t_lo + M p) / 2^(32N) + t_hi = (t + M p) / 2^(32N) < 2p,
// then one subtraction. The frame stays below 2^(32N) + 2^32 p < 2^(32(N+1)).
template <class C> CRU_DEV Fp<C> fredc(const FpWide<C>& t) {
    constexpr int N = C::N;
    u32 e[N + 2], o[N + 2];
    CRU_UNROLL for (int k = 0; k < N + 2; k++) { e[k] = k < N ? t.l[k] : 0; o[k] = 0; }
    u32 pend = 0;
    CRU_UNROLL for (int i = 0; i < N; i++) {
        e[0] = add_cc(e[0], pend);  // its carry goes to frame word 1 = o[0]
        const u32 m = e[0] * C::INV;
        CRU_UNROLL for (int j = 1; j < N; j += 2) mad_pair<true, true>(m, C::p(j), o[j - 1], o[j]);
        o[N] = addc(o[N], 0);
        mad_pair<true, false>(m, C::p(0), e[0], e[1]);
        CRU_UNROLL for (int j = 2; j < N; j += 2) mad_pair<true, true>(m, C::p(j), e[j], e[j + 1]);
        e[N] = addc(e[N], 0);
        mont_next_row<N>(e, o, pend);
    }
    // (t_lo + M p) / 2^(32N) = e + pend + 2^32 o <= p: e[N] and o[N-1] are zero.
    u32 u[N];
    u[0] = add_cc(e[0], pend);
    CRU_UNROLL for (int k = 1; k < N - 1; k++) u[k] = addc_cc(e[k], o[k - 1]);
    u[N - 1] = addc(e[N - 1], o[N - 2]);
    u[0] = add_cc(u[0], t.l[N]);
    CRU_UNROLL for (int k = 1; k < N - 1; k++) u[k] = addc_cc(u[k], t.l[N + k]);
    u[N - 1] = addc(u[N - 1], t.l[2 * N - 1]);
    return reduce_once<C>(u);
}

// x + y; the caller keeps the sum below 2^(64N).
template <class C> CRU_DEV FpWide<C> fwide_add(const FpWide<C>& x, const FpWide<C>& y) {
    constexpr int W = 2 * C::N;
    FpWide<C> s;
    s.l[0] = add_cc(x.l[0], y.l[0]);
    CRU_UNROLL for (int k = 1; k < W - 1; k++) s.l[k] = addc_cc(x.l[k], y.l[k]);
    s.l[W - 1] = addc(x.l[W - 1], y.l[W - 1]);
    return s;
}

// x - y for x >= y.
template <class C> CRU_DEV FpWide<C> fwide_sub(const FpWide<C>& x, const FpWide<C>& y) {
    constexpr int W = 2 * C::N;
    FpWide<C> d;
    d.l[0] = sub_cc(x.l[0], y.l[0]);
    CRU_UNROLL for (int k = 1; k < W - 1; k++) d.l[k] = subc_cc(x.l[k], y.l[k]);
    d.l[W - 1] = subc(x.l[W - 1], y.l[W - 1]);
    return d;
}

// x - y, plus p 2^(32N) when that is negative: for x, y < p 2^(32N), a value in
// [0, p 2^(32N)) of the class of x - y mod p, which fredc takes.
template <class C> CRU_DEV FpWide<C> fwide_sub_mod(const FpWide<C>& x, const FpWide<C>& y) {
    constexpr int N = C::N;
    FpWide<C> d;
    d.l[0] = sub_cc(x.l[0], y.l[0]);
    CRU_UNROLL for (int k = 1; k < 2 * N; k++) d.l[k] = subc_cc(x.l[k], y.l[k]);
    const u32 borrow = subc(0, 0);  // 0xffffffff if x < y
    d.l[N] = add_cc(d.l[N], C::p(0) & borrow);
    CRU_UNROLL for (int k = 1; k < N - 1; k++) d.l[N + k] = addc_cc(d.l[N + k], C::p(k) & borrow);
    d.l[2 * N - 1] = addc(d.l[2 * N - 1], C::p(N - 1) & borrow);
    return d;
}

// a b - c d mod p with one Montgomery reduction where two products take two: both
// products unreduced (each < p^2 < p 2^(32N)), their difference (plus p 2^(32N) when
// negative) reduced once.
template <class C> CRU_DEV Fp<C> fmul_sub(const Fp<C>& a, const Fp<C>& b, const Fp<C>& c, const Fp<C>& d) {
    return fredc(fwide_sub_mod(fmul_plain(a, b), fmul_plain(c, d)));
}

// ------------------------------ derived ops ------------------------------

// 2x by shifts (no carry chain); the caller keeps it below 2^(64N).
template <class C> CRU_DEV FpWide<C> fwide_dbl(const FpWide<C>& x) {
    FpWide<C> d;
    d.l[0] = x.l[0] << 1;
    CRU_UNROLL for (int k = 1; k < 2 * C::N; k++) d.l[k] = (x.l[k] << 1) | (x.l[k - 1] >> 31);
    return d;
}

template <class C> CRU_DEV Fp<C> fneg(const Fp<C>& a) {
    // p - 0 would be p, not reduced: 0 stays 0.
    return fis_zero(a) ? a : fsub(Fp<C>::modulus(), a);
}
template <class C> CRU_DEV Fp<C> fdbl(const Fp<C>& a) { return fadd(a, a); }
// Fq2 (fq2.cuh) has a call and an inlined form of its product; Fr and Fq only the inlined
// (and the calls below).
template <class C> CRU_DEV Fp<C> fmul_inline(const Fp<C>& a, const Fp<C>& b) { return fmul(a, b); }
template <class C> CRU_DEV Fp<C> fsqr_inline(const Fp<C>& a) { return fsqr(a); }
// The product and square as calls, for formulas off the hot paths (curve.cuh's
// CRU_PRODUCTS_CALLS): one copy of each per kernel instead of one per use.
// Their operands go by value, in registers: on the H200 the G1 bucket sums' calls by
// value (168 registers, a 96-byte frame, against 130 and 768 through the caller's
// stack frame) ran MSM G1 2^20 / 2^24 in 8.52 / 109.2 ms against 8.97 / 115.5
// (d32de65:BENCHMARKS.md).
template <class C> CRU_CALL Fp<C> fmul_call(Fp<C> a, Fp<C> b) { return fmul(a, b); }
template <class C> CRU_CALL Fp<C> fsqr_call(Fp<C> a) { return fsqr(a); }
// fmul_sub as a call, operands by value as fmul_call's: the G1 formulas' y (curve.cuh's
// fmul_sub_of).
template <class C> CRU_CALL Fp<C> fmul_sub_call(Fp<C> a, Fp<C> b, Fp<C> c, Fp<C> d) { return fmul_sub(a, b, c, d); }
template <class C> CRU_DEV Fp<C> to_mont(const Fp<C>& a) { return fmul(a, Fp<C>::r2()); }
template <class C> CRU_DEV Fp<C> from_mont(const Fp<C>& a) { return fmul(a, Fp<C>::raw_one()); }

// a^-1 = a^(p-2) (Fermat; 0 gives 0), in Montgomery form. Fixed 4-bit windows over
// the exponent from the top: for BLS12-381's Fq 380 squarings and about 100 products
// (14 of them for the table a^0 .. a^15). The exponent's limbs are p - 2 with the
// borrow carried (BLS12-381's r has low limb 1). A call, with its loops rolled: ~500
// products inlined would cost NVRTC minutes for nothing (it runs once per batch of
// points, not per point).
template <class C> CRU_CALL Fp<C> finv(const Fp<C>& a) {
    constexpr int N = C::N;
    u32 e[N];
    u32 borrow = 2;
    CRU_UNROLL for (int i = 0; i < N; i++) {
        const u32 pi = C::p(i);
        e[i] = pi - borrow;
        borrow = pi < borrow ? 1u : 0u;
    }
    Fp<C> tab[16];
    tab[0] = Fp<C>::one();
    tab[1] = a;
    CRU_NO_UNROLL for (int k = 2; k < 16; k++) tab[k] = fmul(tab[k - 1], a);
    Fp<C> r = Fp<C>::one();
    bool started = false;  // leading zero windows: no squarings of 1
    CRU_NO_UNROLL for (int w = 8 * N - 1; w >= 0; w--) {
        const u32 nib = (e[w >> 3] >> (4 * (w & 7))) & 15u;
        if (started) {
            CRU_NO_UNROLL for (int b = 0; b < 4; b++) r = fsqr(r);
            if (nib != 0) r = fmul(r, tab[nib]);
        } else if (nib != 0) {
            r = tab[nib];
            started = true;
        }
    }
    return r;
}

#endif  // CRUCIBLE_FIELD_CUH
