#!/usr/bin/env python3
"""Host tests of the CUDA kernels against Python big-int references.

Builds harness.cpp with g++ two ways (chain: the carry chains with the carry flag
emulated, i.e. the same chain code the device runs as PTX; asan: the same under
AddressSanitizer + UBSan, which also checks the documented MSM scratch sizes), and on
request a third (tsan: ThreadSanitizer), each once per curve (field.cuh's curve block:
-DCRU_CURVE_BN254 for BN254), feeds every build of a curve the same commands on fresh
random inputs and compares each result with the curve's reference. Prints the seed;
rerun with --seed S (each curve's cases come from the seed and the curve's name, so
--curve picks one curve's cases as they were).

Usage: run_tests.py [--seed S] [--quick] [--builds chain,asan[,tsan]] [--only ones,msm,...]
                    [--curve bls12-381|bn254|all]
Ends with 'N passed, N failed'; exit status 1 on any failure."""
import argparse, os, random, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
from math import isqrt

HERE = os.path.dirname(os.path.abspath(__file__))

# The curves of field.cuh's curve blocks. g1, g2: the generators arkworks names (G2's
# coordinates c0 + c1 u); b, b2: G1's and G2's b, b2 None for b / (9 + u) (BN254's
# twist); generator: Fr's multiplicative generator (arkworks' GENERATOR), whose power
# (r - 1) / 2^two_adicity is the 2^two_adicity-th root of unity the NTT cases start from.
CURVES = {
    "bls12-381": dict(
        defines=[],
        r=0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001,
        p=0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB,
        two_adicity=32, generator=7, b=4, b2=(4, 4),
        g1=(0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB,
            0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1),
        g2=((0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
             0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E),
            (0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
             0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE)),
    ),
    "bn254": dict(
        defines=["-DCRU_CURVE_BN254"],
        r=0x30644E72E131A029B85045B68181585D2833E84879B9709143E1F593F0000001,
        p=0x30644E72E131A029B85045B68181585D97816A916871CA8D3C208C16D87CFD47,
        two_adicity=28, generator=5, b=3, b2=None,
        g1=(1, 2),
        g2=((0x1800DEEF121F1E76426A00665E5C4479674322D4F75EDADD46DEBD5CD992F6ED,
             0x198E9393920D483A7260BFB731FB5D25F1AA493335A9E71297E485B7AEF312C2),
            (0x12C85EA5DB8C6DEB4AAB71808DCB408FE3D1E7690C43D37B4CE6CC0166FA7DAA,
             0x090689D0585FF075EC9E99AD690C3395BC4B313370B38EF355ACDADCD122975B)),
    ),
}

# The curve under test (select_curve): its fields, groups and the constants the kernels
# derive from them. Every function below reads these at call time.
R = P = None
FIELDS = {}  # "fr" / "fq": (modulus, Montgomery R bits = 32 x limbs)
GROUPS = {}  # "g1" / "g2": (field, generator, b)
DIGIT_BITS = TWO_ADICITY = GENERATOR = None
SENTINEL = None  # one Fq of the harness's filler bytes, as printed
DEVICE_TILE = {}  # msm.cu's step 6-7 block on the device (msm_reduce_tile)


def mont(x, f):
    m, bits = FIELDS[f]
    return x * (1 << bits) % m


def unmont(x, f):
    m, bits = FIELDS[f]
    return x * pow(1 << bits, -1, m) % m


def h(x):
    return format(x, "x")


# ----------------------------------------------------------------- fields (values)
class Fq1:
    zero, one = 0, 1
    add = staticmethod(lambda a, b: (a + b) % P)
    sub = staticmethod(lambda a, b: (a - b) % P)
    mul = staticmethod(lambda a, b: a * b % P)
    inv = staticmethod(lambda a: pow(a, -1, P))
    rand = staticmethod(lambda rng: rng.randrange(P))
    enc = staticmethod(lambda a: [h(mont(a, "fq"))])  # raw Montgomery limbs as hex
    dec = staticmethod(lambda t: unmont(int(t[0], 16), "fq"))
    width = 1


class Fq2:
    zero, one = (0, 0), (1, 0)
    add = staticmethod(lambda a, b: ((a[0] + b[0]) % P, (a[1] + b[1]) % P))
    sub = staticmethod(lambda a, b: ((a[0] - b[0]) % P, (a[1] - b[1]) % P))
    mul = staticmethod(lambda a, b: ((a[0] * b[0] - a[1] * b[1]) % P, (a[0] * b[1] + a[1] * b[0]) % P))

    @staticmethod
    def inv(a):
        t = pow(a[0] * a[0] + a[1] * a[1], -1, P)
        return (a[0] * t % P, -a[1] * t % P)

    rand = staticmethod(lambda rng: (rng.randrange(P), rng.randrange(P)))
    enc = staticmethod(lambda a: [h(mont(a[0], "fq")), h(mont(a[1], "fq"))])
    dec = staticmethod(lambda t: (unmont(int(t[0], 16), "fq"), unmont(int(t[1], 16), "fq")))
    width = 2


# ----------------------------------------------------------------- curves (affine, None = infinity)
def on_curve(F, b, pt):
    if pt is None:
        return True
    x, y = pt
    return F.mul(y, y) == F.add(F.mul(F.mul(x, x), x), b)


def aff_add(F, a, b):
    if a is None:
        return b
    if b is None:
        return a
    (x1, y1), (x2, y2) = a, b
    if x1 == x2:
        if y1 != y2 or y1 == F.zero:
            return None
        lam = F.mul(F.mul((3, 0) if F is Fq2 else 3, F.mul(x1, x1)), F.inv(F.add(y1, y1)))
    else:
        lam = F.mul(F.sub(y2, y1), F.inv(F.sub(x2, x1)))
    x3 = F.sub(F.sub(F.mul(lam, lam), x1), x2)
    return (x3, F.sub(F.mul(lam, F.sub(x1, x3)), y1))


def aff_neg(F, a):
    return None if a is None else (a[0], F.sub(F.zero, a[1]))


def aff_double_times(F, p, k):
    """2^k p, by k doublings."""
    for _ in range(k):
        p = aff_add(F, p, p)
    return p


def aff_mul(F, k, a):
    acc = None
    for bit in bin(k)[2:] if k else "":
        acc = aff_add(F, acc, acc)
        if bit == "1":
            acc = aff_add(F, acc, a)
    return acc


def enc_xyzz(F, rng, pt):
    """A random XYZZ representative (X, Y, ZZ, ZZZ) = (x z^2, y z^3, z^2, z^3); infinity as (.., .., 0, 0)."""
    if pt is None:
        return F.enc(F.rand(rng)) + F.enc(F.rand(rng)) + F.enc(F.zero) + F.enc(F.zero)
    z = F.rand(rng)
    if z == F.zero:
        z = F.one
    z2 = F.mul(z, z)
    z3 = F.mul(z2, z)
    return F.enc(F.mul(pt[0], z2)) + F.enc(F.mul(pt[1], z3)) + F.enc(z2) + F.enc(z3)


def enc_aff(F, pt):
    return ["0"] * (2 * F.width) if pt is None else F.enc(pt[0]) + F.enc(pt[1])


def dec_xyzz(F, toks):
    """The affine point of an XYZZ output, or 'bad' when ZZ^3 != ZZZ^2 (not a valid XYZZ)."""
    w = F.width
    X, Y, ZZ, ZZZ = (F.dec(toks[k * w:(k + 1) * w]) for k in range(4))
    if ZZ == F.zero:
        return None if ZZZ == F.zero else "bad"
    if F.mul(F.mul(ZZ, ZZ), ZZ) != F.mul(ZZZ, ZZZ):
        return "bad"
    return (F.mul(X, F.inv(ZZ)), F.mul(Y, F.inv(ZZZ)))


