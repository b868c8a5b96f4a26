// ntt.cu — NTT over Fr and the pointwise Fr kernels of the Groth16 quotient.
// Prepend field.cuh, fq2.cuh, curve.cuh (NVRTC concatenation); g++ finds them by #include.
//
// All Fr values: 8 x u32 little-endian, Montgomery form (arkworks' Fr bytes).
// Launch shape of every kernel here but ntt_tile_e*: 1-D, any blockDim.x (256 suggested),
// gridDim.x = max(1, ceil(THREADS / blockDim.x)); each kernel ignores
// indices >= THREADS. No shared memory, no barriers: any order of the threads of one
// launch is a valid schedule (the host harness runs them one by one). ntt_tile_e*'s
// shape is its own (below); its blocks share memory and barriers (the harness runs
// the threads of a block concurrently).
//
// Constants travel by value, as kernel parameters (no device buffer, no upload):
//   struct FrArg   { u32 words[8]; }        one Fr, its 8 words in order;
//   struct FrSeeds { u32 words[8 * 32]; }   up to 32 Fr, seed b at words[8b .. 8b+8).
// The host passes #[repr(C)] structs of the same words (backend-cuda/src/field.rs).
//
// NTT of a[0..n), n = 2^log_n, 0 <= log_n <= 31, in place, natural order in and out:
// a[i] <- sum_j a[j] * w^(i*j) with w = omega (forward) or omega^-1 (inverse), omega
// the domain's group_gen: the forward transform is exactly arkworks'
// Radix2EvaluationDomain::fft_in_place, the inverse its ifft_in_place before the
// scaling by 1/n. The host runs, in stream order,
//   ntt_bit_reverse(a, n, log_n)                                     THREADS = n
//   for s = 0, R, 2R, ... < log_n, with r = min(R, log_n - s), any R in 1..4:
//     ntt_pass_r{r}(a, tw, n, log_n, s, inverse)                     THREADS = n >> r
//   (R = 2 unless CRUCIBLE_CUDA_NTT_PASS_STAGES says otherwise: a pass is
//   latency-bound, and radix 4 keeps 64 registers per thread, so four times the
//   threads of radix 16 (241 registers) are in flight)
//   tw: Fr[max(1, n/2)], tw[i] = omega^i (Montgomery), one table for both directions.
//   (The host runs nothing for n = 1: every transform of one point is the identity.)
//   inverse = 0: w^k = tw[k]. inverse = 1: w^k = omega^-k, read as tw[0] = 1 for
//   k = 0 and -tw[n/2 - k] for 0 < k < n/2 (omega^(n/2) = -1).
// A pass does the radix-2 decimation-in-time stages s .. s+r-1 on bit-reversed data,
// each thread on the 2^r elements whose indices differ only in bits s .. s+r-1, held
// in registers: one global round trip per r stages instead of one per stage. Stage
// st (half-size h = 2^st) maps (a[i], a[i+h]) for bit st of i clear, with
// x = w^((i mod h) << (log_n-1-st)), to (a[i] + x a[i+h], a[i] - x a[i+h]).
// The four transforms of the prover (arkworks' results exactly; g = coset offset):
//   forward        ntt_bit_reverse, passes(inverse = 0)
//   inverse        ntt_bit_reverse, passes(inverse = 1), fr_scale(a, 1/n, n)
//   coset forward  ntt_bit_reverse_scale(powers of g), passes(inverse = 0):
//                  fft(a_i g^i), the scaling fused into the reversal's memory pass
//   coset inverse  ntt_bit_reverse, passes(inverse = 1),
//                  fr_scale_by_powers(powers of g^-1, lo premultiplied by 1/n):
//                  ifft(a) then a_i *= g^-i, in one pointwise pass
// The same with the stages in shared memory: ntt_tile_e* launches for consecutive stage
// ranges covering 0 .. log_n - 1 instead of the passes, the final scaling (1/n by
// value, or the powers of g^-1 with lo premultiplied by 1/n) fused into the last
// launch's stores. Either after the same reversal (the host's `shared-swap`), all in
// natural layout, or (the host's default) with the reversal fused: the first launches
// read and write element i at bitrev(i) (the coset forward's first one scaling what it
// reads from position p by g^p), then one launch centered on the middle stages
// (s = log_n - s - k, g = 0), paired, reads at bitrev(i) and writes at i, and the
// rest run in natural layout. (A launch may write elsewhere than it read only where
// each block writes the very places it read: one block for the whole domain, or the
// centered launch's pairs of mirror tiles, bitrev mapping each onto the other.)
//
// extern "C" __global__ void ntt_tile_e4(Fr* a, const Fr* tw, const Fr* pow_lo, const Fr* pow_hi, FrArg c,
//                                        u32 log_n, u32 s, u32 k, u32 g, u32 cshift, u32 flags, u32 lo_bits)
// extern "C" __global__ void ntt_tile_e2(... the same parameters ...)
// extern "C" __global__ void ntt_tile_e8(... the same parameters ...)
// extern "C" __global__ void ntt_tile_w(... the same parameters ...)
//   Stages s .. s+k-1 of the bit-reversed data, in place. A tile is the 2^(k+g) <= 2^10
//   (e4; e2: 2^9) elements whose indices differ only in bits s .. s+k-1 (the stages) and in bits
//   cshift .. cshift+g-1 (a batch of independent groups: cshift + g <= s, or cshift >=
//   s + k and cshift + g <= log_n; with g = 0, cshift is not read); the block's index
//   fills the other bits in order.
//   Grid: 2^(log_n - k - g) blocks of max(1, 2^(k+g-2)) threads for e4 (four elements
//   a thread), max(1, 2^(k+g-1)) for e2 (two), max(1, 2^(k+g-3)) for e8 (eight); 256 at
//   most (e8: 128); no dynamic shared memory for e4 and e2 (33 KiB static for e4, 17
//   for e2), 32 * 2^(k+g) bytes of it for e8 (twice that paired). e4: rounds of two
//   stages (one when one is left) in registers; e2: a round a stage; e8: rounds of three
//   (then two or one); the tile in shared memory between rounds (word w of element x at
//   w * (2^bits + 2^bits/32) + x + x/32, bits = 10 or 9, for e4 and e2; at
//   w * 2^(k+g+paired) + swizzle8(x) for e8); the first round reads a, the last writes it. flags: bit 0 (1) the inverse's twiddles, as for the passes;
//   bit 1 (2) each result times c; bit 2 (4) the result written at position p times
//   pow_lo[p mod 2^lo_bits] * pow_hi[p >> lo_bits] (as fr_scale_by_powers); bit 3 (8)
//   element i read from a[bitrev(i)], else a[i]; bit 4 (16) written to a[bitrev(i)],
//   else a[i]; bit 5 (32) paired: a centered launch (g = 0, 2s + k = log_n, k <= 9, e2 8)
//   of twice the threads, block b doing its tile and that of the block whose fixed
//   bits are b's reversed (the mirror tile) if that block is not below it, every read
//   before any write; bit 6 (64) each element read from position p times the power
//   of p (the tables as for bit 2). Unused table pointers may be any valid array
//   (never read).
//   ntt_tile_w: tiles of 2^(k+g) <= 2^6, a tile's 2^(k+g-1) threads in one warp (two
//   elements a thread; a warp holds several smaller tiles), the pairs regrouped
//   between stages by __shfl_xor_sync, no shared memory; every flag but bit 5 (no
//   pairing). Grid: 2^(log_n - 1) threads, blocks of 128 (all in one when fewer);
//   thread t is lane t mod 2^(k+g-1) of tile t >> (k+g-1) (its fixed bits reversed
//   when bit 3 is set).
//
// extern "C" __global__ void ntt_bit_reverse(Fr* a, u32 n, u32 log_n)
//   THREADS = n. Swaps a[i] and a[bitrev_log_n(i)] (each pair once).
// extern "C" __global__ void ntt_bit_reverse_scale(Fr* a, const Fr* pow_lo, const Fr* pow_hi, u32 n, u32 log_n, u32 lo_bits)
//   THREADS = n. With b[i] = a[i] * g^i (g^i from the tables as in
//   fr_scale_by_powers), a[i] <- b[bitrev_log_n(i)] for every i: thread i with
//   j = bitrev(i) > i sets a[i] = a_old[j] g^j and a[j] = a_old[i] g^i; with j == i,
//   a[i] *= g^i; with j < i, nothing.
//
// Tables, built on the device from host-computed seeds:
// extern "C" __global__ void fr_powers(Fr* out, FrSeeds pows, FrArg first, u32 count)
//   THREADS = count. out[i] = first * prod over the set bits b of i of pows[b];
//   with pows[b] = g^(2^b), out[i] = first * g^i. pows holds ceil(log2(count)) seeds
//   (<= 32). first = 1 gives the powers themselves; the coset inverse's lo table
//   passes first = 1/n.
// extern "C" __global__ void fr_power_table(Fr* out, const Fr* lo, const Fr* hi, u32 n, u32 lo_bits)
//   THREADS = n. out[i] = lo[i mod 2^lo_bits] * hi[i >> lo_bits] (g^i from the two
//   fr_powers tables lo[k] = g^k, hi[k] = g^(k 2^lo_bits)); the host builds tw so.
//
// Pointwise:
// extern "C" __global__ void fr_scale_by_powers(Fr* a, const Fr* pow_lo, const Fr* pow_hi, u32 n, u32 lo_bits)
//   THREADS = n. a[i] *= pow_lo[i mod 2^lo_bits] * pow_hi[i >> lo_bits]:
//   pow_lo: Fr[2^lo_bits], pow_hi: Fr[ceil(n / 2^lo_bits)], lo_bits <= 31. With
//   pow_lo[k] = c g^k and pow_hi[k] = g^(k 2^lo_bits), a[i] *= c g^i.
// extern "C" __global__ void fr_scale(Fr* a, FrArg c, u32 n)
//   THREADS = n. a[i] *= c (e.g. 1/n for the inverse NTT).
// extern "C" __global__ void fr_mul_assign(Fr* a, const Fr* b, u32 n)
//   THREADS = n. a[i] *= b[i].
// extern "C" __global__ void fr_sub_scale(Fr* a, const Fr* b, FrArg c, u32 n)
//   THREADS = n. a[i] = (a[i] - b[i]) * c   (the quotient step (a*b - c) * Z^-1).
#ifndef CRUCIBLE_CURVE_CUH
#include "curve.cuh"
#endif

