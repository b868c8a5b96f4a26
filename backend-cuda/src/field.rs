//! Element layout on the device: arkworks' own Montgomery limbs as little-endian u32
//! words, so conversion is a copy. Affine points are (x, y) with (0, 0) as infinity;
//! MSM results come back as Jacobian (X, Y, Z), Z = 0 for infinity.

use ark_ec::AffineRepr;
use ark_ff::{BigInt, Zero};
use crucible_core::{ElementKind, Fq, Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use crucible_core::ark_bls12_381::Fq2;

/// u32 words of one Fr.
pub const FR_WORDS: usize = 8;
/// u32 words of one Fq.
pub const FQ_WORDS: usize = 12;
/// u32 words of a G1 affine point.
pub const G1_WORDS: usize = 2 * FQ_WORDS;
/// u32 words of a G2 affine point.
pub const G2_WORDS: usize = 4 * FQ_WORDS;
/// u32 words of a G1 Jacobian point.
pub const G1_JAC_WORDS: usize = 3 * FQ_WORDS;
/// u32 words of a G2 Jacobian point.
pub const G2_JAC_WORDS: usize = 6 * FQ_WORDS;

/// Words of one element of `kind`.
pub fn words(kind: ElementKind) -> usize {
    match kind {
        ElementKind::Scalar => FR_WORDS,
        ElementKind::G1 => G1_WORDS,
        ElementKind::G2 => G2_WORDS,
    }
}

/// Bytes of one element of `kind` on the device.
pub fn element_bytes(kind: ElementKind) -> u64 {
    (words(kind) * 4) as u64
}

fn push_limbs(out: &mut [u32], limbs: &[u64]) {
    for (pair, limb) in out.chunks_exact_mut(2).zip(limbs) {
        pair[0] = *limb as u32;
        pair[1] = (*limb >> 32) as u32;
    }
}

fn read_limbs<const N: usize>(words: &[u32]) -> BigInt<N> {
    let mut limbs = [0u64; N];
    for (limb, pair) in limbs.iter_mut().zip(words.chunks_exact(2)) {
        *limb = u64::from(pair[0]) | (u64::from(pair[1]) << 32);
    }
    BigInt(limbs)
}

/// Writes Fr values (Montgomery) into device words.
pub fn fr_to_words(src: &[Fr], dst: &mut [u32]) {
    use rayon::prelude::*;
    dst.par_chunks_exact_mut(FR_WORDS)
        .zip(src)
        .for_each(|(w, x)| push_limbs(w, &x.0 .0));
}

/// Reads Fr values from device words.
pub fn words_to_fr(src: &[u32]) -> Vec<Fr> {
    src.chunks_exact(FR_WORDS)
        .map(|w| Fr::new_unchecked(read_limbs::<4>(w)))
        .collect()
}

fn fq_words(out: &mut [u32], x: &Fq) {
    push_limbs(out, &x.0 .0);
}

fn words_fq(w: &[u32]) -> Fq {
    Fq::new_unchecked(read_limbs::<6>(w))
}

/// Writes G1 affine points into device words ((0, 0) for infinity).
pub fn g1_to_words(src: &[G1Affine], dst: &mut [u32]) {
    use rayon::prelude::*;
    dst.par_chunks_exact_mut(G1_WORDS).zip(src).for_each(|(w, p)| {
        if p.is_zero() {
            w.fill(0);
        } else {
            fq_words(&mut w[..FQ_WORDS], &p.x);
            fq_words(&mut w[FQ_WORDS..], &p.y);
        }
    });
}

/// Writes G2 affine points into device words ((0, 0) for infinity).
pub fn g2_to_words(src: &[G2Affine], dst: &mut [u32]) {
    use rayon::prelude::*;
    dst.par_chunks_exact_mut(G2_WORDS).zip(src).for_each(|(w, p)| {
        if p.is_zero() {
            w.fill(0);
        } else {
            for (i, c) in [p.x.c0, p.x.c1, p.y.c0, p.y.c1].iter().enumerate() {
                fq_words(&mut w[i * FQ_WORDS..][..FQ_WORDS], c);
            }
        }
    });
}

/// A Jacobian G1 point from device words.
pub fn words_to_g1(w: &[u32]) -> G1Projective {
    let z = words_fq(&w[2 * FQ_WORDS..]);
    if z.is_zero() {
        return G1Projective::zero();
    }
    G1Projective::new_unchecked(words_fq(w), words_fq(&w[FQ_WORDS..]), z)
}

/// A Jacobian G2 point from device words.
pub fn words_to_g2(w: &[u32]) -> G2Projective {
    let fq2 = |i: usize| Fq2::new(words_fq(&w[2 * i * FQ_WORDS..]), words_fq(&w[(2 * i + 1) * FQ_WORDS..]));
    let z = fq2(2);
    if z.is_zero() {
        return G2Projective::zero();
    }
    G2Projective::new_unchecked(fq2(0), fq2(1), z)
}
