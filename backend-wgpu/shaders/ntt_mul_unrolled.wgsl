// The NTT's Fr product: the loop-free form (module NttUnrolled, fr_code.rs).
fn ntt_mul(a: Fr, b: Fr) -> Fr {
    return fr_mul_unrolled(a, b);
}
