// The register file of the Fq programs (field.rs) and the point helpers built on it.
// The programs run through `run_program(start, len)`, interpreter.wgsl's loop (the
// straight-line form, straight.rs, has no register file: its formulas are functions
// on values).
//
// Why: Mesa and other Vulkan drivers inline every function, and llvmpipe's LLVM
// compile time grows faster than linearly with function size. A G2 addition written
// out (36 Fq products, over 100 sums) took minutes to compile there; the same formula
// as data for the interpreter's loop compiles in about a second, with one inlined copy
// of each of fq_mul, fq_add and fq_sub. field.rs generates the programs (PROGRAM, REGS and each
// program's start and length) from one description of the formulas, for Fq (G1) and
// Fq2 (G2) coordinates alike: Fq2 operations expand into Fq instructions there.

var<private> regs: array<Fq, REGS>;

// Point registers for a curve whose coordinates are `ext` Fq each (1 for G1, 2 for
// G2): P = regs[0, 3·ext), Q = regs[3·ext, 6·ext), and the addition program writes
// P + Q to regs[6·ext, 9·ext), using registers up to PROGRAM_REGS as scratch; the ones
// from PROGRAM_REGS to REGS are the callers'. Projective points are (X : Y : Z),
// x = X/Z.

// regs[at..] = the identity (0 : 1 : 0).
fn regs_set_identity(at: u32, ext: u32) {
    for (var r = 0u; r < 3u * ext; r++) {
        regs[at + r] = fq_zero();
    }
    regs[at + ext] = fq_one();
}

fn regs_copy(dst: u32, src: u32, count: u32) {
    for (var r = 0u; r < count; r++) {
        regs[dst + r] = regs[src + r];
    }
}
