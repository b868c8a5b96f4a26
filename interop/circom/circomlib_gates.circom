pragma circom 2.0.0;

// circomlib templates that work in any field: comparison (LessThan, IsEqual, IsZero),
// bit decomposition (Num2Bits), selection (Mux1) and Boolean gates.
include "circomlib/circuits/comparators.circom";
include "circomlib/circuits/bitify.circom";
include "circomlib/circuits/mux1.circom";
include "circomlib/circuits/gates.circom";

template InRangeSelect(bits) {
    signal input value;
    signal input bound;
    signal input alt;
    signal input choice;
    signal output below;
    signal output selected;
    signal output parity;

    component lt = LessThan(bits);
    lt.in[0] <== value;
    lt.in[1] <== bound;
    below <== lt.out;

    component decompose = Num2Bits(bits);
    decompose.in <== value;
    parity <== decompose.out[0];

    component same = IsEqual();
    same.in[0] <== value;
    same.in[1] <== alt;

    component pick = Mux1();
    pick.c[0] <== value;
    pick.c[1] <== alt;
    pick.s <== choice;

    component differs = NOT();
    differs.in <== same.out;
    component both = AND();
    both.a <== below;
    both.b <== differs.out;

    selected <== pick.out * both.out;
}

component main {public [bound]} = InRangeSelect(64);
