// The NTT's Fr product: fr.wgsl's loop (module Ntt; the default on software adapters,
// where llvmpipe compiles and runs it faster than the unrolled form at small sizes).
fn ntt_mul(a: Fr, b: Fr) -> Fr {
    return fr_mul(a, b);
}
