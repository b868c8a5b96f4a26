pragma circom 2.0.0;

// circomlib's SHA-256 of a 256-bit message given as bits (one block with its padding),
// the digest's 256 bits public: about 30,000 constraints, a domain of 2^15.
include "circomlib/circuits/sha256/sha256.circom";

template Sha256Block() {
    signal input in[256];
    signal output out[256];

    component h = Sha256(256);
    for (var i = 0; i < 256; i++) {
        h.in[i] <== in[i];
    }
    for (var i = 0; i < 256; i++) {
        out[i] <== h.out[i];
    }
}

component main = Sha256Block();
