// Host harness for the CUDA kernels: compiles field.cuh .. msm.cu with g++ and runs
// the kernels by emulating launches (each thread in turn, blockIdx/threadIdx set as
// the device would). Reads one command per line on stdin, writes one result line per
// command on stdout. Numbers are hex integers; an element of Fr/Fq is the integer
// whose little-endian u32 limbs are the element's raw (Montgomery) limbs. Driven by
// run_tests.py, which holds the Python big-int references.
//
// The curve is field.cuh's: build with -DCRU_CURVE_BN254 for BN254, without for BLS12-381.
//
// Commands (results: space-separated hex):
//   params                -> Fr limbs, Fq limbs, CRU_SCALAR_DIGIT_BITS, r, p: the curve
//                         this build was compiled for
//   fr|fq OP a [b]        OP: add sub mul sqr neg dbl inv to_mont from_mont eq is_zero
//   fq2 OP a0 a1 [b0 b1]  OP: add sub mul sqr neg inv
//   g1|g2 OP P [Q]        OP: dbl add (Xyzz, Xyzz), madd (Xyzz, affine), adbl (affine);
//                         Xyzz = X Y ZZ ZZZ, affine = x y (each an Fq or Fq2)
//   ntt_tile E LOG_N S K G CSHIFT FLAGS LO_BITS a[n] tw[max(1,n/2)] c lo[2^LO_BITS] hi[ceil(n/2^LO_BITS)]
//                         -> a after one ntt_tile_e4 launch (E: 4; w for ntt_tile_w; c by
//                         value; lo, hi its power tables)
//   transform_tiles KIND LOG_N M (E K G CSHIFT LAYOUT)xM omega g size_inv a[n] -> a
//                         after the Rust host's sequence for KIND (forward inverse coset
//                         coset_inv) with those M launches, each of ntt_tile_e4 (E 4) or
//                         ntt_tile_w (E w), tables included
//   powers COUNT FIRST pows[ceil(log2 COUNT)]           -> fr_powers' table (seeds, FIRST by value)
//   power_table N LO_BITS lo[2^LO_BITS] hi[ceil(N/2^LO_BITS)] -> fr_power_table's table
//   pw OP N LO_BITS a[N] b[N] c pow_lo[2^LO_BITS] pow_hi[ceil(N/2^LO_BITS)]
//                         OP: mul_assign sub_scale -> a (c by value)
//   scan M CHUNK v[M]                                   -> exclusive prefix sum, then total
//   msm g1|g2 tree TILE N C CHUNK SEG_BITS WP STRIDE PLANES bases[PLANES*STRIDE] scalars[N]
//                         -> WP, ITEMS, then each window's ITEMS points (G, U_0 ..
//                         U_{ITEMS-2}: msm.cu's steps 6-7 in blocks of up to TILE threads)
//   classify N CHUNK scalars[N]                         -> ones rest list[ones + rest] (ones.cu 1-3)
//   ones g1|g2 COUNT LEAVES GROUP_BITS ORDER NB bases[NB] ones[COUNT] -> sum of bases[ones[k]]
//                         (Xyzz; ones.cu 4, its groups' sums added), threads run in ORDER
//                         (launch_ordered)
//   msm_ones g1|g2 tree TILE N C CHUNK SEG_BITS WP STRIDE PLANES LEAVES bases[PLANES*STRIDE] scalars[N]
//                                                       -> ones rest, the ones' sum (Xyzz), WP
//                         (0 without rest), then as msm prints: the witness-aware sequence
//   planes g1|g2 N STRIDE SHIFT PLANES points[N]       -> the whole table, PLANES * STRIDE
//                         affine points: plane 0 = points (entries N .. STRIDE - 1 of
//                         every plane filled with the sentinel a5a5..), then planes.cu's
//                         launches for plane = 1 .. PLANES - 1
//   sparse ROWS N ENTRY_COUNT COEFFICIENT_COUNT Z_LEN row_starts[ROWS+1] entries[2*ENTRY_COUNT]
//          coefficients[COEFFICIENT_COUNT] z[Z_LEN]
//                         -> out[N] after one sparse_product launch (out filled with the
//                         sentinel a5a5.. before it, every input exactly its length)
// Scratch vectors have exactly the sizes msm.cu documents; build with
// -fsanitize=address to have any out-of-bounds access stop the run.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../ntt.cu"
#include "../msm.cu"
#include "../planes.cu"
#include "../ones.cu"
#include "../sparse_product.cu"

static const u32 BLOCK = 64;  // any size works; 64 exercises multi-block grids

template <class K>
static void launch(u32 threads_x, u32 grid_y, K kernel) {
    const u32 gx = threads_x == 0 ? 1 : (threads_x + BLOCK - 1) / BLOCK;
    gridDim = {gx, grid_y, 1};
    blockDim = {BLOCK, 1, 1};
    for (u32 y = 0; y < grid_y; y++)
        for (u32 x = 0; x < gx; x++)
            for (u32 t = 0; t < BLOCK; t++) {
                blockIdx = {x, y, 0};
                threadIdx = {t, 0, 0};
                kernel();
            }
}

