// sppark peer benchmark: G1 MSM, G2 MSM and Fr NTT of BLS12-381 (built with
// -DFEATURE_BLS12_381) or BN254 (-DFEATURE_BN254, sppark's alt_bn128), timed
// through sppark's own API (msm/pippenger.cuh, ntt/ntt.cuh), every result checked
// against arkworks-computed expected values written by gen/ (sppark-gen, run with
// the same curve).
//
// Build: see build.sh. Run: harness DATA_DIR [--repeat R] [--no-pinned] SPEC...
//   SPEC: g1:LOG | g2:LOG | ntt:LOG | LOG (all three); "2^LOG" also accepted.
//
// Representation (see gen/src/main.rs): field elements are Montgomery form
// (BLS12-381: Fq R = 2^384, Fr R = 2^256; BN254: both R = 2^256), little-endian
// limbs, exactly as arkworks keeps them and as sppark's mont_t / blst_384_t /
// blst_256_t hold them; affine points are Affine_t (X, Y), infinity = all-zero;
// scalars are Montgomery, so every MSM is invoked with mont = true (sppark
// converts them on the device, in breakdown()).
//
// SPDX-License-Identifier: Apache-2.0 (sppark and blst, which this calls, are
// Apache-2.0 too; see third_party/*/LICENSE).

#include <cuda.h>
#include <cuda_runtime.h>

#if defined(FEATURE_BLS12_381) && !defined(FEATURE_BN254)
# include <ff/bls12-381-fp2.hpp>
# define CURVE_NAME "bls12-381"
# define FP_BYTES 48
#elif defined(FEATURE_BN254) && !defined(FEATURE_BLS12_381)
# include <ff/alt_bn128-fp2.hpp>
# define CURVE_NAME "bn254"
# define FP_BYTES 32
#else
# error "build with -DFEATURE_BLS12_381 or -DFEATURE_BN254"
#endif

#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

typedef jacobian_t<fp_t> point_t;
typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;

typedef jacobian_t<fp2_t> point_fp2_t;
typedef xyzz_t<fp2_t> bucket_fp2_t;
typedef bucket_fp2_t::affine_t affine_fp2_t;

typedef fr_t scalar_t;

// Two bucket types in one translation unit (as supraseal-c2's groth16_cuda.cu):
// let the kernel templates be instantiated implicitly by msm_t's launches.
#define SPPARK_DONT_INSTANTIATE_TEMPLATES
#include <msm/pippenger.cuh>
#include <ntt/ntt.cuh>
#include <util/all_gpus.cpp>    // select_gpu(), ngpus(), ... (sppark compiles it separately)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#ifndef SPPARK_VERSION
# define SPPARK_VERSION "unknown"
#endif

// The kernel instantiations pippenger.cuh makes for a single bucket_t when
// SPPARK_DONT_INSTANTIATE_TEMPLATES is not defined, here for both groups (the
// host code that launches them below is compiled in the host pass only).
template __global__
void accumulate<bucket_t, affine_t::mem_t>(bucket_t::mem_t buckets_[],
                                           uint32_t nwins, uint32_t wbits,
                                           /*const*/ affine_t::mem_t points_[],
                                           const vec2d_t<uint32_t> digits,
                                           const vec2d_t<uint32_t> histogram,
                                           uint32_t sid);
template __global__
void batch_addition<bucket_t>(bucket_t::mem_t buckets[],
                              const affine_t::mem_t points[], size_t npoints,
                              const uint32_t digits[], const uint32_t& ndigits);
template __global__
void integrate<bucket_t>(bucket_t::mem_t buckets_[], uint32_t nwins,
                         uint32_t wbits, uint32_t nbits);

template __global__
void accumulate<bucket_fp2_t, affine_fp2_t::mem_t>(bucket_fp2_t::mem_t buckets_[],
                                                   uint32_t nwins, uint32_t wbits,
                                                   /*const*/ affine_fp2_t::mem_t points_[],
                                                   const vec2d_t<uint32_t> digits,
                                                   const vec2d_t<uint32_t> histogram,
                                                   uint32_t sid);