// By-value constants (see the header): plain words, so that the host's #[repr(C)]
// structs have the same layout with no alignment question (Fr is 16-byte aligned).
#define CRU_MAX_SEEDS 32
struct FrArg { u32 words[8]; };
struct FrSeeds { u32 words[8 * CRU_MAX_SEEDS]; };

// Every Fr product here: field.cuh's fmul in its wide-pair form (about half the SASS
// instructions of the narrow one, the NTT's whole cost being its products), or, with
// -DCRU_NTT_NARROW_MUL (through CRUCIBLE_CUDA_NVRTC_OPTIONS, for an A/B), the narrow.
#ifdef CRU_NTT_NARROW_MUL
#define CRU_NTT_WIDE_MUL false
#else
#define CRU_NTT_WIDE_MUL true
#endif
CRU_DEV Fr fr_mul(const Fr& a, const Fr& b) { return fmul<FrCfg, CRU_NTT_WIDE_MUL>(a, b); }

CRU_DEV Fr fr_of(const u32* words) {
    Fr r;
    CRU_UNROLL for (int k = 0; k < 8; k++) r.l[k] = words[k];
    return r;
}

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

// Entry i of a table no launch writes (twiddles, powers), as two 16-byte loads through
// the read-only cache: a plain read of an Fr from a __restrict__ table is eight 4-byte
// loads.
CRU_DEV Fr table_at(const Fr* table, u32 i) {
#ifdef __CUDA_ARCH__
    const uint4* p = reinterpret_cast<const uint4*>(table + i);
    const uint4 x = __ldg(p), y = __ldg(p + 1);
    Fr r;
    r.l[0] = x.x; r.l[1] = x.y; r.l[2] = x.z; r.l[3] = x.w;
    r.l[4] = y.x; r.l[5] = y.y; r.l[6] = y.z; r.l[7] = y.w;
    return r;
#else
    return table[i];
#endif
}

// g^i (times whatever pow_lo was premultiplied by) from the split tables.
CRU_DEV Fr power_at(const Fr* pow_lo, const Fr* pow_hi, u32 i, u32 lo_bits) {
    return fr_mul(table_at(pow_lo, i & ((1u << lo_bits) - 1)), table_at(pow_hi, i >> lo_bits));
}

#if CRU_WITH(POINTWISE)
extern "C" __global__ void ntt_bit_reverse(Fr* a, u32 n, u32 log_n) {
    const u32 i = CRU_THREAD_X;
    if (i >= n) return;
    const u32 j = bit_reverse_bits(i, log_n);
    if (i < j) { const Fr t = a[i]; a[i] = a[j]; a[j] = t; }
}

extern "C" __global__ void ntt_bit_reverse_scale(Fr* a, const Fr* pow_lo, const Fr* pow_hi, u32 n, u32 log_n,
                                                 u32 lo_bits) {
    const u32 i = CRU_THREAD_X;
    if (i >= n) return;
    const u32 j = bit_reverse_bits(i, log_n);
    if (j < i) return;  // the pair is thread j's
    const Fr gi = power_at(pow_lo, pow_hi, i, lo_bits);
    if (j == i) { a[i] = fr_mul(a[i], gi); return; }
    const Fr t = a[i];
    a[i] = fr_mul(a[j], power_at(pow_lo, pow_hi, j, lo_bits));
    a[j] = fr_mul(t, gi);
}
#endif