// A 1-D launch whose threads run in the order `order` names: 0 ascending, 1 descending,
// 2 the odd threads first (descending), then the even ones: the ones' sum must not
// depend on which child of a tree node finishes first.
template <class K>
static void launch_ordered(u32 threads, u32 order, K kernel) {
    const u32 gx = threads == 0 ? 1 : (threads + BLOCK - 1) / BLOCK, total = gx * BLOCK;
    gridDim = {gx, 1, 1};
    blockDim = {BLOCK, 1, 1};
    for (u32 k = 0; k < total; k++) {
        u32 t = k;
        if (order == 1) t = total - 1 - k;
        if (order == 2) t = k < total / 2 ? total - 1 - 2 * k : 2 * (k - total / 2);
        blockIdx = {t / BLOCK, 0, 0};
        threadIdx = {t % BLOCK, 0, 0};
        kernel();
    }
}

// The barrier of one emulated block: every thread of it waits until all have arrived.
struct BlockBarrier {
    std::mutex m;
    std::condition_variable cv;
    u32 threads = 0, arrived = 0, generation = 0;
    void wait() {
        std::unique_lock<std::mutex> lock(m);
        const u32 gen = generation;
        if (++arrived == threads) {
            arrived = 0;
            generation++;
            cv.notify_all();
        } else {
            cv.wait(lock, [&] { return generation != gen; });
        }
    }
};
static BlockBarrier block_barrier;

// The barriers of a block's warps (__syncwarp, and each __shfl_xor_sync twice): the
// threads `mask` names wait for one another. A thread not in its mask, or a wait that
// never completes (a thread of the mask that never arrives), stops the run.
struct WarpBarrier {
    std::mutex m;
    std::condition_variable cv;
    u32 arrived = 0, generation = 0;
    void wait(u32 lane, u32 mask) {
        if (!((mask >> lane) & 1u)) {
            fprintf(stderr, "lane %u not in its warp mask %08x\n", lane, mask);
            abort();
        }
        std::unique_lock<std::mutex> lock(m);
        const u32 gen = generation;
        if (++arrived == (u32)__builtin_popcount(mask)) {
            arrived = 0;
            generation++;
            cv.notify_all();
        } else if (!cv.wait_for(lock, std::chrono::seconds(20), [&] { return generation != gen; })) {
            fprintf(stderr, "a warp barrier of mask %08x never completed\n", mask);
            abort();
        }
    }
};
static WarpBarrier warp_barriers[32];

// A launch of `blocks` x `grid_y` blocks of `threads` threads for a kernel with
// __syncthreads: the blocks one after the other, the threads of a block concurrently
// (one host thread each), so that a missing barrier shows up as a wrong result (or,
// under -fsanitize=thread, a race) rather than passing by the sequential order.
template <class K>
static void launch_blocks_2d(u32 blocks, u32 grid_y, u32 threads, K kernel) {
    block_barrier.threads = threads;
    cru_block_barrier = [] { block_barrier.wait(); };
    cru_warp_barrier = [](u32 warp, u32 mask) { warp_barriers[warp].wait(threadIdx.x % 32, mask); };
    for (u32 y = 0; y < grid_y; y++)
        for (u32 x = 0; x < blocks; x++) {
            std::vector<std::thread> pool;
            for (u32 t = 0; t < threads; t++)
                pool.emplace_back([&, x, y, t] {
                    gridDim = {blocks, grid_y, 1};
                    blockDim = {threads, 1, 1};
                    blockIdx = {x, y, 0};
                    threadIdx = {t, 0, 0};
                    kernel();
                });
            for (auto& th : pool) th.join();
        }
}

template <class K>
static void launch_blocks(u32 blocks, u32 threads, K kernel) {
    launch_blocks_2d(blocks, 1, threads, kernel);
}

static std::istringstream in;

static void read_limbs(u32* l, int n) {
    std::string s;
    if (!(in >> s)) { fprintf(stderr, "missing operand\n"); exit(2); }
    for (int i = 0; i < n; i++) l[i] = 0;
    int bit = 0;
    for (int k = (int)s.size() - 1; k >= 0; k--, bit += 4) {
        const char ch = s[k];
        const u32 v = ch <= '9' ? ch - '0' : (ch | 32) - 'a' + 10;
        if (v && bit / 32 >= n) { fprintf(stderr, "operand too large: %s\n", s.c_str()); exit(2); }
        if (bit / 32 < n) l[bit / 32] |= v << (bit % 32);
    }
}

static void write_limbs(const u32* l, int n) {
    printf(" ");
    for (int i = n - 1; i >= 0; i--) printf("%08x", l[i]);
}

