//! Element layout on the device: arkworks' own Montgomery limbs as little-endian u32
//! words, so conversion is a copy. Affine points are (x, y) with (0, 0) as infinity;
//! MSM window sums come back in XYZZ coordinates (X, Y, ZZ, ZZZ), ZZ = 0 for infinity.
//!
//! Every curve arkworks builds from Montgomery prime fields and their quadratic
//! extension has this layout ([`CudaCurve`]: BLS12-381 and BN254, the curves the
//! kernels compile for). Fr is 8 words on both; Fq is 12 on BLS12-381 and 8 on BN254,
//! and the sizes of points, bases buffers and MSM scratch follow from it
//! ([`CurveShape`], which every [`Group`] carries).

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::{AffineRepr, CurveConfig};
use ark_ff::{Field, Fp, MontBackend, MontConfig, PrimeField, QuadExtConfig, QuadExtField, Zero};
use crucible_core::limbs::{limbs_to_words, words_to_limbs};
use crucible_core::{ElementKind, PairingCurve};

/// u32 words of one Fr (both curves' scalars are four 64-bit limbs; the kernels'
/// `Fr`, `FrArg` and `FrSeeds` hold this many).
pub const FR_WORDS: usize = 8;

/// A value with a fixed device layout of `WORDS` u32 words.
pub trait DeviceElement: Copy + Send + Sync + 'static {
    /// Words per value.
    const WORDS: usize;
    /// Writes the device words of `self` into the front of `out` (`WORDS` long).
    fn write_words(&self, out: &mut [u32]);
    /// Reads a value from the front of `words`, unchecked: the device writes only
    /// reduced values, and the host writes only values it read from arkworks.
    fn read_words(words: &[u32]) -> Self;
}

/// A prime field element: arkworks' Montgomery limbs as words.
impl<T: MontConfig<N>, const N: usize> DeviceElement for Fp<MontBackend<T, N>, N> {
    const WORDS: usize = 2 * N;

    fn write_words(&self, out: &mut [u32]) {
        limbs_to_words(&self.0 .0, &mut out[..Self::WORDS]);
    }

    fn read_words(words: &[u32]) -> Self {
        Self::new_unchecked(words_to_limbs::<N>(&words[..Self::WORDS]))
    }
}

/// A quadratic extension element (Fq2): `c0 ‖ c1`.
impl<P: QuadExtConfig> DeviceElement for QuadExtField<P>
where
    P::BaseField: DeviceElement,
{
    const WORDS: usize = 2 * P::BaseField::WORDS;

    fn write_words(&self, out: &mut [u32]) {
        let n = P::BaseField::WORDS;
        self.c0.write_words(&mut out[..n]);
        self.c1.write_words(&mut out[n..2 * n]);
    }

    fn read_words(words: &[u32]) -> Self {
        let n = P::BaseField::WORDS;
        QuadExtField::new(
            P::BaseField::read_words(&words[..n]),
            P::BaseField::read_words(&words[n..2 * n]),
        )
    }
}

/// An affine point: `x ‖ y`, all-zero words for infinity ((0, 0) is on neither
/// curve's groups: b ≠ 0).
impl<P: SWCurveConfig> DeviceElement for Affine<P>
where
    P::BaseField: DeviceElement,
{
    const WORDS: usize = 2 * P::BaseField::WORDS;

    fn write_words(&self, out: &mut [u32]) {
        let n = P::BaseField::WORDS;
        if self.is_zero() {
            out[..2 * n].fill(0);
        } else {
            self.x.write_words(&mut out[..n]);
            self.y.write_words(&mut out[n..2 * n]);
        }
    }

    fn read_words(words: &[u32]) -> Self {
        let n = P::BaseField::WORDS;
        if words[..2 * n].iter().all(|w| *w == 0) {
            return Self::identity();
        }
        let x = P::BaseField::read_words(&words[..n]);
        let y = P::BaseField::read_words(&words[n..2 * n]);
        Affine::new_unchecked(x, y)
    }
}