// w^k of the transform's direction, from the forward table (see the header). A power
// of omega is never zero, so its negation is p - w with no zero test (fneg's).
// w^k is entry k of the table, or for the inverse (k > 0) the negation of entry n/2 - k.
CRU_DEV u32 twiddle_slot(u32 k, u32 half, u32 inverse) { return inverse == 0 || k == 0 ? k : half - k; }
CRU_DEV Fr twiddle(const Fr* tw, u32 k, u32 half, u32 inverse) {
    const Fr w = table_at(tw, twiddle_slot(k, half, inverse));
    return inverse == 0 || k == 0 ? w : fsub(Fr::modulus(), w);
}

// Asks for table entry i in L1 (no register, nothing waits for it; no-op on the host,
// and with -DCRU_NTT_NO_PREFETCH through CRUCIBLE_CUDA_NVRTC_OPTIONS, for an A/B).
CRU_DEV void prefetch_table(const Fr* table, u32 i) {
#if defined(__CUDA_ARCH__) && !defined(CRU_NTT_NO_PREFETCH)
    asm volatile("prefetch.global.L1 [%0];" ::"l"(table + i));
#else
    (void)table;
    (void)i;
#endif
}

// Stages s .. s+R-1 on the 2^R elements i0 + j 2^s, j < 2^R, where i0 has bits
// s .. s+R-1 clear: thread t supplies i0's low s bits (t mod 2^s, so that neighbouring
// threads touch neighbouring elements) and its bits above s+R-1 (t >> s).
template <int R>
CRU_DEV void ntt_pass(Fr* a, const Fr* tw, u32 n, u32 log_n, u32 s, u32 inverse) {
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
            const Fr w = twiddle(tw, (low + (m << s)) << shift, n >> 1, inverse);
            CRU_UNROLL for (u32 q = 0; q < (E >> (k + 1)); q++) {
                const u32 j = m + (q << (k + 1));
                const Fr v = fr_mul(x[j + (1u << k)], w);
                x[j + (1u << k)] = fsub(x[j], v);
                x[j] = fadd(x[j], v);
            }
        }
    }
    CRU_UNROLL for (u32 j = 0; j < E; j++) a[i0 + (j << s)] = x[j];
}

#define CRU_NTT_PASS(R)                                                                         \
    extern "C" __global__ void ntt_pass_r##R(Fr* a, const Fr* tw, u32 n, u32 log_n, u32 s, u32 inverse) { \
        ntt_pass<R>(a, tw, n, log_n, s, inverse);                                               \
    }
#if CRU_WITH(PASSES)
CRU_NTT_PASS(1)
CRU_NTT_PASS(2)
#endif
#if CRU_WITH(R3)
CRU_NTT_PASS(3)
#endif
#if CRU_WITH(R4)
CRU_NTT_PASS(4)
#endif

// ------------------------------ shared-memory tiles ------------------------------
// See the header (ntt_tile_e*). A tile is 2^(k + g) elements of the bit-reversed data
// (A-indices): every combination of bits s .. s+k-1 (the stages) and of g more bits
// (a batch of independent groups, for coalescing), the other bits fixed by the block.

// The two kernels: ntt_tile_e4 (tiles up to 2^10, four elements a thread, rounds of
// two stages) and ntt_tile_e2 (tiles up to 2^9, two elements a thread, a round a stage).
#define CRU_NTT_TILE_MAX_BITS 10
#define CRU_NTT_TILE2_MAX_BITS 9
// One word plane of a tile of up to 2^bits: element x at x + x/32, so that 32 lanes at
// unit stride or at any power-of-two stride up to 32 fall in 32 distinct banks.
#define CRU_NTT_PLANE(bits) ((1u << (bits)) + (1u << (bits)) / 32)
// Blocks of 256 threads at most (a tile of 2^10 in fours, of 2^9 in twos), at least
// CRU_NTT_TILE_MIN_BLOCKS (e4) / CRU_NTT_TILE2_MIN_BLOCKS (e2) of them resident per SM.
// e4 at three (24 warps): ptxas fits 80 registers with no spill; at four (64
// registers) it spills 160 bytes (-DCRU_NTT_TILE_MIN_BLOCKS=4 through
// CRUCIBLE_CUDA_NVRTC_OPTIONS, for an A/B). e2 holds two elements, not four: at four
// (32 warps) it fits 62 registers with no spill; at five (40 warps) 48, spilling 96
// bytes (-DCRU_NTT_TILE2_MIN_BLOCKS=5, for an A/B).
#ifndef CRU_NTT_TILE_MIN_BLOCKS
#define CRU_NTT_TILE_MIN_BLOCKS 3
#endif
#ifndef CRU_NTT_TILE2_MIN_BLOCKS
#define CRU_NTT_TILE2_MIN_BLOCKS 4
#endif
#define CRU_NTT_TILE_E4_BOUNDS __launch_bounds__(1u << (CRU_NTT_TILE_MAX_BITS - 2), CRU_NTT_TILE_MIN_BLOCKS)
#define CRU_NTT_TILE_E2_BOUNDS __launch_bounds__(1u << (CRU_NTT_TILE2_MAX_BITS - 1), CRU_NTT_TILE2_MIN_BLOCKS)
// ntt_tile_e*'s flags.
#define CRU_NTT_INVERSE 1u
#define CRU_NTT_SCALE_BY_C 2u
#define CRU_NTT_SCALE_BY_POWERS 4u
#define CRU_NTT_LOAD_REVERSED 8u
#define CRU_NTT_STORE_REVERSED 16u
#define CRU_NTT_PAIRED 32u
#define CRU_NTT_SCALE_LOADS_BY_POWERS 64u

CRU_DEV u32 low_mask(u32 w) { return w >= 32 ? 0xffffffffu : (1u << w) - 1; }

// The tile's two ranges of A-index bits, (p1, w1) below (p2, w2): the stages' range
// (s, k) and the batch's (cshift, g). Tile element x holds range 1 in its low w1 bits
// and range 2 above them, so that x ascends with the A-index (coalesced accesses).
struct TileShape {
    u32 p1, w1, p2, w2;
    u32 vx;  // the bit of x that is A-index bit s
};

CRU_DEV TileShape tile_shape(u32 s, u32 k, u32 g, u32 cshift) {
    TileShape t;
    if (g != 0 && cshift < s) { t.p1 = cshift; t.w1 = g; t.p2 = s; t.w2 = k; t.vx = g; }
    else { t.p1 = s; t.w1 = k; t.p2 = g == 0 ? s + k : cshift; t.w2 = g; t.vx = 0; }  // no batch: empty at s + k
    return t;
}