template <class C> static Fp<C> rd(Fp<C>*) { Fp<C> a; read_limbs(a.l, C::N); return a; }
static Fq2 rd(Fq2*) { Fq2 a; a.c0 = rd((Fq*)0); a.c1 = rd((Fq*)0); return a; }
template <class C> static void wr(const Fp<C>& a) { write_limbs(a.l, C::N); }
static void wr(const Fq2& a) { wr(a.c0); wr(a.c1); }
template <class F> static F rdf() { return rd((F*)0); }
template <class F> static Xyzz<F> rd_xyzz() { Xyzz<F> p; p.x = rdf<F>(); p.y = rdf<F>(); p.zz = rdf<F>(); p.zzz = rdf<F>(); return p; }
template <class F> static Affine<F> rd_aff() { Affine<F> p; p.x = rdf<F>(); p.y = rdf<F>(); return p; }
template <class F> static void wr_xyzz(const Xyzz<F>& p) { wr(p.x); wr(p.y); wr(p.zz); wr(p.zzz); }
static u32 rd_u32() { long long v; in >> v; return (u32)v; }

template <class C> static void field_cmd(const std::string& op) {
    typedef Fp<C> F;
    const F a = rdf<F>();
    if (op == "add") wr(fadd(a, rdf<F>()));
    else if (op == "sub") wr(fsub(a, rdf<F>()));
    else if (op == "mul") wr(fmul(a, rdf<F>()));
    else if (op == "mul_wide") wr(fmul<C, true>(a, rdf<F>()));
    else if (op == "sqr") wr(fsqr(a));
    else if (op == "neg") wr(fneg(a));
    else if (op == "dbl") wr(fdbl(a));
    else if (op == "inv") wr(finv(a));
    else if (op == "to_mont") wr(to_mont(a));
    else if (op == "from_mont") wr(from_mont(a));
    else if (op == "eq") printf(" %d", (int)feq(a, rdf<F>()));
    else if (op == "is_zero") printf(" %d", (int)fis_zero(a));
    else { fprintf(stderr, "bad op %s\n", op.c_str()); exit(2); }
}

static void fq2_cmd(const std::string& op) {
    const Fq2 a = rdf<Fq2>();
    if (op == "add") wr(fadd(a, rdf<Fq2>()));
    else if (op == "sub") wr(fsub(a, rdf<Fq2>()));
    else if (op == "mul") wr(fmul(a, rdf<Fq2>()));
    else if (op == "sqr") wr(fsqr(a));
    else if (op == "neg") wr(fneg(a));
    else if (op == "inv") wr(finv(a));
    else { fprintf(stderr, "bad op %s\n", op.c_str()); exit(2); }
}

template <class F> static void curve_cmd(const std::string& op) {
    if (op == "adbl") { wr_xyzz(xyzz_double_affine(rd_aff<F>())); return; }
    const Xyzz<F> p = rd_xyzz<F>();
    if (op == "dbl") wr_xyzz(xyzz_double(p));
    else if (op == "add") wr_xyzz(xyzz_add(p, rd_xyzz<F>()));
    else if (op == "madd") wr_xyzz(xyzz_add_affine(p, rd_aff<F>()));
    else { fprintf(stderr, "bad op %s\n", op.c_str()); exit(2); }
}

static std::vector<Fr> rd_frs(size_t count) {
    std::vector<Fr> v(count);
    for (auto& x : v) x = rdf<Fr>();
    return v;
}

static size_t half_or_one(u32 n) { return n / 2 == 0 ? 1 : n / 2; }

static u32 hi_len(u32 n, u32 lo_bits) { return (u32)(((u64)n + (1u << lo_bits) - 1) >> lo_bits); }

// The by-value kernel arguments, as the Rust host fills them.
static FrArg arg_of(const Fr& x) {
    FrArg c;
    for (int k = 0; k < Fr::N; k++) c.words[k] = x.l[k];
    return c;
}

static FrSeeds seeds_of(const std::vector<Fr>& pows) {
    FrSeeds s;
    memset(&s, 0xa5, sizeof s);  // unused seeds must not be read: garbage there
    for (size_t b = 0; b < pows.size() && b < CRU_MAX_SEEDS; b++)
        for (int k = 0; k < Fr::N; k++) s.words[Fr::N * b + k] = pows[b].l[k];
    return s;
}

static u32 ceil_log2(u32 count) {
    u32 bits = 0;
    while ((1ull << bits) < count) bits++;
    return bits;
}

// powers COUNT FIRST pows[ceil(log2 COUNT)]
static void powers_cmd() {
    const u32 count = rd_u32();
    const Fr first = rdf<Fr>();
    const std::vector<Fr> pows = rd_frs(ceil_log2(count));
    std::vector<Fr> out(count);
    const FrSeeds seeds = seeds_of(pows);
    const FrArg c = arg_of(first);
    launch(count, 1, [&] { fr_powers(out.data(), seeds, c, count); });
    for (auto& x : out) wr(x);
}

// fr_powers' table of first * g^i, i < 2^bits, with the seeds g^(2^b) as the host
// computes them (repeated squaring).
static std::vector<Fr> powers_of(Fr g, Fr first, u32 bits) {
    std::vector<Fr> pows;
    for (u32 b = 0; b < bits; b++, g = fsqr(g)) pows.push_back(g);
    std::vector<Fr> out(1u << bits);
    const FrSeeds seeds = seeds_of(pows);
    const FrArg c = arg_of(first);
    launch(1u << bits, 1, [&] { fr_powers(out.data(), seeds, c, 1u << bits); });
    return out;
}