template __global__
void batch_addition<bucket_fp2_t>(bucket_fp2_t::mem_t buckets[],
                                  const affine_fp2_t::mem_t points[], size_t npoints,
                                  const uint32_t digits[], const uint32_t& ndigits);
template __global__
void integrate<bucket_fp2_t>(bucket_fp2_t::mem_t buckets_[], uint32_t nwins,
                             uint32_t wbits, uint32_t nbits);

template __global__
void breakdown<scalar_t>(vec2d_t<uint32_t> digits, const scalar_t scalars[],
                         size_t len, uint32_t nwins, uint32_t wbits, bool mont);

#ifndef __CUDA_ARCH__   // everything below is host code

static_assert(sizeof(scalar_t) == 32, "Fr is 32 bytes");
static_assert(sizeof(fp_t) == FP_BYTES, "Fq is 48 (BLS12-381) or 32 (BN254) bytes");
static_assert(sizeof(affine_t) == 2 * FP_BYTES, "G1 affine is 2 Fq");
static_assert(sizeof(affine_fp2_t) == 4 * FP_BYTES, "G2 affine is 2 Fq2");

// ---------------------------------------------------------------- utilities

struct Row {
    std::string op, mode;
    int lg;
    double med, min, max;
    int runs;
    bool ok;
};

static std::vector<Row> g_rows;
static bool g_any_mismatch = false;

[[noreturn]] static void die(const std::string& msg)
{
    fprintf(stderr, "harness: %s\n", msg.c_str());
    fflush(stdout);
    exit(2);
}

static void check_rust(const RustError& e, const char* what)
{
    if (e.code != 0)
        die(std::string(what) + " failed: code " + std::to_string(e.code) +
            (e.message ? std::string(": ") + e.message : std::string()));
}

static void check_cuda(cudaError_t e, const char* what)
{
    if (e != cudaSuccess)
        die(std::string(what) + ": " + cudaGetErrorString(e));
}

