// ntt.cu — radix-2 NTT over Fr and the pointwise Fr kernels of the Groth16 quotient.
// Prepend field.cuh, fq2.cuh, curve.cuh (NVRTC concatenation); g++ finds them by #include.
//
// All Fr values: 8 x u32 little-endian, Montgomery form (arkworks' Fr bytes).
// Launch shape of every kernel here: 1-D, any blockDim.x (256 suggested),
// gridDim.x = max(1, ceil(THREADS / blockDim.x)); each kernel ignores indices >= THREADS.
//
// Forward NTT of a[0..n), n = 2^log_n, 0 <= log_n <= 28, in place, natural order in
// and out: a[i] <- sum_j a[j] * omega^(i*j), exactly arkworks' Radix2EvaluationDomain
// ::fft_in_place for omega = the domain's group_gen. The host runs
//   ntt_bit_reverse(a, n, log_n)                                  THREADS = n
//   for stage in 0..log_n: ntt_butterfly_stage(a, tw, n, log_n, stage)   THREADS = n/2
// one launch each, in stream order.
//   tw: Fr[max(1, n/2)], tw[i] = omega^i (Montgomery), i in 0..n/2. Only tw[0..n/2) is
//   read, and nothing when n = 1. The inverse NTT uses omega^-1 (its own table).
//
// extern "C" __global__ void ntt_bit_reverse(Fr* a, u32 n, u32 log_n)
//   THREADS = n. Swaps a[i] and a[bitrev_log_n(i)] (the thread with the smaller index).
// extern "C" __global__ void ntt_butterfly_stage(Fr* a, const Fr* tw, u32 n, u32 log_n, u32 stage)
//   THREADS = n/2. Decimation-in-time stage on bit-reversed data, half-size h = 2^stage:
//   thread t: j = t mod h, i0 = 2h*(t div h) + j, i1 = i0 + h, w = tw[j << (log_n-1-stage)],
//   (a[i0], a[i1]) <- (a[i0] + w a[i1], a[i0] - w a[i1]).
// extern "C" __global__ void fr_scale_by_powers(Fr* a, const Fr* pow_lo, const Fr* pow_hi, u32 n, u32 lo_bits)
//   THREADS = n. a[i] *= g^i, with g^i = pow_lo[i mod 2^lo_bits] * pow_hi[i >> lo_bits]:
//   pow_lo: Fr[2^lo_bits], pow_lo[k] = g^k;  pow_hi: Fr[ceil(n / 2^lo_bits)], pow_hi[k] = g^(k*2^lo_bits).
//   lo_bits <= 31; ceil(log_n/2) keeps both tables ~sqrt(n). (lo_bits = log_n and
//   pow_hi = [1] is the plain full table.)  Coset NTT: scale_by_powers(g) then forward;
//   inverse coset: inverse NTT, then scale_by_powers(g^-1).
// extern "C" __global__ void fr_scale(Fr* a, const Fr* c, u32 n)
//   THREADS = n. a[i] *= c[0] (c: device pointer to ONE Fr, e.g. 1/n for the inverse NTT).
// extern "C" __global__ void fr_mul_assign(Fr* a, const Fr* b, u32 n)
//   THREADS = n. a[i] *= b[i].
// extern "C" __global__ void fr_sub_scale(Fr* a, const Fr* b, const Fr* c, u32 n)
//   THREADS = n. a[i] = (a[i] - b[i]) * c[0]   (the quotient step (a*b - c) * Z^-1).
// No scratch buffers besides the tables above; no shared memory.
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

extern "C" __global__ void ntt_butterfly_stage(Fr* a, const Fr* tw, u32 n, u32 log_n, u32 stage) {
    const u32 t = CRU_THREAD_X;
    if (t >= (n >> 1)) return;
    const u32 h = 1u << stage;
    const u32 j = t & (h - 1);
    const u32 i0 = ((t >> stage) << (stage + 1)) + j;
    const u32 i1 = i0 + h;
    const Fr w = tw[j << (log_n - 1 - stage)];
    const Fr u = a[i0];
    const Fr v = fmul(a[i1], w);
    a[i0] = fadd(u, v);
    a[i1] = fsub(u, v);
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
