//! Points on BLS12-381's curves outside the prime-order subgroups, in a `.zkey`'s
//! Montgomery form: found by trying x = 0, 1, 2, … (both cofactors are large, so the
//! first points found lie outside the subgroup).

// Each test binary uses a part of it.
#![allow(dead_code)]

use ark_ec::short_weierstrass::SWCurveConfig;
use ark_ff::{Field, One};
use crucible_core::ark_bls12_381::{g2, Fq2};
use crucible_core::{Fq, G1Affine, G2Affine};

/// A base-field element's Montgomery limbs, little-endian: how a `.zkey` stores it.
pub fn montgomery_bytes(f: Fq) -> Vec<u8> {
    f.0 .0.iter().flat_map(|l| l.to_le_bytes()).collect()
}

/// A point of G1's curve, y² = x³ + 4, outside the r-order subgroup.
pub fn non_subgroup_g1_zkey_bytes() -> Vec<u8> {
    let mut x = Fq::from(0u64);
    loop {
        if let Some(y) = (x.square() * x + Fq::from(4u64)).sqrt() {
            let p = G1Affine::new_unchecked(x, y);
            if p.is_on_curve() && !p.is_in_correct_subgroup_assuming_on_curve() {
                return [montgomery_bytes(x), montgomery_bytes(y)].concat();
            }
        }
        x += Fq::one();
    }
}

/// A point of G2's curve, y² = x³ + 4(1 + u), outside the r-order subgroup.
pub fn non_subgroup_g2_zkey_bytes() -> Vec<u8> {
    let mut k = Fq::from(0u64);
    loop {
        let x = Fq2::new(k, Fq::one());
        if let Some(y) = (x.square() * x + g2::Config::COEFF_B).sqrt() {
            let p = G2Affine::new_unchecked(x, y);
            if p.is_on_curve() && !p.is_in_correct_subgroup_assuming_on_curve() {
                return [x.c0, x.c1, y.c0, y.c1]
                    .into_iter()
                    .flat_map(montgomery_bytes)
                    .collect();
            }
        }
        k += Fq::one();
    }
}
