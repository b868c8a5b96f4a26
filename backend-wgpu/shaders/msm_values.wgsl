// MSM, curve part, straight-line form (hardware adapters): msm.wgsl's kernels, with
// the same bindings, parameters and results, on points held as values (Point, Affine,
// Coord and point_add come from the generated head of the module, one module per
// curve: straight.rs). No register file and no array indexed at run time: a point is
// a struct of loop-free Fq values, so a kernel's points can stay in registers.
//
// Each kernel calls each addition from one place (the reduction's loop picks its
// operands instead of calling point_add once per step): every call is inlined, and
// a G2 addition is tens of thousands of instructions.
//
// Scratch (partials, levels) holds R'-form coordinates packed as they are (field_code.rs:
// projective points do not mind the scale); bases are arkworks' affine points, read
// as they are with Z = FQ_ARK_R, which is the same point. R' and the packing depend on
// the curve's limb width only, not on the form: a straight curve's reduction runs from
// its registers-form module over what its own module wrote (msm/mod.rs).

const POINT_WORDS: u32 = 3u * COORD_WORDS;

@group(0) @binding(7) var<storage, read> bases: array<u32>;
// partials[w·max_tasks + k]: the sum of task k of window w (projective); after the
// merge rounds, a bucket's first task holds the bucket's sum.
@group(0) @binding(8) var<storage, read_write> partials: array<u32>;
// Levels' (A, C) pairs: level_in[2(w·m_in + j)], level_out[2(w·m_out + g)].
@group(0) @binding(9) var<storage, read_write> level_in: array<u32>;
@group(0) @binding(10) var<storage, read_write> level_out: array<u32>;

fn identity() -> Point {
    return Point(coord_zero(), coord_one(), coord_zero());
}

// Base i as stored (affine; the identity is all zero).
fn load_base(i: u32) -> Affine {
    let o = i * 2u * COORD_WORDS;
    return Affine(bases_coord(o), bases_coord(o + COORD_WORDS));
}

fn load_partial(i: u32) -> Point {
    let o = i * POINT_WORDS;
    return Point(partials_coord(o), partials_coord(o + COORD_WORDS), partials_coord(o + 2u * COORD_WORDS));
}

fn store_partial(i: u32, p: Point) {
    let o = i * POINT_WORDS;
    partials_set_coord(o, p.x);
    partials_set_coord(o + COORD_WORDS, p.y);
    partials_set_coord(o + 2u * COORD_WORDS, p.z);
}

fn load_level(i: u32) -> Point {
    let o = i * POINT_WORDS;
    return Point(level_in_coord(o), level_in_coord(o + COORD_WORDS), level_in_coord(o + 2u * COORD_WORDS));
}

fn store_level(i: u32, p: Point) {
    let o = i * POINT_WORDS;
    level_out_set_coord(o, p.x);
    level_out_set_coord(o + COORD_WORDS, p.y);
    level_out_set_coord(o + 2u * COORD_WORDS, p.z);
}

// One thread per (window, task): the sum of at most task_size points of one bucket.
@compute @workgroup_size(64)
fn accumulate(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    let span = task_span(t);
    if !span.live {
        return;
    }
    let w = span.w;
    var acc = identity();
    // The task's first point starts the sum (one addition fewer a task), as the
    // projective (x, y, Z) of a stored affine base (affine_z, straight.rs).
    var empty = true;
    for (var pos = span.first; pos < span.last; pos++) {
        let entry = sorted[w * params.n + pos];
        var q = load_base(params.base_offset + (entry & ~SIGN_BIT));
        if !(coord_is_zero(q.x) && coord_is_zero(q.y)) {
            // A negative digit adds −Q = (x, −y).
            if (entry & SIGN_BIT) != 0u {
                q.y = coord_neg(q.y);
            }
            if empty {
                acc = Point(q.x, q.y, affine_z());
                empty = false;
            } else {
                acc = point_add_affine(acc, q);
            }
        }
    }
    store_partial(t, acc);
}

// One thread per (window, task): one round of merging a bucket's tasks pairwise
// (msm_common.wgsl).
@compute @workgroup_size(64)
fn merge_tasks(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if !merges_this_round(t) {
        return;
    }
    store_partial(t, point_add(load_partial(t), load_partial(t + (1u << params.round))));
}

// Element j of window w at this level: A (a bucket's sum at level 0).
fn element_a(w: u32, j: u32) -> Point {
    if params.level == 0u {
        let task_base = w * (params.buckets + 1u);
        let k = task_off[task_base + j];
        if k == task_off[task_base + j + 1u] {
            return identity();
        }
        return load_partial(w * params.max_tasks + k);
    }
    return load_level(2u * (w * params.m_in + j));
}

// Element j's C (the identity at level 0).
fn element_c(w: u32, j: u32) -> Point {
    if params.level == 0u {
        return identity();
    }
    return load_level(2u * (w * params.m_in + j) + 1u);
}

// One thread per (window, group of LEVEL_GROUP elements): one level of the reduction
// (msm_common.wgsl says what a level computes), the element's A and C read from memory
// by the step that adds them: three points live across the addition (S, U and the
// operand).
@compute @workgroup_size(64)
fn reduce_level(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    let w = t / params.m_out;
    var s = identity();
    var u = identity();
    var c = identity();
    var walk = reduce_walk(t % params.m_out);
    loop {
        let step = reduce_next(&walk);
        if step.op == STEP_DONE {
            break;
        }
        var x = s;
        var y = s;
        switch step.op {
            case STEP_C_PLUS_CI: {
                x = c;
                y = element_c(w, step.j);
            }
            case STEP_S_PLUS_AI: {
                y = element_a(w, step.j);
            }
            case STEP_U_PLUS_S: {
                x = u;
            }
            case STEP_C_PLUS_U: {
                x = c;
                y = u;
            }
            default: {}
        }
        let r = point_add(x, y);
        switch step.op {
            case STEP_C_PLUS_CI, STEP_C_PLUS_U: {
                c = r;
            }
            case STEP_U_PLUS_S: {
                u = r;
            }
            default: {
                s = r;
            }
        }
    }
    store_level(2u * t, s);
    store_level(2u * t + 1u, c);
}
