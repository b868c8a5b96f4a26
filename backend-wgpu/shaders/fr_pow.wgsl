// fr_pow over whichever Fr code precedes it (shaders/fr.wgsl's 16-bit limbs, or
// fr_code.rs's wide code): it needs only fr_one and fr_mul.

// base^e for a 32-bit exponent (square-and-multiply, most significant bit first).
fn fr_pow(base: Fr, e: u32) -> Fr {
    var r = fr_one();
    if e == 0u {
        return r;
    }
    let top = 31u - countLeadingZeros(e);
    for (var i = 0u; i <= top; i++) {
        r = fr_mul(r, r);
        if ((e >> (top - i)) & 1u) == 1u {
            r = fr_mul(r, base);
        }
    }
    return r;
}
