// MSM, G1 bucket accumulation in XYZZ coordinates (straight-line form; appended to
// the G1 module after msm_values.wgsl, whose bindings and helpers it uses): the same
// task sums as `accumulate`, written to `partials` as the same projective points.
//
// Why: a mixed addition in XYZZ (x = X/ZZ, y = Y/ZZZ, ZZ³ = ZZZ²; Cohen, Miyaji and
// Ono's Jacobian variant, "add-madd-2008-s" in the Explicit-Formulas Database) costs
// 10 products and 7 additions, against 12 products and 19 additions (with 3b·t as
// additions) of the complete projective formula with a stored base's Z: about 0.7 of
// the instructions. It is not complete: P = Q (a doubling) and P = −Q (the identity)
// are branches, taken only when a bucket holds a repeated or opposite base; the
// doubling shares the addition's code (one more product), so that each product is
// inlined once (a GPU compiler's time grows with the inlined code).
//
// Stored bases read as they are are (x·λ, y·λ) with λ = R/R' (field_code.rs; FQ_ARK_R is
// λ). The sum keeps (X, Y, A, B) with A = ZZ/λ and B = ZZZ/λ: then a base coordinate
// times A or B is x·ZZ or y·ZZZ in one product, and A, B follow the same updates as
// ZZ, ZZZ. The identity is `empty`, not a coordinate value.

struct G1Xyzz {
    x: Fq,
    y: Fq,
    a: Fq,
    b: Fq,
}

// The sum of one base (x·λ, y·λ): X = x·λ², Y = y·λ³ (ZZ = λ², ZZZ = λ³), so A = λ,
// B = λ².
fn xyzz_from_base(q: G1A) -> G1Xyzz {
    let l2 = fq_mul(FQ_ARK_R, FQ_ARK_R);
    return G1Xyzz(fq_mul(q.x, FQ_ARK_R), fq_mul(q.y, l2), FQ_ARK_R, l2);
}

// The projective point of a non-identity sum: (X·ZZZ : Y·ZZ : ZZ·ZZZ), all scaled by
// 1/λ: (X·B : Y·A : A·B·λ).
fn xyzz_to_projective(p: G1Xyzz) -> G1P {
    return G1P(fq_mul(p.x, p.b), fq_mul(p.y, p.a), fq_mul(fq_mul(p.a, p.b), FQ_ARK_R));
}

// One thread per (window, task), as `accumulate`.
@compute @workgroup_size(64)
fn accumulate_xyzz(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    let span = task_span(t);
    if !span.live {
        return;
    }
    let w = span.w;
    var acc = G1Xyzz(FQ_ZERO, FQ_ZERO, FQ_ZERO, FQ_ZERO);
    var empty = true;
    for (var pos = span.first; pos < span.last; pos++) {
        let entry = sorted[w * params.n + pos];
        var q = load_base(params.base_offset + (entry & ~SIGN_BIT));
        if coord_is_zero(q.x) && coord_is_zero(q.y) {
            continue;
        }
        if (entry & SIGN_BIT) != 0u {
            q.y = coord_neg(q.y);
        }
        if empty {
            acc = xyzz_from_base(q);
            empty = false;
            continue;
        }
        // U2 − X1 and S2 − Y1, with U2 = x2·ZZ1 = (x2·λ)·A and S2 = y2·ZZZ1 = (y2·λ)·B.
        var p = fq_sub(fq_mul(q.x, acc.a), acc.x);
        var r = fq_sub(fq_mul(q.y, acc.b), acc.y);
        var minus_ppp = true;
        if fq_is_zero(p) {
            if !fq_is_zero(r) {
                // Q = −sum: the identity.
                empty = true;
                continue;
            }
            // Q = sum: a doubling ("dbl-2008-s-1", a = 0), which is the addition's
            // tail with U = 2·Y1 for P, M = 3·X1² for R, and X3 without the −PPP.
            let xx = fq_mul(acc.x, acc.x);
            p = fq_add(acc.y, acc.y);
            r = fq_add(fq_add(xx, xx), xx);
            minus_ppp = false;
        }
        let pp = fq_mul(p, p);
        let ppp = fq_mul(p, pp);
        let qq = fq_mul(acc.x, pp);
        var x3 = fq_sub(fq_mul(r, r), fq_add(qq, qq));
        if minus_ppp {
            x3 = fq_sub(x3, ppp);
        }
        let y3 = fq_sub(fq_mul(r, fq_sub(qq, x3)), fq_mul(acc.y, ppp));
        acc = G1Xyzz(x3, y3, fq_mul(acc.a, pp), fq_mul(acc.b, ppp));
    }
    var sum = identity();
    if !empty {
        sum = xyzz_to_projective(acc);
    }
    store_partial(t, sum);
}
