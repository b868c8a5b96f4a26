// ICICLE peer benchmark: G1 MSM, G2 MSM and Fr NTT of BLS12-381 (the default,
// -DCURVE_BLS12_381) or BN254 (-DCURVE_BN254, against ICICLE built with
// -DCURVE=bn254), timed through ICICLE's own C++ API (icicle/msm.h, icicle/ntt.h)
// on its CUDA backend, on the same input files as the sppark peer (../sppark/gen,
// sppark-gen --curve ...), every result checked against the arkworks-computed
// expected values that generator writes.
//
//   harness DATA_DIR --backend DIR [--repeat R] [--sets K] [--no-pinned]
//           [--precompute P] [--c C[,C...]] [--rows FILE] [--no-precompute] [--icicle-loader]
//           [--only-precomputed] [--keep-pool] SPEC...
//   (--c: window sizes of the precomputed mode, one row each; --only-precomputed: that mode
//   alone, for a sweep; --keep-pool: the default memory pool keeps ICICLE's scratch between
//   calls in every mode)
//   harness DATA_DIR --hostcheck LOG      (no GPU: representation check on the CPU)
//   SPEC: g1:LOG | g2:LOG | ntt:LOG | LOG (all three); "2^LOG" also accepted.
//
// Representation. sppark-gen writes arkworks' own bytes: Montgomery form
// (BLS12-381: Fq R = 2^384, Fr R = 2^256; BN254: both R = 2^256), little-endian
// limbs; G1 affine X | Y, G2 affine
// X.c0 | X.c1 | Y.c0 | Y.c1, infinity all zero. ICICLE's fields are canonical
// (Barrett reduction, little-endian 32-bit limbs: the same bytes as a canonical
// little-endian integer), its affine points are {x, y} with infinity (0, 0), its
// Fq2 is {c0, c1} with u^2 = -1 as in arkworks, and its projective points are
// homogeneous (X/Z, Y/Z). So every input and expected value is converted once,
// on the host and outside the timing, from Montgomery to canonical with the
// Montgomery reduction below (checked against ICICLE's own from_montgomery on a
// sample). A mode that hands ICICLE Montgomery scalars and sets
// are_scalars_montgomery_form is timed as well (info).
//
// NTT root: for BLS12-381, ICICLE's built-in 2^32-th root of unity is 5^((r-1)/2^32);
// arkworks' (whose Radix2EvaluationDomain produced the expected outputs) is
// 7^((r-1)/2^32). For BN254 both use 5^((r-1)/2^28). The harness initializes ICICLE's
// domain with arkworks' root of order exactly 2^LOG, so both compute the same transform.
//
// SPDX-License-Identifier: MIT (ICICLE, which this calls, is MIT too).

#include <cuda_runtime.h>
// ICICLE's headers define these as empty for a host compiler.
#undef __host__
#undef __device__

#include "icicle/runtime.h"
#include "icicle/msm.h"
#include "icicle/ntt.h"
#if defined(CURVE_BN254) && !defined(CURVE_BLS12_381)
# include "icicle/curves/params/bn254.h"
namespace curve = bn254;
# define CURVE_NAME "bn254"
# define FP_BYTES 32
#elif !defined(CURVE_BN254)
# include "icicle/curves/params/bls12_381.h"
namespace curve = bls12_381;
# define CURVE_NAME "bls12-381"
# define FP_BYTES 48
#else
# error "build with -DCURVE_BLS12_381 (the default) or -DCURVE_BN254"
#endif
#include "icicle/backend/msm_config.h"
#include "icicle/backend/ntt_config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#ifndef ICICLE_COMMIT
#define ICICLE_COMMIT "unknown"
#endif

using namespace icicle;
using curve::scalar_t;
using curve::point_field_t;
using G1A = curve::affine_t;
using G1P = curve::projective_t;
using G2A = curve::g2_affine_t;
using G2P = curve::g2_projective_t;

static_assert(sizeof(scalar_t) == 32, "Fr is 32 bytes");
static_assert(sizeof(point_field_t) == FP_BYTES, "Fq is 48 (BLS12-381) or 32 (BN254) bytes");
static_assert(sizeof(G1A) == 2 * FP_BYTES, "G1 affine is 2 Fq");
static_assert(sizeof(G2A) == 4 * FP_BYTES, "G2 affine is 2 Fq2");

// ---------------------------------------------------------------- utilities

struct Row {
    std::string op, mode;
    int lg;
    double med, min, max, host_med;
    int runs;
    std::string check;   // "ok", "MISMATCH", or why the row was skipped
};

static std::vector<Row> g_rows;
static bool g_any_mismatch = false;
static bool g_any_error = false;    // a mode whose ICICLE call returned an error (row kept, run goes on)
static std::string g_rows_file;

[[noreturn]] static void die(const std::string& msg)
{
    fprintf(stderr, "harness: %s\n", msg.c_str());
    fflush(stdout);
    exit(2);
}

static void check_cuda(cudaError_t e, const char* what)
{
    if (e != cudaSuccess)
        die(std::string(what) + ": " + cudaGetErrorString(e));
}

static void check_icicle(eIcicleError e, const std::string& what)
{
    if (e != eIcicleError::SUCCESS)
        die(what + " failed: ICICLE error " + std::to_string((int)e));
}

// For a timed mode: an ICICLE error ends that mode only (its row says so) and the
// run goes on; a CUDA error that sticks still ends the run at the next check_cuda.
static bool icicle_failed(eIcicleError e, const std::string& what)
{
    if (e == eIcicleError::SUCCESS)
        return false;
    fprintf(stderr, "harness: %s failed: ICICLE error %d (mode skipped)\n", what.c_str(), (int)e);
    g_any_error = true;
    return true;
}

