// ntt.cu — NTT over Fr and the pointwise Fr kernels of the Groth16 quotient.
// Prepend field.cuh, fq2.cuh, curve.cuh (NVRTC concatenation); g++ finds them by #include.
//
// All Fr values: 8 x u32 little-endian, Montgomery form (arkworks' Fr bytes; r takes 8
// words on both curves).
// Launch shape of every kernel here but the tile kernels: 1-D, any blockDim.x (256
// suggested), gridDim.x = max(1, ceil(THREADS / blockDim.x)); each kernel ignores
// indices >= THREADS. No shared memory, no barriers: any order of the threads of one
// launch is a valid schedule (the host harness runs them one by one). The tile kernels'
// shape is their own (below); their blocks share memory, barriers or shuffles (the
// harness runs the threads of a block concurrently).
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
// scaling by 1/n.
//   tw: Fr[max(1, n/2)], tw[i] = omega^i (Montgomery), one table for both directions.
//   (The host runs nothing for n = 1: every transform of one point is the identity.)
//   inverse: w^k = tw[k]; else w^k = omega^-k, read as tw[0] = 1 for k = 0 and
//   -tw[n/2 - k] for 0 < k < n/2 (omega^(n/2) = -1).
// The radix-2 decimation-in-time stages 0 .. log_n - 1 run on bit-reversed data: stage
// st (half-size h = 2^st) maps (a[i], a[i+h]) for bit st of i clear, with
// x = w^((i mod h) << (log_n-1-st)), to (a[i] + x a[i+h], a[i] - x a[i+h]). The host
// runs, in stream order, tile launches (ntt_tile_e4, ntt_tile_w) for consecutive stage
// ranges covering 0 .. log_n - 1, with the bit reversal fused: the first launches read
// and write element i at bitrev(i) (the coset forward's first one scaling what it
// reads from position p by g^p), then one launch centered on the middle stages
// (s = log_n - s - k, g = 0), paired, reads at bitrev(i) and writes at i, and the rest
// run in natural layout; the final scaling (1/n by value, or the powers of g^-1 with lo
// premultiplied by 1/n) fused into the last launch's stores. (A launch may write
// elsewhere than it read only where each block writes the very places it read: one
// block for the whole domain, or the centered launch's pairs of mirror tiles, bitrev
// mapping each onto the other.) The four transforms of the prover (arkworks' results
// exactly; g = coset offset): forward; inverse (scaled by 1/n); coset forward
// (fft(a_i g^i)); coset inverse (ifft(a) then a_i *= g^-i).
//
// extern "C" __global__ void ntt_tile_e4(Fr* a, const Fr* tw, const Fr* pow_lo, const Fr* pow_hi, FrArg c,
//                                        u32 log_n, u32 s, u32 k, u32 g, u32 cshift, u32 flags, u32 lo_bits)
// extern "C" __global__ void ntt_tile_w(... the same parameters ...)
//   Stages s .. s+k-1 of the bit-reversed data, in place. A tile is the 2^(k+g) <= 2^10
//   elements whose indices differ only in bits s .. s+k-1 (the stages) and in bits
//   cshift .. cshift+g-1 (a batch of independent groups: cshift + g <= s, or cshift >=
//   s + k and cshift + g <= log_n; with g = 0, cshift is not read); the block's index
//   fills the other bits in order.
//   ntt_tile_e4 grid: 2^(log_n - k - g) blocks of max(1, 2^(k+g-2)) threads (four
//   elements a thread), 256 at most; no dynamic shared memory (33 KiB static). Rounds
//   of two stages (one when one is left) in registers, the tile in shared memory
//   between rounds (word w of element x at w * (2^10 + 2^10/32) + x + x/32); the first
//   round reads a, the last writes it. flags: bit 0 (1) the inverse's twiddles; bit 1
//   (2) each result times c; bit 2 (4) the result written at position p times
//   pow_lo[p mod 2^lo_bits] * pow_hi[p >> lo_bits]; bit 3 (8) element i read from
//   a[bitrev(i)], else a[i]; bit 4 (16) written to a[bitrev(i)], else a[i]; bit 5 (32)
//   paired: a centered launch (g = 0, 2s + k = log_n, k <= 9) of twice the threads,
//   block b doing its tile and that of the block whose fixed bits are b's reversed (the
//   mirror tile) if that block is not below it, every read before any write; bit 6
//   (64) each element read from position p times the power of p (the tables as for
//   bit 2). Unused table pointers may be any valid array (never read).
//   ntt_tile_w: tiles of 2^(k+g) <= 2^6, a tile's 2^(k+g-1) threads in one warp (two
//   elements a thread; a warp holds several smaller tiles), the pairs regrouped
//   between stages by __shfl_xor_sync, no shared memory; every flag but bit 5 (no
//   pairing). Grid: 2^(log_n - 1) threads, blocks of 128 (all in one when fewer);
//   thread t is lane t mod 2^(k+g-1) of tile t >> (k+g-1) (its fixed bits reversed
//   when bit 3 is set).
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
struct FrArg { u32 words[Fr::N]; };
struct FrSeeds { u32 words[Fr::N * CRU_MAX_SEEDS]; };
// The host's structs (backend-cuda/src/field.rs) and table_at's two 16-byte loads.
static_assert(Fr::N == 8, "an Fr is 8 words");

