//! The two groups a backend runs MSMs over, behind one trait, so that generic code
//! (streamed MSMs, the conformance suite, the benches) is written once for G1 and G2.

use std::marker::PhantomData;

use ark_ec::pairing::Pairing;
use ark_ec::{AffineRepr, CurveGroup, PrimeGroup, VariableBaseMSM};

use crate::{
    Bls12_381, BufferUse, ElementKind, G1Buf, G2Buf, Lease, MsmSpan, PairingCurve, PlanKey,
    ProverBackend, Result, ScratchNeed,
};

/// G1 of the curve `E` (a marker: the two projective types cannot be told apart by
/// coherence).
pub struct G1<E = Bls12_381>(PhantomData<E>);
/// G2 of the curve `E`.
pub struct G2<E = Bls12_381>(PhantomData<E>);

/// Scalars of a group's curve.
pub type ScalarOf<G> = <<G as MsmGroup>::Curve as Pairing>::ScalarField;

/// A group the backends run MSMs over: its types and the trait calls on its buffers.
pub trait MsmGroup {
    /// The curve the group belongs to.
    type Curve: PairingCurve;
    /// Projective points (sums).
    type Projective: CurveGroup<ScalarField = ScalarOf<Self>, Affine = Self::Affine>
        + VariableBaseMSM
        + PrimeGroup;
    /// Affine points (bases).
    type Affine: AffineRepr<ScalarField = ScalarOf<Self>> + Copy + Send + Sync;
    /// The device buffer handle of its bases.
    type Buf: Copy + Send + Sync;
    /// `g1` or `g2`.
    const NAME: &'static str;
    /// Element kind of its bases.
    const KIND: ElementKind;
    /// Points a buffer holds.
    fn buf_len(buf: &Self::Buf) -> usize;
    /// Allocates `len` bases laid out for `usage` from plan item `key`.
    fn alloc(
        backend: &dyn ProverBackend<Self::Curve>,
        lease: &mut Lease,
        key: PlanKey,
        len: usize,
        usage: BufferUse,
    ) -> Result<Self::Buf>;
    /// Stages `src` into the front of `dst`.
    fn stage(
        backend: &dyn ProverBackend<Self::Curve>,
        lease: &mut Lease,
        dst: Self::Buf,
        src: &[Self::Affine],
    ) -> Result<()>;
    /// The backend's MSM of `span`.
    fn msm(
        backend: &dyn ProverBackend<Self::Curve>,
        work: &mut Lease,
        bases: &Lease,
        span: MsmSpan<Self::Buf>,
    ) -> Result<Self::Projective>;
    /// The scratch need of an MSM of `n` terms.
    fn need(n: usize) -> ScratchNeed<ScalarOf<Self>>;
}

macro_rules! msm_group {
    ($group:ident, $name:literal, $kind:ident, $proj:ty, $affine:ty, $buf:ty,
     $alloc:ident, $stage:ident, $msm:ident, $need:ident) => {
        impl<E: PairingCurve> MsmGroup for $group<E> {
            type Curve = E;
            type Projective = $proj;
            type Affine = $affine;
            type Buf = $buf;
            const NAME: &'static str = $name;
            const KIND: ElementKind = ElementKind::$kind;
            fn buf_len(buf: &$buf) -> usize {
                buf.len()
            }
            fn alloc(
                backend: &dyn ProverBackend<Self::Curve>,
                lease: &mut Lease,
                key: PlanKey,
                len: usize,
                usage: BufferUse,
            ) -> Result<$buf> {
                backend.$alloc(lease, key, len, usage)
            }
            fn stage(
                backend: &dyn ProverBackend<Self::Curve>,
                lease: &mut Lease,
                dst: $buf,
                src: &[$affine],
            ) -> Result<()> {
                backend.$stage(lease, dst, src)
            }
            fn msm(
                backend: &dyn ProverBackend<Self::Curve>,
                work: &mut Lease,
                bases: &Lease,
                span: MsmSpan<$buf>,
            ) -> Result<$proj> {
                backend.$msm(work, bases, span)
            }
            fn need(n: usize) -> ScratchNeed<E::ScalarField> {
                ScratchNeed {
                    $need: n,
                    ..ScratchNeed::default()
                }
            }
        }
    };
}

msm_group!(
    G1,
    "g1",
    G1,
    E::G1,
    E::G1Affine,
    G1Buf,
    alloc_g1,
    stage_g1,
    msm_g1,
    msm_g1
);
msm_group!(
    G2,
    "g2",
    G2,
    E::G2,
    E::G2Affine,
    G2Buf,
    alloc_g2,
    stage_g2,
    msm_g2,
    msm_g2
);
