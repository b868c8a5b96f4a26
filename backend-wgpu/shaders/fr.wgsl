// The curve's scalar field Fr in Montgomery form (BLS12-381's or BN254's: the
// constants below say which).
//
// Limbs: 16 limbs of 16 bits, one per u32, little-endian. A 16×16-bit product fits a
// u32 exactly, and so does every step of the CIOS Montgomery multiplication:
// t + a·b + carry ≤ (2^16−1) + (2^16−1)² + (2^16−1) = 2^32 − 1. WGSL has no 64-bit
// integers and no widening multiply, so this is the widest limb that needs neither.
// R = 2^256, the same as arkworks, so a device word (two limbs) is half of an arkworks
// u64 limb: staging needs no multiplication. Storage buffers hold 8 packed words per
// element (limb 2k in the low half of word k, limb 2k+1 in the high half).
//
// FR_P, FR_INV (−r⁻¹ mod 2^16), FR_ONE (R mod r), FR_LIMBS and FR_WORDS are generated
// from the curve's arkworks fields by wgsl/field16.rs and prepended to every module.
//
// Fq uses this same code: wgsl/field16.rs renames Fr / fr_ / FR_ to Fq / fq_ / FQ_ in
// what follows the next line (WGSL has no generics). Fq has arkworks' R and limbs:
// BLS12-381's 24 limbs, R = 2^384 and 12 packed words (p < R/8), BN254's 16 limbs,
// R = 2^256 and 8 words (p < R/4); every modulus is below R/2, so the CIOS bound
// (result < 2p before the final subtraction) and a + b < 2p < R hold.
// ---- field code ----

alias Fr = array<u32, FR_LIMBS>;

var<private> fr_p: Fr = FR_P;

fn fr_zero() -> Fr {
    return Fr();
}

fn fr_one() -> Fr {
    return FR_ONE;
}

fn fr_unpack(w: array<u32, FR_WORDS>) -> Fr {
    var words = w;
    var r: Fr;
    for (var k = 0u; k < FR_WORDS; k++) {
        r[2u * k] = words[k] & 0xffffu;
        r[2u * k + 1u] = words[k] >> 16u;
    }
    return r;
}

fn fr_pack(a: Fr) -> array<u32, FR_WORDS> {
    var x = a;
    var w: array<u32, FR_WORDS>;
    for (var k = 0u; k < FR_WORDS; k++) {
        w[k] = x[2u * k] | (x[2u * k + 1u] << 16u);
    }
    return w;
}

// a − p if a ≥ p, else a (for a < 2p).
fn fr_reduce_once(a: Fr) -> Fr {
    var x = a;
    var r: Fr;
    var borrow = 0u;
    for (var i = 0u; i < FR_LIMBS; i++) {
        let d = x[i] + 0x10000u - fr_p[i] - borrow;
        r[i] = d & 0xffffu;
        borrow = 1u - (d >> 16u);
    }
    if borrow == 0u {
        return r;
    }
    return x;
}

fn fr_add(a: Fr, b: Fr) -> Fr {
    var x = a;
    var y = b;
    var r: Fr;
    var carry = 0u;
    for (var i = 0u; i < FR_LIMBS; i++) {
        let s = x[i] + y[i] + carry;
        r[i] = s & 0xffffu;
        carry = s >> 16u;
    }
    // a + b < 2r < 2^256: no carry out of the top limb.
    return fr_reduce_once(r);
}

fn fr_sub(a: Fr, b: Fr) -> Fr {
    var x = a;
    var y = b;
    var r: Fr;
    var borrow = 0u;
    for (var i = 0u; i < FR_LIMBS; i++) {
        let d = x[i] + 0x10000u - y[i] - borrow;
        r[i] = d & 0xffffu;
        borrow = 1u - (d >> 16u);
    }
    if borrow == 0u {
        return r;
    }
    var carry = 0u;
    for (var i = 0u; i < FR_LIMBS; i++) {
        let s = r[i] + fr_p[i] + carry;
        r[i] = s & 0xffffu;
        carry = s >> 16u;
    }
    return r;
}

// Montgomery product a·b·R⁻¹ (CIOS); the result is < 2r before the final subtraction
// because r < R/2.
fn fr_mul(a: Fr, b: Fr) -> Fr {
    var x = a;
    var y = b;
    var t: array<u32, FR_LIMBS + 2u>;
    for (var i = 0u; i < FR_LIMBS; i++) {
        var carry = 0u;
        let yi = y[i];
        for (var j = 0u; j < FR_LIMBS; j++) {
            let s = t[j] + x[j] * yi + carry;
            t[j] = s & 0xffffu;
            carry = s >> 16u;
        }
        let s = t[FR_LIMBS] + carry;
        t[FR_LIMBS] = s & 0xffffu;
        t[FR_LIMBS + 1u] = s >> 16u;
        let m = (t[0] * FR_INV) & 0xffffu;
        carry = (t[0] + m * fr_p[0]) >> 16u;
        for (var j = 1u; j < FR_LIMBS; j++) {
            let s2 = t[j] + m * fr_p[j] + carry;
            t[j - 1u] = s2 & 0xffffu;
            carry = s2 >> 16u;
        }
        let s3 = t[FR_LIMBS] + carry;
        t[FR_LIMBS - 1u] = s3 & 0xffffu;
        t[FR_LIMBS] = t[FR_LIMBS + 1u] + (s3 >> 16u);
    }
    var r: Fr;
    for (var i = 0u; i < FR_LIMBS; i++) {
        r[i] = t[i];
    }
    return fr_reduce_once(r);
}

// Canonical integer of a Montgomery element: a·1·R⁻¹.
fn fr_from_mont(a: Fr) -> Fr {
    var one_int: Fr;
    one_int[0] = 1u;
    return fr_mul(a, one_int);
}