static Fr pow2k(Fr g, u32 k) {
    for (u32 b = 0; b < k; b++) g = fsqr(g);
    return g;
}

// backend-cuda/src/ntt/mod.rs's split: lo_bits = ceil(log / 2).
static u32 split_lo(u32 log) { return (log + 1) / 2; }

// One ntt_tile_e4 launch (elems "4") as the header gives its shape: 2^(LOG_N - K - G)
// blocks of max(1, 2^(K + G) / 4) threads, twice that paired; or (elems "w") one
// ntt_tile_w launch: 2^(LOG_N - 1) threads in blocks of CRU_NTT_TILEW_BLOCK (all in
// one when fewer).
struct TileLaunch { std::string elems; u32 s, k, g, cshift, layout; };
static void ntt_tile_launch(Fr* a, const Fr* tw, const Fr* lo, const Fr* hi, const FrArg& c, u32 log_n,
                            const TileLaunch& l, u32 flags, u32 lo_bits) {
    const u32 tile_bits = l.k + l.g;
    const bool paired = flags & CRU_NTT_PAIRED;
    if (l.elems == "w") {
        if (paired || l.k == 0 || tile_bits > CRU_NTT_TILEW_MAX_BITS || tile_bits > log_n) {
            fprintf(stderr, "bad warp tile shape\n");
            exit(2);
        }
        const u32 threads = 1u << (log_n - 1), block = threads < CRU_NTT_TILEW_BLOCK ? threads : CRU_NTT_TILEW_BLOCK;
        launch_blocks(threads / block, block, [&] {
            ntt_tile_w(a, tw, lo, hi, c, log_n, l.s, l.k, l.g, l.cshift, flags, lo_bits);
        });
        return;
    }
    const u32 elems_log = 2;
    if (l.elems != "4" || tile_bits + paired > CRU_NTT_TILE_MAX_BITS || tile_bits > log_n ||
        (paired && (l.g != 0 || 2 * l.s + l.k != log_n))) {
        fprintf(stderr, "bad tile shape\n");
        exit(2);
    }
    const u32 threads = (tile_bits >= elems_log ? 1u << (tile_bits - elems_log) : 1) << paired;
    launch_blocks(1u << (log_n - tile_bits), threads, [&] {
        ntt_tile_e4(a, tw, lo, hi, c, log_n, l.s, l.k, l.g, l.cshift, flags, lo_bits);
    });
}

// ntt_tile E LOG_N S K G CSHIFT FLAGS LO_BITS a[n] tw[max(1,n/2)] c lo[2^LO_BITS] hi[ceil(n/2^LO_BITS)]
static void ntt_tile_cmd() {
    std::string elems;
    in >> elems;
    const u32 log_n = rd_u32(), s = rd_u32(), k = rd_u32(), g = rd_u32(), cshift = rd_u32();
    const u32 flags = rd_u32(), lo_bits = rd_u32();
    const u32 n = 1u << log_n;
    std::vector<Fr> a = rd_frs(n), tw = rd_frs(half_or_one(n));
    const FrArg c = arg_of(rdf<Fr>());
    const std::vector<Fr> lo = rd_frs(1u << lo_bits), hi = rd_frs(hi_len(n, lo_bits));
    ntt_tile_launch(a.data(), tw.data(), lo.data(), hi.data(), c, log_n, {elems, s, k, g, cshift, 0}, flags, lo_bits);
    for (auto& x : a) wr(x);
}

