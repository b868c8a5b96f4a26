// A sparse matrix (compressed rows) times the assignment z: one thread a row.
//
// Row r's entries are row_starts[r] .. row_starts[r + 1]; entry k is the words
// entries[2k] (a column of z) and entries[2k + 1] (an index into `coefficients`, where
// 0 is one and 1 minus one: z is added or subtracted without a product).
//
// Every buffer may be split into chunks that each fit one binding (sparse_product.rs);
// a dispatch binds one chunk of `out`, `z`, `coefficients` and `entries`, and the two
// chunks of `row_starts` its rows' starts fall in (the same chunk twice when one holds
// them all). Each entry belongs to exactly one (z, coefficients, entries) chunk
// triple, the ±1 entries to the passes of the first coefficient chunk, so the passes
// over every triple add up each row exactly once: the first pass of an `out` chunk
// writes its rows (zero past the matrix's rows, whatever `out` held), the others add
// to them. A streamed chunk of a matrix is written from `out` row `first_row` on; the
// rows before it are left as they are. Indices are checked on the host when the
// matrix is built (core's SparseMatrix), and storage reads are bounds-checked by wgpu
// in any case.

// SparseParams is generated from params.rs and placed before this file.

@group(0) @binding(0) var<uniform> params: SparseParams;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<storage, read> z: array<u32>;
@group(0) @binding(3) var<storage, read> coefficients: array<u32>;
@group(0) @binding(4) var<storage, read> entries: array<u32>;
@group(0) @binding(5) var<storage, read> starts_lo: array<u32>;
@group(0) @binding(6) var<storage, read> starts_hi: array<u32>;

fn sparse_thread(wid: vec3<u32>, lid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return (wid.y * nwg.x + wid.x) * 64u + lid.x;
}

// row_starts[r], from whichever bound chunk holds it.
fn row_start(r: u32) -> u32 {
    let i = r - params.starts_lo_base;
    if i < params.starts_lo_len {
        return starts_lo[i];
    }
    return starts_hi[r - params.starts_hi_base];
}

fn load_z(i: u32) -> Fr {
    var w: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        w[k] = z[8u * i + k];
    }
    return fr_unpack(w);
}

fn load_coefficient(i: u32) -> Fr {
    var w: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        w[k] = coefficients[8u * i + k];
    }
    return fr_unpack(w);
}

fn load_out(i: u32) -> Fr {
    var w: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        w[k] = out[8u * i + k];
    }
    return fr_unpack(w);
}

fn store_out(i: u32, a: Fr) {
    var w = fr_pack(a);
    for (var k = 0u; k < 8u; k++) {
        out[8u * i + k] = w[k];
    }
}

@compute @workgroup_size(64)
fn sparse_product(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = sparse_thread(wid, lid, nwg);
    if t >= params.count {
        return;
    }
    // Row r of the matrix is row first_row + r of `out` (a streamed chunk's rows);
    // the rows of `out` before it are another chunk's.
    let o = params.base + t;
    if o < params.first_row {
        return;
    }
    let r = o - params.first_row;
    var sum = Fr();
    var added = false;
    if r < params.rows {
        // This row's entries that the bound entries chunk holds.
        let start = max(row_start(r), params.entry_base);
        let end = min(row_start(r + 1u), params.entry_base + params.entry_count);
        for (var k = start; k < end; k++) {
            let w = 2u * (k - params.entry_base);
            // Below z_base the difference wraps past z_count: one test for both ends.
            let zi = entries[w] - params.z_base;
            let c = entries[w + 1u];
            if zi >= params.z_count {
                continue;
            }
            if c < 2u {
                if params.signs == 0u {
                    continue;
                }
                if c == 0u {
                    sum = fr_add(sum, load_z(zi));
                } else {
                    sum = fr_sub(sum, load_z(zi));
                }
            } else {
                let ci = c - params.coeff_base;
                if ci >= params.coeff_count {
                    continue;
                }
                sum = fr_add(sum, fr_mul(load_coefficient(ci), load_z(zi)));
            }
            added = true;
        }
    }
    if params.accumulate == 0u {
        store_out(t, sum);
    } else if added {
        store_out(t, fr_add(load_out(t), sum));
    }
}