static double now_ms()
{
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

static std::string pow2(int lg) { return "2^" + std::to_string(lg); }

template<class T>
static std::vector<T> read_file(const std::string& path, size_t count)
{
    FILE* f = fopen(path.c_str(), "rb");
    if (!f)
        die("cannot open " + path + " (run sppark-gen for this size first)");
    if (fseek(f, 0, SEEK_END) != 0)
        die("cannot seek " + path);
    long sz = ftell(f);
    rewind(f);
    if (sz < 0 || (size_t)sz != count * sizeof(T))
        die(path + ": " + std::to_string(sz) + " bytes, expected " + std::to_string(count * sizeof(T)));
    std::vector<T> v(count);
    size_t chunk = (size_t)1 << 26, done = 0, total = count * sizeof(T);
    char* p = reinterpret_cast<char*>(v.data());
    while (done < total) {
        size_t want = std::min(chunk, total - done);
        if (fread(p + done, 1, want, f) != want)
            die("short read on " + path);
        done += want;
    }
    fclose(f);
    return v;
}

// Little-endian bytes printed most significant first.
static std::string hex(const void* p, size_t len)
{
    static const char* digits = "0123456789abcdef";
    const unsigned char* b = static_cast<const unsigned char*>(p);
    std::string s;
    for (size_t i = len; i--;) {
        s += digits[b[i] >> 4];
        s += digits[b[i] & 15];
    }
    return s;
}

struct Stats { double med, min, max; };

static Stats stats(std::vector<double> t)
{
    if (t.empty())
        return Stats{0, 0, 0};
    std::sort(t.begin(), t.end());
    size_t n = t.size();
    double med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    return Stats{med, t.front(), t.back()};
}

static void parallel_for(size_t n, const std::function<void(size_t, size_t)>& body)
{
    unsigned nt = std::max(1u, std::thread::hardware_concurrency());
    size_t per = (n + nt - 1) / nt;
    if (n < ((size_t)1 << 14) || nt == 1) {
        body(0, n);
        return;
    }
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; t++) {
        size_t lo = t * per, hi = std::min(n, lo + per);
        if (lo < hi)
            th.emplace_back(body, lo, hi);
    }
    for (auto& x : th)
        x.join();
}

// Registers a host range as pinned for the lifetime of the object.
class Pinned {
    void* ptr;
public:
    Pinned(void* p, size_t bytes) : ptr(p)
    {   check_cuda(cudaHostRegister(p, bytes, cudaHostRegisterDefault), "cudaHostRegister");   }
    ~Pinned() { (void)cudaHostUnregister(ptr); }
    Pinned(const Pinned&) = delete;
    Pinned& operator=(const Pinned&) = delete;
};