// The A-index of element x of block b's tile: b's bits fill the bits outside both
// ranges, in order.
CRU_DEV u32 tile_index(const TileShape& t, u32 b, u32 x) {
    const u32 gap = t.p2 - t.p1 - t.w1;
    const u32 fixed = (b & low_mask(t.p1)) | (((b >> t.p1) & low_mask(gap)) << (t.p1 + t.w1)) |
                      ((b >> (t.p1 + gap)) << (t.p2 + t.w2));
    return fixed | ((x & low_mask(t.w1)) << t.p1) | ((x >> t.w1) << t.p2);
}

template <u32 PLANE> CRU_DEV Fr tile_load(const u32* sm, u32 x) {
    const u32 o = x + (x >> 5);
    Fr r;
    CRU_UNROLL for (int w = 0; w < 8; w++) r.l[w] = sm[w * PLANE + o];
    return r;
}

template <u32 PLANE> CRU_DEV void tile_store(u32* sm, u32 x, const Fr& v) {
    const u32 o = x + (x >> 5);
    CRU_UNROLL for (int w = 0; w < 8; w++) sm[w * PLANE + o] = v.l[w];
}

// x with a zero bit inserted at bit p (the lower element of a stage's pair).
CRU_DEV u32 insert_zero(u32 u, u32 p) { return (u & low_mask(p)) | ((u >> p) << (p + 1)); }

// w^((i mod 2^st) << (log_n - 1 - st)): the twiddle of stage st's pair whose lower
// element has A-index i.
CRU_DEV u32 stage_power(u32 i, u32 st, u32 log_n) { return (i & low_mask(st)) << (log_n - 1 - st); }
CRU_DEV Fr stage_twiddle(const Fr* tw, u32 i, u32 st, u32 log_n, u32 inverse) {
    return twiddle(tw, stage_power(i, st, log_n), (1u << log_n) >> 1, inverse);
}
CRU_DEV void prefetch_stage_twiddle(const Fr* tw, u32 i, u32 st, u32 log_n, u32 inverse) {
    prefetch_table(tw, twiddle_slot(stage_power(i, st, log_n), (1u << log_n) >> 1, inverse));
}

// (u, v) <- (u + w v, u - w v); stage 0's twiddles are all 1 (uniform: no product).
CRU_DEV void butterfly(Fr& u, Fr& v, const Fr& w, bool unit) {
    const Fr t = unit ? v : fr_mul(v, w);
    v = fsub(u, t);
    u = fadd(u, t);
}

// The E elements of a thread in the round whose first stage is at bit p of x, of r
// stages: their tile positions xs, whether the thread has them (ok), their A-indices.
// r = 2 (E = 4): the 4 elements differing in bits p, p + 1 (two stages' pairs).
// r = 1: E / 2 pairs across bit p, (0, 1) and (2, 3), pair m of thread tid being
// pair tid + m * threads of the tile.
template <u32 E> struct RoundPlaces {
    u32 xs[E], idx[E];
    bool ok[E];
};

template <u32 E>
CRU_DEV RoundPlaces<E> round_places(const TileShape& t, u32 b, u32 tid, u32 threads, u32 tile_bits, bool active, u32 p,
                                    u32 r) {
    RoundPlaces<E> q;
    if (E == 4 && r == 2) {
        const u32 x0 = insert_zero(insert_zero(tid, p), p + 1);
        CRU_UNROLL for (u32 m = 0; m < E; m++) { q.xs[m] = x0 + (m << p); q.ok[m] = active; }
    } else {
        CRU_UNROLL for (u32 m = 0; m < E / 2; m++) {
            const u32 u = tid + m * threads;
            q.xs[2 * m] = insert_zero(u, p);
            q.xs[2 * m + 1] = q.xs[2 * m] + (1u << p);
            q.ok[2 * m] = q.ok[2 * m + 1] = active && u < (1u << tile_bits) / 2;
        }
    }
    CRU_UNROLL for (u32 m = 0; m < E; m++) q.idx[m] = tile_index(t, b, q.xs[m]);
    return q;
}

// The twiddles of a round at stage st, in the order the round reads them. r = 2:
// stage st's pair at idx[0] (the pair at idx[2] shares it), stage st + 1's at idx[0]
// and idx[1]; r = 1: stage st's at idx[0] and idx[2]. Every slot is in the table,
// whatever the A-index (a thread without elements may read and never use them).
template <u32 E>
CRU_DEV Fr round_twiddle(const Fr* tw, const RoundPlaces<E>& q, u32 r, u32 st, u32 log_n, u32 inverse, u32 which) {
    if (which == 0) return stage_twiddle(tw, q.idx[0], st, log_n, inverse);
    if (r == 1) return stage_twiddle(tw, q.idx[E - 2], st, log_n, inverse);
    return stage_twiddle(tw, q.idx[which - 1], st + 1, log_n, inverse);
}
template <u32 E>
CRU_DEV void prefetch_round_twiddles(const Fr* tw, const RoundPlaces<E>& q, u32 r, u32 st, u32 log_n, u32 inverse) {
    prefetch_stage_twiddle(tw, q.idx[0], st, log_n, inverse);
    if (r == 1) {
        if (E == 4) prefetch_stage_twiddle(tw, q.idx[E - 2], st, log_n, inverse);
    } else {
        prefetch_stage_twiddle(tw, q.idx[0], st + 1, log_n, inverse);
        prefetch_stage_twiddle(tw, q.idx[1], st + 1, log_n, inverse);
    }
}

// The block of the tile that a centered launch's block b pairs with (g = 0 and
// s = log_n - s - k): the one holding the bit-reversed fixed bits. b's low s bits are
// the A-index's bits 0 .. s-1, its high s bits the top s.
CRU_DEV u32 partner_block(u32 b, u32 s) {
    return bit_reverse_bits(b >> s, s) | (bit_reverse_bits(b & low_mask(s), s) << s);
}

