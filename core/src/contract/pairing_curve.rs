//! The pairing curves the pipeline proves over, as one trait: core, the engine and the
//! backends are generic over it, so each curve is added once (its arkworks types and
//! its [`Curve`] name) and never as a copy of the pipeline.

use ark_ec::pairing::Pairing;
use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};

use crate::curve::Curve;

/// A pairing-friendly curve with short-Weierstrass groups, as arkworks names it
/// (`ark_bls12_381::Bls12_381`, `ark_bn254::Bn254`), and the [`Curve`] its files name.
pub trait PairingCurve:
    Pairing<
    G1 = Projective<Self::G1Config>,
    G1Affine = Affine<Self::G1Config>,
    G2 = Projective<Self::G2Config>,
    G2Affine = Affine<Self::G2Config>,
>
{
    /// The curve as files and users name it.
    const CURVE: Curve;
    /// G1's curve parameters.
    type G1Config: SWCurveConfig<BaseField = Self::BaseField, ScalarField = Self::ScalarField>;
    /// G2's curve parameters.
    type G2Config: SWCurveConfig<ScalarField = Self::ScalarField>;
}

impl PairingCurve for ark_bls12_381::Bls12_381 {
    const CURVE: Curve = Curve::Bls12_381;
    type G1Config = ark_bls12_381::g1::Config;
    type G2Config = ark_bls12_381::g2::Config;
}

impl PairingCurve for ark_bn254::Bn254 {
    const CURVE: Curve = Curve::Bn254;
    type G1Config = ark_bn254::g1::Config;
    type G2Config = ark_bn254::g2::Config;
}
