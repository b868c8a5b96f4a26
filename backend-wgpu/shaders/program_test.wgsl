// Test entry point for the interpreter's programs (Fq and Fq2 operations, G1 and G2
// addition): per element, `a_fqs` Fq of a[i] go to regs[0..], `b_fqs` Fq of b[i] to
// regs[b_reg..], the program runs, and `out_fqs` Fq from regs[out_reg..] go to out[i].
// Mode 1 reads b as a stored affine point (Z = 1, or the identity for (0, 0)); mode 2
// ignores b and sets Q = P, so the addition program doubles. Parameters and bindings:
// program_test_params.wgsl.

// Element i's operands into the registers.
fn program_test_load(i: u32) {
    for (var r = 0u; r < params.a_fqs; r++) {
        var w: array<u32, FQ_WORDS>;
        for (var k = 0u; k < FQ_WORDS; k++) {
            w[k] = a[(i * params.a_fqs + r) * FQ_WORDS + k];
        }
        regs[r] = fq_unpack(w);
    }
    var any = 0u;
    for (var r = 0u; r < params.b_fqs; r++) {
        var w: array<u32, FQ_WORDS>;
        for (var k = 0u; k < FQ_WORDS; k++) {
            w[k] = b[(i * params.b_fqs + r) * FQ_WORDS + k];
            any |= w[k];
        }
        regs[params.b_reg + r] = fq_unpack(w);
    }
    let e = params.ext;
    if params.mode == 1u {
        if any == 0u {
            regs_set_identity(params.b_reg, e);
        } else {
            regs[params.b_reg + 2u * e] = fq_one();
            if e == 2u {
                regs[params.b_reg + 2u * e + 1u] = fq_zero();
            }
        }
    } else if params.mode == 2u {
        regs_copy(params.b_reg, 0u, 3u * e);
    }
}

// Element i's result out of the registers.
fn program_test_store(i: u32) {
    for (var r = 0u; r < params.out_fqs; r++) {
        var w = fq_pack(regs[params.out_reg + r]);
        for (var k = 0u; k < FQ_WORDS; k++) {
            out[(i * params.out_fqs + r) * FQ_WORDS + k] = w[k];
        }
    }
}

// The interpreted form; straight.rs generates `program_op_<name>` for the straight-line
// form, one entry point per program.
@compute @workgroup_size(64)
fn program_op(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.count {
        return;
    }
    program_test_load(i);
    run_program(params.start, params.len);
    program_test_store(i);
}