// A plain device allocation (cudaMalloc), freed with the object.
template<class T>
class DevBuf {
    T* p = nullptr;
public:
    explicit DevBuf(size_t n) { check_cuda(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc"); }
    ~DevBuf() { if (p) (void)cudaFree(p); }
    DevBuf(const DevBuf&) = delete;
    DevBuf& operator=(const DevBuf&) = delete;
    T* get() const { return p; }
};

static void record_row(const Row& r)
{
    g_rows.push_back(r);
    printf("  %-7s %-5s %-64s median %9.3f ms [%.3f .. %.3f] host %9.3f  %s\n", r.op.c_str(),
           pow2(r.lg).c_str(), r.mode.c_str(), r.med, r.min, r.max, r.host_med, r.check.c_str());
    fflush(stdout);
    if (!g_rows_file.empty()) {
        if (FILE* f = fopen(g_rows_file.c_str(), "a")) {
            fprintf(f, "%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%s\n", r.op.c_str(), pow2(r.lg).c_str(),
                    r.mode.c_str(), r.med, r.min, r.max, r.host_med, r.runs, r.check.c_str());
            fclose(f);
        }
    }
}

// ---------------------------------------------------------------- Montgomery -> canonical

// Montgomery reduction with 64-bit limbs: x R^-1 mod m for x < m, which turns
// arkworks' Montgomery bytes into the canonical value ICICLE works with.
struct Modulus {
    int n;              // limbs
    uint64_t m[6];      // little-endian
    uint64_t minv;      // -m^-1 mod 2^64
};

static Modulus make_modulus(int n, std::initializer_list<uint64_t> limbs)
{
    Modulus M{};
    M.n = n;
    int i = 0;
    for (uint64_t l : limbs)
        M.m[i++] = l;
    uint64_t x = 1;     // Newton: x = m0^-1 mod 2^64
    for (int k = 0; k < 7; k++)
        x *= 2 - M.m[0] * x;
    M.minv = 0 - x;
    return M;
}

#if FP_BYTES == 48     // BLS12-381
static const Modulus FQ = make_modulus(6, {0xb9feffffffffaaabull, 0x1eabfffeb153ffffull, 0x6730d2a0f6b0f624ull,
                                           0x64774b84f38512bfull, 0x4b1ba7b6434bacd7ull, 0x1a0111ea397fe69aull});
static const Modulus FR = make_modulus(4, {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull,
                                           0x73eda753299d7d48ull});
#else                  // BN254
static const Modulus FQ = make_modulus(4, {0x3c208c16d87cfd47ull, 0x97816a916871ca8dull, 0xb85045b68181585dull,
                                           0x30644e72e131a029ull});
static const Modulus FR = make_modulus(4, {0x43e1f593f0000001ull, 0x2833e84879b97091ull, 0xb85045b68181585dull,
                                           0x30644e72e131a029ull});
#endif

static void from_mont_one(const Modulus& M, uint64_t* a)
{
    typedef unsigned __int128 u128;
    const int n = M.n;
    uint64_t t[13] = {0};
    for (int i = 0; i < n; i++)
        t[i] = a[i];
    for (int i = 0; i < n; i++) {
        uint64_t u = t[i] * M.minv;
        u128 carry = 0;
        for (int j = 0; j < n; j++) {
            u128 s = (u128)u * M.m[j] + t[i + j] + carry;
            t[i + j] = (uint64_t)s;
            carry = s >> 64;
        }
        for (int k = i + n; carry && k < 2 * n + 1; k++) {
            u128 s = (u128)t[k] + carry;
            t[k] = (uint64_t)s;
            carry = s >> 64;
        }
    }
    // t[n .. 2n] < 2m; subtract m once if needed
    bool ge = t[2 * n] != 0;
    if (!ge) {
        ge = true;
        for (int i = n - 1; i >= 0; i--) {
            if (t[n + i] != M.m[i]) { ge = t[n + i] > M.m[i]; break; }
        }
    }
    if (ge) {
        uint64_t borrow = 0;
        for (int i = 0; i < n; i++) {
            u128 d = (u128)t[n + i] - M.m[i] - borrow;
            t[n + i] = (uint64_t)d;
            borrow = (uint64_t)(d >> 64) & 1;
        }
    }
    for (int i = 0; i < n; i++)
        a[i] = t[n + i];
}

// Converts |count| field elements of |M| stored back to back, in place.
static void from_mont(const Modulus& M, void* data, size_t count)
{
    uint64_t* p = static_cast<uint64_t*>(data);
    parallel_for(count, [&](size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; i++)
            from_mont_one(M, p + i * M.n);
    });
}

// The moduli above against ICICLE's own, and this reduction against ICICLE's
// from_montgomery() on a few elements of real data.
static void self_check_moduli()
{
    if (std::memcmp(FQ.m, &curve::fq_config::modulus, FP_BYTES) != 0)
        die("Fq modulus differs from ICICLE's");
    if (std::memcmp(FR.m, &curve::fp_config::modulus, 32) != 0)
        die("Fr modulus differs from ICICLE's");
}

template<class F>
static void cross_check_from_mont(const Modulus& M, const void* mont, const void* canon, size_t count,
                                  const char* what)
{
    for (size_t i = 0; i < count; i++) {
        F x;
        std::memcpy(&x, static_cast<const char*>(mont) + i * sizeof(F), sizeof(F));
        F y = x.from_montgomery();
        if (std::memcmp(&y, static_cast<const char*>(canon) + i * sizeof(F), sizeof(F)) != 0)
            die(std::string("Montgomery reduction disagrees with ICICLE's from_montgomery on ") + what);
    }
    (void)M;
}

// ---------------------------------------------------------------- groups

template<class A> struct GroupInfo;
template<> struct GroupInfo<G1A> {
    static constexpr const char* op = "msm-g1";
    static constexpr const char* tag = "g1";
    static constexpr int coords = 2;     // Fq elements per affine point
};
template<> struct GroupInfo<G2A> {
    static constexpr const char* op = "msm-g2";
    static constexpr const char* tag = "g2";
    static constexpr int coords = 4;
};

// ---------------------------------------------------------------- MSM

static int g_nsets = 2;
static cudaStream_t g_stream = nullptr;
static cudaEvent_t g_e0, g_e1;

static MSMConfig msm_config(bool points_on_device, bool scalars_on_device, bool scalars_mont)
{
    MSMConfig c = default_msm_config();
    c.stream = reinterpret_cast<icicleStreamHandle>(g_stream);
    c.are_points_on_device = points_on_device;
    c.are_scalars_on_device = scalars_on_device;
    c.are_scalars_montgomery_form = scalars_mont;
    c.are_points_montgomery_form = false;
    c.are_results_on_device = false;    // result to the host: ICICLE synchronizes before returning
    c.is_async = false;
    return c;
}

// One timed mode: a warm-up, then |repeat| runs; run j uses scalar set j % nsets.
// CUDA events on the stream ICICLE runs on, recorded right before the call and
// right after it returns (ICICLE's MSM synchronizes before it returns: its
// pipeline reads bucket counts back to the host midway), plus the host clock
// around the call. Every run's result is checked.
template<class A, class P>
static void time_msm(int lg, const std::string& mode, int repeat, const std::vector<A>& expect_canon,
                     const std::vector<A>& expect_mont, const std::function<eIcicleError(int, P*)>& call)
{
    const char* op = GroupInfo<A>::op;
    std::vector<double> ev, host;
    bool ok = true;
    for (int j = 0; j <= repeat; j++) {
        int k = j % g_nsets;
        P out;
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        check_cuda(cudaEventRecord(g_e0, g_stream), "cudaEventRecord");
        double t0 = now_ms();
        eIcicleError e = call(k, &out);
        double t1 = now_ms();
        check_cuda(cudaEventRecord(g_e1, g_stream), "cudaEventRecord");
        check_cuda(cudaEventSynchronize(g_e1), "cudaEventSynchronize");
        if (icicle_failed(e, std::string(op) + " " + pow2(lg) + " " + mode)) {
            record_row(Row{op, mode, lg, 0, 0, 0, 0, 0, "ERROR: ICICLE error " + std::to_string((int)e)});
            return;
        }
        float ms = 0;
        check_cuda(cudaEventElapsedTime(&ms, g_e0, g_e1), "cudaEventElapsedTime");
        if (j > 0) {
            ev.push_back(ms);
            host.push_back(t1 - t0);
        }

        A got = out.to_affine();    // homogeneous -> affine on the host
        if (std::memcmp(&got, &expect_canon[k], sizeof(A)) != 0) {
            ok = false;
            g_any_mismatch = true;
            const size_t half = sizeof(A) / 2;
            const char* g = reinterpret_cast<const char*>(&got);
            const char* w = reinterpret_cast<const char*>(&expect_canon[k]);
            printf("MISMATCH %s %s %s run %d (scalar set %d)%s%s\n", op, pow2(lg).c_str(), mode.c_str(), j, k,
                   std::memcmp(g, w, half) == 0 ? ": X equal, Y differs (negated?)" : "",
                   std::memcmp(&got, &expect_mont[k], sizeof(A)) == 0
                       ? ": equals the expected point's Montgomery bytes" : "");
            printf("  got    X=%s\n         Y=%s\n", hex(g, half).c_str(), hex(g + half, half).c_str());
            printf("  expect X=%s\n         Y=%s\n", hex(w, half).c_str(), hex(w + half, half).c_str());
            printf("  (canonical, big-endian hex%s)\n", sizeof(A) > 2 * FP_BYTES ? "; X and Y printed as c1|c0" : "");
        }
    }
    Stats s = stats(ev), h = stats(host);
    record_row(Row{op, mode, lg, s.med, s.min, s.max, h.med, repeat, ok ? "ok" : "MISMATCH"});
}

struct MsmTuning {
    int precompute = 0;     // 0: automatic (one bucket module)
    std::vector<int> cs;    // window sizes for the precomputed mode; empty: automatic
    bool run = true;
    bool only_precomputed = false;  // a sweep: the precomputed mode(s) alone
    bool keep_pool = false;         // the default memory pool keeps its memory in every mode
};

template<class A, class P>
static void bench_msm(const std::string& dir, int lg, int repeat, bool pinned, const MsmTuning& tune)
{
    const char* op = GroupInfo<A>::op;
    const std::string tag = GroupInfo<A>::tag;
    const size_t n = (size_t)1 << lg;

    printf("%s 2^%d: loading and converting inputs...\n", op, lg);
    fflush(stdout);
    double tl = now_ms();
    auto h_points = read_file<A>(dir + "/" + tag + "_bases_" + std::to_string(lg) + ".bin", n);
    std::vector<point_field_t> sample(h_points.size() ? 8 : 0);
    std::memcpy(sample.data(), h_points.data(), sample.size() * sizeof(point_field_t));
    from_mont(FQ, h_points.data(), n * GroupInfo<A>::coords);
    cross_check_from_mont<point_field_t>(FQ, sample.data(), h_points.data(), sample.size(), "bases");

    std::vector<std::vector<scalar_t>> h_scalars, h_scalars_mont;
    std::vector<A> expect, expect_mont;
    for (int k = 0; k < g_nsets; k++) {
        std::string sfx = std::to_string(lg) + "_" + std::to_string(k) + ".bin";
        h_scalars_mont.push_back(read_file<scalar_t>(dir + "/scalars_" + sfx, n));
        h_scalars.push_back(h_scalars_mont.back());
        from_mont(FR, h_scalars.back().data(), n);
        cross_check_from_mont<scalar_t>(FR, h_scalars_mont.back().data(), h_scalars.back().data(), 8, "scalars");
        auto e = read_file<A>(dir + "/" + tag + "_msm_" + sfx, 1);
        expect_mont.push_back(e[0]);
        from_mont(FQ, e.data(), GroupInfo<A>::coords);
        expect.push_back(e[0]);
    }
    printf("  loaded and converted in %.1f s\n", (now_ms() - tl) / 1e3);

    // Device-resident copies: the bases once; every scalar set, canonical and Montgomery.
    DevBuf<A> d_points(n);
    check_cuda(cudaMemcpy(d_points.get(), h_points.data(), n * sizeof(A), cudaMemcpyHostToDevice), "copy bases");
    std::vector<std::unique_ptr<DevBuf<scalar_t>>> d_scalars, d_scalars_mont;
    for (int k = 0; k < g_nsets; k++) {
        d_scalars.emplace_back(new DevBuf<scalar_t>(n));
        d_scalars_mont.emplace_back(new DevBuf<scalar_t>(n));
        check_cuda(cudaMemcpy(d_scalars[k]->get(), h_scalars[k].data(), n * sizeof(scalar_t),
                              cudaMemcpyHostToDevice), "copy scalars");
        check_cuda(cudaMemcpy(d_scalars_mont[k]->get(), h_scalars_mont[k].data(), n * sizeof(scalar_t),
                              cudaMemcpyHostToDevice), "copy scalars");
    }
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

    const int N = (int)n;
    const std::string sfx_pool = tune.keep_pool ? " [pool kept]" : "";
    if (!tune.only_precomputed)
    time_msm<A, P>(lg, "resident: bases+scalars on device (default config)" + sfx_pool, repeat, expect, expect_mont,
        [&](int k, P* out) {
            MSMConfig c = msm_config(true, true, false);
            return msm(d_scalars[k]->get(), d_points.get(), N, c, out);
        });

    if (!tune.only_precomputed && !tune.keep_pool) {
        // ICICLE allocates its scratch per call (cudaMallocAsync on the default
        // pool); with the pool's release threshold at its default (0) the memory
        // goes back at every synchronization. Info: the same call with the pool
        // keeping its memory between calls.
        cudaMemPool_t pool;
        check_cuda(cudaDeviceGetDefaultMemPool(&pool, 0), "cudaDeviceGetDefaultMemPool");
        uint64_t keep = UINT64_MAX, none = 0;
        check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
        time_msm<A, P>(lg, "resident, memory pool kept between calls (info)", repeat, expect, expect_mont,
            [&](int k, P* out) {
                MSMConfig c = msm_config(true, true, false);
                return msm(d_scalars[k]->get(), d_points.get(), N, c, out);
            });
        check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &none), "cudaMemPoolSetAttribute");
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        check_cuda(cudaMemPoolTrimTo(pool, 0), "cudaMemPoolTrimTo");
    }

    if (!tune.only_precomputed)
    time_msm<A, P>(lg, "resident, scalars Montgomery (ICICLE converts; info)" + sfx_pool, repeat, expect, expect_mont,
        [&](int k, P* out) {
            MSMConfig c = msm_config(true, true, true);
            return msm(d_scalars_mont[k]->get(), d_points.get(), N, c, out);
        });

    std::vector<int> cs = tune.cs;
    if (cs.empty())
        cs.push_back(std::min(lg - 1, 20));   // 20: ICICLE's own cap (get_optimal_c); c > log2 n is pathological
    for (int c : cs) {
        if (!tune.run)
            break;
        // ICICLE's option for bases known in advance (MSMConfig::precompute_factor):
        // precomputed shifted copies of the bases (msm_precompute_bases, outside
        // the timing) and a large window, so that one bucket module remains.
        const int bits = scalar_t::NBITS;
        int pf = tune.precompute > 0 ? tune.precompute : (bits + c - 1) / c;
        std::string mode = "resident, precomputed bases (factor " + std::to_string(pf) + ", c " +
                           std::to_string(c) + "; info)" + sfx_pool;
        size_t bytes = n * (size_t)pf * sizeof(A);
        size_t free_b = 0, total_b = 0;
        (void)cudaMemGetInfo(&free_b, &total_b);
        if (bytes > free_b / 2) {
            record_row(Row{op, mode, lg, 0, 0, 0, 0, 0, "skipped: precomputed bases need too much memory"});
        } else {
            DevBuf<A> d_pre(n * (size_t)pf);
            MSMConfig pc = msm_config(true, true, false);
            pc.precompute_factor = pf;
            pc.c = c;
            double tp = now_ms();
            eIcicleError pe = msm_precompute_bases(d_points.get(), N, pc, d_pre.get());
            check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            if (icicle_failed(pe, std::string(op) + " " + pow2(lg) + " msm_precompute_bases")) {
                record_row(Row{op, mode, lg, 0, 0, 0, 0, 0, "ERROR: msm_precompute_bases: ICICLE error " +
                                                            std::to_string((int)pe)});
            } else {
                printf("  precomputed %d x 2^%d bases (%.2f GB) in %.1f ms (untimed)\n", pf, lg, bytes / 1e9,
                       now_ms() - tp);
                time_msm<A, P>(lg, mode, repeat, expect, expect_mont, [&](int k, P* out) {
                    MSMConfig cc = msm_config(true, true, false);
                    cc.precompute_factor = pf;
                    cc.c = c;
                    return msm(d_scalars[k]->get(), d_pre.get(), N, cc, out);
                });
            }
        }
    }

    if (tune.only_precomputed) {
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        return;
    }
    auto host_modes = [&](const char* mem) {
        time_msm<A, P>(lg, std::string("bases on device, scalars from host (") + mem + ")" + sfx_pool, repeat, expect,
            expect_mont, [&](int k, P* out) {
                MSMConfig c = msm_config(true, false, false);
                return msm(h_scalars[k].data(), d_points.get(), N, c, out);
            });
        time_msm<A, P>(lg, std::string("all from host (") + mem + ")" + sfx_pool, repeat, expect, expect_mont,
            [&](int k, P* out) {
                MSMConfig c = msm_config(false, false, false);
                return msm(h_scalars[k].data(), h_points.data(), N, c, out);
            });
    };
    host_modes("pageable");
    if (pinned) {
        std::vector<std::unique_ptr<Pinned>> pins;
        pins.emplace_back(new Pinned(h_points.data(), n * sizeof(A)));
        for (int k = 0; k < g_nsets; k++)
            pins.emplace_back(new Pinned(h_scalars[k].data(), n * sizeof(scalar_t)));
        host_modes("pinned");
    }
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// ---------------------------------------------------------------- NTT