// The body of ntt_tile_e{E}: E elements a thread, tiles of up to 2^MAX_BITS.
template <u32 E, u32 MAX_BITS>
CRU_DEV void ntt_tile_rounds(Fr* a, const Fr* __restrict__ tw, const Fr* __restrict__ pow_lo,
                             const Fr* __restrict__ pow_hi, const FrArg& c, u32 log_n, u32 s, u32 k, u32 g, u32 cshift,
                             u32 flags, u32 lo_bits) {
    constexpr u32 PLANE = CRU_NTT_PLANE(MAX_BITS);
    __shared__ u32 sm[8 * PLANE];
    const TileShape t = tile_shape(s, k, g, cshift);
    const u32 tile_bits = k + g;
    const u32 inverse = flags & CRU_NTT_INVERSE;
    const bool load_rev = flags & CRU_NTT_LOAD_REVERSED, store_rev = flags & CRU_NTT_STORE_REVERSED;
    // A paired block does its tile with the first half of its threads and its
    // partner's with the second (in the second half of the shared memory); of two
    // partners, the lower block does both and the other nothing; a tile that is its
    // own partner is done once.
    const bool paired = flags & CRU_NTT_PAIRED;
    const u32 threads = paired ? blockDim.x / 2 : blockDim.x;
    const u32 half = paired && threadIdx.x >= threads ? 1 : 0;
    const u32 tid = threadIdx.x - half * threads;
    u32 b = blockIdx.x;
    bool active = true;
    if (paired) {
        const u32 partner = partner_block(b, s);
        if (partner < b) return;  // the whole block: no barrier is left waiting
        if (half == 1) { active = partner != b; b = partner; }
    }
    const u32 xoff = half << tile_bits;
    // Rounds of two stages in registers (one stage when one is left), through the
    // tile between rounds; the first round reads a, the last writes it. A round's
    // places are had, and its twiddles prefetched into L1, before the barrier that
    // precedes it: their latency overlaps the barrier's wait instead of the round's.
    // (Loading them there instead holds 24 more registers across the round: spills.)
    u32 j = 0, r = E == 4 && k >= 2 ? 2 : 1;
    RoundPlaces<E> at_r = round_places<E>(t, b, tid, threads, tile_bits, active, t.vx + j, r);
    for (;;) {
        const bool first = j == 0, last = j + r == k;
        Fr e[E];
        CRU_UNROLL for (u32 m = 0; m < E; m++) {
            if (!at_r.ok[m]) { e[m] = Fr::zero(); continue; }
            if (!first) { e[m] = tile_load<PLANE>(sm, xoff + at_r.xs[m]); continue; }
            const u32 at = load_rev ? bit_reverse_bits(at_r.idx[m], log_n) : at_r.idx[m];
            e[m] = a[at];
            if (flags & CRU_NTT_SCALE_LOADS_BY_POWERS) e[m] = fr_mul(e[m], power_at(pow_lo, pow_hi, at, lo_bits));
        }
        // One round that reads and writes other places (a layout change): every read
        // of the block before any write.
        if (first && last && load_rev != store_rev) __syncthreads();
        const u32 st = s + j;
        if (E == 4 && r == 2) {
            const Fr w = round_twiddle(tw, at_r, r, st, log_n, inverse, 0);
            butterfly(e[0], e[1], w, st == 0);
            butterfly(e[2], e[3], w, st == 0);
            // Stage st + 1's pair at idx[0], whose bits st, st + 1 are clear: at st = 0
            // its twiddle is w^0 = 1 for every thread.
            butterfly(e[0], e[2 % E], round_twiddle(tw, at_r, r, st, log_n, inverse, 1), st == 0);
            butterfly(e[1], e[3 % E], round_twiddle(tw, at_r, r, st, log_n, inverse, 2), false);
        } else {
            CRU_UNROLL for (u32 m = 0; m < E; m += 2)
                if (at_r.ok[m]) butterfly(e[m], e[m + 1], round_twiddle(tw, at_r, r, st, log_n, inverse, m / 2), st == 0);
        }
        CRU_UNROLL for (u32 m = 0; m < E; m++) {
            if (!at_r.ok[m]) continue;
            if (!last) { tile_store<PLANE>(sm, xoff + at_r.xs[m], e[m]); continue; }
            const u32 at = store_rev ? bit_reverse_bits(at_r.idx[m], log_n) : at_r.idx[m];
            // One product site for both scalings (each inlined product costs ptxas time).
            if (flags & (CRU_NTT_SCALE_BY_C | CRU_NTT_SCALE_BY_POWERS))
                e[m] = fr_mul(e[m], flags & CRU_NTT_SCALE_BY_C ? fr_of(c.words) : power_at(pow_lo, pow_hi, at, lo_bits));
            a[at] = e[m];
        }
        if (last) break;
        j += r;
        r = E == 4 && k - j >= 2 ? 2 : 1;
        at_r = round_places<E>(t, b, tid, threads, tile_bits, active, t.vx + j, r);
        prefetch_round_twiddles(tw, at_r, r, s + j, log_n, inverse);
        __syncthreads();
    }
}

// One NVRTC part each: the two compile concurrently.
#if CRU_WITH(TILE)
extern "C" __global__ void CRU_NTT_TILE_E4_BOUNDS
    ntt_tile_e4(Fr* a, const Fr* __restrict__ tw, const Fr* __restrict__ pow_lo, const Fr* __restrict__ pow_hi, FrArg c,
                u32 log_n, u32 s, u32 k, u32 g, u32 cshift, u32 flags, u32 lo_bits) {
    ntt_tile_rounds<4, CRU_NTT_TILE_MAX_BITS>(a, tw, pow_lo, pow_hi, c, log_n, s, k, g, cshift, flags, lo_bits);
}
#endif

#if CRU_WITH(TILE2)
extern "C" __global__ void CRU_NTT_TILE_E2_BOUNDS
    ntt_tile_e2(Fr* a, const Fr* __restrict__ tw, const Fr* __restrict__ pow_lo, const Fr* __restrict__ pow_hi, FrArg c,
                u32 log_n, u32 s, u32 k, u32 g, u32 cshift, u32 flags, u32 lo_bits) {
    ntt_tile_rounds<2, CRU_NTT_TILE2_MAX_BITS>(a, tw, pow_lo, pow_hi, c, log_n, s, k, g, cshift, flags, lo_bits);
}
#endif

// ------------------------------ radix-8 tiles (ntt_tile_e8) ------------------------------
// The launches of ntt_tile_e4 (the same parameters, plans and flags; see the header),
// eight elements a thread in rounds of three stages (two or one where fewer are left),
// so that a launch of six stages is two rounds and one barrier, of eight three rounds
// and two (e4: three and two, four and three), each stage's twiddles are fewer loads
// (7 a round of 12 products, against 3 of 4), and the tile goes through shared memory
// once per three stages instead of two. The ninth session's profile had e4
// latency-bound at 24 warps an SM, and e2 (more warps, a barrier a stage) slower
// still: fewer barriers and more work between them is the other way out. (ptxas runs a
// stage's four independent products one after another, each with its four carry
// chains interleaved, so they are not more ILP than e4's; and a round of three stages
// is about 54 KB of straight-line SASS against e4's 18: an ncu stall breakdown with
// many "no instruction" stalls would say the instruction cache is the price.)
// The tile lives in dynamic shared memory of exactly its size (word w of element x at
// w * 2^(bits + paired) + swizzle(x)): a paired launch of tiles of 2^8 (the middle one
// at 2^20) takes 16 KiB a block instead of the kernel's most.
#define CRU_NTT_TILE8_MAX_BITS 10
// Blocks of 128 threads at most (2^10 elements in eights, or two paired tiles of 2^9),
// at least CRU_NTT_TILE8_MIN_BLOCKS of them resident an SM: at 4 ptxas (12.9, sm_90)
// fits 128 registers a thread with no spill (16 warps an SM); at 5 (20 warps) 96,
// spilling 424 bytes, at 6 (24 warps) 1772 (-DCRU_NTT_TILE8_MIN_BLOCKS=5 through
// CRUCIBLE_CUDA_NVRTC_OPTIONS, for an A/B).
#ifndef CRU_NTT_TILE8_MIN_BLOCKS
#define CRU_NTT_TILE8_MIN_BLOCKS 4
#endif
#define CRU_NTT_TILE_E8_BOUNDS __launch_bounds__(1u << (CRU_NTT_TILE8_MAX_BITS - 3), CRU_NTT_TILE8_MIN_BLOCKS)

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define CRU_NTT_DYNAMIC_SHARED(name) extern __shared__ u32 name[]
#else
// The host harness runs one block at a time: a static of the largest tile.
#define CRU_NTT_DYNAMIC_SHARED(name) static u32 name[8u << CRU_NTT_TILE8_MAX_BITS]
#endif

