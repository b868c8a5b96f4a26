// The NTT's Fr product: fr_code.rs's wide code (module NttWide: eight 32-bit limbs,
// 64-bit products, loop-free), the same values as the other forms.
fn ntt_mul(a: Fr, b: Fr) -> Fr {
    return fr_mul(a, b);
}