#if FP_BYTES == 48
// BLS12-381: arkworks' Fr::TWO_ADIC_ROOT_OF_UNITY = 7^((r-1)/2^32), canonical, little-endian u64 limbs.
static const int ARK_TWO_ADICITY = 32;
static const uint64_t ARK_TWO_ADIC_ROOT[4] = {0x3829971f439f0d2bull, 0xb63683508c2280b9ull,
                                              0xd09b681922c813b4ull, 0x16a2a19edfe81f20ull};
#else
// BN254: arkworks' Fr::TWO_ADIC_ROOT_OF_UNITY = 5^((r-1)/2^28) (ICICLE's rou too).
static const int ARK_TWO_ADICITY = 28;
static const uint64_t ARK_TWO_ADIC_ROOT[4] = {0x9bd61b6e725b19f0ull, 0x402d111e41112ed4ull,
                                              0x00e0a7eb8ef62abcull, 0x2a3c09f0a58a7e85ull};
#endif

// The root of unity of order exactly 2^lg that arkworks' Radix2EvaluationDomain uses.
static scalar_t ark_root_of_unity(int lg)
{
    scalar_t w;
    std::memcpy(&w, ARK_TWO_ADIC_ROOT, 32);
    if (lg > ARK_TWO_ADICITY)
        die("no radix-2 domain of size 2^" + std::to_string(lg) + " for this field");
    for (int i = lg; i < ARK_TWO_ADICITY; i++)
        w = w * w;
    scalar_t x = w;
    for (int i = 0; i < lg - 1; i++)
        x = x * x;
    if (x == scalar_t::one() || !(x * x == scalar_t::one()))
        die("root of unity has the wrong order");
    return w;
}

