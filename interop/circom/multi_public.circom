pragma circom 2.0.0;

// Three public inputs and two outputs (five public signals), two private inputs.
template MultiPublic() {
    signal input a;
    signal input b;
    signal input c;
    signal input secret;
    signal input salt;
    signal output product;
    signal output mixed;

    signal square;
    signal salted;
    product <== a * b;
    square <== secret * secret;
    salted <== square * salt;
    mixed <== salted * c + a - b;
}

component main {public [a, b, c]} = MultiPublic();