// transform_tiles KIND LOG_N M (E K G CSHIFT LAYOUT) x M omega g size_inv a[n]: the
// transform of backend-cuda/src/ntt/mod.rs for KIND (forward inverse coset coset_inv)
// with the tile launches given (their stages in order from 0; LAYOUT their
// CRU_NTT_LOAD_REVERSED, _STORE_REVERSED, _PAIRED flags), tables built as the host
// builds them: the first launch reads reversed (and scales, for coset); the last
// launch scales for the inverses.
static void transform_tiles_cmd() {
    std::string kind;
    in >> kind;
    const u32 log_n = rd_u32(), m = rd_u32();
    std::vector<TileLaunch> tiles;
    for (u32 i = 0, s = 0; i < m; i++) {
        std::string elems;
        in >> elems;
        const u32 k = rd_u32(), g = rd_u32(), cshift = rd_u32(), layout = rd_u32();
        tiles.push_back({elems, s, k, g, cshift, layout});
        s += k;
    }
    const Fr omega = rdf<Fr>(), g = rdf<Fr>(), size_inv = rdf<Fr>();
    const u32 n = 1u << log_n;
    std::vector<Fr> a = rd_frs(n);
    if (n > 1) {
        const u32 tw_lo = split_lo(log_n - 1), tw_hi = log_n - 1 - tw_lo;
        const std::vector<Fr> lo = powers_of(omega, Fr::one(), tw_lo), hi = powers_of(pow2k(omega, tw_lo), Fr::one(), tw_hi);
        std::vector<Fr> tw(n / 2);
        launch(n / 2, 1, [&] { fr_power_table(tw.data(), lo.data(), hi.data(), n / 2, tw_lo); });
        const u32 c_lo = split_lo(log_n), c_hi = log_n - c_lo;
        const std::vector<Fr> glo = powers_of(g, kind == "coset_inv" ? size_inv : Fr::one(), c_lo),
                              ghi = powers_of(pow2k(g, c_lo), Fr::one(), c_hi);
        if (kind != "forward" && kind != "inverse" && kind != "coset" && kind != "coset_inv") {
            fprintf(stderr, "bad transform %s\n", kind.c_str());
            exit(2);
        }
        const u32 inv = kind == "inverse" || kind == "coset_inv" ? CRU_NTT_INVERSE : 0;
        const u32 first_scale = kind == "coset" ? CRU_NTT_SCALE_LOADS_BY_POWERS : 0;
        const u32 last_scale = kind == "inverse" ? CRU_NTT_SCALE_BY_C : kind == "coset_inv" ? CRU_NTT_SCALE_BY_POWERS : 0;
        const FrArg c = arg_of(size_inv);
        for (u32 i = 0; i < m; i++)
            ntt_tile_launch(a.data(), tw.data(), glo.data(), ghi.data(), c, log_n, tiles[i],
                            inv | tiles[i].layout | (i == 0 ? first_scale : 0) | (i + 1 == m ? last_scale : 0), c_lo);
    }
    for (auto& x : a) wr(x);
}

static void power_table_cmd() {
    const u32 n = rd_u32(), lo_bits = rd_u32();
    const std::vector<Fr> lo = rd_frs(1u << lo_bits), hi = rd_frs(hi_len(n, lo_bits));
    std::vector<Fr> out(n);
    launch(n, 1, [&] { fr_power_table(out.data(), lo.data(), hi.data(), n, lo_bits); });
    for (auto& x : out) wr(x);
}

// msm.cu's step 2: the chunked prefix sum, its chunks' sums scanned by one block (of
// up to 16 threads here: fewer than the device's 1024, so that each thread runs over
// several sums). `in` has m entries, `out` m + 1.
static void scan_u32(const u32* in, u32* out, u32 m, u32 chunk) {
    if (m <= chunk) {
        std::vector<u32> zero(1, 0);
        launch(1, 1, [&] { u32_chunk_scan(in, zero.data(), out, m, chunk); });
        return;
    }
    const u32 parts = (m + chunk - 1) / chunk;
    std::vector<u32> sums(parts);
    launch(parts, 1, [&] { u32_chunk_sums(in, sums.data(), m, chunk); });
    u32 threads = 1;
    while (threads < 16 && threads < parts) threads *= 2;
    launch_blocks(1, threads, [&] { u32_block_scan(sums.data(), parts); });
    launch(parts, 1, [&] { u32_chunk_scan(in, sums.data(), out, m, chunk); });
}

static void scan_cmd() {
    const u32 m = rd_u32(), chunk = rd_u32();
    std::vector<u32> in(m), out(m + 1);
    for (auto& v : in) v = rd_u32();
    scan_u32(in.data(), out.data(), m, chunk);
    for (auto v : out) printf(" %x", v);
}

static void pw_cmd(const std::string& op) {
    const u32 n = rd_u32(), lo_bits = rd_u32();
    std::vector<Fr> a = rd_frs(n), b = rd_frs(n);
    const FrArg c = arg_of(rdf<Fr>());
    const std::vector<Fr> lo = rd_frs(1u << lo_bits), hi = rd_frs(hi_len(n, lo_bits));
    if (op == "mul_assign") launch(n, 1, [&] { fr_mul_assign(a.data(), b.data(), n); });
    else if (op == "sub_scale") launch(n, 1, [&] { fr_sub_scale(a.data(), b.data(), c, n); });
    else { fprintf(stderr, "bad op %s\n", op.c_str()); exit(2); }
    for (auto& x : a) wr(x);
}

// The MSM's kernels of one group: steps 5-7.
template <class K5, class K5t, class K6t, class K7t>
struct MsmKernels {
    K5 acc_k;
    K5t fold_tree_k;
    K6t tiles_k;
    K7t records_k;
};

template <class K5, class K5t, class K6t, class K7t>
static MsmKernels<K5, K5t, K6t, K7t> msm_kernels(K5 acc_k, K5t fold_tree_k, K6t tiles_k, K7t records_k) {
    return {acc_k, fold_tree_k, tiles_k, records_k};
}