// Where element x's words go in its plane: the low five bits (the bank) XORed with
// 9 * (x >> 5), a permutation of each row of 32 words, so no padding. Of the lane
// patterns of a round (eight elements of a thread at x0 + (q << p), lanes filling the
// other bits in order) no bank is hit more than twice in one access for any p, against
// four times at p = 2, 3 with e4's x + x/32 (checked by enumeration).
CRU_DEV u32 swizzle8(u32 x) { return x ^ ((9u * (x >> 5)) & 31u); }

// x with r zero bits inserted at bit p.
CRU_DEV u32 insert_zeros(u32 u, u32 p, u32 r) { return (u & low_mask(p)) | ((u >> p) << (p + r)); }

// What every round of a block's tile needs.
struct TileCtx {
    TileShape t;
    u32 b, tid, threads, tile_bits, xoff, plane, log_n, inverse;
    bool active;
};

// A round of stages st .. st+r-1 (tile bits p .. p+r-1, p = vx + st - s) on the
// thread's E = 2^R elements, as 2^(R - r) groups of 2^r: element m is member
// q = m mod 2^r of group m >> r, the group being number tid + (m >> r) * threads of the
// tile's 2^(bits - r), at x = insert_zeros(group, p, r) + (q << p) and A-index
// idx[m] = idx[group's first] + (q << st). Groups beyond the tile (tiles of fewer than
// threads * E elements) are not ok: they keep zeros and never touch memory (their
// twiddle slots are in the table all the same). Everything indexed by m or group is
// unrolled per r, so that no array is indexed at run time (local memory).
template <u32 R, u32 r> CRU_DEV void round_indices(const TileCtx& c, u32 p, u32 st, u32 (&idx)[1u << R], bool (&ok)[1u << R]) {
    constexpr u32 M = 1u << r;
    CRU_UNROLL for (u32 grp = 0; grp < (1u << (R - r)); grp++) {
        const u32 u = c.tid + grp * c.threads;
        const bool in = c.active && u < ((1u << c.tile_bits) >> r);
        const u32 i0 = tile_index(c.t, c.b, insert_zeros(u, p, r));
        CRU_UNROLL for (u32 q = 0; q < M; q++) { idx[grp * M + q] = i0 | (q << st); ok[grp * M + q] = in; }
    }
}

// The round's elements from the tile (STORE false) or into it (true).
template <u32 R, u32 r, bool STORE>
CRU_DEV void round_shared(const TileCtx& c, u32* sm, u32 p, Fr (&e)[1u << R], const bool (&ok)[1u << R]) {
    constexpr u32 M = 1u << r;
    CRU_UNROLL for (u32 grp = 0; grp < (1u << (R - r)); grp++) {
        const u32 x0 = c.xoff + insert_zeros(c.tid + grp * c.threads, p, r);
        CRU_UNROLL for (u32 q = 0; q < M; q++) {
            const u32 m = grp * M + q;
            if (!ok[m]) { if (!STORE) e[m] = Fr::zero(); continue; }
            const u32 o = swizzle8(x0 + (q << p));
            CRU_UNROLL for (int w = 0; w < 8; w++) {
                if (STORE) sm[w * c.plane + o] = e[m].l[w];
                else e[m].l[w] = sm[w * c.plane + o];
            }
        }
    }
}

// The round's stages on the elements in registers. Each stage's distinct twiddles are
// read once: stage st + kk's pair whose lower member is q uses the power of
// idx[group's first] + ((q mod 2^kk) << st).
template <u32 R, u32 r>
CRU_DEV void round_stages(const TileCtx& c, const Fr* __restrict__ tw, u32 st, Fr (&e)[1u << R], const u32 (&idx)[1u << R]) {
    constexpr u32 M = 1u << r;
    CRU_UNROLL for (u32 kk = 0; kk < r; kk++) {
        CRU_UNROLL for (u32 grp = 0; grp < (1u << (R - r)); grp++) {
            CRU_UNROLL for (u32 mq = 0; mq < (1u << kk); mq++) {
                // At stage 0 of the transform every twiddle of member 0 is w^0 = 1.
                const bool unit = st == 0 && mq == 0;
                const Fr w = unit ? Fr::zero() : stage_twiddle(tw, idx[grp * M] | (mq << st), st + kk, c.log_n, c.inverse);
                CRU_UNROLL for (u32 hi = 0; hi < (M >> (kk + 1)); hi++) {
                    const u32 m = grp * M + mq + (hi << (kk + 1));
                    butterfly(e[m], e[m + (1u << kk)], w, unit);
                }
            }
        }
    }
}

// The L1 prefetches of what round_stages<R, r> will read.
template <u32 R, u32 r> CRU_DEV void round_prefetch(const TileCtx& c, const Fr* tw, u32 st, const u32 (&idx)[1u << R]) {
    constexpr u32 M = 1u << r;
    CRU_UNROLL for (u32 kk = 0; kk < r; kk++)
        CRU_UNROLL for (u32 grp = 0; grp < (1u << (R - r)); grp++)
            CRU_UNROLL for (u32 mq = 0; mq < (1u << kk); mq++)
                prefetch_stage_twiddle(tw, idx[grp * M] | (mq << st), st + kk, c.log_n, c.inverse);
}

// A round's step for its r (1 .. R): the instance of each template that has it.
#define CRU_ROUND_R(R, r, call)                                   \
    do {                                                          \
        if ((r) == (R)) { constexpr u32 RR = (R); call; }         \
        else if ((r) == 2) { constexpr u32 RR = (R) > 2 ? 2 : 1; call; } \
        else { constexpr u32 RR = 1; call; }                      \
    } while (0)