# ----------------------------------------------------------------- the curve under test
def limbs32(m):
    return -(-m.bit_length() // 32)


def select_curve(name):
    """Makes `name` the curve under test."""
    global R, P, FIELDS, GROUPS, DIGIT_BITS, TWO_ADICITY, GENERATOR, SENTINEL, DEVICE_TILE
    c = CURVES[name]
    R, P = c["r"], c["p"]
    FIELDS = {"fr": (R, 32 * limbs32(R)), "fq": (P, 32 * limbs32(P))}
    b2 = c["b2"] if c["b2"] is not None else Fq2.mul((c["b"], 0), Fq2.inv((9, 1)))
    GROUPS = {"g1": (Fq1, c["g1"], c["b"]), "g2": (Fq2, c["g2"], b2)}
    # r's bits plus one for the last signed digit's carry (field.cuh CRU_SCALAR_DIGIT_BITS)
    DIGIT_BITS = R.bit_length() + 1
    TWO_ADICITY, GENERATOR = c["two_adicity"], c["generator"]
    assert (R - 1) >> TWO_ADICITY & 1 and pow(GENERATOR, (R - 1) // 2, R) == R - 1
    SENTINEL = "a5" * (4 * limbs32(P))
    # The largest power of two of threads whose two XYZZ points (4 coordinates of
    # `width` Fq each) fit in msm.cu's CRU_REDUCE_SHARED_BYTES.
    DEVICE_TILE = {}
    for g, (F, _, _) in GROUPS.items():
        fit = 49152 // (2 * 4 * F.width * 4 * limbs32(P))
        DEVICE_TILE[g] = 1 << (fit.bit_length() - 1)
    for g, (F, gen, b) in GROUPS.items():
        assert on_curve(F, b, gen) and aff_mul(F, R, gen) is None, f"{name} {g} generator"


# ----------------------------------------------------------------- test cases
class Cases:
    def __init__(self):
        self.items = []  # (name, command line, check(tokens) -> bool)

    def add(self, name, cmd, check):
        self.items.append((name, cmd, check))


def expect_tokens(expected):
    return lambda toks: toks == expected


def field_cases(cs, rng, quick):
    for f, (m, bits) in FIELDS.items():
        Rm = (1 << bits) % m
        Rinv = pow(1 << bits, -1, m)
        edges = [0, 1, 2, m - 1, m - 2, Rm, (1 << (bits - 32)) - 1, m >> 1, (m >> 1) + 1]
        vals = edges + [rng.randrange(m) for _ in range(20 if quick else 200)]
        pairs = [(a, b) for a in edges for b in edges] + [(rng.choice(vals), rng.choice(vals)) for _ in range(200 if quick else 2000)]
        ref = {
            "add": lambda a, b: (a + b) % m, "sub": lambda a, b: (a - b) % m, "mul": lambda a, b: a * b * Rinv % m,
            # the same product with each limb pair as one wide multiply-add (field.cuh mad_pair)
            "mul_wide": lambda a, b: a * b * Rinv % m,
        }
        for op, fn in ref.items():
            for a, b in pairs:
                cs.add(f"{f} {op}", f"{f} {op} {h(a)} {h(b)}", expect_tokens([format(fn(a, b), "0%dx" % (bits // 4))]))
        for a, b in pairs[: len(pairs) // 4]:
            cs.add(f"{f} eq", f"{f} eq {h(a)} {h(b)}", expect_tokens([str(int(a == b))]))
            cs.add(f"{f} eq", f"{f} eq {h(a)} {h(a)}", expect_tokens(["1"]))
        unary = {
            "sqr": lambda a: a * a * Rinv % m, "neg": lambda a: -a % m, "dbl": lambda a: 2 * a % m,
            "to_mont": lambda a: a * Rm % m, "from_mont": lambda a: a * Rinv % m,
            # raw a is the Montgomery form of a/R: its inverse's form is R^2/a; 0 -> 0
            "inv": lambda a: pow(a, -1, m) * Rm * Rm % m if a else 0,
            "is_zero": None,
        }
        for op, fn in unary.items():
            for a in vals:
                exp = str(int(a == 0)) if op == "is_zero" else format(fn(a), "0%dx" % (bits // 4))
                cs.add(f"{f} {op}", f"{f} {op} {h(a)}", expect_tokens([exp]))
        sqr_cases(cs, rng, quick, f, m, bits, Rm, Rinv)


def sqrt_mod(x, m):
    """A square root of x mod the prime m (Tonelli-Shanks), or None."""
    x %= m
    if x == 0:
        return 0
    if pow(x, (m - 1) // 2, m) != 1:
        return None
    q, s = m - 1, 0
    while q % 2 == 0:
        q, s = q // 2, s + 1
    z = 2
    while pow(z, (m - 1) // 2, m) != m - 1:
        z += 1
    c, r, t, k = pow(z, q, m), pow(x, (q + 1) // 2, m), pow(x, q, m), s
    while t != 1:
        i, tt = 0, t
        while tt != 1:
            tt, i = tt * tt % m, i + 1
        b = pow(c, 1 << (k - i - 1), m)
        r, c, t, k = r * b % m, b * b % m, t * b * b % m, i
    return r


def sqr_cases(cs, rng, quick, f, m, bits, Rm, Rinv):
    """fsqr has its own code (cross products once, its own reduction): limb patterns
    whose square carries through whole rows, values at word boundaries below m, and
    inputs whose Montgomery square is at the edges of the final subtraction."""
    n = bits // 32
    vals = {0, 1, 2, m - 1, m - 2, (m - 1) // 2, (m + 1) // 2}
    for k in range(n):
        vals |= {1 << (32 * k), 1 << (32 * k + 31), (1 << (32 * k)) - 1, (1 << (32 * k + 16)) - 1, m - (1 << (32 * k))}
        vals.add(((m >> (32 * k)) << (32 * k)) - 1)  # m's top words, all ones below
        vals.add((m >> (32 * k)) << (32 * k))
    vals.add(sum(0xFFFFFFFF << (64 * k) for k in range(n // 2)))
    vals.add(sum(0xFFFFFFFF << (64 * k + 32) for k in range(n // 2 - 1)))
    vals |= {(1 << (32 * n // 2)) - 1, 1 << (32 * n // 2), isqrt(m), isqrt(m) + 1, isqrt(m << 32), isqrt(1 << bits)}
    for target in (0, 1, 2, m - 1, m - 2, m // 2, Rm, m - Rm):
        root = sqrt_mod(target * (1 << bits), m)  # raw a with a^2 / R = target
        if root is not None:
            vals |= {root, m - root}
    patterns = (0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0xFFFFFFFE)
    for _ in range(100 if quick else 1000):
        v = sum(rng.choice(patterns) << (32 * k) for k in range(n))
        vals.add(v if v < m else v % m)
    for _ in range(100 if quick else 1000):
        vals |= {rng.randrange(m), m - 1 - rng.randrange(1 << 64)}
    vals = sorted(v for v in vals if 0 <= v < m)
    for a in vals:
        cs.add(f"{f} sqr edges", f"{f} sqr {h(a)}", expect_tokens([format(a * a * Rinv % m, "0%dx" % (bits // 4))]))


def fq2_cases(cs, rng, quick):
    F = Fq2
    edges = [(0, 0), (1, 0), (0, 1), (P - 1, P - 1), (P - 1, 0), (0, P - 1)]
    vals = edges + [F.rand(rng) for _ in range(20 if quick else 200)]
    for a in vals:
        b = rng.choice(vals)
        for op, fn in (("add", F.add), ("sub", F.sub), ("mul", F.mul)):
            exp = F.enc(fn(a, b))
            cs.add(f"fq2 {op}", f"fq2 {op} {' '.join(F.enc(a) + F.enc(b))}", lambda t, exp=exp: [int(x, 16) for x in t] == [int(x, 16) for x in exp])
        for op, fn in (("sqr", lambda x: F.mul(x, x)), ("neg", lambda x: F.sub(F.zero, x)),
                       ("inv", lambda x: F.zero if x == F.zero else F.inv(x))):
            exp = F.enc(fn(a))
            cs.add(f"fq2 {op}", f"fq2 {op} {' '.join(F.enc(a))}", lambda t, exp=exp: [int(x, 16) for x in t] == [int(x, 16) for x in exp])
    # Products and squares of Montgomery words at the ends of [0, p): the lazy product's
    # (fq2.cuh CRU_FQ2_LAZY) unreduced sums near 2p, v0 - v1 at its most negative and
    # zero, and reductions of sums near 2p^2.
    bits = FIELDS["fq"][1]
    raw = [0, 1, 2, P - 1, P - 2, (P - 1) // 2, (P + 1) // 2, (1 << (bits - 32)) - 1, (1 << bits) % P]
    ends = [(unmont(x, "fq"), unmont(y, "fq")) for x in raw for y in raw]
    others = ends if not quick else [rng.choice(ends) for _ in range(8)] + [ends[-1]]
    for a in ends:
        for b in others + [F.rand(rng)]:
            exp = F.enc(F.mul(a, b))
            cs.add("fq2 mul ends", f"fq2 mul {' '.join(F.enc(a) + F.enc(b))}", lambda t, exp=exp: [int(x, 16) for x in t] == [int(x, 16) for x in exp])
        exp = F.enc(F.mul(a, a))
        cs.add("fq2 sqr ends", f"fq2 sqr {' '.join(F.enc(a))}", lambda t, exp=exp: [int(x, 16) for x in t] == [int(x, 16) for x in exp])


def random_points(g, rng, count):
    F, gen, _ = GROUPS[g]
    return [aff_mul(F, rng.randrange(1, R), gen) for _ in range(count)]


def curve_cases(cs, rng, quick, pts):
    for g, (F, gen, b) in GROUPS.items():
        ps = pts[g]
        assert all(on_curve(F, b, p) for p in ps[:3])

        def check_point(expected, F=F):
            return lambda t: dec_xyzz(F, t) == expected

        trials = 4 if quick else 20
        for _ in range(trials):
            p, q = rng.choice(ps), rng.choice(ps)
            np_ = aff_neg(F, p)
            for (a, bb) in ((p, q), (p, p), (p, np_), (None, p), (p, None), (None, None)):
                cs.add(f"{g} add", f"{g} add {' '.join(enc_xyzz(F, rng, a) + enc_xyzz(F, rng, bb))}", check_point(aff_add(F, a, bb)))
                cs.add(f"{g} madd", f"{g} madd {' '.join(enc_xyzz(F, rng, a) + enc_aff(F, bb))}", check_point(aff_add(F, a, bb)))
            for a in (p, None):
                cs.add(f"{g} dbl", f"{g} dbl {' '.join(enc_xyzz(F, rng, a))}", check_point(aff_add(F, a, a)))
            cs.add(f"{g} adbl", f"{g} adbl {' '.join(enc_aff(F, p))}", check_point(aff_add(F, p, p)))


def root_of_unity(k):
    t = (R - 1) >> TWO_ADICITY
    w = pow(GENERATOR, t, R)
    return pow(w, 1 << (TWO_ADICITY - k), R)


def fr_list(t):
    """The values of Fr outputs; a word pattern >= r (a non-canonical representative a
    kernel left unreduced) as None, which no expected value equals."""
    return [unmont(int(x, 16), "fr") if int(x, 16) < R else None for x in t]


def bitrev(i, bits):
    return int(format(i, "0%db" % bits)[::-1], 2) if bits else 0


def dft(a, w):
    """sum_j a_j w^(i j), by the definition."""
    n = len(a)
    wp = [pow(w, i, R) for i in range(n)]
    return [sum(a[j] * wp[(i * j) % n] for j in range(n)) % R for i in range(n)]


def split_tables(g, n, lo_bits, c=1):
    """pow_lo[k] = c g^k (k < 2^lo_bits), pow_hi[k] = g^(k 2^lo_bits) (k < ceil(n / 2^lo_bits))."""
    lo = [c * pow(g, i, R) % R for i in range(1 << lo_bits)]
    hi = [pow(g, i << lo_bits, R) for i in range(-(-n // (1 << lo_bits)))]
    return lo, hi


LOAD_REV, STORE_REV, PAIRED, SCALE_LOADS = 8, 16, 32, 64  # the tile kernels' layout flags


def split_even(total, most):
    """ceil(total / most) parts as equal as possible, the longer first."""
    m = -(-total // most)
    return [total // m + (1 if i < total % m else 0) for i in range(m)]


def batch_below(log_n, s, k, tile_bits):
    """(g, cshift): the lowest bits below the stages that fill the tile, or, with none
    below, those just above."""
    room = tile_bits - k
    if s >= room:
        return room, 0
    if s == 0:
        return min(room, log_n - k), k
    return s, 0


def tile_plan(log_n, tile_bits):
    """backend-cuda/src/ntt/tiles.rs's fused plan, [(k, g, cshift, layout)], all by
    ntt_tile_e4: one launch reading reversed when it holds the domain; otherwise the
    stages below a centered middle launch in reversed layout (batch bits at the top),
    the middle (paired tiles, reversed in, natural out), those above it in natural
    layout."""
    if log_n == 0:
        return []
    if log_n <= tile_bits:
        return [(log_n, 0, log_n, LOAD_REV)]
    mid = tile_bits - 1 if (tile_bits - 1 - log_n) % 2 == 0 else tile_bits - 2
    side = (log_n - mid) // 2
    plan, s = [], 0
    for k in split_even(side, tile_bits):
        g = min(tile_bits - k, log_n - s - k)
        plan.append((k, g, log_n - g, LOAD_REV | STORE_REV))
        s += k
    plan.append((mid, 0, s + mid, LOAD_REV | PAIRED))
    s += mid
    for k in split_even(side, tile_bits):
        plan.append((k, *batch_below(log_n, s, k, tile_bits), 0))
        s += k
    return plan


WARP_BITS = 6  # ntt_tile_w's tiles: CRU_NTT_TILEW_MAX_BITS


def warp_plan(log_n, tile_bits):
    """backend-cuda/src/ntt/tiles.rs's plan: [(elems, k, g, cshift, layout)]. One
    ntt_tile_w launch (reading reversed) for up to 2^6, one ntt_tile_e4 for up to
    2^tile_bits; otherwise the fused plan's paired middle by e4 and each side in
    ntt_tile_w launches of at most six stages."""
    if log_n == 0:
        return []
    if log_n <= min(WARP_BITS, tile_bits):
        return [("w", log_n, 0, log_n, LOAD_REV)]
    if log_n <= tile_bits:
        return [("4", log_n, 0, log_n, LOAD_REV)]
    mid = tile_bits - 1 if (tile_bits - 1 - log_n) % 2 == 0 else tile_bits - 2
    side = (log_n - mid) // 2
    plan, s = [], 0
    for k in split_even(side, WARP_BITS):
        g = min(WARP_BITS - k, log_n - s - k)
        plan.append(("w", k, g, log_n - g, LOAD_REV | STORE_REV))
        s += k
    plan.append(("4", mid, 0, s + mid, LOAD_REV | PAIRED))
    s += mid
    for k in split_even(side, WARP_BITS):
        plan.append(("w", k, *batch_below(log_n, s, k, WARP_BITS), 0))
        s += k
    return plan


def dit_stages(a, w, stages):
    """The radix-2 DIT stages `stages` on bit-reversed data a (a copy), twiddle base w."""
    n = len(a)
    k = n.bit_length() - 1
    out = list(a)
    wp = [1] * max(1, n // 2)
    for i in range(1, n // 2):
        wp[i] = wp[i - 1] * w % R
    for stage in stages:
        hh = 1 << stage
        for i in range(n):
            if i & hh:
                continue
            wv = wp[(i % hh) << (k - 1 - stage)]
            u, v = out[i], out[i + hh] * wv % R
            out[i], out[i + hh] = (u + v) % R, (u - v) % R
    return out


def fft_ref(a, w):
    """sum_j a_j w^(i j) by the recursive even/odd split (n log n, natural order)."""
    n = len(a)
    if n == 1:
        return list(a)
    w2 = w * w % R
    even, odd = fft_ref(a[0::2], w2), fft_ref(a[1::2], w2)
    out = [0] * n
    x = 1
    for i in range(n // 2):
        t = odd[i] * x % R
        out[i], out[i + n // 2] = (even[i] + t) % R, (even[i] - t) % R
        x = x * w % R
    return out


def edge_mix(rng, n):
    """n inputs, about half of them of Montgomery words at the ends of [0, r) (0, 1,
    r - 1, ...), the rest random: sums and differences at their bounds, where a
    reduction left out shows as a word pattern of r or more (fr_list rejects it)."""
    raws = [0, 1, 2, R - 1, R - 2, R - 3, R - (1 << 32), R - (1 << 64), R >> 1, (R >> 1) + 1]
    return [unmont(rng.choice(raws), "fr") if rng.random() < 0.5 else rng.randrange(R) for _ in range(n)]


def tile_cases(cs, rng, quick):
    """One ntt_tile_e4 and one ntt_tile_w launch (where the tile fits) on any data, for shapes of every kind: the batch below the
    stages (at bit 0 or higher) or above them, none, tiles from 2 to 2^10 elements,
    natural or reversed layouts (reversed in only where one block holds the domain,
    or paired on a centered launch), with each scaling, forward and inverse."""
    enc = lambda v: h(mont(v, "fr"))
    shapes = set()
    for log_n in (1, 2, 3, 5, 7) + (() if quick else (8, 11)):
        for s in range(log_n):
            for k in range(1, log_n - s + 1):
                options = [(g, c) for g in range(0, 11 - k) for c in range(0, log_n)
                           if (c + g <= s or (c >= s + k and c + g <= log_n)) and (g > 0 or c in (0, s + k))]
                for g, c in rng.sample(options, min(len(options), 1 if quick else 2)):
                    layouts = [0, LOAD_REV | STORE_REV] + ([LOAD_REV] if k + g == log_n else [])
                    shapes.add((log_n, s, k, g, c, rng.choice(layouts)))
                if 2 * s + k == log_n and k <= 9:
                    shapes.add((log_n, s, k, 0, s + k, LOAD_REV | PAIRED))
    shapes = sorted(shapes)
    paired = [x for x in shapes if x[5] & PAIRED]
    # A layout change in one stage (the warp tile's: no shuffle between its reads and
    # its writes), one block holding the domain: the reads must come before the writes.
    one_stage = [(log_n, s, 1, log_n - 1, c, LOAD_REV) for log_n in (3, 6) for s, c in ((0, 1), (log_n - 1, 0))]
    shapes = sorted(set(rng.sample(shapes, min(len(shapes), 40 if quick else 160)) + paired + one_stage))
    for case, (log_n, s, k, g, c, layout) in enumerate(shapes):
        n = 1 << log_n
        w = root_of_unity(log_n)
        tw = [pow(w, i, R) for i in range(max(1, n // 2))]
        inv = rng.randrange(2)
        scale = rng.choice([0, 2, 4, SCALE_LOADS])
        lo_bits = rng.randrange(log_n + 1)
        gp = rng.randrange(1, R)
        cval = rng.randrange(R)
        lo, hi = split_tables(gp, n, lo_bits, rng.choice([1, cval]))
        pw = lambda p: lo[p % len(lo)] * hi[p >> lo_bits] % R
        a = edge_mix(rng, n) if case % 2 else [rng.randrange(R) for _ in range(n)]
        at_in = lambda i: bitrev(i, log_n) if layout & LOAD_REV else i
        at_out = lambda i: bitrev(i, log_n) if layout & STORE_REV else i
        x = [a[at_in(i)] * (pw(at_in(i)) if scale == SCALE_LOADS else 1) % R for i in range(n)]
        x = dit_stages(x, pow(w, -1, R) if inv else w, range(s, s + k))
        exp = [0] * n
        for i, v in enumerate(x):
            p = at_out(i)
            exp[p] = v * (cval if scale == 2 else pw(p) if scale == 4 else 1) % R
        flags = inv | scale | layout
        data = " ".join(enc(v) for v in a + tw + [cval] + lo + hi)
        # Every kernel where the tile fits (ntt_tile_w's go to 2^6, never paired)
        for elems, max_bits in ((4, 10), ("w", WARP_BITS)):
            if elems == "w" and layout & PAIRED:
                continue
            if k + g + (1 if layout & PAIRED else 0) <= max_bits:
                cmd = f"ntt_tile {elems} {log_n} {s} {k} {g} {c} {flags} {lo_bits} " + data
                cs.add(f"ntt_tile_e{elems} 2^{log_n} s={s} k={k} g={g} cshift={c} flags={flags}", cmd,
                       lambda t, exp=exp: fr_list(t) == exp)


def transform_tiles_cases(cs, rng, quick):
    """The transforms' four sequences (tiles.rs's plan, at several tile sizes, and the
    fused plan all by ntt_tile_e4, or ntt_tile_w where its tiles fit) against
    arkworks' definitions: fft; ifft = (1/n) dft(w^-1); coset fft = fft(a_i g^i);
    coset ifft = ifft, then a_i *= g^-i."""
    enc = lambda v: h(mont(v, "fr"))
    for k in range(0, 9 if quick else 13):
        n = 1 << k
        w = root_of_unity(k)
        n_inv = pow(n, -1, R)
        g = rng.choice([7, rng.randrange(2, R)])
        g_inv = pow(g, -1, R)
        a = edge_mix(rng, n) if k % 2 else [rng.randrange(R) for _ in range(n)]
        fwd = fft_ref(a, w)
        inv = [x * n_inv % R for x in fft_ref(a, pow(w, -1, R))]
        coset = fft_ref([x * pow(g, i, R) % R for i, x in enumerate(a)], w)
        exps = {
            "forward": (g, fwd),
            "inverse": (g, inv),
            "coset": (g, coset),
            "coset_inv": (g_inv, [x * pow(g_inv, i, R) % R for i, x in enumerate(inv)]),
        }
        runs = set()
        for tb in (10, 9, 4) if quick else (10, 9, 8, 5, 4):
            plan = tile_plan(k, tb)
            tile = max(kk + gg + (1 if ll & PAIRED else 0) for kk, gg, cc, ll in plan) if plan else 0
            paired = any(ll & PAIRED for kk, gg, cc, ll in plan)
            for elems, max_bits in (("4", 10), ("w", WARP_BITS)):
                if tile <= max_bits and not (elems == "w" and paired):
                    runs.add(tuple((elems, *x) for x in plan))
        for tb in (10, 9, 7, 4) if quick else (10, 9, 8, 7, 5, 4):
            runs.add(tuple(warp_plan(k, tb)))
        for kind, (offset, exp) in exps.items():
            for plan in sorted(runs):
                spec = f"{len(plan)} " + " ".join(f"{ee} {kk} {gg} {cc} {ll}" for ee, kk, gg, cc, ll in plan)
                cmd = f"transform_tiles {kind} {k} {spec} {enc(w)} {enc(offset)} {enc(n_inv)} " + " ".join(enc(v) for v in a)
                cs.add(f"transform_tiles {kind} 2^{k} plan={plan}", cmd,
                       lambda t, exp=exp: fr_list(t) == exp)


def table_cases(cs, rng, quick):
    enc = lambda v: h(mont(v, "fr"))
    for count in (1, 2, 3, 7, 64, 100):
        g = rng.randrange(1, R)
        for first in (1, rng.randrange(R)):
            bits = max(0, (count - 1).bit_length())
            pows = [pow(g, 1 << b, R) for b in range(bits)]
            exp = [first * pow(g, i, R) % R for i in range(count)]
            cs.add("fr_powers", f"powers {count} {enc(first)} " + " ".join(enc(v) for v in pows),
                   lambda t, exp=exp: fr_list(t) == exp)
    for n, lo_bits in ((1, 0), (5, 1), (64, 3), (100, 4), (100, 7)):
        g = rng.randrange(1, R)
        lo, hi = split_tables(g, n, lo_bits)
        exp = [pow(g, i, R) for i in range(n)]
        cs.add("fr_power_table", f"power_table {n} {lo_bits} " + " ".join(enc(v) for v in lo + hi),
               lambda t, exp=exp: fr_list(t) == exp)


def scan_cases(cs, rng, quick):
    # Chunks' sums fewer than, as many as and more than the block's threads (16 here).
    for m, chunk in ((1, 4), (4, 4), (5, 4), (17, 4), (64, 4), (65, 4), (300, 8), (1000, 64), (1000, 1), (63, 4)):
        for kind in ("random", "zeros", "sparse"):
            v = [rng.randrange(1000) if kind == "random" else (rng.randrange(3) if rng.random() < 0.1 else 0) if kind == "sparse" else 0
                 for _ in range(m)]
            exp = [sum(v[:k]) for k in range(m + 1)]
            cs.add(f"scan {kind}", f"scan {m} {chunk} " + " ".join(str(x) for x in v),
                   lambda t, exp=exp: [int(x, 16) for x in t] == exp)


def pw_cases(cs, rng, quick):
    enc = lambda v: h(mont(v, "fr"))
    for n in (1, 2, 5, 64, 100, 1000):
        logn = max(0, (n - 1).bit_length())
        for lo_bits in sorted({0, (logn + 1) // 2, logn, logn + 2}):
            a = [rng.randrange(R) for _ in range(n)]
            b = [rng.randrange(R) for _ in range(n)]
            c = rng.randrange(R)
            g = rng.randrange(1, R)
            # The coset inverse premultiplies pow_lo by 1/n: half the cases do so by c.
            pre = rng.choice([1, c])
            lo, hi = split_tables(g, n, lo_bits, pre)
            tail = " ".join(enc(v) for v in a + b + [c] + lo + hi)
            exps = {
                "mul_assign": [x * y % R for x, y in zip(a, b)],
                "sub_scale": [(x - y) * c % R for x, y in zip(a, b)],
            }
            for op, exp in exps.items():
                cs.add(f"pw {op}", f"pw {op} {n} {lo_bits} {tail}", lambda t, exp=exp: fr_list(t) == exp)


def signed_digits(s, c):
    """msm.cu's recoding: W = ceil(DIGIT_BITS / c) digits in [-2^(c-1), 2^(c-1)], sum d_w 2^(cw) = s."""
    W = -(-DIGIT_BITS // c)
    out, carry = [], 0
    for w in range(W):
        raw = ((s >> (w * c)) & ((1 << c) - 1)) + carry
        if raw > 1 << (c - 1):
            out.append(raw - (1 << c))
            carry = 1
        else:
            out.append(raw)
            carry = 0
    assert carry == 0 and sum(d << (c * w) for w, d in enumerate(out)) == s
    return out


def msm_cases(cs, rng, quick, pts):
    for g, (F, gen, _) in GROUPS.items():
        ps = pts[g]
        configs = []
        for n in (1, 2, 7, 100):
            bases = [rng.choice(ps) for _ in range(n)]
            scalars = [rng.randrange(R) for _ in range(n)]
            configs.append((f"n={n} random", bases, scalars))
        n = 7 if quick else 33
        some = [rng.choice(ps) for _ in range(n)]
        configs += [
            ("zero scalars", some, [0] * n),
            ("scalar -1", some, [R - 1] * n),
            ("all-equal scalars", some, [rng.randrange(R)] * n),
            ("top bits set", some, [R - 1 - rng.randrange(1 << 64) for _ in range(n)]),
            ("small scalars", some, [rng.randrange(4) for _ in range(n)]),
            ("identity bases", [None if i % 2 else p for i, p in enumerate(some)], [rng.randrange(R) for _ in range(n)]),
            ("repeated bases", [some[0]] * n, [rng.randrange(R) for _ in range(n)]),
            ("P and -P", [some[0], aff_neg(F, some[0])] * 3, [5] * 6),
            ("P + P in one bucket", [some[0]] * 4, [1, 1, 3, 3]),
            ("one long bucket", [rng.choice(ps) for _ in range(40)], [1] * 40),
            # Runs of carries that meet: the fold's tree must stop at each bucket's end.
            ("long buckets side by side", [rng.choice(ps) for _ in range(45)], [1] * 17 + [2] * 21 + [3] * 7),
            # One bucket of one point: doublings, then additions of P to kP.
            ("one point many times", [some[0]] * 24, [1] * 24),
            # A sum that cancels to infinity mid-run, then starts again.
            ("cancel and restart", [some[0], aff_neg(F, some[0]), some[0], some[0], some[1]], [1] * 5),
        ]
        # (c, chunk, seg_bits): chunks shorter and longer than buckets, segments of 1
        # bucket up to the whole window.
        params = [(1, 1, 0), (2, 3, 1), (3, 1, 0), (4, 2, 3), (5, 4, 2), (8, 64, 4), (13, 5, 6), (16, 7, 15)]
        if quick:
            params = [(2, 3, 1), (5, 4, 2), (8, 64, 4)]
        # The reduction's tile cycles through the device's and smaller ones (more step-7
        # passes).
        tiles = [DEVICE_TILE[g], 2, 4]
        k = 0
        for name, bases, scalars in configs:
            for c, chunk, seg in params:
                if len(bases) == 100 and c <= 2 and g == "g2":
                    continue  # 128+ windows x 100 points of G2: slow on the host, nothing new
                if c >= 13 and len(bases) > 7:
                    continue  # 2^15 buckets per window: slow on the host
                W = -(-DIGIT_BITS // c)
                add_msm_case(cs, g, F, name, bases, scalars, c, chunk, seg, W, tiles[k % 3])
                k += 1
        # Window planes: all windows' digits in the buckets of wp windows, over
        # precomputed planes 2^(c wp j) P (stride > n leaves unused points between planes).
        plane_params = [(8, 64, 4, 1), (8, 5, 2, 3), (5, 4, 2, 2), (13, 5, 6, 1), (16, 7, 15, 2), (8, 3, 1, 1)]
        if quick:
            plane_params = [(8, 5, 2, 3), (5, 4, 2, 2), (8, 3, 1, 1)]
        plane_configs = configs[:5] + configs[-3:] if not quick else configs[1:3] + configs[-3:-2]
        for name, bases, scalars in plane_configs:
            for c, chunk, seg, wp in plane_params:
                if c >= 13 and len(bases) > 7:
                    continue
                add_msm_case(cs, g, F, name, bases, scalars, c, chunk, seg, wp, tiles[k % 3])
                k += 1


def tree_terms(F, buckets, seg):
    """msm.cu's steps 6-7 over one window's buckets B_b: [G, U_0, .., U_{log2 S - 1}],
    G = sum_s sum_j (j + 1) B_{sL+j}, U_k = sum of the segment sums T_s whose s has bit k set."""
    L = 1 << seg
    S = len(buckets) // L
    G, T = None, []
    for s in range(S):
        run = acc = None
        for j in reversed(range(L)):
            run = aff_add(F, run, buckets[s * L + j])
            acc = aff_add(F, acc, run)
        G = aff_add(F, G, acc)
        T.append(run)
    U = []
    for k in range(S.bit_length() - 1):
        u = None
        for s in range(S):
            if s >> k & 1:
                u = aff_add(F, u, T[s])
        U.append(u)
    return [G] + U


def add_msm_case(cs, g, F, name, bases, scalars, c, chunk, seg, wp, tile):
    """An msm command with reduction blocks of up to `tile` threads: W digit windows over
    ceil(W / wp) planes, wp bucket windows."""
    W = -(-DIGIT_BITS // c)
    planes = -(-W // wp)
    stride = len(bases) + (3 if planes > 1 else 0)
    table, plane = [], list(bases)
    for j in range(planes):
        if j:  # plane j = 2^(c wp j) * plane j-1
            plane = [aff_double_times(F, b, c * wp) for b in plane]
        table += plane + [bases[0]] * (stride - len(bases))
    digits = [signed_digits(s, c) for s in scalars]
    buckets = [[None] * (1 << (c - 1)) for _ in range(wp)]
    for w in range(W):
        j = w // wp
        for bb, d in zip(table[j * stride:j * stride + len(bases)], digits):
            if d[w]:
                b = buckets[w % wp]
                b[abs(d[w]) - 1] = aff_add(F, b[abs(d[w]) - 1], bb if d[w] > 0 else aff_neg(F, bb))
    exp = []
    for v in range(wp):
        acc = None
        for b, pt in enumerate(buckets[v]):
            if pt is not None:
                acc = aff_add(F, acc, aff_mul(F, b + 1, pt))
        exp.append(acc)
    terms = [tree_terms(F, buckets[v], seg) for v in range(wp)]
    for v in range(wp):  # the reference's own identity: G + sum_k 2^(seg + k) U_k = the window sum
        acc = terms[v][0]
        for k, u in enumerate(terms[v][1:]):
            acc = aff_add(F, acc, aff_mul(F, 1 << (seg + k), u))
        assert acc == exp[v], f"tree reference for {name}"
    items = len(terms[0])
    per = 4 * F.width
    tail = f"{len(bases)} {c} {chunk} {seg} {wp} {stride} {planes} " + " ".join(
        sum((enc_aff(F, bb) for bb in table), []) + [h(mont(s, "fr")) for s in scalars])

    def check_tree(t, terms=terms, wp=wp, items=items):
        if len(t) != 2 + wp * items * per or int(t[0], 16) != wp or int(t[1], 16) != items:
            return False
        got = [dec_xyzz(F, t[2 + i * per:2 + (i + 1) * per]) for i in range(wp * items)]
        return got == [pt for window in terms for pt in window]
    note = f"msm {g} {name} c={c} chunk={chunk} seg={seg}" + (f" wp={wp}" if wp < W else "")
    cs.add(f"{note} tree {tile}", f"msm {g} tree {tile} {tail}", check_tree)


def ones_scalar_mixes(rng, n):
    """Witness-like scalar mixes for ones.cu: (name, scalars)."""
    bit = lambda: rng.randrange(2)
    single = [1] * n
    single[rng.randrange(n)] = rng.randrange(2, R)
    edges = [rng.randrange(R) for _ in range(n)]
    edges[0] = edges[-1] = 1
    return [
        ("all ones", [1] * n),
        ("all zeros", [0] * n),
        ("only 0/1", [bit() for _ in range(n)]),
        ("one non-trivial among ones", single),
        ("ones at the span edges", edges),
        ("bit-heavy", [bit() if rng.random() < 0.9 else rng.randrange(R) for _ in range(n)]),
        ("near one", [rng.choice([0, 1, 2, R - 1, R - 2, 1 << 255 if (1 << 255) < R else 3]) for _ in range(n)]),
        ("random", [rng.randrange(R) for _ in range(n)]),
    ]


def ones_cases(cs, rng, quick, pts):
    """ones.cu: the classification (list [ones | rest] in index order, zeros dropped),
    the ones' sum with its in-launch tree over any number of leaves, and the whole
    witness-aware MSM (the ones' sum plus Pippenger over the rest's indices) against
    the plain sum s_i P_i."""
    enc_fr = lambda v: h(mont(v, "fr"))
    for n, chunk in ((1, 64), (5, 1), (5, 2), (64, 64), (65, 64), (200, 3), (300, 64)):
        for name, scalars in ones_scalar_mixes(rng, n):
            ones = [i for i, s in enumerate(scalars) if s == 1]
            rest = [i for i, s in enumerate(scalars) if s not in (0, 1)]
            exp = [h(len(ones)), h(len(rest))] + [h(i) for i in ones + rest]
            cs.add(f"classify {name} chunk={chunk}", f"classify {n} {chunk} " + " ".join(enc_fr(v) for v in scalars),
                   expect_tokens(exp))
    for g, (F, gen, _) in GROUPS.items():
        ps = pts[g]
        nb = 40
        bases = [rng.choice(ps) for _ in range(nb)]
        bases[3] = None  # an identity base
        bases[5] = aff_neg(F, bases[4])  # P and -P
        for count in (1, 2, 3, 7, 33) if quick else (1, 2, 3, 7, 33, 100):
            idx = [rng.randrange(nb) for _ in range(count)]
            if count >= 3:
                idx[:3] = [4, 5, idx[2]]  # a pair summing to infinity
            if count >= 7:
                idx[6] = idx[5 if count > 33 else 2]  # a repeated point: a doubling in the tree
            exp = None
            for i in idx:
                exp = aff_add(F, exp, bases[i])
            # Groups of 2^group_bits leaves: one leaf each, groups that split the leaves
            # unevenly (the last one short), one group for all.
            for leaves, group_bits, order in sorted({(1, 0, 0), (2, 0, 1), (3, 1, 2), (5, 1, 0), (8, 2, 1), (64, 3, 2),
                                                     (count, 30, 0), (count, 2, 1), (count, 5, 2), (count, 0, 0)}):
                if leaves > count:
                    continue
                cmd = f"ones {g} {count} {leaves} {group_bits} {order} {nb} " + \
                    " ".join(sum((enc_aff(F, b) for b in bases), [])) + " " + " ".join(str(i) for i in idx)
                cs.add(f"ones {g} count={count} leaves={leaves} group_bits={group_bits} order={order}", cmd,
                       lambda t, exp=exp, F=F: dec_xyzz(F, t) == exp)
        n = 9 if quick else 23
        bases = [rng.choice(ps) for _ in range(n)]
        params = [(5, 4, 2, None, 1), (8, 3, 3, 2, 64)] if quick else \
            [(5, 4, 2, None, 1), (8, 3, 3, 2, 3), (4, 64, 3, None, 64), (8, 1, 1, 1, 5), (13, 5, 6, None, 2)]
        for name, scalars in ones_scalar_mixes(rng, n):
            for c, chunk, seg, wp, leaves in params:
                add_msm_ones_case(cs, g, F, name, bases, scalars, c, chunk, seg, wp, leaves)


def add_msm_ones_case(cs, g, F, name, bases, scalars, c, chunk, seg, wp, leaves):
    """An msm_ones command with the device's tile, checked by weighing and adding what it
    printed (the ones' sum, then each window's tree points) against the plain sum
    s_i P_i."""
    W = -(-DIGIT_BITS // c)
    wp = wp or W
    planes = -(-W // wp)
    stride = len(bases) + (2 if planes > 1 else 0)
    table, plane = [], list(bases)
    for j in range(planes):
        if j:
            plane = [aff_double_times(F, b, c * wp) for b in plane]
        table += plane + [bases[0]] * (stride - len(bases))
    total = None
    for b, s in zip(bases, scalars):
        total = aff_add(F, total, aff_mul(F, s, b))
    ones = sum(1 for s in scalars if s == 1)
    rest = sum(1 for s in scalars if s not in (0, 1))
    tail = f"{len(bases)} {c} {chunk} {seg} {wp} {stride} {planes} {leaves} " + " ".join(
        sum((enc_aff(F, bb) for bb in table), []) + [h(mont(s, "fr")) for s in scalars])
    per = 4 * F.width

    def check(t, F=F, c=c, seg=seg, ones=ones, rest=rest, total=total, per=per):
        if len(t) < 3 + per or [int(x, 16) for x in t[:2]] != [ones, rest]:
            return False
        acc = dec_xyzz(F, t[2:2 + per])
        if acc == "bad" or (ones == 0 and acc is not None):
            return False
        got_wp = int(t[2 + per], 16)
        at = 3 + per
        items = 1
        if got_wp:
            items = int(t[at], 16)
            at += 1
        if (got_wp == 0) != (rest == 0) or items == 0 or len(t) != at + got_wp * items * per:
            return False
        for v in range(got_wp):
            for q in range(items):
                i = v * items + q
                pt = dec_xyzz(F, t[at + i * per:at + (i + 1) * per])
                if pt == "bad":
                    return False
                e = c * v + (seg + q - 1 if q else 0)  # the tree's [G, U_0, ..]: 2^(seg + k) U_k
                acc = aff_add(F, acc, aff_mul(F, 1 << e, pt))
        return acc == total
    note = f" wp={wp}" if wp < W else ""
    case = f"msm_ones {g} {name} c={c} chunk={chunk} seg={seg}{note} leaves={leaves}"
    cs.add(f"{case} tree", f"msm_ones {g} tree {DEVICE_TILE[g]} {tail}", check)


def sparse_row_value(row_starts, entries, coefficients, z, r):
    """Row r of a compressed-row matrix at z, as sparse_product.cu documents it: index 0
    adds z, 1 subtracts it (coefficients[0] and [1] unread), any other below the table's
    length adds coefficient * z; a column past z, a coefficient index past the table and
    a row's end past the entries read nothing."""
    entry_count = len(entries) // 2
    acc = 0
    for k in range(row_starts[r], min(row_starts[r + 1], entry_count)):
        col, ci = entries[2 * k], entries[2 * k + 1]
        if col >= len(z):
            continue
        if ci == 0:
            acc += z[col]
        elif ci == 1:
            acc -= z[col]
        elif ci < len(coefficients):
            acc += coefficients[ci] * z[col]
    return acc % R


def sparse_matrix(rng, lengths, z_len, coefficient_count, repeat=0.3):
    """Row starts and entry words for rows of the given lengths: columns in [0, z_len),
    a row's columns repeating one another with probability `repeat`, coefficient
    indices 0 (one), 1 (minus one) and the others of the table about equally."""
    row_starts, entries = [0], []
    for length in lengths:
        cols = []
        for _ in range(length):
            cols.append(rng.choice(cols) if cols and rng.random() < repeat else rng.randrange(z_len))
        for col in cols:
            pick = rng.random()
            ci = 0 if pick < 0.35 else 1 if pick < 0.6 or coefficient_count == 2 else rng.randrange(2, coefficient_count)
            entries += [col, ci]
        row_starts.append(row_starts[-1] + length)
    return row_starts, entries


def sparse_cases(cs, rng, quick):
    """sparse_product.cu: out[r] = row r at z for every row of the matrix, zero for the
    rest of out (the harness fills out with a sentinel first). Typical R1CS rows (1-4
    entries), empty rows, long rows, repeated columns, every kind of coefficient index,
    values at the ends of [0, r) (sums and differences at their reductions), several
    blocks, and indices outside the buffers (which read nothing)."""
    edges = [1, R - 1, 2, R - 2, 0, (R - 1) // 2, unmont(R - 1, "fr"), unmont(1, "fr")]

    def table(count):
        others = [rng.choice(edges) if rng.random() < 0.3 else rng.randrange(R) for _ in range(count - 2)]
        return [1, R - 1] + others

    def typical(rows):
        return [rng.choice((0, 1, 1, 2, 2, 3, 3, 4)) for _ in range(rows)]

    # (name, lengths of the rows, out length, z length, coefficients)
    shapes = [
        ("typical rows, a zero tail", typical(300), 512, 100, table(7)),
        ("no tail", typical(130), 130, 40, table(3)),
        ("no rows, all tail", [], 70, 5, table(2)),
        ("no rows, no out", [], 0, 1, table(2)),
        ("only empty rows", [0] * 9, 12, 3, table(4)),
        ("long rows among short ones", [0, 1, 700, 3, 0, 257, 2, 64, 65, 1], 16, 50, table(9)),
        ("one coefficient table entry (one, minus one only)", typical(90), 128, 30, table(2)),
        ("several blocks", typical(1000) + [200], 1100, 400, table(20)),
        ("identity rows at the end (A's instance rows)", typical(40) + [1] * 6, 64, 20, table(5)),
    ]
    if not quick:
        shapes += [
            ("long rows only", [rng.randrange(100, 2000) for _ in range(8)], 8, 1000, table(50)),
            ("many rows", typical(5000), 8192, 3000, table(100)),
            ("one column", typical(200), 256, 1, table(6)),
        ]
    for name, lengths, n, z_len, coefficients in shapes:
        rows = len(lengths)
        row_starts, entries = sparse_matrix(rng, lengths, z_len, len(coefficients))
        if name.startswith("identity rows"):
            for i in range(6):
                k = row_starts[rows - 6 + i]
                entries[2 * k:2 * k + 2] = [i, 0]
        z = edge_mix(rng, z_len)
        add_sparse_case(cs, f"sparse {name}", row_starts, entries, coefficients, z, n)
    # One column repeated along a long row, at the ends of [0, r): the running sum
    # crosses the modulus at every step.
    z = [R - 1, 1, 0, unmont(R - 1, "fr"), rng.randrange(R)]
    for col in range(len(z)):
        for ci in (0, 1, 2):
            entries = [col, ci] * 600
            add_sparse_case(cs, f"sparse one column repeated, index {ci}", [0, 600], entries, [1, R - 1, R - 2], z, 3)
    # The one-and-minus-one shortcut: table slots 0 and 1 hold anything, never read.
    row_starts, entries = sparse_matrix(rng, typical(100), 30, 5)
    coefficients = table(5)
    z = edge_mix(rng, 30)
    got_coefficients = [rng.randrange(R), rng.randrange(R)] + coefficients[2:]
    exp = [sparse_row_value(row_starts, entries, coefficients, z, r) for r in range(100)] + [0] * 28
    add_sparse_case(cs, "sparse ones and minus ones added directly", row_starts, entries, got_coefficients, z, 128, exp)
    # Indices outside the buffers read nothing: columns past z, coefficient indices past
    # the table, a last row ending past the entries.
    lengths = typical(50) + [5]
    row_starts, entries = sparse_matrix(rng, lengths, 20, 6)
    for k in rng.sample(range(len(entries) // 2), len(entries) // 8):
        if rng.random() < 0.5:
            entries[2 * k] = rng.choice((20, 21, 0xFFFFFFFF))
        else:
            entries[2 * k + 1] = rng.choice((6, 7, 0xFFFFFFFF))
    row_starts[-1] += 3
    add_sparse_case(cs, "sparse indices outside the buffers", row_starts, entries, table(6), edge_mix(rng, 20), 64)


def add_sparse_case(cs, name, row_starts, entries, coefficients, z, n, exp=None):
    rows = len(row_starts) - 1
    if exp is None:
        exp = [sparse_row_value(row_starts, entries, coefficients, z, r) for r in range(rows)] + [0] * (n - rows)
    enc = lambda v: h(mont(v, "fr"))
    cmd = f"sparse {rows} {n} {len(entries) // 2} {len(coefficients)} {len(z)} " + " ".join(
        [str(v) for v in row_starts + entries] + [enc(v) for v in coefficients + z])
    cs.add(name, cmd, lambda t, exp=exp: fr_list(t) == exp)


def planes_cases(cs, rng, quick, pts):
    """planes.cu: plane j = 2^(shift j) * plane 0, affine and fully reduced (the tokens
    compared as integers with the Montgomery encodings); entries n .. stride - 1 of
    every plane keep the harness's sentinel."""
    for g, (F, gen, _) in GROUPS.items():
        ps = pts[g]
        # (name, n, stride, shift, planes, infinity at these indices)
        shapes = [
            ("planes=1 (no launch)", 3, 5, 7, 1, {1}),
            ("one point", 1, 1, 1, 2, set()),
            ("one full batch shift=64", 16, 16, 64, 2, {3}),
            ("n=37 stride=40 shift=20", 37, 40, 20, 3, {0, 17, 36}),
            ("a batch all infinity", 35, 35, 3, 4, set(range(16, 32)) | {33}),
            ("shift=1", 21, 24, 1, 4, {20}),
            ("shift=256", 3, 4, 256, 2, set()),
        ]
        if quick:
            shapes = [shapes[0], ("n=21 stride=24 shift=20", 21, 24, 20, 3, {0, 17})]
            if g == "g1":
                shapes.append(("one full batch shift=64", 16, 16, 64, 2, {3}))
        elif g == "g1":
            shapes.append(("several blocks", 16 * 64 + 5, 16 * 64 + 8, 2, 2, {1000}))
        for name, n, stride, shift, planes, inf in shapes:
            base = [None if i in inf else rng.choice(ps + [aff_neg(F, p) for p in ps]) for i in range(n)]
            exp_planes = [base]
            for _ in range(1, planes):
                exp_planes.append([aff_double_times(F, p, shift) for p in exp_planes[-1]])
            exp = []
            for pl in exp_planes:
                for p in pl:
                    exp += [int(x, 16) for x in enc_aff(F, p)]
                exp += [SENTINEL] * (2 * F.width * (stride - n))
            cmd = f"planes {g} {n} {stride} {shift} {planes} " + " ".join(sum((enc_aff(F, p) for p in base), []))

            def check(t, exp=exp):
                if len(t) != len(exp):
                    return False
                return all(x == e if isinstance(e, str) else int(x, 16) == e for x, e in zip(t, exp))
            cs.add(f"planes {g} {name}", cmd, check)


BUILDS = {
    "chain": ["-O2"],
    # also a batch of planes.cu that is no power of two
    "asan": ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-DPLANES_BATCH=5"],
    # ThreadSanitizer over the blocks that run as host threads (the tile kernels): a
    # missing __syncthreads or __syncwarp is a reported race (exit 66) even when the
    # schedule hid it
    "tsan": ["-O1", "-g", "-fsanitize=thread"],
}


def generate(cs, rng, quick, only):
    """The cases of the groups in `only` (None: all) for the curve under test, after one
    that checks the harness build is of that curve."""
    fr_limbs, fq_limbs = FIELDS["fr"][1] // 32, FIELDS["fq"][1] // 32
    exp = [fr_limbs, fq_limbs, DIGIT_BITS, R, P]
    cs.add("params (the build's curve)", "params", lambda t, exp=exp: [int(x, 16) for x in t] == exp)
    pts = {g: random_points(g, rng, 6 if quick else 16) for g in GROUPS}
    groups = [
        ("field", lambda: field_cases(cs, rng, quick)),
        ("fq2", lambda: fq2_cases(cs, rng, quick)),
        ("curve", lambda: curve_cases(cs, rng, quick, pts)),
        ("tile", lambda: tile_cases(cs, rng, quick)),
        ("transform_tiles", lambda: transform_tiles_cases(cs, rng, quick)),
        ("table", lambda: table_cases(cs, rng, quick)),
        ("scan", lambda: scan_cases(cs, rng, quick)),
        ("pw", lambda: pw_cases(cs, rng, quick)),
        ("msm", lambda: msm_cases(cs, rng, quick, pts)),
        ("ones", lambda: ones_cases(cs, rng, quick, pts)),
        ("planes", lambda: planes_cases(cs, rng, quick, pts)),
        ("sparse", lambda: sparse_cases(cs, rng, quick)),
    ]
    for name, add in groups:
        if only is None or name in only:
            add()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--builds", default="chain,asan")
    ap.add_argument("--only", default=None, help="case groups, e.g. ones,msm (default: all)")
    ap.add_argument("--curve", default="all", choices=list(CURVES) + ["all"])
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    print(f"seed {seed}")
    curves = list(CURVES) if args.curve == "all" else [args.curve]
    only = set(args.only.split(",")) if args.only else None

    # Every build of every curve compiles while the first curve's cases are generated;
    # a curve's builds then run side by side: each is one process, and CI has two cores.
    tmp = tempfile.TemporaryDirectory()
    builds = args.builds.split(",")
    compiling = {}
    for curve in curves:
        for build in builds:
            exe = os.path.join(tmp.name, f"harness_{build}_{curve}")
            cmd = ["g++", "-std=c++17", "-pthread", "-Wall", "-Wextra", "-Werror"] + BUILDS[build] + \
                CURVES[curve]["defines"] + ["-o", exe, os.path.join(HERE, "harness.cpp")]
            compiling[curve, build] = (exe, subprocess.Popen(cmd))

    def run(curve, build, stdin):
        exe, compiler = compiling[curve, build]
        if compiler.wait() != 0:
            return None, 0.0
        t1 = time.time()
        r = subprocess.run([exe], input=stdin, capture_output=True, text=True)
        return r, time.time() - t1

    passed = failed = 0
    with tmp, ThreadPoolExecutor(len(builds)) as pool:
        for curve in curves:
            select_curve(curve)
            # Each curve's cases from the seed and its name: --curve replays one curve's.
            rng = random.Random(f"{seed} {curve}")
            t0 = time.time()
            cs = Cases()
            generate(cs, rng, args.quick, only)
            print(f"[{curve}] {len(cs.items)} cases generated in {time.time() - t0:.1f}s")
            stdin = "\n".join(cmd for _, cmd, _ in cs.items) + "\n"
            curve_passed = curve_failed = 0
            runs = [pool.submit(run, curve, build, stdin) for build in builds]
            for build, future in zip(builds, runs):
                r, seconds = future.result()
                tag = f"[{curve} {build}]"
                if r is None:
                    print(f"{tag} the harness did not compile")
                    curve_failed += 1
                    continue
                lines = r.stdout.split("\n")
                if r.returncode != 0:
                    print(f"{tag} harness exited {r.returncode}:\n{r.stderr[-4000:]}")
                    curve_failed += 1
                    continue
                fails = {}
                for i, (name, _, check) in enumerate(cs.items):
                    toks = lines[i].split() if i < len(lines) else []
                    if check(toks):
                        curve_passed += 1
                    else:
                        curve_failed += 1
                        fails.setdefault(name, (i, toks))
                for name, (i, toks) in fails.items():
                    print(f"{tag} FAIL {name} (case {i}, seed {seed}): got {' '.join(toks)[:300]}")
                print(f"{tag} {len(cs.items)} cases run in {seconds:.1f}s, {len(fails)} failing kinds")
            print(f"[{curve}] {curve_passed} cases passed, {curve_failed} failed")
            passed += curve_passed
            failed += curve_failed
    print(f"{passed} passed, {failed} failed")
    if failed:
        print(f"seed {seed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
