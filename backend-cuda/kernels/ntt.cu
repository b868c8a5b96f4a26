// ntt.cu — NTT over Fr and the pointwise Fr kernels of the Groth16 quotient.
// Prepend field.cuh, fq2.cuh, curve.cuh (NVRTC concatenation); g++ finds them by #include.
//
// All Fr values: 8 x u32 little-endian, Montgomery form (arkworks' Fr bytes).
// Launch shape of every kernel here: 1-D, any blockDim.x (256 suggested),
// gridDim.x = max(1, ceil(THREADS / blockDim.x)); each kernel ignores
// indices >= THREADS. No shared memory, no barriers: any order of the threads of one
// launch is a valid schedule (the host harness runs them one by one).
//
// Forward NTT of a[0..n), n = 2^log_n, 0 <= log_n <= 31, in place, natural order in
// and out: a[i] <- sum_j a[j] * omega^(i*j), exactly arkworks' Radix2EvaluationDomain
// ::fft_in_place for omega = the domain's group_gen (the inverse NTT uses omega^-1
// and its own table). The host runs, in stream order,
//   ntt_bit_reverse(a, n, log_n)                                     THREADS = n
//   for s = 0, R, 2R, ... < log_n, with r = min(R, log_n - s), any R in 1..4:
//     ntt_pass_r{r}(a, tw, n, log_n, s)                              THREADS = n >> r
//   (the host uses R = 2: a pass is latency-bound, and radix 4 keeps 64 registers per
//   thread, so four times the threads of radix 16 (241 registers) are in flight)
//   tw: Fr[max(1, n/2)], tw[i] = omega^i (Montgomery). Nothing runs when n = 1.
// A pass does the radix-2 decimation-in-time stages s .. s+r-1 on bit-reversed data,
// each thread on the 2^r elements whose indices differ only in bits s .. s+r-1, held
// in registers: one global round trip per r stages instead of one per stage. Stage
// st (half-size h = 2^st) maps (a[i], a[i+h]) for bit st of i clear, with
// w = tw[(i mod h) << (log_n-1-st)], to (a[i] + w a[i+h], a[i] - w a[i+h]).
//
// Tables, built on the device from a few host-computed powers:
// extern "C" __global__ void fr_powers(Fr* out, const Fr* pows, u32 count)
//   THREADS = count. out[i] = prod over the set bits b of i of pows[b] (one for i = 0);
//   with pows[b] = g^(2^b), out[i] = g^i. pows holds ceil(log2(count)) values (<= 32).
// extern "C" __global__ void fr_power_table(Fr* out, const Fr* lo, const Fr* hi, u32 n, u32 lo_bits)
//   THREADS = n. out[i] = lo[i mod 2^lo_bits] * hi[i >> lo_bits] (g^i from the two
//   fr_powers tables lo[k] = g^k, hi[k] = g^(k 2^lo_bits)).
//
// Pointwise:
// extern "C" __global__ void fr_scale_by_powers(Fr* a, const Fr* pow_lo, const Fr* pow_hi, u32 n, u32 lo_bits)
//   THREADS = n. a[i] *= g^i, with g^i = pow_lo[i mod 2^lo_bits] * pow_hi[i >> lo_bits]:
//   pow_lo: Fr[2^lo_bits], pow_lo[k] = g^k;  pow_hi: Fr[ceil(n / 2^lo_bits)], pow_hi[k] = g^(k*2^lo_bits).
//   lo_bits <= 31. Coset NTT: scale_by_powers(g) then forward; inverse coset: inverse
//   NTT, then scale_by_powers(g^-1).
// extern "C" __global__ void fr_scale(Fr* a, const Fr* c, u32 n)
//   THREADS = n. a[i] *= c[0] (c: device pointer to ONE Fr, e.g. 1/n for the inverse NTT).
// extern "C" __global__ void fr_mul_assign(Fr* a, const Fr* b, u32 n)
//   THREADS = n. a[i] *= b[i].
// extern "C" __global__ void fr_sub_scale(Fr* a, const Fr* b, const Fr* c, u32 n)
//   THREADS = n. a[i] = (a[i] - b[i]) * c[0]   (the quotient step (a*b - c) * Z^-1).
#ifndef CRUCIBLE_CURVE_CUH
#include "curve.cuh"
#endif

