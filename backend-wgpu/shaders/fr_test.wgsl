// Test entry point for Fr: out[i] = op(a[i], b[i]) on packed words.

// FrTestParams is generated from params.rs and placed before this file.
@group(0) @binding(0) var<uniform> params: FrTestParams;
@group(0) @binding(1) var<storage, read> a: array<u32>;
@group(0) @binding(2) var<storage, read> b: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64)
fn fr_op(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.count {
        return;
    }
    var wa: array<u32, 8>;
    var wb: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        wa[k] = a[i * 8u + k];
        wb[k] = b[i * 8u + k];
    }
    let x = fr_unpack(wa);
    let y = fr_unpack(wb);
    var r: Fr;
    switch params.op {
        case 0u: { r = fr_add(x, y); }
        case 1u: { r = fr_sub(x, y); }
        case 2u: { r = fr_mul(x, y); }
        default: { r = fr_from_mont(x); }
    }
    var w = fr_pack(r);
    for (var k = 0u; k < 8u; k++) {
        out[i * 8u + k] = w[k];
    }
}
