// Host-only check of the data layout, no GPU needed (g++ and blst only):
// reads sppark-gen's files at one small size and recomputes the expected values
// with sppark's *host* code paths, which use the same types as its device code:
//   * G1 and G2 MSM with sppark's CPU Pippenger (msm/pippenger.hpp, the routine
//     supraseal-c2 runs for its G2 tail MSM), scalars passed with mont = true;
//   * the forward NTT as a plain radix-2 transform over sppark's host fr_t with
//     sppark's own root of unity for the size (ntt/parameters/bls12_381.h or
//     alt_bn128.h): sppark's GPU NTT uses that root, arkworks' domain its own.
// Agreement shows the bytes mean to sppark what they mean to arkworks
// (Montgomery coordinates, X|Y order, c0|c1 order, Montgomery scalars, the same
// domain generator). It says nothing about the GPU kernels: harness.cu checks those.
//
//   hostcheck DATA_DIR LOG        (after: sppark-gen DATA_DIR LOG)
//
// Built for one curve, as the harness: -DFEATURE_BLS12_381 or -DFEATURE_BN254
// (and sppark-gen --curve bn254 for the latter's data).
//
// SPDX-License-Identifier: Apache-2.0

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

#include <msm/pippenger.hpp>
#if defined(FEATURE_BLS12_381)
# include <ntt/parameters/bls12_381.h>
#else
# include <ntt/parameters/alt_bn128.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static_assert(sizeof(affine_t) == 2 * FP_BYTES && sizeof(affine_fp2_t) == 4 * FP_BYTES &&
              sizeof(fr_t) == 32, "layout");

template<class T>
static std::vector<T> read_file(const std::string& path, size_t count)
{
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path.c_str()); exit(2); }
    std::vector<T> v(count);
    if (fread(v.data(), sizeof(T), count, f) != count || fgetc(f) != EOF) {
        fprintf(stderr, "%s: wrong size\n", path.c_str());
        exit(2);
    }
    fclose(f);
    return v;
}

static bool g_fail = false;

template<class bucket_t, class point_t, class affine_t>
static void check_msm(const char* tag, const std::string& dir, int lg, int k,
                      thread_pool_t& pool)
{
    size_t n = (size_t)1 << lg;
    std::string sfx = std::to_string(lg) + "_" + std::to_string(k) + ".bin";
    auto points = read_file<affine_t>(dir + "/" + tag + "_bases_" + std::to_string(lg) + ".bin", n);
    auto scalars = read_file<scalar_t>(dir + "/scalars_" + sfx, n);
    auto want = read_file<unsigned char>(dir + "/" + tag + "_msm_" + sfx, sizeof(affine_t));

    point_t out;
    mult_pippenger<bucket_t>(out, points.data(), n, scalars.data(), true, &pool);
    affine_t got = out;
    bool ok = std::memcmp(&got, want.data(), sizeof(got)) == 0;
    printf("%s 2^%d set %d: sppark CPU pippenger (mont=true) %s the expected value\n",
           tag, lg, k, ok ? "matches" : "DOES NOT match");
    g_fail |= !ok;
}

static void check_ntt(const std::string& dir, int lg, int k)
{
    size_t n = (size_t)1 << lg;
    std::string sfx = std::to_string(lg) + "_" + std::to_string(k) + ".bin";
    auto a = read_file<fr_t>(dir + "/scalars_" + sfx, n);
    auto want = read_file<fr_t>(dir + "/ntt_out_" + sfx, n);

    // sppark's table: forward_roots_of_unity[j] generates the 2^j-th roots;
    // check it is a chain of square roots, then transform with root [lg].
    bool chain = true;
    for (int j = 1; j <= S; j++) {
        fr_t sq = forward_roots_of_unity[j] * forward_roots_of_unity[j];
        chain &= sq == forward_roots_of_unity[j - 1];
    }
    // in-place iterative radix-2 (bit-reverse, then Cooley-Tukey butterflies)
    for (size_t i = 0, j = 0; i < n; i++) {
        if (i < j) std::swap(a[i], a[j]);
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j |= bit;
    }
    for (int s = 1; s <= lg; s++) {
        size_t len = (size_t)1 << s, half = len >> 1;
        fr_t w_len = forward_roots_of_unity[lg];
        for (int t = s; t < lg; t++)
            w_len = w_len * w_len;          // omega_n^(n/len)
        std::vector<fr_t> w(half);
        w[0] = fr_t::one();
        for (size_t i = 1; i < half; i++)
            w[i] = w[i - 1] * w_len;
        for (size_t i = 0; i < n; i += len)
            for (size_t j = 0; j < half; j++) {
                fr_t u = a[i + j], v = a[i + j + half] * w[j];
                a[i + j] = u + v;
                a[i + j + half] = u - v;
            }
    }
    bool ok = std::memcmp(a.data(), want.data(), n * sizeof(fr_t)) == 0;
    printf("ntt 2^%d set %d: root table is a square-root chain: %s; radix-2 with sppark's "
           "root %s the expected (arkworks) output\n",
           lg, k, chain ? "yes" : "NO", ok ? "matches" : "DOES NOT match");
    g_fail |= !ok || !chain;
}

int main(int argc, char* argv[])
{
    if (argc != 3) {
        fprintf(stderr, "usage: hostcheck DATA_DIR LOG\n");
        return 2;
    }
    std::string dir = argv[1];
    int lg = atoi(argv[2]);
    printf("hostcheck: curve %s, 2^%d\n", CURVE_NAME, lg);
    thread_pool_t pool;
    for (int k = 0; k < 2; k++) {
        check_msm<bucket_t, point_t, affine_t>("g1", dir, lg, k, pool);
        check_msm<bucket_fp2_t, point_fp2_t, affine_fp2_t>("g2", dir, lg, k, pool);
        check_ntt(dir, lg, k);
    }
    printf(g_fail ? "hostcheck: FAILED\n" : "hostcheck: all match\n");
    return g_fail ? 1 : 0;
}