// Every Fr product here: field.cuh's fmul in its wide-pair form (about half the SASS
// instructions of the narrow one, the NTT's whole cost being its products).
CRU_DEV Fr fr_mul(const Fr& a, const Fr& b) { return fmul<FrCfg, true>(a, b); }

CRU_DEV Fr fr_of(const u32* words) {
    Fr r;
    CRU_UNROLL for (int k = 0; k < Fr::N; k++) r.l[k] = words[k];
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

// w^k of the transform's direction, from the forward table (see the header). A power
// of omega is never zero, so its negation is p - w with no zero test (fneg's).
// w^k is entry k of the table, or for the inverse (k > 0) the negation of entry n/2 - k.
CRU_DEV u32 twiddle_slot(u32 k, u32 half, u32 inverse) { return inverse == 0 || k == 0 ? k : half - k; }
CRU_DEV Fr twiddle(const Fr* tw, u32 k, u32 half, u32 inverse) {
    const Fr w = table_at(tw, twiddle_slot(k, half, inverse));
    return inverse == 0 || k == 0 ? w : fsub(Fr::modulus(), w);
}

// Asks for table entry i in L1 (no register, nothing waits for it; no-op on the host).
CRU_DEV void prefetch_table(const Fr* table, u32 i) {
#ifdef __CUDA_ARCH__
    asm volatile("prefetch.global.L1 [%0];" ::"l"(table + i));
#else
    (void)table;
    (void)i;
#endif
}

// ------------------------------ shared-memory tiles ------------------------------
// See the header (ntt_tile_e4). A tile is 2^(k + g) elements of the bit-reversed data
// (A-indices): every combination of bits s .. s+k-1 (the stages) and of g more bits
// (a batch of independent groups, for coalescing), the other bits fixed by the block.

// ntt_tile_e4: tiles up to 2^10, four elements a thread, rounds of two stages.
#define CRU_NTT_TILE_MAX_BITS 10
// One word plane of a tile of up to 2^bits: element x at x + x/32, so that 32 lanes at
// unit stride or at any power-of-two stride up to 32 fall in 32 distinct banks.
#define CRU_NTT_PLANE(bits) ((1u << (bits)) + (1u << (bits)) / 32)
// Blocks of 256 threads at most (a tile of 2^10 in fours), at least
// CRU_NTT_TILE_MIN_BLOCKS of them resident per SM: at three (24 warps) ptxas fits 80
// registers with no spill; at four (64 registers) it spills 160 bytes.
#define CRU_NTT_TILE_MIN_BLOCKS 3
#define CRU_NTT_TILE_E4_BOUNDS __launch_bounds__(1u << (CRU_NTT_TILE_MAX_BITS - 2), CRU_NTT_TILE_MIN_BLOCKS)
// The tile kernels' flags.
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
    CRU_UNROLL for (int w = 0; w < Fr::N; w++) r.l[w] = sm[w * PLANE + o];
    return r;
}

