pragma circom 2.0.0;

// circomlib's SHA-256 of one 512-bit block given as bits, the digest's 256 bits public
// (about 29,000 constraints: a domain of 2^15).
include "circomlib/circuits/sha256/sha256.circom";

template Sha256Block() {
    signal input in[512];
    signal output out[256];

    component h = Sha256(512);
    for (var i = 0; i < 512; i++) {
        h.in[i] <== in[i];
    }
    for (var i = 0; i < 256; i++) {
        out[i] <== h.out[i];
    }
}

component main = Sha256Block();