// The launch sequence of msm.cu's header over n terms, with its scratch sizes: term i
// is scalars[i], or scalars[index[i]] through the _indexed kernels when index is
// given. The reduction runs in blocks of up to tile threads (the device's is
// msm_reduce_tile<F>(); smaller ones run more step-7 passes on small inputs); returns
// each window's *items points.
template <class F, class Ks>
static std::vector<Xyzz<F>> msm_run(const std::vector<Affine<F>>& bases, const Fr* scalars, const u32* index, u32 n,
                                    u32 c, u32 chunk, u32 seg_bits, u32 wp, u32 stride, u32 tile, u32* items_out,
                                    const Ks& ks) {
    const u32 W = msm_num_windows(c), B = 1u << (c - 1), M = wp * B, S = B >> seg_bits;
    const u32 threads = (u32)(((u64)W * n + chunk - 1) / chunk);
    std::vector<u32> digits((size_t)W * n), bucket_count(M, 0), bucket_start(M + 1), sorted((size_t)W * n);
    std::vector<Xyzz<F>> buckets(M), carries(threads);
    if (index)
        launch(n, 1, [&] { msm_digits_indexed(scalars, index, digits.data(), bucket_count.data(), n, c, wp); });
    else
        launch(n, 1, [&] { msm_digits(scalars, digits.data(), bucket_count.data(), n, c, wp); });
    scan_u32(bucket_count.data(), bucket_start.data(), M, 64);
    if (index)
        launch(n, W, [&] {
            msm_scatter_indexed(digits.data(), index, bucket_start.data(), bucket_count.data(), sorted.data(), n, c, wp,
                                stride);
        });
    else
        launch(n, W, [&] {
            msm_scatter(digits.data(), bucket_start.data(), bucket_count.data(), sorted.data(), n, c, wp, stride);
        });
    for (u32 k = 0; k < M; k++)
        if (bucket_count[k] != 0) { fprintf(stderr, "bucket %u not drained\n", k); exit(3); }
    u32 max_span = 0;
    launch(threads, 1, [&] { ks.acc_k(bases.data(), sorted.data(), bucket_start.data(), buckets.data(), carries.data(), &max_span, M, chunk); });
    // Step 5b (one launch), its threads out of order (launch_ordered's 2).
    std::vector<u32> tickets(threads, 0);
    launch_ordered(threads, 2, [&] { ks.fold_tree_k(carries.data(), bucket_start.data(), tickets.data(), M, chunk); });
    {
        // Step 6 writes reduce_a, step 7 alternates: each buffer as large as its largest output.
        const u32 first = S < tile ? S : tile;
        size_t size[2] = {0, 1};
        u32 items = 1 + ceil_log2(first), records = S / first, pass = 0;
        size[0] = (size_t)wp * (items + 1) * records;
        while (records > 1) {
            const u32 T = records < tile ? records : tile;
            items += ceil_log2(T);
            records /= T;
            pass++;
            const size_t words = (size_t)wp * (items + 1) * records;
            if (words > size[pass % 2]) size[pass % 2] = words;
        }
        std::vector<Xyzz<F>> reduce_a(size[0]), reduce_b(size[1]);
        launch_blocks_2d(S / first, wp, first, [&] {
            ks.tiles_k(buckets.data(), carries.data(), bucket_start.data(), reduce_a.data(), c, seg_bits, chunk);
        });
        Xyzz<F>*from = reduce_a.data(), *to = reduce_b.data();
        items = 1 + ceil_log2(first);
        for (records = S / first; records > 1;) {
            const u32 T = records < tile ? records : tile;
            launch_blocks_2d(records / T, (items + 1) * wp, T, [&] { ks.records_k(from, to, items); });
            items += ceil_log2(T);
            records /= T;
            std::swap(from, to);
        }
        *items_out = items;
        std::vector<Xyzz<F>> out;
        for (u32 v = 0; v < wp; v++)
            for (u32 q = 0; q < items; q++) out.push_back(from[(size_t)v * (items + 1) + q]);
        return out;
    }
}

// "tree TILE" of the msm commands: TILE, the largest block of steps 6-7 (the device's is
// msm_reduce_tile<F>(); smaller ones run more step-7 passes on small inputs).
template <class F>
static u32 rd_reduction() {
    std::string reduce;
    in >> reduce;
    if (reduce != "tree") { fprintf(stderr, "bad reduction %s\n", reduce.c_str()); exit(2); }
    const u32 tile = rd_u32();
    if (tile == 0 || (tile & (tile - 1)) != 0 || tile > msm_reduce_tile<F>()) {
        fprintf(stderr, "bad tile %u\n", tile);
        exit(2);
    }
    return tile;
}

template <class F, class Ks>
static void msm_cmd(const Ks& ks) {
    const u32 tile = rd_reduction<F>();
    const u32 n = rd_u32(), c = rd_u32(), chunk = rd_u32(), seg_bits = rd_u32();
    const u32 wp = rd_u32(), stride = rd_u32(), planes = rd_u32();
    std::vector<Affine<F>> bases((size_t)planes * stride);
    std::vector<Fr> scalars(n);
    for (auto& p : bases) p = rd_aff<F>();
    for (auto& s : scalars) s = rdf<Fr>();
    u32 items = 0;
    const auto sums = msm_run<F>(bases, scalars.data(), nullptr, n, c, chunk, seg_bits, wp, stride, tile, &items, ks);
    printf(" %x %x", wp, items);
    for (const auto& p : sums) wr_xyzz(p);
}

