//! Element layout on the device: arkworks' own Montgomery limbs as little-endian u32
//! words, so conversion is a copy. Affine points are (x, y) with (0, 0) as infinity;
//! MSM window sums come back in XYZZ coordinates (X, Y, ZZ, ZZZ), ZZ = 0 for infinity.

use ark_ec::AffineRepr;
use ark_ff::{Field, Zero};
use crucible_core::ark_bls12_381::Fq2;
use crucible_core::limbs::{limbs_to_words, words_to_limbs};
use crucible_core::{ElementKind, Fq, Fr, G1Affine, G1Projective, G2Affine, G2Projective};

/// u32 words of one Fr.
pub const FR_WORDS: usize = 8;
/// u32 words of one Fq.
pub const FQ_WORDS: usize = 12;
/// u32 words of a G1 affine point.
pub const G1_WORDS: usize = 2 * FQ_WORDS;
/// u32 words of a G2 affine point.
pub const G2_WORDS: usize = 4 * FQ_WORDS;
/// u32 words of a G1 XYZZ point.
pub const G1_XYZZ_WORDS: usize = 4 * FQ_WORDS;
/// u32 words of a G2 XYZZ point.
pub const G2_XYZZ_WORDS: usize = 8 * FQ_WORDS;

/// The group of an MSM's bases, and its word sizes on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// G1 over Fq.
    G1,
    /// G2 over Fq2.
    G2,
}

impl Group {
    /// The element kind of its bases.
    pub fn kind(self) -> ElementKind {
        match self {
            Group::G1 => ElementKind::G1,
            Group::G2 => ElementKind::G2,
        }
    }

    /// u32 words of one affine base.
    pub fn affine_words(self) -> usize {
        match self {
            Group::G1 => G1_WORDS,
            Group::G2 => G2_WORDS,
        }
    }

    /// u32 words of one XYZZ point.
    pub fn xyzz_words(self) -> usize {
        match self {
            Group::G1 => G1_XYZZ_WORDS,
            Group::G2 => G2_XYZZ_WORDS,
        }
    }
}

/// Words of one element of `kind`.
pub fn words(kind: ElementKind) -> usize {
    match kind {
        ElementKind::Scalar => FR_WORDS,
        ElementKind::G1 => G1_WORDS,
        ElementKind::G2 => G2_WORDS,
        ElementKind::Index => 1,
    }
}

/// Bytes of one element of `kind` on the device.
pub fn element_bytes(kind: ElementKind) -> u64 {
    (words(kind) * 4) as u64
}

/// Device bytes one rayon task converts at least (128 KiB): a staging chunk then
/// splits into tens of tasks, not hundreds of thousands, and a chunk of any element
/// kind into enough of them to keep every core busy.
const PAR_MIN_BYTES: usize = 1 << 17;

/// Elements of `words` device words one rayon task converts at least.
const fn par_min(words: usize) -> usize {
    PAR_MIN_BYTES / (4 * words)
}

// The conversions below copy limbs word by word rather than reinterpreting arkworks'
// types as bytes: those are not `repr(C)`, so their layout is not promised, and the
// compiler turns these loops into plain loads and stores (measured on the host at the
// speed of `copy_from_slice`).

/// Writes Fr values (Montgomery) into device words, on every core.
pub fn fr_to_words(src: &[Fr], dst: &mut [u32]) {
    use rayon::prelude::*;
    dst.par_chunks_exact_mut(FR_WORDS)
        .zip(src)
        .with_min_len(par_min(FR_WORDS))
        .for_each(|(w, x)| limbs_to_words(&x.0 .0, w));
}