static size_t bitrev(size_t i, int lg)
{
    size_t r = 0;
    for (int b = 0; b < lg; b++)
        r |= ((i >> b) & 1) << (lg - 1 - b);
    return r;
}

static bool ntt_check(const std::string& mode, int lg, int run, int k, const std::vector<scalar_t>& got,
                      const std::vector<scalar_t>& want)
{
    const size_t n = got.size();
    if (std::memcmp(got.data(), want.data(), n * sizeof(scalar_t)) == 0)
        return true;
    g_any_mismatch = true;
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (std::memcmp(&got[i], &want[i], sizeof(scalar_t)) != 0) {
            bad++;
            if (first == n) first = i;
        }
    bool br = true, inv = true;
    for (size_t i = 0; i < n && (br || inv); i++) {
        if (br && std::memcmp(&got[i], &want[bitrev(i, lg)], sizeof(scalar_t)) != 0) br = false;
        if (inv && std::memcmp(&got[i], &want[(n - i) % n], sizeof(scalar_t)) != 0) inv = false;
    }
    printf("MISMATCH ntt %s %s run %d (input set %d): %zu of %zu elements differ, first at %zu%s%s\n",
           pow2(lg).c_str(), mode.c_str(), run, k, bad, n, first,
           br ? "; output equals expected in bit-reversed order" : "",
           inv ? "; output equals the NTT with the inverse root" : "");
    printf("  got[%zu]    = %s\n  expect[%zu] = %s  (canonical, big-endian hex)\n", first,
           hex(&got[first], 32).c_str(), first, hex(&want[first], 32).c_str());
    return false;
}

static NTTConfig<scalar_t> ntt_config(bool on_device, Ordering ord, bool async)
{
    NTTConfig<scalar_t> c = default_ntt_config<scalar_t>();
    c.stream = reinterpret_cast<icicleStreamHandle>(g_stream);
    c.ordering = ord;
    c.are_inputs_on_device = on_device;
    c.are_outputs_on_device = on_device;
    c.is_async = async;
    return c;
}

static void init_domain(int lg, bool fast_twiddles)
{
    NTTInitDomainConfig ic = default_ntt_init_domain_config();
    ConfigExtension ext;
    if (fast_twiddles) {
        ext.set<bool>(CudaBackendConfig::CUDA_NTT_FAST_TWIDDLES_MODE, true);
        ic.ext = &ext;
    }
    double t = now_ms();
    check_icicle(ntt_init_domain(ark_root_of_unity(lg), ic), "ntt_init_domain");
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    printf("  domain 2^%d%s initialized in %.1f ms (untimed)\n", lg, fast_twiddles ? " (fast twiddles)" : "",
           now_ms() - t);
}