template <u32 PLANE> CRU_DEV void tile_store(u32* sm, u32 x, const Fr& v) {
    const u32 o = x + (x >> 5);
    CRU_UNROLL for (int w = 0; w < Fr::N; w++) sm[w * PLANE + o] = v.l[w];
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
    __shared__ u32 sm[Fr::N * PLANE];
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

// One NVRTC part each: the tile kernels compile concurrently.
#if CRU_WITH(TILE)
extern "C" __global__ void CRU_NTT_TILE_E4_BOUNDS
    ntt_tile_e4(Fr* a, const Fr* __restrict__ tw, const Fr* __restrict__ pow_lo, const Fr* __restrict__ pow_hi, FrArg c,
                u32 log_n, u32 s, u32 k, u32 g, u32 cshift, u32 flags, u32 lo_bits) {
    ntt_tile_rounds<4, CRU_NTT_TILE_MAX_BITS>(a, tw, pow_lo, pow_hi, c, log_n, s, k, g, cshift, flags, lo_bits);
}
#endif

// ------------------------------ warp tiles (ntt_tile_w) ------------------------------
// The launches of ntt_tile_e4 of at most six stages (tiles of up to 2^6; not paired),
// each tile one warp's: two elements a thread, in registers through all of its
// stages, the pairs regrouped between stages by shuffles within the warp, so no shared
// memory and no block barrier. Blocks are CRU_NTT_TILEW_BLOCK threads (fewer for a
// domain of fewer than twice that), 2^(k+g-1) threads a tile (a warp at 2^6; smaller
// tiles share a warp): a block is several independent tiles, four warps at 2^6. e4's
// profile was latency-bound at 24 warps an SM; sppark's tiles of 2^6 in one warp ran a
// stage in 10-11 us at 2^20 against e4's 14-18 (more warps resident, no barrier wait).
#define CRU_NTT_TILEW_MAX_BITS 6
#define CRU_NTT_TILEW_BLOCK 128
// At least CRU_NTT_TILEW_MIN_BLOCKS blocks resident an SM: at 7 (28 warps) ptxas
// (12.9, sm_90) fits 72 registers with no spill; at 8 (32 warps) 64, spilling 12
// bytes outside the stage loop, in the scalings' prologue; unbounded it takes 96.
#define CRU_NTT_TILEW_MIN_BLOCKS 7
#define CRU_NTT_TILE_W_BOUNDS __launch_bounds__(CRU_NTT_TILEW_BLOCK, CRU_NTT_TILEW_MIN_BLOCKS)

// From the pair across tile bit p to the pair across bit p + 1. The thread's lane bit
// p (`upper`) was the elements' bit p + 1 and becomes their bit p: of two lanes that
// differ in it, the lower keeps its lower element and takes the other's lower, the
// upper keeps its upper element and takes the other's upper. One Fr a thread crosses.
CRU_DEV void warp_regroup(Fr& e0, Fr& e1, u32 p, bool upper, u32 mask) {
    const Fr send = upper ? e0 : e1;
    Fr got;
    CRU_UNROLL for (int w = 0; w < Fr::N; w++) got.l[w] = __shfl_xor_sync(mask, send.l[w], 1u << p);
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
        if ((i >> b) & 1u) r = fr_mul(r, fr_of(pows.words + Fr::N * b));
    out[i] = r;
}

extern "C" __global__ void fr_power_table(Fr* out, const Fr* lo, const Fr* hi, u32 n, u32 lo_bits) {
    const u32 i = CRU_THREAD_X;
    if (i < n) out[i] = power_at(lo, hi, i, lo_bits);
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