/// A scalar field with a device layout: what the NTT and the pointwise products
/// compute on.
pub trait DeviceScalar: PrimeField + DeviceElement {}

impl<F: PrimeField + DeviceElement> DeviceScalar for F {}

/// What the host's sizes depend on of a curve: its Fq's words and the bits an MSM's
/// signed digits cover (field.cuh's `CRU_FQ_LIMBS` and `CRU_SCALAR_DIGIT_BITS`, which a
/// test compares for each curve).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CurveShape {
    /// u32 words of one Fq.
    pub fq_words: usize,
    /// The bits of r plus one, for the last signed digit's carry.
    pub digit_bits: u32,
}

impl CurveShape {
    /// Digit windows of `c` bits: W = ceil(digit_bits / c) (msm.cu's
    /// `msm_num_windows`).
    pub fn windows(self, c: u32) -> usize {
        (self.digit_bits as usize).div_ceil(c as usize)
    }

    /// Words of one element of `kind`.
    pub fn words(self, kind: ElementKind) -> usize {
        match kind {
            ElementKind::Scalar => FR_WORDS,
            ElementKind::G1 => 2 * self.fq_words,
            ElementKind::G2 => 4 * self.fq_words,
            ElementKind::Index => 1,
        }
    }

    /// Bytes of one element of `kind` on the device.
    pub fn element_bytes(self, kind: ElementKind) -> u64 {
        (self.words(kind) * 4) as u64
    }
}

/// A pairing curve the CUDA backend proves over: its scalars, coordinates and G2
/// coordinates have the device layout, and the kernels compile for it
/// (`programs::KernelCurve`, picked by [`PairingCurve::CURVE`]).
pub trait CudaCurve:
    PairingCurve<
    ScalarField: DeviceScalar,
    BaseField: DeviceElement,
    G2Config: CurveConfig<BaseField: DeviceElement>,
>
{
    /// The curve's sizes on the device.
    const SHAPE: CurveShape = CurveShape {
        fq_words: <Self::BaseField as DeviceElement>::WORDS,
        digit_bits: <Self::ScalarField as PrimeField>::MODULUS_BIT_SIZE + 1,
    };

    /// Fails the build of a backend for a curve whose scalars are not the kernels'
    /// `FR_WORDS` (8) words (every scalar kernel and by-value argument is that size).
    const SCALARS_FIT: () = assert!(
        <Self::ScalarField as DeviceElement>::WORDS == FR_WORDS,
        "the kernels' Fr is 8 words"
    );
}

impl<E> CudaCurve for E where
    E: PairingCurve<
        ScalarField: DeviceScalar,
        BaseField: DeviceElement,
        G2Config: CurveConfig<BaseField: DeviceElement>,
    >
{
}

/// G1 or G2: which of a curve's groups an MSM's bases are in (the kernels' `msm_g1_*`
/// and `msm_g2_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Which {
    /// G1, over Fq.
    G1,
    /// G2, over Fq2.
    G2,
}

/// The group of an MSM's bases on one curve, and its word sizes on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Group {
    /// G1 or G2.
    pub which: Which,
    /// The curve's sizes.
    pub shape: CurveShape,
}

impl Group {
    /// `which` of the curve of `shape`.
    pub const fn new(which: Which, shape: CurveShape) -> Group {
        Group { which, shape }
    }

    /// The element kind of its bases.
    pub fn kind(self) -> ElementKind {
        match self.which {
            Which::G1 => ElementKind::G1,
            Which::G2 => ElementKind::G2,
        }
    }

    /// u32 words of one affine base.
    pub fn affine_words(self) -> usize {
        self.shape.words(self.kind())
    }

    /// u32 words of one XYZZ point: four coordinates.
    pub fn xyzz_words(self) -> usize {
        2 * self.affine_words()
    }

