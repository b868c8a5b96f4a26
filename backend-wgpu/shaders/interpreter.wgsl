// The interpreted form of the Fq programs (program.wgsl's registers): one loop over
// PROGRAM's instructions, for software adapters, where the straight-line form compiles
// for minutes.
//
// Instruction: regs[d] = regs[a] op regs[b]; op in bits 0–1 (0 mul, 1 add, 2 sub),
// d, a and b in bits 2–9, 10–17 and 18–25. Operands are read before the result is
// written, so d may equal a or b. Op 3, regs[a] times the curve's constant number b,
// exists where the curve's formulas multiply by constants (BN254's G2): for such a
// curve wgsl/programs.rs splits the last branch below and adds the constants.

var<private> program: array<u32, PROGRAM_LEN> = PROGRAM;

fn run_program(start: u32, len: u32) {
    for (var s = start; s < start + len; s++) {
        let ins = program[s];
        let op = ins & 3u;
        let a = regs[(ins >> 10u) & 0xffu];
        let b = regs[(ins >> 18u) & 0xffu];
        var r: Fq;
        if op == 0u {
            r = fq_mul(a, b);
        } else if op == 1u {
            r = fq_add(a, b);
        } else {
            r = fq_sub(a, b);
        }
        regs[(ins >> 2u) & 0xffu] = r;
    }
}
