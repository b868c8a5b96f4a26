// Host harness for the CUDA kernels: compiles field.cuh .. msm.cu with g++ and runs
// the kernels by emulating launches (each thread in turn, blockIdx/threadIdx set as
// the device would). Reads one command per line on stdin, writes one result line per
// command on stdout. Numbers are hex integers; an element of Fr/Fq is the integer
// whose little-endian u32 limbs are the element's raw (Montgomery) limbs. Driven by
// run_tests.py, which holds the Python big-int references.
//
// Commands (results: space-separated hex):
//   fr|fq OP a [b]        OP: add sub mul sqr neg dbl to_mont from_mont inv eq is_zero
//   fq2 OP a0 a1 [b0 b1]  OP: add sub mul sqr neg inv
//   g1|g2 OP P [Q]        OP: dbl add (Jacobian, Jacobian), madd (Jacobian, affine),
//                         norm; Jacobian = X Y Z, affine = x y (each an Fq or Fq2)
//   ntt LOG_N a[n] tw[max(1,n/2)]                       -> a after the NTT launches
//   pw OP N LO_BITS a[N] b[N] c pow_lo[2^LO_BITS] pow_hi[ceil(N/2^LO_BITS)]
//                         OP: scale_by_powers scale mul_assign sub_scale -> a
//   msm g1|g2 N C SEG_BITS bases[N] scalars[N]          -> out[0] (X Y Z)
// Scratch vectors have exactly the sizes msm.cu documents; build with
// -fsanitize=address to have any out-of-bounds access stop the run.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "../ntt.cu"
#include "../msm.cu"

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
template <class F> static Jacobian<F> rd_jac() { Jacobian<F> p; p.x = rdf<F>(); p.y = rdf<F>(); p.z = rdf<F>(); return p; }
template <class F> static Affine<F> rd_aff() { Affine<F> p; p.x = rdf<F>(); p.y = rdf<F>(); return p; }
template <class F> static void wr_jac(const Jacobian<F>& p) { wr(p.x); wr(p.y); wr(p.z); }
static u32 rd_u32() { long long v; in >> v; return (u32)v; }

template <class C> static void field_cmd(const std::string& op) {
    typedef Fp<C> F;
    const F a = rdf<F>();
    if (op == "add") wr(fadd(a, rdf<F>()));
    else if (op == "sub") wr(fsub(a, rdf<F>()));
    else if (op == "mul") wr(fmul(a, rdf<F>()));
    else if (op == "sqr") wr(fsqr(a));
    else if (op == "neg") wr(fneg(a));
    else if (op == "dbl") wr(fdbl(a));
    else if (op == "to_mont") wr(to_mont(a));
    else if (op == "from_mont") wr(from_mont(a));
    else if (op == "inv") wr(finv(a));
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
    const Jacobian<F> p = rd_jac<F>();
    if (op == "dbl") wr_jac(jac_double(p));
    else if (op == "add") wr_jac(jac_add(p, rd_jac<F>()));
    else if (op == "madd") wr_jac(jac_add_mixed(p, rd_aff<F>()));
    else if (op == "norm") wr_jac(jac_normalize(p));
    else { fprintf(stderr, "bad op %s\n", op.c_str()); exit(2); }
}

static void ntt_cmd() {
    const u32 log_n = rd_u32();
    const u32 n = 1u << log_n;
    std::vector<Fr> a(n), tw(n / 2 == 0 ? 1 : n / 2);
    for (auto& x : a) x = rdf<Fr>();
    for (auto& x : tw) x = rdf<Fr>();
    launch(n, 1, [&] { ntt_bit_reverse(a.data(), n, log_n); });
    for (u32 s = 0; s < log_n; s++) launch(n / 2, 1, [&] { ntt_butterfly_stage(a.data(), tw.data(), n, log_n, s); });
    for (auto& x : a) wr(x);
}