    /// Digit windows of `c` bits over the curve's scalars.
    pub fn windows(self, c: u32) -> usize {
        self.shape.windows(c)
    }
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

/// Writes values (scalars, or affine points) into device words, on every core.
pub fn to_words<T: DeviceElement>(src: &[T], dst: &mut [u32]) {
    use rayon::prelude::*;
    dst.par_chunks_exact_mut(T::WORDS)
        .zip(src)
        .with_min_len(par_min(T::WORDS))
        .for_each(|(w, x)| x.write_words(w));
}

/// Copies 32-bit words (index buffers: they are the device's words as they are) into
/// device words, on every core.
pub fn copy_words(src: &[u32], dst: &mut [u32]) {
    use rayon::prelude::*;
    dst.par_chunks_mut(par_min(1))
        .zip(src.par_chunks(par_min(1)))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// Appends the values of device words to `out`, on every core: each thread writes,
/// and so pages in, its own part of `out` (one thread paging in a fresh 32 MiB vector
/// alone took longer than the copy from the device).
pub fn extend_from_words<T: DeviceElement>(out: &mut Vec<T>, src: &[u32]) {
    use rayon::prelude::*;
    out.par_extend(
        src.par_chunks_exact(T::WORDS)
            .with_min_len(par_min(T::WORDS))
            .map(T::read_words),
    );
}

/// Converts device words into `out` (exactly `out.len()` values), on every core.
pub fn words_into<T: DeviceElement>(out: &mut [T], src: &[u32]) {
    use rayon::prelude::*;
    out.par_iter_mut()
        .zip(src.par_chunks_exact(T::WORDS))
        .with_min_len(par_min(T::WORDS))
        .for_each(|(x, w)| *x = T::read_words(w));
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
    pub fn new<F: DeviceScalar>(x: F) -> FrArg {
        let mut words = [0u32; FR_WORDS];
        x.write_words(&mut words);
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
    pub fn powers_of<F: DeviceScalar>(g: F, count: u32) -> Option<FrSeeds> {
        let count = usize::try_from(count).ok().filter(|&c| c <= MAX_SEEDS)?;
        let mut words = [0u32; FR_WORDS * MAX_SEEDS];
        let mut x = g;
        for seed in words.chunks_exact_mut(FR_WORDS).take(count) {
            x.write_words(seed);
            x.square_in_place();
        }
        Some(FrSeeds { words })
    }
}

/// Reads values from device words, on one thread (the tests' reference for
/// [`extend_from_words`] and [`words_into`]).
#[cfg(test)]
pub fn from_words<T: DeviceElement>(src: &[u32]) -> Vec<T> {
    src.chunks_exact(T::WORDS).map(T::read_words).collect()
}

/// The Jacobian point of an XYZZ one: (X/ZZ, Y/ZZZ) = (X'/Z'^2, Y'/Z'^3) for
/// Z' = ZZ·ZZZ, X' = X·ZZ·ZZZ², Y' = Y·ZZ³·ZZZ² (no inversion).
fn xyzz_to_jacobian<F: Field>(x: F, y: F, zz: F, zzz: F) -> Option<(F, F, F)> {
    if zz.is_zero() {
        return None;
    }
    let zzz2 = zzz.square();
    let zz2 = zz.square();
    Some((x * zz * zzz2, y * zz2 * zz * zzz2, zz * zzz))
}

/// A point of G1 or G2 (by `P`) from the device words of an XYZZ point.
pub fn xyzz_words_to_point<P: SWCurveConfig>(w: &[u32]) -> Projective<P>
where
    P::BaseField: DeviceElement,
{
    let n = P::BaseField::WORDS;
    let f = |i: usize| P::BaseField::read_words(&w[i * n..]);
    match xyzz_to_jacobian(f(0), f(1), f(2), f(3)) {
        Some((x, y, z)) => Projective::new_unchecked(x, y, z),
        None => Projective::zero(),
    }
}

/// Both curves' groups, for the tests of the modules that size by them.
#[cfg(test)]
pub mod test_groups {
    use crate::field::{CudaCurve, Group, Which};
    use crucible_core::{Bls12_381, Bn254};

    /// BLS12-381's G1.
    pub const BLS_G1: Group = Group::new(Which::G1, <Bls12_381 as CudaCurve>::SHAPE);
    /// BLS12-381's G2.
    pub const BLS_G2: Group = Group::new(Which::G2, <Bls12_381 as CudaCurve>::SHAPE);
    /// BN254's G1.
    pub const BN_G1: Group = Group::new(Which::G1, <Bn254 as CudaCurve>::SHAPE);
    /// BN254's G2.
    pub const BN_G2: Group = Group::new(Which::G2, <Bn254 as CudaCurve>::SHAPE);
}

#[cfg(test)]
mod tests {
    use super::test_groups::*;
    use super::*;
    use ark_ec::pairing::Pairing;
    use ark_ec::{CurveGroup, PrimeGroup};
    use ark_ff::UniformRand;
    use ark_std::rand::{rngs::StdRng, SeedableRng};
    use crucible_core::{ark_bls12_381, ark_bn254, Bls12_381, Bn254, Fq, Fr};

    fn push<T: DeviceElement>(out: &mut Vec<u32>, x: &T) {
        let mut w = vec![0u32; T::WORDS];
        x.write_words(&mut w);
        out.extend_from_slice(&w);
    }

    #[test]
    fn by_value_arguments_hold_the_device_words() {
        let mut rng = StdRng::seed_from_u64(4);
        let g = Fr::rand(&mut rng);
        let mut w = [0u32; FR_WORDS];
        to_words(&[g], &mut w);
        assert_eq!(FrArg::new(g).words, w);
        let seeds = FrSeeds::powers_of(g, 3).unwrap();
        let want: Vec<Fr> = [g, g.square(), g.square().square(), Fr::zero()].into();
        assert_eq!(from_words::<Fr>(&seeds.words[..4 * FR_WORDS]), want);
        assert!(seeds.words[3 * FR_WORDS..].iter().all(|&w| w == 0));
        assert!(FrSeeds::powers_of(g, MAX_SEEDS as u32).is_some());
        assert!(FrSeeds::powers_of(g, MAX_SEEDS as u32 + 1).is_none());
        // The kernels' structs: 8 and 8 * 32 words, 4-byte aligned.
        assert_eq!(std::mem::size_of::<FrArg>(), 32);
        assert_eq!(std::mem::size_of::<FrSeeds>(), 32 * 32);
        assert_eq!(std::mem::align_of::<FrSeeds>(), 4);
    }

    /// BN254's scalars go to the kernels by value as BLS12-381's do: their Montgomery
    /// words, the seeds the squares.
    #[test]
    fn by_value_arguments_hold_bn254_words_too() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        let g = ark_bn254::Fr::rand(&mut rng);
        let mut w = [0u32; FR_WORDS];
        to_words(&[g], &mut w);
        assert_eq!(FrArg::new(g).words, w, "seed {seed}");
        let seeds = FrSeeds::powers_of(g, 2).unwrap();
        let want = [g, g.square(), ark_bn254::Fr::zero()];
        assert_eq!(
            from_words::<ark_bn254::Fr>(&seeds.words[..3 * FR_WORDS]),
            want,
            "seed {seed}"
        );
    }

    #[test]
    fn fr_words_round_trip_in_parallel_pieces() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        // Several tasks' worth, in two pieces as two staging chunks would arrive.
        let n = 3 * par_min(FR_WORDS) + 5;
        let values: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
        let mut words = vec![0u32; n * FR_WORDS];
        to_words(&values, &mut words);
        assert_eq!(from_words::<Fr>(&words), values, "seed {seed}");
        let mut out: Vec<Fr> = Vec::new();
        let (front, back) = words.split_at(par_min(FR_WORDS) * FR_WORDS + FR_WORDS);
        extend_from_words(&mut out, front);
        extend_from_words(&mut out, back);
        assert_eq!(out, values, "seed {seed}");
    }

    /// Values of a field, in both directions, on one thread and on every core: the
    /// words, read as an integer, are x·R mod p with R = 2^(32 · words) (arkworks'
    /// Montgomery form, which the kernels compute in), and read back to the same values.
    fn field_words_round_trip<F: PrimeField + DeviceElement>(rng: &mut StdRng, seed: u64) {
        let n = 2 * par_min(F::WORDS) + 3;
        let mut values: Vec<F> = (0..n).map(|_| F::rand(rng)).collect();
        values.extend([F::zero(), F::one(), -F::one()]);
        let mut words = vec![0u32; values.len() * F::WORDS];
        to_words(&values, &mut words);
        let r = F::from(2u64).pow([32 * F::WORDS as u64]);
        for (x, w) in values.iter().zip(words.chunks_exact(F::WORDS)) {
            let bytes: Vec<u8> = w.iter().flat_map(|word| word.to_le_bytes()).collect();
            assert_eq!(F::from_le_bytes_mod_order(&bytes), *x * r, "seed {seed}");
        }
        assert_eq!(from_words::<F>(&words), values, "seed {seed}");
        let mut out = vec![F::zero(); values.len()];
        words_into(&mut out, &words);
        assert_eq!(out, values, "seed {seed}");
    }

    #[test]
    fn scalars_and_coordinates_cross_both_ways_on_both_curves() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        field_words_round_trip::<ark_bls12_381::Fr>(&mut rng, seed);
        field_words_round_trip::<ark_bls12_381::Fq>(&mut rng, seed);
        field_words_round_trip::<ark_bn254::Fr>(&mut rng, seed);
        field_words_round_trip::<ark_bn254::Fq>(&mut rng, seed);
        assert_eq!(<ark_bls12_381::Fq as DeviceElement>::WORDS, 12);
        assert_eq!(<ark_bn254::Fq as DeviceElement>::WORDS, 8);
        assert_eq!(<ark_bls12_381::Fr as DeviceElement>::WORDS, FR_WORDS);
        assert_eq!(<ark_bn254::Fr as DeviceElement>::WORDS, FR_WORDS);
        // Fq2 is c0 ‖ c1.
        for _ in 0..8 {
            let x = ark_bn254::Fq2::rand(&mut rng);
            let mut w = Vec::new();
            push(&mut w, &x);
            let mut halves = Vec::new();
            push(&mut halves, &x.c0);
            push(&mut halves, &x.c1);
            assert_eq!(w, halves, "seed {seed}");
            assert_eq!(ark_bn254::Fq2::read_words(&w), x, "seed {seed}");
            let y = ark_bls12_381::Fq2::rand(&mut rng);
            let mut w = Vec::new();
            push(&mut w, &y);
            assert_eq!(w.len(), 24);
            assert_eq!(ark_bls12_381::Fq2::read_words(&w), y, "seed {seed}");
        }
    }