// bit-reversal of the low `bits` bits of x (bits <= 32; 0 bits -> 0).
CRU_DEV u32 bit_reverse_bits(u32 x, u32 bits) {
    if (bits == 0) return 0;
#ifdef __CUDA_ARCH__
    return __brev(x) >> (32 - bits);
#else
    u32 r = 0;
    for (u32 k = 0; k < bits; k++) r |= ((x >> k) & 1u) << (bits - 1 - k);
    return r;
#endif
}

extern "C" __global__ void ntt_bit_reverse(Fr* a, u32 n, u32 log_n) {
    const u32 i = CRU_THREAD_X;
    if (i >= n) return;
    const u32 j = bit_reverse_bits(i, log_n);
    if (i < j) { const Fr t = a[i]; a[i] = a[j]; a[j] = t; }
}

// Stages s .. s+R-1 on the 2^R elements i0 + j 2^s, j < 2^R, where i0 has bits
// s .. s+R-1 clear: thread t supplies i0's low s bits (t mod 2^s, so that neighbouring
// threads touch neighbouring elements) and its bits above s+R-1 (t >> s).
template <int R>
CRU_DEV void ntt_pass(Fr* a, const Fr* tw, u32 n, u32 log_n, u32 s) {
    constexpr u32 E = 1u << R;
    const u32 t = CRU_THREAD_X;
    if (t >= (n >> R)) return;
    const u32 low = t & ((1u << s) - 1);
    const u32 i0 = ((t >> s) << (s + R)) | low;
    Fr x[E];
    CRU_UNROLL for (u32 j = 0; j < E; j++) x[j] = a[i0 + (j << s)];
    CRU_UNROLL for (u32 k = 0; k < (u32)R; k++) {
        // Global stage st = s + k; element j's index mod 2^st is low + (j mod 2^k) 2^s.
        const u32 shift = log_n - 1 - (s + k);
        CRU_UNROLL for (u32 m = 0; m < (1u << k); m++) {
            const Fr w = tw[(low + (m << s)) << shift];
            CRU_UNROLL for (u32 q = 0; q < (E >> (k + 1)); q++) {
                const u32 j = m + (q << (k + 1));
                const Fr v = fmul(x[j + (1u << k)], w);
                x[j + (1u << k)] = fsub(x[j], v);
                x[j] = fadd(x[j], v);
            }
        }
    }
    CRU_UNROLL for (u32 j = 0; j < E; j++) a[i0 + (j << s)] = x[j];
}

#define CRU_NTT_PASS(R)                                                                   \
    extern "C" __global__ void ntt_pass_r##R(Fr* a, const Fr* tw, u32 n, u32 log_n, u32 s) { \
        ntt_pass<R>(a, tw, n, log_n, s);                                                  \
    }
CRU_NTT_PASS(1)
CRU_NTT_PASS(2)
CRU_NTT_PASS(3)
CRU_NTT_PASS(4)

extern "C" __global__ void fr_powers(Fr* out, const Fr* pows, u32 count) {
    const u32 i = CRU_THREAD_X;
    if (i >= count) return;
    Fr r = Fr::one();
    for (u32 b = 0; (i >> b) != 0; b++)
        if ((i >> b) & 1u) r = fmul(r, pows[b]);
    out[i] = r;
}

extern "C" __global__ void fr_power_table(Fr* out, const Fr* lo, const Fr* hi, u32 n, u32 lo_bits) {
    const u32 i = CRU_THREAD_X;
    if (i < n) out[i] = fmul(lo[i & ((1u << lo_bits) - 1)], hi[i >> lo_bits]);
}

extern "C" __global__ void fr_scale_by_powers(Fr* a, const Fr* pow_lo, const Fr* pow_hi, u32 n, u32 lo_bits) {
    const u32 i = CRU_THREAD_X;
    if (i >= n) return;
    const Fr g = fmul(pow_lo[i & ((1u << lo_bits) - 1)], pow_hi[i >> lo_bits]);
    a[i] = fmul(a[i], g);
}

extern "C" __global__ void fr_scale(Fr* a, const Fr* c, u32 n) {
    const u32 i = CRU_THREAD_X;
    if (i < n) a[i] = fmul(a[i], c[0]);
}

extern "C" __global__ void fr_mul_assign(Fr* a, const Fr* b, u32 n) {
    const u32 i = CRU_THREAD_X;
    if (i < n) a[i] = fmul(a[i], b[i]);
}

extern "C" __global__ void fr_sub_scale(Fr* a, const Fr* b, const Fr* c, u32 n) {
    const u32 i = CRU_THREAD_X;
    if (i < n) a[i] = fmul(fsub(a[i], b[i]), c[0]);
}