static void pw_cmd(const std::string& op) {
    const u32 n = rd_u32(), lo_bits = rd_u32();
    std::vector<Fr> a(n), b(n), c(1), lo(1u << lo_bits), hi(((u64)n + (1u << lo_bits) - 1) >> lo_bits);
    for (auto& x : a) x = rdf<Fr>();
    for (auto& x : b) x = rdf<Fr>();
    c[0] = rdf<Fr>();
    for (auto& x : lo) x = rdf<Fr>();
    for (auto& x : hi) x = rdf<Fr>();
    if (op == "scale_by_powers") launch(n, 1, [&] { fr_scale_by_powers(a.data(), lo.data(), hi.data(), n, lo_bits); });
    else if (op == "scale") launch(n, 1, [&] { fr_scale(a.data(), c.data(), n); });
    else if (op == "mul_assign") launch(n, 1, [&] { fr_mul_assign(a.data(), b.data(), n); });
    else if (op == "sub_scale") launch(n, 1, [&] { fr_sub_scale(a.data(), b.data(), c.data(), n); });
    else { fprintf(stderr, "bad op %s\n", op.c_str()); exit(2); }
    for (auto& x : a) wr(x);
}

// The launch sequence of msm.cu's header, with its scratch sizes.
template <class F, class K5, class K6, class K7, class K8>
static void msm_cmd(K5 acc_k, K6 red_k, K7 win_k, K8 fin_k) {
    const u32 n = rd_u32(), c = rd_u32(), seg_bits = rd_u32();
    const u32 W = (255 + c - 1) / c, B = 1u << c, S = 1u << seg_bits;
    std::vector<Affine<F>> bases(n);
    std::vector<Fr> scalars(n);
    for (auto& p : bases) p = rd_aff<F>();
    for (auto& s : scalars) s = rdf<Fr>();
    std::vector<Fr> canon(n);
    std::vector<u32> bucket_start(W * B), bucket_end(W * B, 0), sorted((size_t)W * n);
    std::vector<Jacobian<F>> buckets(W * B), seg_sum(W * S), seg_acc(W * S), window_sums(W), out(1);
    launch(n, 1, [&] { msm_scalars_to_canonical(scalars.data(), canon.data(), n); });
    launch(n, W, [&] { msm_count_digits(canon.data(), bucket_end.data(), n, c); });
    launch(W, 1, [&] { msm_prefix_sum(bucket_start.data(), bucket_end.data(), c); });
    launch(n, W, [&] { msm_scatter(canon.data(), bucket_end.data(), sorted.data(), n, c); });
    launch(B, W, [&] { acc_k(bases.data(), sorted.data(), bucket_start.data(), bucket_end.data(), buckets.data(), n, c); });
    launch(S, W, [&] { red_k(buckets.data(), seg_sum.data(), seg_acc.data(), c, seg_bits); });
    launch(W, 1, [&] { win_k(seg_sum.data(), seg_acc.data(), window_sums.data(), c, seg_bits); });
    launch(1, 1, [&] { fin_k(window_sums.data(), out.data(), c); });
    wr_jac(out[0]);
}

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        in.clear();
        in.str(line);
        std::string kind, op;
        in >> kind;
        if (kind == "ntt") { ntt_cmd(); printf("\n"); continue; }
        in >> op;
        if (kind == "fr") field_cmd<FrCfg>(op);
        else if (kind == "fq") field_cmd<FqCfg>(op);
        else if (kind == "fq2") fq2_cmd(op);
        else if (kind == "g1") curve_cmd<Fq>(op);
        else if (kind == "g2") curve_cmd<Fq2>(op);
        else if (kind == "pw") pw_cmd(op);
        else if (kind == "msm" && op == "g1")
            msm_cmd<Fq>(msm_g1_bucket_accumulate, msm_g1_bucket_reduce, msm_g1_window_reduce, msm_g1_final);
        else if (kind == "msm" && op == "g2")
            msm_cmd<Fq2>(msm_g2_bucket_accumulate, msm_g2_bucket_reduce, msm_g2_window_reduce, msm_g2_final);
        else { fprintf(stderr, "bad command %s %s\n", kind.c_str(), op.c_str()); return 2; }
        printf("\n");
    }
    return 0;
}