/// Copies 32-bit words (index buffers: they are the device's words as they are) into
/// device words, on every core.
pub fn copy_words(src: &[u32], dst: &mut [u32]) {
    use rayon::prelude::*;
    dst.par_chunks_mut(par_min(1))
        .zip(src.par_chunks(par_min(1)))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// Appends the Fr values of device words to `out`, on every core: each thread writes,
/// and so pages in, its own part of `out` (one thread paging in a fresh 32 MiB vector
/// alone took longer than the copy from the device).
pub fn extend_fr(out: &mut Vec<Fr>, src: &[u32]) {
    use rayon::prelude::*;
    out.par_extend(
        src.par_chunks_exact(FR_WORDS)
            .with_min_len(par_min(FR_WORDS))
            .map(|w| Fr::new_unchecked(words_to_limbs::<4>(w))),
    );
}

/// Converts device words into `out` (exactly `out.len()` scalars), on every core.
pub fn words_into_fr(out: &mut [Fr], src: &[u32]) {
    use rayon::prelude::*;
    out.par_iter_mut()
        .zip(src.par_chunks_exact(FR_WORDS))
        .with_min_len(par_min(FR_WORDS))
        .for_each(|(x, w)| *x = Fr::new_unchecked(words_to_limbs::<4>(w)));
}

/// Most seeds an [`FrSeeds`] holds: g^(2^b) for b < 32 covers every exponent below 2^32.
pub const MAX_SEEDS: usize = 32;

/// One Fr passed to a kernel by value (ntt.cu's `FrArg`): no device buffer, no upload.
/// (Its `DeviceRepr`, the promise that the kernels may read it, is in driver.rs.)
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrArg {
    words: [u32; FR_WORDS],
}

impl FrArg {
    /// The words of `x` (Montgomery form, as every Fr on the device).
    pub fn new(x: Fr) -> FrArg {
        let mut words = [0u32; FR_WORDS];
        limbs_to_words(&x.0 .0, &mut words);
        FrArg { words }
    }
}

/// The seeds g^(2^b), b < `count`, of a table of powers of g, passed to `fr_powers`
/// by value (ntt.cu's `FrSeeds`); unused entries are zero.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrSeeds {
    words: [u32; FR_WORDS * MAX_SEEDS],
}

impl FrSeeds {
    /// g^(2^b) for b < `count`; `None` when `count` exceeds [`MAX_SEEDS`].
    pub fn powers_of(g: Fr, count: u32) -> Option<FrSeeds> {
        let count = usize::try_from(count).ok().filter(|&c| c <= MAX_SEEDS)?;
        let mut words = [0u32; FR_WORDS * MAX_SEEDS];
        let mut x = g;
        for seed in words.chunks_exact_mut(FR_WORDS).take(count) {
            limbs_to_words(&x.0 .0, seed);
            x.square_in_place();
        }
        Some(FrSeeds { words })
    }
}

/// Reads Fr values from device words, on one thread (the tests' reference for
/// [`extend_fr`] and [`words_into_fr`]).
#[cfg(test)]
pub fn words_to_fr(src: &[u32]) -> Vec<Fr> {
    src.chunks_exact(FR_WORDS)
        .map(|w| Fr::new_unchecked(words_to_limbs::<4>(w)))
        .collect()
}

fn fq_words(out: &mut [u32], x: &Fq) {
    limbs_to_words(&x.0 .0, out);
}

fn words_fq(w: &[u32]) -> Fq {
    Fq::new_unchecked(words_to_limbs::<6>(w))
}

