// BLS12-381 base field Fq in Montgomery form: the same code as fr.wgsl (see there for
// the limb choice) with 24 limbs of 16 bits, R = 2^384 as in arkworks, and 12 packed
// words per element in storage. FQ_P, FQ_INV and FQ_ONE come from field.rs.
//
// Kept textually parallel to fr.wgsl (WGSL has no generics); p < R/8, so the CIOS
// bound (result < 2p before the final subtraction) holds here too.

alias Fq = array<u32, 24>;

var<private> fq_p: Fq = FQ_P;

fn fq_zero() -> Fq {
    return Fq();
}

fn fq_one() -> Fq {
    return FQ_ONE;
}

fn fq_unpack(w: array<u32, 12>) -> Fq {
    var words = w;
    var r: Fq;
    for (var k = 0u; k < 12u; k++) {
        r[2u * k] = words[k] & 0xffffu;
        r[2u * k + 1u] = words[k] >> 16u;
    }
    return r;
}

fn fq_pack(a: Fq) -> array<u32, 12> {
    var x = a;
    var w: array<u32, 12>;
    for (var k = 0u; k < 12u; k++) {
        w[k] = x[2u * k] | (x[2u * k + 1u] << 16u);
    }
    return w;
}

// a − p if a ≥ p, else a (for a < 2p).
fn fq_reduce_once(a: Fq) -> Fq {
    var x = a;
    var r: Fq;
    var borrow = 0u;
    for (var i = 0u; i < 24u; i++) {
        let d = x[i] + 0x10000u - fq_p[i] - borrow;
        r[i] = d & 0xffffu;
        borrow = 1u - (d >> 16u);
    }
    if borrow == 0u {
        return r;
    }
    return x;
}

fn fq_add(a: Fq, b: Fq) -> Fq {
    var x = a;
    var y = b;
    var r: Fq;
    var carry = 0u;
    for (var i = 0u; i < 24u; i++) {
        let s = x[i] + y[i] + carry;
        r[i] = s & 0xffffu;
        carry = s >> 16u;
    }
    // a + b < 2p < 2^384: no carry out of the top limb.
    return fq_reduce_once(r);
}

fn fq_sub(a: Fq, b: Fq) -> Fq {
    var x = a;
    var y = b;
    var r: Fq;
    var borrow = 0u;
    for (var i = 0u; i < 24u; i++) {
        let d = x[i] + 0x10000u - y[i] - borrow;
        r[i] = d & 0xffffu;
        borrow = 1u - (d >> 16u);
    }
    if borrow == 0u {
        return r;
    }
    var carry = 0u;
    for (var i = 0u; i < 24u; i++) {
        let s = r[i] + fq_p[i] + carry;
        r[i] = s & 0xffffu;
        carry = s >> 16u;
    }
    return r;
}

// Montgomery product a·b·R⁻¹ (CIOS); the result is < 2p before the final subtraction
// because p < R/2.
fn fq_mul(a: Fq, b: Fq) -> Fq {
    var x = a;
    var y = b;
    var t: array<u32, 26>;
    for (var i = 0u; i < 24u; i++) {
        var carry = 0u;
        let yi = y[i];
        for (var j = 0u; j < 24u; j++) {
            let s = t[j] + x[j] * yi + carry;
            t[j] = s & 0xffffu;
            carry = s >> 16u;
        }
        let s = t[24] + carry;
        t[24] = s & 0xffffu;
        t[25] = s >> 16u;
        let m = (t[0] * FQ_INV) & 0xffffu;
        carry = (t[0] + m * fq_p[0]) >> 16u;
        for (var j = 1u; j < 24u; j++) {
            let s2 = t[j] + m * fq_p[j] + carry;
            t[j - 1u] = s2 & 0xffffu;
            carry = s2 >> 16u;
        }
        let s3 = t[24] + carry;
        t[23] = s3 & 0xffffu;
        t[24] = t[25] + (s3 >> 16u);
    }
    var r: Fq;
    for (var i = 0u; i < 24u; i++) {
        r[i] = t[i];
    }
    return fq_reduce_once(r);
}