template<class T>
static std::vector<T> read_file(const std::string& path, size_t count)
{
    FILE* f = fopen(path.c_str(), "rb");
    if (!f)
        die("cannot open " + path + " (run sppark-gen for this size and curve first)");
    if (fseek(f, 0, SEEK_END) != 0)
        die("cannot seek " + path);
    long sz = ftell(f);
    rewind(f);
    if (sz < 0 || (size_t)sz != count * sizeof(T))
        die(path + ": " + std::to_string(sz) + " bytes, expected " +
            std::to_string(count * sizeof(T)) + " (data of another curve? this is " CURVE_NAME ")");
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

static std::string hex(const void* p, size_t len)
{
    static const char* digits = "0123456789abcdef";
    const unsigned char* b = static_cast<const unsigned char*>(p);
    std::string s;
    // the bytes are little-endian: print them last to first, most significant first
    for (size_t i = len; i--;) {
        s += digits[b[i] >> 4];
        s += digits[b[i] & 15];
    }
    return s;
}

struct Stats { double med, min, max; };

static Stats stats(std::vector<double> t)
{
    std::sort(t.begin(), t.end());
    size_t n = t.size();
    double med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    return Stats{med, t.front(), t.back()};
}

static std::string pow2(int lg) { return "2^" + std::to_string(lg); }

static double now_ms()
{
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// Pins a host range for the lifetime of the object (cudaHostRegister).
class pinned_t {
    void* ptr;
public:
    pinned_t(void* p, size_t bytes) : ptr(p)
    {   check_cuda(cudaHostRegister(p, bytes, cudaHostRegisterDefault), "cudaHostRegister");   }
    ~pinned_t() { (void)cudaHostUnregister(ptr); }
    pinned_t(const pinned_t&) = delete;
    pinned_t& operator=(const pinned_t&) = delete;
};

// ---------------------------------------------------------------- MSM

// One timed mode: a warm-up run, then |repeat| runs; run j uses scalar set
// j % nsets, so no two consecutive runs see the same scalars. Every run's
// result is checked. |call| runs one MSM with set k into |out| (it returns
// once the result is on the host: sppark's invoke() is synchronous).
template<class point_t, class affine_t>
static void time_msm(const char* op, int lg, const std::string& mode, int repeat,
                     const std::vector<std::vector<uint8_t>>& expect,
                     const std::function<RustError(int, point_t&)>& call)
{
    std::vector<double> times;
    bool ok = true;
    int nsets = (int)expect.size();
    for (int j = 0; j <= repeat; j++) {
        int k = j % nsets;
        point_t out;
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        double t0 = now_ms();
        RustError e = call(k, out);
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        double t1 = now_ms();
        check_rust(e, (std::string(op) + " " + mode).c_str());
        if (j > 0)
            times.push_back(t1 - t0);

        affine_t got = out;     // jacobian -> affine on the host (blst inversion)
        if (std::memcmp(&got, expect[k].data(), sizeof(got)) != 0) {
            ok = false;
            g_any_mismatch = true;
            const size_t half = sizeof(got) / 2;
            const char* g = reinterpret_cast<const char*>(&got);
            const char* w = reinterpret_cast<const char*>(expect[k].data());
            printf("MISMATCH %s %s %s run %d (scalar set %d)%s\n", op, pow2(lg).c_str(),
                   mode.c_str(), j, k,
                   std::memcmp(g, w, half) == 0 ? ": X equal, Y differs (negated?)" : "");
            printf("  got    X=%s\n         Y=%s\n", hex(g, half).c_str(), hex(g + half, half).c_str());
            printf("  expect X=%s\n         Y=%s\n", hex(w, half).c_str(), hex(w + half, half).c_str());
            printf("  (Montgomery form, big-endian hex%s)\n",
                   sizeof(got) > 2 * FP_BYTES ? "; each of X, Y printed as c1|c0" : "");
        }
    }
    Stats s = stats(times);
    g_rows.push_back(Row{op, mode, lg, s.med, s.min, s.max, repeat, ok});
    printf("  %-7s %-5s %-62s median %9.3f ms  [%.3f .. %.3f]  %s\n", op, pow2(lg).c_str(),
           mode.c_str(), s.med, s.min, s.max, ok ? "ok" : "MISMATCH");
    fflush(stdout);
}

template<class bucket_t, class point_t, class affine_t>
static void bench_msm(const char* op, const char* tag, const std::string& dir, int lg,
                      int repeat, int nsets, bool pinned)
{
    using msm_type = msm_t<bucket_t, point_t, affine_t, scalar_t>;
    const size_t n = (size_t)1 << lg;

    printf("%s 2^%d: loading inputs...\n", op, lg);
    fflush(stdout);
    double tl = now_ms();
    auto h_points = read_file<affine_t>(dir + "/" + tag + "_bases_" + std::to_string(lg) + ".bin", n);
    std::vector<std::vector<scalar_t>> h_scalars;
    std::vector<std::vector<uint8_t>> expect;
    for (int k = 0; k < nsets; k++) {
        std::string sfx = std::to_string(lg) + "_" + std::to_string(k) + ".bin";
        h_scalars.push_back(read_file<scalar_t>(dir + "/scalars_" + sfx, n));
        expect.push_back(read_file<uint8_t>(dir + "/" + tag + "_msm_" + sfx, sizeof(affine_t)));
    }
    printf("  loaded in %.1f s\n", (now_ms() - tl) / 1e3);

    const gpu_t& gpu = select_gpu(0);
    (void)gpu;

    // Device-resident copies: the bases once, and every scalar set.
    dev_ptr_t<affine_t> d_points{n};
    check_cuda(cudaMemcpy(&d_points[0], h_points.data(), n * sizeof(affine_t),
                          cudaMemcpyHostToDevice), "copy bases");
    std::vector<dev_ptr_t<scalar_t>*> d_scalars;
    for (int k = 0; k < nsets; k++) {
        d_scalars.push_back(new dev_ptr_t<scalar_t>{n});
        check_cuda(cudaMemcpy(&(*d_scalars[k])[0], h_scalars[k].data(), n * sizeof(scalar_t),
                              cudaMemcpyHostToDevice), "copy scalars");
    }
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

    {
        // One msm_t per size, reused across runs (as supraseal-c2 reuses one
        // per GPU): its bucket storage is allocated here, outside the timing.
        msm_type msm{nullptr, n};

        time_msm<point_t, affine_t>(op, lg,
            "resident: bases+scalars on device (msm_t::invoke)", repeat, expect,
            [&](int k, point_t& out) {
                return msm.invoke(out, d_points, n, *d_scalars[k], true);
            });

        time_msm<point_t, affine_t>(op, lg,
            "bases on device, scalars from host (pageable)", repeat, expect,
            [&](int k, point_t& out) {
                return msm.invoke(out, d_points, n,
                                  (const scalar_t*)h_scalars[k].data(), true);
            });
    }

    time_msm<point_t, affine_t>(op, lg,
        "all from host, pageable (mult_pippenger)", repeat, expect,
        [&](int k, point_t& out) {
            return mult_pippenger<bucket_t>(&out, h_points.data(), n,
                                            h_scalars[k].data(), true);
        });

    if (pinned) {
        std::vector<pinned_t*> pins;
        pins.push_back(new pinned_t(h_points.data(), n * sizeof(affine_t)));
        for (int k = 0; k < nsets; k++)
            pins.push_back(new pinned_t(h_scalars[k].data(), n * sizeof(scalar_t)));

        {
            msm_type msm{nullptr, n};
            time_msm<point_t, affine_t>(op, lg,
                "bases on device, scalars from host (pinned)", repeat, expect,
                [&](int k, point_t& out) {
                    return msm.invoke(out, d_points, n,
                                      (const scalar_t*)h_scalars[k].data(), true);
                });
        }

        time_msm<point_t, affine_t>(op, lg,
            "all from host, pinned (mult_pippenger)", repeat, expect,
            [&](int k, point_t& out) {
                return mult_pippenger<bucket_t>(&out, h_points.data(), n,
                                                h_scalars[k].data(), true);
            });

        for (auto* p : pins)
            delete p;
    }

    for (auto* d : d_scalars)
        delete d;
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// ---------------------------------------------------------------- NTT

static bool ntt_check(const char* mode, int lg, int run, int k,
                      const std::vector<fr_t>& got, const std::vector<fr_t>& want)
{
    const size_t n = got.size();
    if (std::memcmp(got.data(), want.data(), n * sizeof(fr_t)) == 0)
        return true;

    g_any_mismatch = true;
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (std::memcmp(&got[i], &want[i], sizeof(fr_t)) != 0) {
            bad++;
            if (first == n) first = i;
        }
    // Diagnose the usual suspects: output order, inverse root.
    bool bitrev = true, inverse = true;
    for (size_t i = 0; i < n && (bitrev || inverse); i++) {
        size_t r = 0;
        for (int b = 0; b < lg; b++)
            r |= ((i >> b) & 1) << (lg - 1 - b);
        if (bitrev && std::memcmp(&got[i], &want[r], sizeof(fr_t)) != 0) bitrev = false;
        if (inverse && std::memcmp(&got[i], &want[(n - i) % n], sizeof(fr_t)) != 0) inverse = false;
    }
    printf("MISMATCH ntt %s %s run %d (input set %d): %zu of %zu elements differ, first at %zu%s%s\n",
           pow2(lg).c_str(), mode, run, k, bad, n, first,
           bitrev ? "; output equals expected in bit-reversed order" : "",
           inverse ? "; output equals the NTT with the inverse root" : "");
    printf("  got[%zu]    = %s\n  expect[%zu] = %s  (Montgomery, big-endian hex)\n",
           first, hex(&got[first], 32).c_str(), first, hex(&want[first], 32).c_str());
    return false;
}

static void bench_ntt(const std::string& dir, int lg, int repeat, int nsets, bool pinned)
{
    const size_t n = (size_t)1 << lg;
    printf("ntt 2^%d: loading inputs...\n", lg);
    fflush(stdout);
    std::vector<std::vector<fr_t>> h_in, h_want;
    for (int k = 0; k < nsets; k++) {
        std::string sfx = std::to_string(lg) + "_" + std::to_string(k) + ".bin";
        h_in.push_back(read_file<fr_t>(dir + "/scalars_" + sfx, n));
        h_want.push_back(read_file<fr_t>(dir + "/ntt_out_" + sfx, n));
    }

    const gpu_t& gpu = select_gpu(0);
    stream_t& stream = gpu[0];

    std::vector<dev_ptr_t<fr_t>*> d_in;
    for (int k = 0; k < nsets; k++) {
        d_in.push_back(new dev_ptr_t<fr_t>{n});
        check_cuda(cudaMemcpy(&(*d_in[k])[0], h_in[k].data(), n * sizeof(fr_t),
                              cudaMemcpyHostToDevice), "copy ntt input");
    }
    dev_ptr_t<fr_t> d_work{n};
    std::vector<fr_t> h_out(n);
    cudaEvent_t e0, e1;
    check_cuda(cudaEventCreate(&e0), "cudaEventCreate");
    check_cuda(cudaEventCreate(&e1), "cudaEventCreate");
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

    // Mode 1: data on the device, in place, natural order in and out (NN:
    // sppark bit-reverses on the device, then a CT transform). CUDA events on
    // the stream the NTT runs on; the input is restored (device-to-device copy)
    // before each run, outside the events.
    {
        const std::string mode = "resident: data on device (Base_dev_ptr, NN), device events";
        std::vector<double> times;
        bool ok = true;
        for (int j = 0; j <= repeat; j++) {
            int k = j % nsets;
            check_cuda(cudaMemcpyAsync(&d_work[0], &(*d_in[k])[0], n * sizeof(fr_t),
                                       cudaMemcpyDeviceToDevice, stream), "restore input");
            check_cuda(cudaEventRecord(e0, stream), "cudaEventRecord");
            try {
                NTT::Base_dev_ptr(stream, &d_work[0], lg, NTT::InputOutputOrder::NN,
                                  NTT::Direction::forward, NTT::Type::standard);
            } catch (const cuda_error& e) {
                die(std::string("NTT::Base_dev_ptr: ") + e.what());
            }
            check_cuda(cudaEventRecord(e1, stream), "cudaEventRecord");
            check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
            float ms = 0;
            check_cuda(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
            if (j > 0)
                times.push_back(ms);
            check_cuda(cudaMemcpy(h_out.data(), &d_work[0], n * sizeof(fr_t),
                                  cudaMemcpyDeviceToHost), "read ntt output");
            ok &= ntt_check(mode.c_str(), lg, j, k, h_out, h_want[k]);
        }
        Stats s = stats(times);
        g_rows.push_back(Row{"ntt", mode, lg, s.med, s.min, s.max, repeat, ok});
        printf("  %-7s %-5s %-62s median %9.3f ms  [%.3f .. %.3f]  %s\n", "ntt",
               pow2(lg).c_str(), mode.c_str(), s.med, s.min, s.max, ok ? "ok" : "MISMATCH");
        fflush(stdout);
    }

    // Informational: natural order in, bit-reversed out (NR: a GS transform
    // without the bit-reversal pass, what a prover chaining NTTs can use);
    // checked against the expected output permuted to bit-reversed order.
    {
        const std::string mode = "resident, NR (bit-reversed out; info only), device events";
        std::vector<fr_t> want_rev[2];
        for (int k = 0; k < nsets && k < 2; k++) {
            want_rev[k].resize(n);
            for (size_t i = 0; i < n; i++) {
                size_t r = 0;
                for (int b = 0; b < lg; b++)
                    r |= ((i >> b) & 1) << (lg - 1 - b);
                want_rev[k][r] = h_want[k][i];
            }
        }
        std::vector<double> times;
        bool ok = true;
        for (int j = 0; j <= repeat; j++) {
            int k = j % 2;
            check_cuda(cudaMemcpyAsync(&d_work[0], &(*d_in[k])[0], n * sizeof(fr_t),
                                       cudaMemcpyDeviceToDevice, stream), "restore input");
            check_cuda(cudaEventRecord(e0, stream), "cudaEventRecord");
            try {
                NTT::Base_dev_ptr(stream, &d_work[0], lg, NTT::InputOutputOrder::NR,
                                  NTT::Direction::forward, NTT::Type::standard);
            } catch (const cuda_error& e) {
                die(std::string("NTT::Base_dev_ptr: ") + e.what());
            }
            check_cuda(cudaEventRecord(e1, stream), "cudaEventRecord");
            check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
            float ms = 0;
            check_cuda(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
            if (j > 0)
                times.push_back(ms);
            check_cuda(cudaMemcpy(h_out.data(), &d_work[0], n * sizeof(fr_t),
                                  cudaMemcpyDeviceToHost), "read ntt output");
            ok &= ntt_check(mode.c_str(), lg, j, k, h_out, want_rev[k]);
        }
        Stats s = stats(times);
        g_rows.push_back(Row{"ntt", mode, lg, s.med, s.min, s.max, repeat, ok});
        printf("  %-7s %-5s %-62s median %9.3f ms  [%.3f .. %.3f]  %s\n", "ntt",
               pow2(lg).c_str(), mode.c_str(), s.med, s.min, s.max, ok ? "ok" : "MISMATCH");
        fflush(stdout);
    }

    // Mode 2 (and 3, pinned): NTT::Base, host buffer in and out: allocation,
    // host-to-device copy, NTT, device-to-host copy, synchronize; host clock.
    auto host_mode = [&](const std::string& mode) {
        std::vector<double> times;
        bool ok = true;
        for (int j = 0; j <= repeat; j++) {
            int k = j % nsets;
            std::memcpy(h_out.data(), h_in[k].data(), n * sizeof(fr_t));
            check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            double t0 = now_ms();
            RustError e = NTT::Base(gpu, h_out.data(), lg, NTT::InputOutputOrder::NN,
                                    NTT::Direction::forward, NTT::Type::standard);
            double t1 = now_ms();
            check_rust(e, "NTT::Base");
            if (j > 0)
                times.push_back(t1 - t0);
            ok &= ntt_check(mode.c_str(), lg, j, k, h_out, h_want[k]);
        }
        Stats s = stats(times);
        g_rows.push_back(Row{"ntt", mode, lg, s.med, s.min, s.max, repeat, ok});
        printf("  %-7s %-5s %-62s median %9.3f ms  [%.3f .. %.3f]  %s\n", "ntt",
               pow2(lg).c_str(), mode.c_str(), s.med, s.min, s.max, ok ? "ok" : "MISMATCH");
        fflush(stdout);
    };
    host_mode("host in/out, pageable (NTT::Base, NN), host clock");
    if (pinned) {
        pinned_t pin(h_out.data(), n * sizeof(fr_t));
        host_mode("host in/out, pinned (NTT::Base, NN), host clock");
    }

    (void)cudaEventDestroy(e0);
    (void)cudaEventDestroy(e1);
    for (auto* d : d_in)
        delete d;
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
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
        "usage: harness DATA_DIR [--repeat R] [--sets K] [--no-pinned] SPEC...\n"
        "  SPEC: g1:LOG | g2:LOG | ntt:LOG | LOG (all three); e.g. g1:20 g1:24 g2:20 ntt:20 ntt:24\n");
    exit(2);
}

int main(int argc, char* argv[])
{
    std::string dir;
    int repeat = 7, nsets = 2;
    bool pinned = true;
    std::vector<std::pair<Op, int>> specs;

    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--repeat" && i + 1 < argc) {
            repeat = atoi(argv[++i]);
            if (repeat < 1) die("--repeat must be at least 1");
        } else if (a == "--sets" && i + 1 < argc) {
            nsets = atoi(argv[++i]);
            if (nsets < 2) die("--sets must be at least 2");
        } else if (a == "--no-pinned") {
            pinned = false;
        } else if (a == "-h" || a == "--help") {
            usage();
        } else if (dir.empty() && a.find(':') == std::string::npos &&
                   !isdigit((unsigned char)a[0])) {
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
    if (dir.empty() || specs.empty())
        usage();
    std::sort(specs.begin(), specs.end(), [](const std::pair<Op, int>& x,
                                             const std::pair<Op, int>& y) {
        return (int)x.first != (int)y.first ? (int)x.first < (int)y.first : x.second < y.second;
    });
    specs.erase(std::unique(specs.begin(), specs.end()), specs.end());

    if (ngpus() == 0)
        die("no CUDA device usable by sppark (compute capability >= 7.0 with cooperative launch)");
    const gpu_t& gpu = select_gpu(0);
    int drv = 0, rt = 0;
    (void)cudaDriverGetVersion(&drv);
    (void)cudaRuntimeGetVersion(&rt);
    printf("sppark %s peer harness, curve %s: %s, %d SMs, %.1f GiB, driver %d.%d, runtime %d.%d, "
           "%u host threads in sppark's pool\n",
           SPPARK_VERSION, CURVE_NAME, gpu.props().name, gpu.sm_count(),
           gpu.props().totalGlobalMem / double(1ull << 30), drv / 1000, (drv % 1000) / 10,
           rt / 1000, (rt % 1000) / 10, (unsigned)gpu.ncpus());
    printf("repeat %d (+1 warm-up per mode), %d rotating input sets, every result checked\n",
           repeat, nsets);
    fflush(stdout);

    try {
    for (auto& s : specs) {
        double t0 = now_ms();
        switch (s.first) {
        case Op::G1:
            bench_msm<bucket_t, point_t, affine_t>("msm-g1", "g1", dir, s.second,
                                                   repeat, nsets, pinned);
            break;
        case Op::G2:
            bench_msm<bucket_fp2_t, point_fp2_t, affine_fp2_t>("msm-g2", "g2", dir, s.second,
                                                               repeat, nsets, pinned);
            break;
        case Op::NTT:
            bench_ntt(dir, s.second, repeat, nsets, pinned);
            break;
        }
        printf("  (%.1f s including loading and checks)\n", (now_ms() - t0) / 1e3);
        fflush(stdout);
    }
    } catch (const cuda_error& e) {
        die(std::string("CUDA error: ") + e.what());
    }

    printf("\nsppark %s on %s, curve %s (times in ms; median of %d runs after one warm-up, min, max)\n",
           SPPARK_VERSION, gpu.props().name, CURVE_NAME, repeat);
    printf("%-7s %-5s %-62s %10s %10s %10s  %s\n", "op", "size", "mode", "median", "min", "max",
           "check");
    for (auto& r : g_rows)
        printf("%-7s %-5s %-62s %10.3f %10.3f %10.3f  %s\n", r.op.c_str(), pow2(r.lg).c_str(),
               r.mode.c_str(), r.med, r.min, r.max, r.ok ? "ok" : "MISMATCH");
    fflush(stdout);

    if (g_any_mismatch) {
        printf("MISMATCH: at least one result differs from the expected value\n");
        return 1;
    }
    printf("all results match the arkworks-computed expected values\n");
    return 0;
}

#endif // !__CUDA_ARCH__