// ones.cu steps 1-3 over n scalars (scratch of the documented sizes): the list
// [ones | rest] and the two counts.
static std::vector<u32> classify(const std::vector<Fr>& scalars, u32 chunk, u32* ones, u32* rest) {
    const u32 n = (u32)scalars.size();
    const u32 T = (n + chunk - 1) / chunk;
    std::vector<u32> class_count(2 * T), class_start(2 * T + 1), list(n);
    launch(T, 1, [&] { msm_classify_count(scalars.data(), class_count.data(), n, chunk); });
    scan_u32(class_count.data(), class_start.data(), 2 * T, 64);
    launch(T, 1, [&] { msm_classify_scatter(scalars.data(), class_start.data(), list.data(), n, chunk); });
    *ones = class_start[T];
    *rest = class_start[2 * T] - class_start[T];
    list.resize(*ones + *rest);
    return list;
}

// classify N CHUNK scalars[N] -> ones rest list[ones + rest]
static void classify_cmd() {
    const u32 n = rd_u32(), chunk = rd_u32();
    const std::vector<Fr> scalars = rd_frs(n);
    u32 ones = 0, rest = 0;
    const std::vector<u32> list = classify(scalars, chunk, &ones, &rest);
    printf(" %x %x", ones, rest);
    for (auto v : list) printf(" %x", v);
}

// ones.cu step 4 over count indices into the bases in groups of 2^group_bits leaves;
// the tickets as documented (zeroed), the groups' sums added here as the Rust host does.
template <class F, class K>
static Xyzz<F> ones_sum(K kernel, const std::vector<Affine<F>>& bases, const u32* ones, u32 count, u32 leaves,
                        u32 group_bits, u32 order) {
    std::vector<Xyzz<F>> partials(leaves);
    memset((void*)partials.data(), 0xa5, partials.size() * sizeof(Xyzz<F>));  // garbage before: allowed
    std::vector<u32> tickets(leaves > 1 ? leaves - 1 : 1, 0);
    const u32 groups = (u32)(((u64)leaves + (1u << group_bits) - 1) >> group_bits);
    std::vector<Xyzz<F>> sums(groups);
    memset((void*)sums.data(), 0xa5, sums.size() * sizeof(Xyzz<F>));  // each written once
    launch_ordered(leaves, order, [&] {
        kernel(bases.data(), ones, partials.data(), tickets.data(), sums.data(), count, leaves, group_bits);
    });
    Xyzz<F> total = xyzz_identity<F>();
    for (const auto& p : sums) total = xyzz_add(total, p);
    return total;
}

// ones g1|g2 COUNT LEAVES GROUP_BITS ORDER NB bases[NB] ones[COUNT] -> the sum of
// bases[ones[k]] (Xyzz), the threads run in ORDER (launch_ordered)
template <class F, class K>
static void ones_cmd(K kernel) {
    const u32 count = rd_u32(), leaves = rd_u32(), group_bits = rd_u32(), order = rd_u32(), nb = rd_u32();
    std::vector<Affine<F>> bases(nb);
    for (auto& p : bases) p = rd_aff<F>();
    std::vector<u32> ones(count);
    for (auto& v : ones) v = rd_u32();
    wr_xyzz(ones_sum<F>(kernel, bases, ones.data(), count, leaves, group_bits, order));
}

// msm_ones g1|g2 REDUCE N C CHUNK SEG_BITS WP STRIDE PLANES LEAVES bases[PLANES*STRIDE] scalars[N]
//   -> the Rust host's witness-aware sequence: classify (chunk 64), the ones' sum (when
//   any), Pippenger over the rest (when any; indexed): ones rest, the ones' sum (Xyzz,
//   identity when none), WP (0 without rest), then as msm prints (nothing when no
//   rest).
template <class F, class KO, class Ks>
static void msm_ones_cmd(KO ones_k, const Ks& ks) {
    const u32 tile = rd_reduction<F>();
    const u32 n = rd_u32(), c = rd_u32(), chunk = rd_u32(), seg_bits = rd_u32();
    const u32 wp = rd_u32(), stride = rd_u32(), planes = rd_u32(), leaves = rd_u32();
    std::vector<Affine<F>> bases((size_t)planes * stride);
    for (auto& p : bases) p = rd_aff<F>();
    const std::vector<Fr> scalars = rd_frs(n);
    u32 ones = 0, rest = 0;
    const std::vector<u32> list = classify(scalars, 64, &ones, &rest);
    const Xyzz<F> one_sum = ones ? ones_sum<F>(ones_k, bases, list.data(), ones, leaves < ones ? leaves : ones, 1, 2)
                                 : xyzz_identity<F>();
    printf(" %x %x", ones, rest);
    wr_xyzz(one_sum);
    printf(" %x", rest ? wp : 0);
    if (!rest) return;
    u32 items = 0;
    const auto sums =
        msm_run<F>(bases, scalars.data(), list.data() + ones, rest, c, chunk, seg_bits, wp, stride, tile, &items, ks);
    printf(" %x", items);
    for (const auto& p : sums) wr_xyzz(p);
}