    /// Affine points of `E`'s G1 and G2 to words and back, on every core: `x ‖ y` in the
    /// coordinates' words (Fq2's `c0 ‖ c1`), infinity as all-zero words.
    fn points_cross_both_ways<E: CudaCurve>(rng: &mut StdRng, seed: u64) {
        fn check<P: SWCurveConfig>(points: &[Affine<P>], seed: u64)
        where
            P::BaseField: DeviceElement,
        {
            let n = <Affine<P> as DeviceElement>::WORDS;
            assert_eq!(n, 2 * P::BaseField::WORDS);
            let mut words = vec![u32::MAX; points.len() * n];
            to_words(points, &mut words);
            for (p, w) in points.iter().zip(words.chunks_exact(n)) {
                let mut want = Vec::new();
                match p.xy() {
                    Some((x, y)) => {
                        push(&mut want, &x);
                        push(&mut want, &y);
                    }
                    None => want.resize(n, 0),
                }
                assert_eq!(w, &want[..], "seed {seed}");
            }
            let mut back: Vec<Affine<P>> = Vec::new();
            extend_from_words(&mut back, &words);
            assert_eq!(back, points, "seed {seed}");
        }
        let count = par_min(<E::G2Affine as DeviceElement>::WORDS) + 7;
        let mut g1: Vec<E::G1Affine> = (0..count).map(|_| E::G1::rand(rng).into_affine()).collect();
        g1[3] = E::G1Affine::identity();
        check(&g1, seed);
        let mut g2: Vec<E::G2Affine> = (0..count).map(|_| E::G2::rand(rng).into_affine()).collect();
        g2[count - 1] = E::G2Affine::identity();
        check(&g2, seed);
    }

