//! The two groups a backend runs MSMs over, behind one trait, so that generic code
//! (streamed MSMs, the conformance suite, the benches) is written once for G1 and G2.

use ark_ec::{AffineRepr, CurveGroup, PrimeGroup, VariableBaseMSM};

use crate::{
    BufferUse, ElementKind, Fr, G1Affine, G1Buf, G1Projective, G2Affine, G2Buf, G2Projective,
    Lease, MsmSpan, PlanKey, ProverBackend, Result, ScratchNeed,
};

/// G1 (a marker: the two projective types cannot be told apart by coherence).
pub struct G1;
/// G2.
pub struct G2;

/// A group the backends run MSMs over: its types and the trait calls on its buffers.
pub trait MsmGroup {
    /// Projective points (sums).
    type Projective: CurveGroup<ScalarField = Fr, Affine = Self::Affine>
        + VariableBaseMSM
        + PrimeGroup;
    /// Affine points (bases).
    type Affine: AffineRepr<ScalarField = Fr> + Copy + Send + Sync;
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
        backend: &dyn ProverBackend,
        lease: &mut Lease,
        key: PlanKey,
        len: usize,
        usage: BufferUse,
    ) -> Result<Self::Buf>;
    /// Stages `src` into the front of `dst`.
    fn stage(
        backend: &dyn ProverBackend,
        lease: &mut Lease,
        dst: Self::Buf,
        src: &[Self::Affine],
    ) -> Result<()>;
    /// The backend's MSM of `span`.
    fn msm(
        backend: &dyn ProverBackend,
        work: &mut Lease,
        bases: &Lease,
        span: MsmSpan<Self::Buf>,
    ) -> Result<Self::Projective>;
    /// The scratch need of an MSM of `n` terms.
    fn need(n: usize) -> ScratchNeed;
}

macro_rules! msm_group {
    ($group:ident, $name:literal, $kind:ident, $proj:ty, $affine:ty, $buf:ty,
     $alloc:ident, $stage:ident, $msm:ident, $need:ident) => {
        impl MsmGroup for $group {
            type Projective = $proj;
            type Affine = $affine;
            type Buf = $buf;
            const NAME: &'static str = $name;
            const KIND: ElementKind = ElementKind::$kind;
            fn buf_len(buf: &$buf) -> usize {
                buf.len()
            }
            fn alloc(
                backend: &dyn ProverBackend,
                lease: &mut Lease,
                key: PlanKey,
                len: usize,
                usage: BufferUse,
            ) -> Result<$buf> {
                backend.$alloc(lease, key, len, usage)
            }
            fn stage(
                backend: &dyn ProverBackend,
                lease: &mut Lease,
                dst: $buf,
                src: &[$affine],
            ) -> Result<()> {
                backend.$stage(lease, dst, src)
            }
            fn msm(
                backend: &dyn ProverBackend,
                work: &mut Lease,
                bases: &Lease,
                span: MsmSpan<$buf>,
            ) -> Result<$proj> {
                backend.$msm(work, bases, span)
            }
            fn need(n: usize) -> ScratchNeed {
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
    G1Projective,
    G1Affine,
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
    G2Projective,
    G2Affine,
    G2Buf,
    alloc_g2,
    stage_g2,
    msm_g2,
    msm_g2
);
