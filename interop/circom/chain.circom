pragma circom 2.0.0;

// A squaring chain of `n` constraints, v[i+1] = v[i]^2 + k: the circuit of at least
// 10,000 constraints (domain 2^14 with n = 10200).
template Chain(n) {
    signal input x;
    signal input k;
    signal output y;

    signal v[n + 1];
    v[0] <== x;
    for (var i = 0; i < n; i++) {
        v[i + 1] <== v[i] * v[i] + k;
    }
    y <== v[n];
}

component main {public [k]} = Chain(10200);