/// Writes G1 affine points into device words ((0, 0) for infinity).
pub fn g1_to_words(src: &[G1Affine], dst: &mut [u32]) {
    use rayon::prelude::*;
    dst.par_chunks_exact_mut(G1_WORDS)
        .zip(src)
        .with_min_len(par_min(G1_WORDS))
        .for_each(|(w, p)| {
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
    dst.par_chunks_exact_mut(G2_WORDS)
        .zip(src)
        .with_min_len(par_min(G2_WORDS))
        .for_each(|(w, p)| {
            if p.is_zero() {
                w.fill(0);
            } else {
                for (i, c) in [p.x.c0, p.x.c1, p.y.c0, p.y.c1].iter().enumerate() {
                    fq_words(&mut w[i * FQ_WORDS..][..FQ_WORDS], c);
                }
            }
        });
}

/// The Jacobian point of an XYZZ one: (X/ZZ, Y/ZZZ) = (X'/Z'^2, Y'/Z'^3) for
/// Z' = ZZ·ZZZ, X' = X·ZZ·ZZZ², Y' = Y·ZZ³·ZZZ² (no inversion).
fn xyzz_to_jacobian<F: ark_ff::Field>(x: F, y: F, zz: F, zzz: F) -> Option<(F, F, F)> {
    if zz.is_zero() {
        return None;
    }
    let zzz2 = zzz.square();
    let zz2 = zz.square();
    Some((x * zz * zzz2, y * zz2 * zz * zzz2, zz * zzz))
}

/// A G1 point from the device words of an XYZZ point.
pub fn xyzz_words_to_g1(w: &[u32]) -> G1Projective {
    let f = |i: usize| words_fq(&w[i * FQ_WORDS..]);
    match xyzz_to_jacobian(f(0), f(1), f(2), f(3)) {
        Some((x, y, z)) => G1Projective::new_unchecked(x, y, z),
        None => G1Projective::zero(),
    }
}

/// A G2 point from the device words of an XYZZ point.
pub fn xyzz_words_to_g2(w: &[u32]) -> G2Projective {
    let f = |i: usize| {
        Fq2::new(
            words_fq(&w[2 * i * FQ_WORDS..]),
            words_fq(&w[(2 * i + 1) * FQ_WORDS..]),
        )
    };
    match xyzz_to_jacobian(f(0), f(1), f(2), f(3)) {
        Some((x, y, z)) => G2Projective::new_unchecked(x, y, z),
        None => G2Projective::zero(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::{CurveGroup, PrimeGroup};
    use ark_ff::{Field, UniformRand};
    use ark_std::rand::{rngs::StdRng, SeedableRng};

    fn push_fq(out: &mut Vec<u32>, x: &Fq) {
        let mut w = [0u32; FQ_WORDS];
        fq_words(&mut w, x);
        out.extend_from_slice(&w);
    }

    #[test]
    fn by_value_arguments_hold_the_device_words() {
        let mut rng = StdRng::seed_from_u64(4);
        let g = Fr::rand(&mut rng);
        let mut w = [0u32; FR_WORDS];
        fr_to_words(&[g], &mut w);
        assert_eq!(FrArg::new(g).words, w);
        let seeds = FrSeeds::powers_of(g, 3).unwrap();
        let want: Vec<Fr> = [g, g.square(), g.square().square(), Fr::zero()].into();
        assert_eq!(words_to_fr(&seeds.words[..4 * FR_WORDS]), want);
        assert!(seeds.words[3 * FR_WORDS..].iter().all(|&w| w == 0));
        assert!(FrSeeds::powers_of(g, MAX_SEEDS as u32).is_some());
        assert!(FrSeeds::powers_of(g, MAX_SEEDS as u32 + 1).is_none());
        // The kernels' structs: 8 and 8 * 32 words, 4-byte aligned.
        assert_eq!(std::mem::size_of::<FrArg>(), 32);
        assert_eq!(std::mem::size_of::<FrSeeds>(), 32 * 32);
        assert_eq!(std::mem::align_of::<FrSeeds>(), 4);
    }

    #[test]
    fn fr_words_round_trip_in_parallel_pieces() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        // Several tasks' worth, in two pieces as two staging chunks would arrive.
        let n = 3 * par_min(FR_WORDS) + 5;
        let values: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
        let mut words = vec![0u32; n * FR_WORDS];
        fr_to_words(&values, &mut words);
        assert_eq!(words_to_fr(&words), values, "seed {seed}");
        let mut out = Vec::new();
        let (front, back) = words.split_at(par_min(FR_WORDS) * FR_WORDS + FR_WORDS);
        extend_fr(&mut out, front);
        extend_fr(&mut out, back);
        assert_eq!(out, values, "seed {seed}");
    }

    #[test]
    fn xyzz_words_become_the_same_points() {
        let mut rng = StdRng::seed_from_u64(3);
        let p = (G1Projective::generator() * Fr::rand(&mut rng)).into_affine();
        let z = Fq::rand(&mut rng);
        let (zz, zzz) = (z.square(), z.square() * z);
        let mut w = Vec::new();
        for v in [p.x * zz, p.y * zzz, zz, zzz] {
            push_fq(&mut w, &v);
        }
        assert_eq!(xyzz_words_to_g1(&w).into_affine(), p);
        assert_eq!(xyzz_words_to_g1(&[0; G1_XYZZ_WORDS]), G1Projective::zero());

        let q = (G2Projective::generator() * Fr::rand(&mut rng)).into_affine();
        let z = Fq2::rand(&mut rng);
        let (zz, zzz) = (z.square(), z.square() * z);
        let mut w = Vec::new();
        for v in [q.x * zz, q.y * zzz, zz, zzz] {
            push_fq(&mut w, &v.c0);
            push_fq(&mut w, &v.c1);
        }
        assert_eq!(xyzz_words_to_g2(&w).into_affine(), q);
        assert_eq!(xyzz_words_to_g2(&[0; G2_XYZZ_WORDS]), G2Projective::zero());
    }
}