// The body of ntt_tile_e{2^R}: as ntt_tile_rounds, with rounds of up to R stages.
template <u32 R>
CRU_DEV void ntt_tile_radix(Fr* a, const Fr* __restrict__ tw, const Fr* __restrict__ pow_lo,
                            const Fr* __restrict__ pow_hi, const FrArg& fc, u32 log_n, u32 s, u32 k, u32 g, u32 cshift,
                            u32 flags, u32 lo_bits) {
    constexpr u32 E = 1u << R;
    CRU_NTT_DYNAMIC_SHARED(sm);
    TileCtx c;
    c.t = tile_shape(s, k, g, cshift);
    c.tile_bits = k + g;
    c.log_n = log_n;
    c.inverse = flags & CRU_NTT_INVERSE;
    const bool load_rev = flags & CRU_NTT_LOAD_REVERSED, store_rev = flags & CRU_NTT_STORE_REVERSED;
    // Pairing as in ntt_tile_rounds.
    const bool paired = flags & CRU_NTT_PAIRED;
    c.threads = paired ? blockDim.x / 2 : blockDim.x;
    const u32 half = paired && threadIdx.x >= c.threads ? 1 : 0;
    c.tid = threadIdx.x - half * c.threads;
    c.b = blockIdx.x;
    c.active = true;
    if (paired) {
        const u32 partner = partner_block(c.b, s);
        if (partner < c.b) return;  // the whole block: no barrier is left waiting
        if (half == 1) { c.active = partner != c.b; c.b = partner; }
    }
    c.plane = 1u << (c.tile_bits + (paired ? 1 : 0));
    c.xoff = half << c.tile_bits;
    u32 j = 0, r = k < R ? k : R;
    u32 idx[E];
    bool ok[E];
    CRU_ROUND_R(R, r, (round_indices<R, RR>(c, c.t.vx, s, idx, ok)));
    for (;;) {
        const bool first = j == 0, last = j + r == k;
        const u32 p = c.t.vx + j, st = s + j;
        Fr e[E];
        if (first) {
            CRU_UNROLL for (u32 m = 0; m < E; m++) {
                if (!ok[m]) { e[m] = Fr::zero(); continue; }
                const u32 at = load_rev ? bit_reverse_bits(idx[m], log_n) : idx[m];
                e[m] = a[at];
                if (flags & CRU_NTT_SCALE_LOADS_BY_POWERS) e[m] = fr_mul(e[m], power_at(pow_lo, pow_hi, at, lo_bits));
            }
        } else {
            CRU_ROUND_R(R, r, (round_shared<R, RR, false>(c, sm, p, e, ok)));
        }
        // One round that reads and writes other places (a layout change): every read
        // of the block before any write.
        if (first && last && load_rev != store_rev) __syncthreads();
        CRU_ROUND_R(R, r, (round_stages<R, RR>(c, tw, st, e, idx)));
        if (last) {
            CRU_UNROLL for (u32 m = 0; m < E; m++) {
                if (!ok[m]) continue;
                const u32 at = store_rev ? bit_reverse_bits(idx[m], log_n) : idx[m];
                // One product site for both scalings (each inlined product costs ptxas time).
                if (flags & (CRU_NTT_SCALE_BY_C | CRU_NTT_SCALE_BY_POWERS))
                    e[m] = fr_mul(e[m], flags & CRU_NTT_SCALE_BY_C ? fr_of(fc.words) : power_at(pow_lo, pow_hi, at, lo_bits));
                a[at] = e[m];
            }
            break;
        }
        CRU_ROUND_R(R, r, (round_shared<R, RR, true>(c, sm, p, e, ok)));
        j += r;
        r = k - j < R ? k - j : R;
        CRU_ROUND_R(R, r, (round_indices<R, RR>(c, c.t.vx + j, s + j, idx, ok)));
        CRU_ROUND_R(R, r, (round_prefetch<R, RR>(c, tw, s + j, idx)));
        __syncthreads();
    }
}

#if CRU_WITH(TILE8)
extern "C" __global__ void CRU_NTT_TILE_E8_BOUNDS
    ntt_tile_e8(Fr* a, const Fr* __restrict__ tw, const Fr* __restrict__ pow_lo, const Fr* __restrict__ pow_hi, FrArg c,
                u32 log_n, u32 s, u32 k, u32 g, u32 cshift, u32 flags, u32 lo_bits) {
    ntt_tile_radix<3>(a, tw, pow_lo, pow_hi, c, log_n, s, k, g, cshift, flags, lo_bits);
}
#endif

// ------------------------------ warp tiles (ntt_tile_w) ------------------------------
// The launches of ntt_tile_e4 of at most six stages (tiles of up to 2^6; not paired),
// each tile one warp's: two elements a thread, in registers through all of its
// stages, the pairs regrouped between stages by shuffles within the warp, so no shared
// memory and no block barrier. Blocks are CRU_NTT_TILEW_BLOCK threads (fewer for a
// domain of fewer than twice that), 2^(k+g-1) threads a tile (a warp at 2^6; smaller
// tiles share a warp): a block is several independent tiles, four warps at 2^6. The
// twelfth session's e4 profile was latency-bound at 24 warps an SM; sppark's tiles of
// 2^6 in one warp ran a stage in 10-11 us at 2^20 against e4's 14-18 (more warps
// resident, no barrier wait).
#define CRU_NTT_TILEW_MAX_BITS 6
#define CRU_NTT_TILEW_BLOCK 128
// At least CRU_NTT_TILEW_MIN_BLOCKS blocks resident an SM: at 7 (28 warps) ptxas
// (12.9, sm_90) fits 72 registers with no spill; at 8 (32 warps) 64, spilling 12
// bytes outside the stage loop, in the scalings' prologue (-DCRU_NTT_TILEW_MIN_BLOCKS=8
// through CRUCIBLE_CUDA_NVRTC_OPTIONS, for an A/B); unbounded it takes 96.
#ifndef CRU_NTT_TILEW_MIN_BLOCKS
#define CRU_NTT_TILEW_MIN_BLOCKS 7
#endif
#define CRU_NTT_TILE_W_BOUNDS __launch_bounds__(CRU_NTT_TILEW_BLOCK, CRU_NTT_TILEW_MIN_BLOCKS)

// From the pair across tile bit p to the pair across bit p + 1. The thread's lane bit
// p (`upper`) was the elements' bit p + 1 and becomes their bit p: of two lanes that
// differ in it, the lower keeps its lower element and takes the other's lower, the
// upper keeps its upper element and takes the other's upper. One Fr a thread crosses.
CRU_DEV void warp_regroup(Fr& e0, Fr& e1, u32 p, bool upper, u32 mask) {
    const Fr send = upper ? e0 : e1;
    Fr got;
    CRU_UNROLL for (int w = 0; w < 8; w++) got.l[w] = __shfl_xor_sync(mask, send.l[w], 1u << p);
    if (upper) e0 = got;
    else e1 = got;
}