// planes.cu's launch sequence over a table whose unused entries hold a sentinel, so
// that a write past n shows in the output (and a read of them, through the result).
template <class F, class K>
static void planes_cmd(K kernel) {
    const u32 n = rd_u32(), stride = rd_u32(), shift = rd_u32(), planes = rd_u32();
    if (n > stride || planes < 1) { fprintf(stderr, "bad planes shape\n"); exit(2); }
    std::vector<Affine<F>> table((size_t)planes * stride);
    memset((void*)table.data(), 0xa5, table.size() * sizeof(Affine<F>));
    for (u32 i = 0; i < n; i++) table[i] = rd_aff<F>();
    const u32 threads = (u32)(((u64)n + PLANES_BATCH - 1) / PLANES_BATCH);
    for (u32 plane = 1; plane < planes; plane++)
        launch(threads, 1, [&] { kernel(table.data(), n, stride, plane, shift); });
    for (auto& p : table) { wr(p.x); wr(p.y); }
}

// sparse_product.cu over vectors of exactly the documented lengths (an index the kernel
// follows outside them stops the asan build); out starts as the sentinel, so a row
// left unwritten shows.
static void sparse_cmd() {
    const u32 rows = rd_u32(), n = rd_u32(), entry_count = rd_u32(), coefficient_count = rd_u32(), z_len = rd_u32();
    std::vector<u32> row_starts((size_t)rows + 1), entries(2 * (size_t)entry_count);
    for (auto& v : row_starts) v = rd_u32();
    for (auto& v : entries) v = rd_u32();
    const std::vector<Fr> coefficients = rd_frs(coefficient_count), z = rd_frs(z_len);
    std::vector<Fr> out(n);
    if (n) memset((void*)out.data(), 0xa5, out.size() * sizeof(Fr));
    launch(n, 1, [&] {
        sparse_product(out.data(), row_starts.data(), entries.data(), coefficients.data(), z.data(), rows, n,
                       entry_count, coefficient_count, z_len);
    });
    for (auto& x : out) wr(x);
}

// params -> Fr limbs, Fq limbs, the MSM's digit bits, r, p
static void params_cmd() {
    printf(" %x %x %x", (u32)Fr::N, (u32)Fq::N, (u32)CRU_SCALAR_DIGIT_BITS);
    write_limbs(Fr::modulus().l, Fr::N);
    write_limbs(Fq::modulus().l, Fq::N);
}

int main() {
    const auto g1_msm = msm_kernels(msm_g1_accumulate, msm_g1_fold_tree, msm_g1_reduce_tiles, msm_g1_reduce_records);
    const auto g2_msm = msm_kernels(msm_g2_accumulate, msm_g2_fold_tree, msm_g2_reduce_tiles, msm_g2_reduce_records);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        in.clear();
        in.str(line);
        std::string kind, op;
        in >> kind;
        if (kind == "params") { params_cmd(); printf("\n"); continue; }
        if (kind == "powers") { powers_cmd(); printf("\n"); continue; }
        if (kind == "power_table") { power_table_cmd(); printf("\n"); continue; }
        if (kind == "ntt_tile") { ntt_tile_cmd(); printf("\n"); continue; }
        if (kind == "transform_tiles") { transform_tiles_cmd(); printf("\n"); continue; }
        if (kind == "scan") { scan_cmd(); printf("\n"); continue; }
        if (kind == "classify") { classify_cmd(); printf("\n"); continue; }
        if (kind == "sparse") { sparse_cmd(); printf("\n"); continue; }
        in >> op;
        if (kind == "fr") field_cmd<FrCfg>(op);
        else if (kind == "fq") field_cmd<FqCfg>(op);
        else if (kind == "fq2") fq2_cmd(op);
        else if (kind == "g1") curve_cmd<Fq>(op);
        else if (kind == "g2") curve_cmd<Fq2>(op);
        else if (kind == "pw") pw_cmd(op);
        else if (kind == "msm" && op == "g1") msm_cmd<Fq>(g1_msm);
        else if (kind == "msm" && op == "g2") msm_cmd<Fq2>(g2_msm);
        else if (kind == "ones" && op == "g1") ones_cmd<Fq>(msm_g1_ones_sum);
        else if (kind == "ones" && op == "g2") ones_cmd<Fq2>(msm_g2_ones_sum);
        else if (kind == "msm_ones" && op == "g1") msm_ones_cmd<Fq>(msm_g1_ones_sum, g1_msm);
        else if (kind == "msm_ones" && op == "g2") msm_ones_cmd<Fq2>(msm_g2_ones_sum, g2_msm);
        else if (kind == "planes" && op == "g1") planes_cmd<Fq>(planes_g1);
        else if (kind == "planes" && op == "g2") planes_cmd<Fq2>(planes_g2);
        else { fprintf(stderr, "bad command %s %s\n", kind.c_str(), op.c_str()); return 2; }
        printf("\n");
    }
    return 0;
}