    #[test]
    fn points_cross_both_ways_on_both_curves() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        points_cross_both_ways::<Bls12_381>(&mut rng, seed);
        points_cross_both_ways::<Bn254>(&mut rng, seed);
    }

    /// An XYZZ point of `E`'s G1 and G2 with a random Z becomes the same point, and
    /// ZZ = 0 is infinity.
    fn xyzz_round_trip<E: CudaCurve>(rng: &mut StdRng, seed: u64) {
        fn check<P: SWCurveConfig>(p: Affine<P>, z: P::BaseField, seed: u64)
        where
            P::BaseField: DeviceElement,
        {
            let (zz, zzz) = (z.square(), z.square() * z);
            let mut w = Vec::new();
            for v in [p.x * zz, p.y * zzz, zz, zzz] {
                push(&mut w, &v);
            }
            assert_eq!(w.len(), 4 * P::BaseField::WORDS);
            assert_eq!(xyzz_words_to_point::<P>(&w).into_affine(), p, "seed {seed}");
            let zero = vec![0u32; w.len()];
            assert_eq!(xyzz_words_to_point::<P>(&zero), Projective::<P>::zero());
        }
        for _ in 0..4 {
            let p = (E::G1::generator() * E::ScalarField::rand(rng)).into_affine();
            check(p, E::BaseField::rand(rng), seed);
            let q = (E::G2::generator() * E::ScalarField::rand(rng)).into_affine();
            check(q, <E::G2Config as CurveConfig>::BaseField::rand(rng), seed);
        }
    }

    #[test]
    fn xyzz_words_become_the_same_points_on_both_curves() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        xyzz_round_trip::<Bls12_381>(&mut rng, seed);
        xyzz_round_trip::<Bn254>(&mut rng, seed);
    }

    /// BLS12-381's XYZZ words as the backend read them before it had another curve:
    /// G2's coordinates c0 ‖ c1 in order x, y, ZZ, ZZZ.
    #[test]
    fn bls12_381_xyzz_words_are_read_as_before() {
        let mut rng = StdRng::seed_from_u64(3);
        let q = (crucible_core::G2Projective::generator() * Fr::rand(&mut rng)).into_affine();
        let z = ark_bls12_381::Fq2::rand(&mut rng);
        let (zz, zzz) = (z.square(), z.square() * z);
        let mut w = Vec::new();
        for v in [q.x * zz, q.y * zzz, zz, zzz] {
            push::<Fq>(&mut w, &v.c0);
            push::<Fq>(&mut w, &v.c1);
        }
        assert_eq!(w.len(), 96);
        let p = xyzz_words_to_point::<ark_bls12_381::g2::Config>(&w);
        assert_eq!(p.into_affine(), q);
    }

    /// The sizes each curve's host code plans with: BLS12-381's as they were before
    /// BN254 (12-word Fq, digits of 256 bits), BN254's from its 4-limb Fq and 254-bit r.
    #[test]
    fn each_curve_has_its_own_sizes() {
        let bls = <Bls12_381 as CudaCurve>::SHAPE;
        let bn = <Bn254 as CudaCurve>::SHAPE;
        assert_eq!(
            bls,
            CurveShape {
                fq_words: 12,
                digit_bits: 256
            }
        );
        assert_eq!(
            bn,
            CurveShape {
                fq_words: 8,
                digit_bits: 255
            }
        );
        let sizes = |g: Group| (g.affine_words(), g.xyzz_words(), g.kind());
        assert_eq!(sizes(BLS_G1), (24, 48, ElementKind::G1));
        assert_eq!(sizes(BLS_G2), (48, 96, ElementKind::G2));
        assert_eq!(sizes(BN_G1), (16, 32, ElementKind::G1));
        assert_eq!(sizes(BN_G2), (32, 64, ElementKind::G2));
        for (shape, g1, g2) in [(bls, 96, 192), (bn, 64, 128)] {
            assert_eq!(shape.element_bytes(ElementKind::Scalar), 32);
            assert_eq!(shape.element_bytes(ElementKind::Index), 4);
            assert_eq!(shape.element_bytes(ElementKind::G1), g1);
            assert_eq!(shape.element_bytes(ElementKind::G2), g2);
        }
        // The device's point sizes are arkworks' in-memory sizes on both curves.
        assert_eq!(
            std::mem::size_of::<<Bn254 as Pairing>::G1Affine>(),
            BN_G1.affine_words() * 4
        );
        assert_eq!(
            std::mem::size_of::<<Bls12_381 as Pairing>::G2Affine>(),
            BLS_G2.affine_words() * 4
        );
        // W = ceil(digit bits / c): BN254's one bit fewer saves a window where c
        // divides 255 (c = 15: 17 against 18; c = 17: 15 against 16).
        for c in 1..=24u32 {
            assert_eq!(bls.windows(c), 256usize.div_ceil(c as usize), "c = {c}");
            assert_eq!(bn.windows(c), 255usize.div_ceil(c as usize), "c = {c}");
            assert!(bn.windows(c) * c as usize >= 255);
        }
        assert_eq!((bls.windows(15), bn.windows(15)), (18, 17));
        assert_eq!((bls.windows(17), bn.windows(17)), (16, 15));
        assert_eq!((bls.windows(16), bn.windows(16)), (16, 16));
    }

    /// The host's sizes are the kernels' own: each curve block of field.cuh defines
    /// the Fq limbs and digit bits that [`CurveShape`] derives from arkworks.
    #[test]
    fn the_shapes_are_field_cuh_s_curve_blocks() {
        let source = include_str!("../kernels/field.cuh");
        let (bn_block, bls_block) = {
            let start = source
                .find("#if defined(CRU_CURVE_BN254)")
                .expect("field.cuh's BN254 block");
            let rest = &source[start..];
            let split = rest.find("\n#else").expect("field.cuh's BLS12-381 block");
            let end = rest.find("\n#endif").expect("the curve block's end");
            (&rest[..split], &rest[split..end])
        };
        let define = |block: &str, name: &str| -> u32 {
            let line = block
                .lines()
                .find(|l| l.starts_with(&format!("#define {name} ")))
                .unwrap_or_else(|| panic!("{name} in {block}"));
            line.split_whitespace().nth(2).unwrap().parse().unwrap()
        };
        for (block, shape) in [
            (bls_block, <Bls12_381 as CudaCurve>::SHAPE),
            (bn_block, <Bn254 as CudaCurve>::SHAPE),
        ] {
            assert_eq!(define(block, "CRU_FQ_LIMBS") as usize, shape.fq_words);
            assert_eq!(define(block, "CRU_FR_LIMBS") as usize, FR_WORDS);
            assert_eq!(define(block, "CRU_SCALAR_DIGIT_BITS"), shape.digit_bits);
        }
    }
}
