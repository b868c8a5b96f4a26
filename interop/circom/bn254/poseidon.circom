pragma circom 2.0.0;

// circomlib's Poseidon hash of two field elements, as circom's default prime (BN254)
// defines it: the hash is public, the preimage private.
include "circomlib/circuits/poseidon.circom";

template HashPair() {
    signal input left;
    signal input right;
    signal output hash;

    component h = Poseidon(2);
    h.inputs[0] <== left;
    h.inputs[1] <== right;
    hash <== h.out;
}

component main = HashPair();