// e *= g^at (the split tables as power_at's).
CRU_DEV void scale_by_power(Fr& e, u32 at, const Fr* __restrict__ pow_lo, const Fr* __restrict__ pow_hi, u32 lo_bits) {
    e = fr_mul(e, power_at(pow_lo, pow_hi, at, lo_bits));
}

// The body of ntt_tile_w (see the header): thread t of the launch is lane
// t mod 2^(k+g-1) of tile u = t >> (k+g-1), the tile whose fixed bits are u's, or
// with the data read reversed u's reversed: element i lies at bitrev(i), its fixed
// bits then ascending in memory with u, so that neighbouring warps (a tile of 2^6 a
// warp, its lanes 2^14 elements apart at 2^20) read and write neighbouring elements,
// the sectors of a line at about the same time.
CRU_DEV void ntt_tile_warp(Fr* a, const Fr* __restrict__ tw, const Fr* __restrict__ pow_lo,
                           const Fr* __restrict__ pow_hi, const FrArg& c, u32 log_n, u32 s, u32 k, u32 g, u32 cshift,
                           u32 flags, u32 lo_bits) {
    const TileShape t = tile_shape(s, k, g, cshift);
    const u32 lane_bits = k + g - 1, thread = CRU_THREAD_X;
    const u32 inverse = flags & CRU_NTT_INVERSE;
    const bool load_rev = flags & CRU_NTT_LOAD_REVERSED, store_rev = flags & CRU_NTT_STORE_REVERSED;
    const u32 u = thread >> lane_bits, lane = thread & low_mask(lane_bits);
    const u32 b = load_rev ? bit_reverse_bits(u, log_n - k - g) : u;
    // Every thread of the warp shuffles (a block of fewer than 32: all of them).
    const u32 mask = blockDim.x >= 32 ? 0xffffffffu : low_mask(blockDim.x);
    // Stage s + j is tile bit p = vx + j; the thread's pair is x0 (bit p clear) and
    // x0 + 2^p, A-indices i0 and i1.
    u32 p = t.vx;
    u32 x0 = insert_zero(lane, p);
    u32 i0 = tile_index(t, b, x0), i1 = tile_index(t, b, x0 + (1u << p));
    Fr e0, e1;
    {
        const u32 at0 = load_rev ? bit_reverse_bits(i0, log_n) : i0, at1 = load_rev ? bit_reverse_bits(i1, log_n) : i1;
        e0 = a[at0];
        if (flags & CRU_NTT_SCALE_LOADS_BY_POWERS) scale_by_power(e0, at0, pow_lo, pow_hi, lo_bits);
        e1 = a[at1];
        if (flags & CRU_NTT_SCALE_LOADS_BY_POWERS) scale_by_power(e1, at1, pow_lo, pow_hi, lo_bits);
    }
    Fr w = stage_twiddle(tw, i0, s, log_n, inverse);
    for (u32 j = 0;; j++) {
        // At stage 0 of the transform every twiddle is w^0 = 1.
        butterfly(e0, e1, w, s + j == 0);
        if (j + 1 == k) break;
        const bool upper = (lane >> p) & 1u;
        // The next stage's twiddle is asked for before the shuffles: its latency
        // overlaps theirs.
        x0 = insert_zero(lane, p + 1);
        i0 = tile_index(t, b, x0);
        w = stage_twiddle(tw, i0, s + j + 1, log_n, inverse);
        warp_regroup(e0, e1, p, upper, mask);
        p++;
    }
    i1 = tile_index(t, b, x0 + (1u << p));
    // A layout change (one tile holds the domain): every read of the tile before any
    // write.
    if (load_rev != store_rev) __syncwarp(mask);
    const u32 at0 = store_rev ? bit_reverse_bits(i0, log_n) : i0, at1 = store_rev ? bit_reverse_bits(i1, log_n) : i1;
    // Each element scaled and stored before the other's scaling (as its load and
    // scaling above): fewer registers live at once.
    const u32 scale = flags & (CRU_NTT_SCALE_BY_C | CRU_NTT_SCALE_BY_POWERS);
    if (scale & CRU_NTT_SCALE_BY_C) e0 = fr_mul(e0, fr_of(c.words));
    else if (scale) scale_by_power(e0, at0, pow_lo, pow_hi, lo_bits);
    a[at0] = e0;
    if (scale & CRU_NTT_SCALE_BY_C) e1 = fr_mul(e1, fr_of(c.words));
    else if (scale) scale_by_power(e1, at1, pow_lo, pow_hi, lo_bits);
    a[at1] = e1;
}

#if CRU_WITH(TILEW)
extern "C" __global__ void CRU_NTT_TILE_W_BOUNDS
    ntt_tile_w(Fr* a, const Fr* __restrict__ tw, const Fr* __restrict__ pow_lo, const Fr* __restrict__ pow_hi, FrArg c,
               u32 log_n, u32 s, u32 k, u32 g, u32 cshift, u32 flags, u32 lo_bits) {
    ntt_tile_warp(a, tw, pow_lo, pow_hi, c, log_n, s, k, g, cshift, flags, lo_bits);
}
#endif

#if CRU_WITH(POINTWISE)
extern "C" __global__ void fr_powers(Fr* out, FrSeeds pows, FrArg first, u32 count) {
    const u32 i = CRU_THREAD_X;
    if (i >= count) return;
    Fr r = fr_of(first.words);
    for (u32 b = 0; b < 32 && (i >> b) != 0; b++)
        if ((i >> b) & 1u) r = fr_mul(r, fr_of(pows.words + 8 * b));
    out[i] = r;
}

extern "C" __global__ void fr_power_table(Fr* out, const Fr* lo, const Fr* hi, u32 n, u32 lo_bits) {
    const u32 i = CRU_THREAD_X;
    if (i < n) out[i] = power_at(lo, hi, i, lo_bits);
}

extern "C" __global__ void fr_scale_by_powers(Fr* a, const Fr* pow_lo, const Fr* pow_hi, u32 n, u32 lo_bits) {
    const u32 i = CRU_THREAD_X;
    if (i < n) a[i] = fr_mul(a[i], power_at(pow_lo, pow_hi, i, lo_bits));
}

extern "C" __global__ void fr_scale(Fr* a, FrArg c, u32 n) {
    const u32 i = CRU_THREAD_X;
    if (i < n) a[i] = fr_mul(a[i], fr_of(c.words));
}

extern "C" __global__ void fr_mul_assign(Fr* a, const Fr* b, u32 n) {
    const u32 i = CRU_THREAD_X;
    if (i < n) a[i] = fr_mul(a[i], b[i]);
}

extern "C" __global__ void fr_sub_scale(Fr* a, const Fr* b, FrArg c, u32 n) {
    const u32 i = CRU_THREAD_X;
    if (i < n) a[i] = fr_mul(fsub(a[i], b[i]), fr_of(c.words));
}
#endif