static void bench_ntt(const std::string& dir, int lg, int repeat, bool pinned)
{
    const size_t n = (size_t)1 << lg;
    const int N = (int)n;
    printf("ntt 2^%d: loading and converting inputs...\n", lg);
    fflush(stdout);
    std::vector<std::vector<scalar_t>> h_in, h_want, h_want_rev;
    for (int k = 0; k < g_nsets; k++) {
        std::string sfx = std::to_string(lg) + "_" + std::to_string(k) + ".bin";
        h_in.push_back(read_file<scalar_t>(dir + "/scalars_" + sfx, n));
        from_mont(FR, h_in.back().data(), n);
        h_want.push_back(read_file<scalar_t>(dir + "/ntt_out_" + sfx, n));
        from_mont(FR, h_want.back().data(), n);
        h_want_rev.emplace_back(n);
        for (size_t i = 0; i < n; i++)
            h_want_rev.back()[bitrev(i, lg)] = h_want.back()[i];
    }

    std::vector<std::unique_ptr<DevBuf<scalar_t>>> d_in;
    for (int k = 0; k < g_nsets; k++) {
        d_in.emplace_back(new DevBuf<scalar_t>(n));
        check_cuda(cudaMemcpy(d_in[k]->get(), h_in[k].data(), n * sizeof(scalar_t), cudaMemcpyHostToDevice),
                   "copy ntt input");
    }
    DevBuf<scalar_t> d_out(n);
    std::vector<scalar_t> h_out(n);

    // Data on the device, out of place (input d_in[k] untouched, output d_out),
    // is_async: CUDA events around the launches on ICICLE's stream.
    auto resident = [&](const std::string& mode, Ordering ord, const std::vector<std::vector<scalar_t>>& want) {
        std::vector<double> ev, host;
        bool ok = true;
        for (int j = 0; j <= repeat; j++) {
            int k = j % g_nsets;
            check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            NTTConfig<scalar_t> c = ntt_config(true, ord, true);
            check_cuda(cudaEventRecord(g_e0, g_stream), "cudaEventRecord");
            double t0 = now_ms();
            eIcicleError e = ntt(d_in[k]->get(), N, NTTDir::kForward, c, d_out.get());
            check_cuda(cudaEventRecord(g_e1, g_stream), "cudaEventRecord");
            check_cuda(cudaEventSynchronize(g_e1), "cudaEventSynchronize");
            double t1 = now_ms();
            if (icicle_failed(e, "ntt " + pow2(lg) + " " + mode)) {
                record_row(Row{"ntt", mode, lg, 0, 0, 0, 0, 0, "ERROR: ICICLE error " + std::to_string((int)e)});
                return;
            }
            float ms = 0;
            check_cuda(cudaEventElapsedTime(&ms, g_e0, g_e1), "cudaEventElapsedTime");
            if (j > 0) {
                ev.push_back(ms);
                host.push_back(t1 - t0);
            }
            check_cuda(cudaMemcpy(h_out.data(), d_out.get(), n * sizeof(scalar_t), cudaMemcpyDeviceToHost),
                       "read ntt output");
            ok &= ntt_check(mode, lg, j, k, h_out, want[k]);
        }
        Stats s = stats(ev), h = stats(host);
        record_row(Row{"ntt", mode, lg, s.med, s.min, s.max, h.med, repeat, ok ? "ok" : "MISMATCH"});
    };

    // Host buffer in and out (is_async false): ICICLE allocates, copies in,
    // transforms, copies out, frees and synchronizes.
    auto host_mode = [&](const std::string& mode) {
        std::vector<double> ev, host;
        bool ok = true;
        for (int j = 0; j <= repeat; j++) {
            int k = j % g_nsets;
            check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            NTTConfig<scalar_t> c = ntt_config(false, Ordering::kNN, false);
            check_cuda(cudaEventRecord(g_e0, g_stream), "cudaEventRecord");
            double t0 = now_ms();
            eIcicleError e = ntt(h_in[k].data(), N, NTTDir::kForward, c, h_out.data());
            double t1 = now_ms();
            check_cuda(cudaEventRecord(g_e1, g_stream), "cudaEventRecord");
            check_cuda(cudaEventSynchronize(g_e1), "cudaEventSynchronize");
            if (icicle_failed(e, "ntt " + pow2(lg) + " " + mode)) {
                record_row(Row{"ntt", mode, lg, 0, 0, 0, 0, 0, "ERROR: ICICLE error " + std::to_string((int)e)});
                return;
            }
            float ms = 0;
            check_cuda(cudaEventElapsedTime(&ms, g_e0, g_e1), "cudaEventElapsedTime");
            if (j > 0) {
                ev.push_back(ms);
                host.push_back(t1 - t0);
            }
            ok &= ntt_check(mode, lg, j, k, h_out, h_want[k]);
        }
        Stats s = stats(ev), h = stats(host);
        record_row(Row{"ntt", mode, lg, s.med, s.min, s.max, h.med, repeat, ok ? "ok" : "MISMATCH"});
    };

    init_domain(lg, false);
    resident("resident: data on device (NN, default domain)", Ordering::kNN, h_want);
    resident("resident, NR (bit-reversed out; info)", Ordering::kNR, h_want_rev);
    host_mode("host in/out (NN, pageable)");
    if (pinned) {
        std::vector<std::unique_ptr<Pinned>> pins;
        for (int k = 0; k < g_nsets; k++)
            pins.emplace_back(new Pinned(h_in[k].data(), n * sizeof(scalar_t)));
        pins.emplace_back(new Pinned(h_out.data(), n * sizeof(scalar_t)));
        host_mode("host in/out (NN, pinned)");
    }
    check_icicle(ntt_release_domain<scalar_t>(), "ntt_release_domain");

    // ICICLE's optional fast-twiddles domain (4n more twiddle memory).
    init_domain(lg, true);
    resident("resident: data on device (NN, fast-twiddles domain)", Ordering::kNN, h_want);
    check_icicle(ntt_release_domain<scalar_t>(), "ntt_release_domain");
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// ---------------------------------------------------------------- host check (no GPU)

// Recomputes the 2^lg expectations on the CPU with ICICLE's host arithmetic
// from the converted inputs: pins the representation down before a GPU run.
template<class A, class P>
static bool hostcheck_msm(const std::string& dir, int lg)
{
    const std::string tag = GroupInfo<A>::tag;
    const size_t n = (size_t)1 << lg;
    auto pts = read_file<A>(dir + "/" + tag + "_bases_" + std::to_string(lg) + ".bin", n);
    std::vector<A> pts_mont(pts.begin(), pts.begin() + std::min<size_t>(n, 4));
    from_mont(FQ, pts.data(), n * GroupInfo<A>::coords);
    cross_check_from_mont<point_field_t>(FQ, pts_mont.data(), pts.data(), pts_mont.size() * GroupInfo<A>::coords,
                                         "bases");
    auto sc = read_file<scalar_t>(dir + "/scalars_" + std::to_string(lg) + "_0.bin", n);
    std::vector<scalar_t> sc_mont(sc.begin(), sc.begin() + std::min<size_t>(n, 16));
    from_mont(FR, sc.data(), n);
    cross_check_from_mont<scalar_t>(FR, sc_mont.data(), sc.data(), sc_mont.size(), "scalars");
    auto want = read_file<A>(dir + "/" + tag + "_msm_" + std::to_string(lg) + "_0.bin", 1);
    from_mont(FQ, want.data(), GroupInfo<A>::coords);
    for (size_t i = 0; i < std::min<size_t>(n, 4); i++)
        if (!P::from_affine(pts[i]).is_on_curve())
            die(tag + " base " + std::to_string(i) + " is not on the curve after conversion");
    P acc = P::zero();
    for (size_t i = 0; i < n; i++)
        acc = acc + sc[i] * P::from_affine(pts[i]);
    A got = acc.to_affine();
    bool ok = std::memcmp(&got, &want[0], sizeof(A)) == 0;
    printf("hostcheck %s 2^%d: sum s_i P_i with ICICLE's host arithmetic %s the expected point\n", tag.c_str(), lg,
           ok ? "equals" : "DIFFERS FROM");
    return ok;
}

static bool hostcheck_ntt(const std::string& dir, int lg)
{
    const size_t n = (size_t)1 << lg;
    auto in = read_file<scalar_t>(dir + "/scalars_" + std::to_string(lg) + "_0.bin", n);
    from_mont(FR, in.data(), n);
    auto want = read_file<scalar_t>(dir + "/ntt_out_" + std::to_string(lg) + "_0.bin", n);
    from_mont(FR, want.data(), n);
    // Radix-2: bit-reverse, then Cooley-Tukey butterflies with the root of order 2^lg.
    std::vector<scalar_t> a(n);
    for (size_t i = 0; i < n; i++)
        a[bitrev(i, lg)] = in[i];
    scalar_t w_n = ark_root_of_unity(lg);
    for (int s = 1; s <= lg; s++) {
        size_t m = (size_t)1 << s;
        scalar_t wm = w_n;
        for (int t = s; t < lg; t++)
            wm = wm * wm;
        for (size_t k0 = 0; k0 < n; k0 += m) {
            scalar_t w = scalar_t::one();
            for (size_t j = 0; j < m / 2; j++) {
                scalar_t u = a[k0 + j], v = w * a[k0 + j + m / 2];
                a[k0 + j] = u + v;
                a[k0 + j + m / 2] = u - v;
                w = w * wm;
            }
        }
    }
    bool ok = std::memcmp(a.data(), want.data(), n * sizeof(scalar_t)) == 0;
    printf("hostcheck ntt 2^%d: radix-2 NTT with arkworks' root, in ICICLE's host arithmetic, %s the expected output\n",
           lg, ok ? "equals" : "DIFFERS FROM");
    return ok;
}

// ---------------------------------------------------------------- backend loading

static void find_backend_libs(const std::string& dir, std::vector<std::string>& out)
{
    DIR* d = opendir(dir.c_str());
    if (!d)
        die("cannot open backend folder " + dir);
    while (dirent* e = readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..")
            continue;
        std::string path = dir + "/" + name;
        struct stat st;
        if (stat(path.c_str(), &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            find_backend_libs(path, out);
        else if (name.find("icicle_backend") != std::string::npos && name.size() > 3 &&
                 name.compare(name.size() - 3, 3, ".so") == 0)
            out.push_back(path);
    }
    closedir(d);
}

// ICICLE's icicle_load_backend(DIR, recursive) loads the libraries in the
// order readdir() happens to return them. The harness hands it one library at
// a time instead, in dependency order (device API, then field, then curve), and
// then checks with dlopen(RTLD_NOLOAD) that each one is really loaded, printing
// the loader's error for any that is not (ICICLE logs those at debug level only).
static void load_backend(const std::string& dir, bool icicle_order)
{
    std::vector<std::string> libs;
    find_backend_libs(dir, libs);
    if (libs.empty())
        die("no ICICLE backend library (*icicle_backend*.so) under " + dir);
    auto rank = [](const std::string& p) {
        std::string f = p.substr(p.find_last_of('/') + 1);
        return f.find("device") != std::string::npos ? 0 : f.find("field") != std::string::npos ? 1 : 2;
    };
    std::stable_sort(libs.begin(), libs.end(),
                     [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    if (icicle_order)   // --icicle-loader: ICICLE's own recursive loader, readdir() order
        check_icicle(icicle_load_backend(dir.c_str(), true), "icicle_load_backend(" + dir + ")");
    else
        for (auto& l : libs)
            check_icicle(icicle_load_backend(l.c_str(), false), "icicle_load_backend(" + l + ")");
    bool all = true;
    for (auto& l : libs) {
        if (void* h = dlopen(l.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
            dlclose(h);
            continue;
        }
        all = false;
        dlerror();
        void* h = dlopen(l.c_str(), RTLD_LAZY | RTLD_LOCAL);
        const char* err = h ? "loaded on a second try" : dlerror();
        fprintf(stderr, "harness: backend library %s was not loaded: %s\n", l.c_str(), err ? err : "?");
    }
    printf("ICICLE backend: %zu libraries from %s%s%s\n", libs.size(), dir.c_str(),
           icicle_order ? " (ICICLE's recursive loader)" : "", all ? "" : " (see the loader errors above)");
}

// ---------------------------------------------------------------- main

enum class Op { G1 = 0, G2 = 1, NTT = 2 };

static int parse_log(const std::string& s)
{
    std::string t = s.rfind("2^", 0) == 0 ? s.substr(2) : s;
    char* end = nullptr;
    long v = strtol(t.c_str(), &end, 10);
    if (t.empty() || *end || v < 5 || v > 28)
        die("bad size `" + s + "` (want LOG or 2^LOG, 5..28)");
    return (int)v;
}

static void usage()
{
    fprintf(stderr,
        "usage: harness DATA_DIR --backend DIR [--repeat R] [--sets K] [--no-pinned] [--no-precompute]\n"
        "               [--precompute P] [--c C[,C...]] [--only-precomputed] [--keep-pool]\n"
        "               [--rows FILE] [--icicle-loader] SPEC...\n"
        "       harness DATA_DIR --hostcheck LOG\n"
        "  SPEC: g1:LOG | g2:LOG | ntt:LOG | LOG (all three); e.g. g1:20 g1:24 g2:20 ntt:20 ntt:24\n"
        "  --backend: ICICLE's backend library folder (default $ICICLE_BACKEND_INSTALL_DIR)\n");
    exit(2);
}

int main(int argc, char* argv[])
{
    std::string dir, backend;
    int repeat = 7, hostcheck = 0;
    bool pinned = true, icicle_loader = false;
    MsmTuning tune;
    std::vector<std::pair<Op, int>> specs;
    if (const char* b = getenv("ICICLE_BACKEND_INSTALL_DIR"))
        backend = b;

    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc) usage();
            return argv[++i];
        };
        if (a == "--repeat") {
            repeat = atoi(val().c_str());
            if (repeat < 1) die("--repeat must be at least 1");
        } else if (a == "--sets") {
            g_nsets = atoi(val().c_str());
            if (g_nsets < 2) die("--sets must be at least 2");
        } else if (a == "--no-pinned") {
            pinned = false;
        } else if (a == "--no-precompute") {
            tune.run = false;
        } else if (a == "--precompute") {
            tune.precompute = atoi(val().c_str());
        } else if (a == "--c") {
            std::string v = val();
            for (size_t p0 = 0; p0 <= v.size();) {
                size_t p1 = v.find(',', p0);
                if (p1 == std::string::npos) p1 = v.size();
                int c = atoi(v.substr(p0, p1 - p0).c_str());
                if (c < 1 || c > 30) die("--c wants window sizes 1..30, comma-separated");
                tune.cs.push_back(c);
                p0 = p1 + 1;
            }
        } else if (a == "--only-precomputed") {
            tune.only_precomputed = true;
        } else if (a == "--keep-pool") {
            tune.keep_pool = true;
        } else if (a == "--backend") {
            backend = val();
        } else if (a == "--icicle-loader") {
            icicle_loader = true;
        } else if (a == "--rows") {
            g_rows_file = val();
        } else if (a == "--hostcheck") {
            hostcheck = parse_log(val());
        } else if (a == "-h" || a == "--help") {
            usage();
        } else if (dir.empty() && a.find(':') == std::string::npos && !isdigit((unsigned char)a[0])) {
            dir = a;
        } else {
            size_t c = a.find(':');
            if (c == std::string::npos) {
                int lg = parse_log(a);
                specs.push_back({Op::G1, lg});
                specs.push_back({Op::G2, lg});
                specs.push_back({Op::NTT, lg});
            } else {
                std::string op = a.substr(0, c);
                int lg = parse_log(a.substr(c + 1));
                if (op == "g1" || op == "msm-g1")      specs.push_back({Op::G1, lg});
                else if (op == "g2" || op == "msm-g2") specs.push_back({Op::G2, lg});
                else if (op == "ntt")                  specs.push_back({Op::NTT, lg});
                else die("unknown op `" + op + "`");
            }
        }
    }
    if (dir.empty())
        usage();
    self_check_moduli();

    if (hostcheck) {
        printf("hostcheck: curve %s, 2^%d\n", CURVE_NAME, hostcheck);
        bool ok = true;
        try {
            ok &= hostcheck_msm<G1A, G1P>(dir, hostcheck);
            ok &= hostcheck_msm<G2A, G2P>(dir, hostcheck);
            ok &= hostcheck_ntt(dir, hostcheck);
        } catch (const std::exception& e) {
            die(std::string("hostcheck: ") + e.what());
        }
        return ok ? 0 : 1;
    }
    if (specs.empty())
        usage();
    // Smallest sizes first, so a run cut short still has the small table.
    std::sort(specs.begin(), specs.end(), [](const std::pair<Op, int>& x, const std::pair<Op, int>& y) {
        return x.second != y.second ? x.second < y.second : (int)x.first < (int)y.first;
    });
    specs.erase(std::unique(specs.begin(), specs.end()), specs.end());

    if (backend.empty())
        die("no backend folder: pass --backend DIR or set ICICLE_BACKEND_INSTALL_DIR");
    load_backend(backend, icicle_loader);
    Device dev("CUDA", 0);
    check_icicle(icicle_is_device_available(dev), "CUDA device (backend loaded from " + backend + ")");
    check_icicle(icicle_set_device(dev), "icicle_set_device(CUDA)");

    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    int drv = 0, rt = 0;
    (void)cudaDriverGetVersion(&drv);
    (void)cudaRuntimeGetVersion(&rt);
    printf("ICICLE (open-icicle %s) peer harness, curve %s: %s, %d SMs, %.1f GiB, driver %d.%d, runtime %d.%d\n",
           ICICLE_COMMIT, CURVE_NAME, prop.name, prop.multiProcessorCount, prop.totalGlobalMem / double(1ull << 30),
           drv / 1000, (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10);
    printf("repeat %d (+1 warm-up per mode), %d rotating input sets, every result checked\n", repeat, g_nsets);
    fflush(stdout);

    check_cuda(cudaStreamCreate(&g_stream), "cudaStreamCreate");
    if (tune.keep_pool) {
        // ICICLE allocates its scratch in every call (cudaMallocAsync on the default pool);
        // --keep-pool raises the pool's release threshold so that memory stays mapped.
        cudaMemPool_t pool;
        check_cuda(cudaDeviceGetDefaultMemPool(&pool, 0), "cudaDeviceGetDefaultMemPool");
        uint64_t keep = UINT64_MAX;
        check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
        printf("memory pool: the default pool keeps its memory between calls in every mode ([pool kept])\n");
    }
    check_cuda(cudaEventCreate(&g_e0), "cudaEventCreate");
    check_cuda(cudaEventCreate(&g_e1), "cudaEventCreate");

    try {
        for (auto& s : specs) {
            double t0 = now_ms();
            switch (s.first) {
            case Op::G1: bench_msm<G1A, G1P>(dir, s.second, repeat, pinned, tune); break;
            case Op::G2: bench_msm<G2A, G2P>(dir, s.second, repeat, pinned, tune); break;
            case Op::NTT: bench_ntt(dir, s.second, repeat, pinned); break;
            }
            printf("  (%.1f s including loading, conversion and checks)\n", (now_ms() - t0) / 1e3);
            fflush(stdout);
        }
    } catch (const std::exception& e) {
        die(std::string("exception: ") + e.what());
    }

    printf("\nICICLE open-icicle %.7s on %s, curve %s (ms; median of %d runs after one warm-up, min, max: CUDA"
           " events; host: median host clock)\n", ICICLE_COMMIT, prop.name, CURVE_NAME, repeat);
    printf("%-7s %-5s %-64s %10s %10s %10s %10s  %s\n", "op", "size", "mode", "median", "min", "max", "host",
           "check");
    for (auto& r : g_rows)
        printf("%-7s %-5s %-64s %10.3f %10.3f %10.3f %10.3f  %s\n", r.op.c_str(), pow2(r.lg).c_str(),
               r.mode.c_str(), r.med, r.min, r.max, r.host_med, r.check.c_str());
    fflush(stdout);

    if (g_any_mismatch) {
        printf("MISMATCH: at least one result differs from the expected value\n");
        return 1;
    }
    if (g_any_error) {
        printf("ERROR: at least one mode failed with an ICICLE error (its row says which); every result that"
               " ran matches the arkworks-computed expected values\n");
        return 2;
    }
    printf("all results match the arkworks-computed expected values\n");
    return 0;
}
