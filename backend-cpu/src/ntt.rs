//! NTTs and pointwise ops through ark-poly, as ark-groth16 itself computes them.

use ark_ff::{Field, PrimeField};
use ark_poly::EvaluationDomain;
use crucible_core::{Domain, NttKind, Result};
use rayon::prelude::*;

use crate::error::check_len;

/// In-place NTT of `values` over `domain`.
pub fn ntt<F: PrimeField>(values: &mut Vec<F>, domain: &Domain<F>, kind: NttKind) -> Result<()> {
    check_len("NTT input", domain.size, values.len())?;
    let d = domain.to_ark();
    match kind {
        NttKind::Forward => d.fft_in_place(values),
        NttKind::Inverse => d.ifft_in_place(values),
        NttKind::CosetForward | NttKind::CosetInverse => {
            let coset = d.get_coset(domain.coset_gen).ok_or_else(|| {
                crucible_core::Error::Unsupported("no coset for this domain".into())
            })?;
            if kind == NttKind::CosetForward {
                coset.fft_in_place(values)
            } else {
                coset.ifft_in_place(values)
            }
        }
    }
    Ok(())
}

/// `dst[i] *= rhs[i]`.
pub fn mul_assign<F: Field>(dst: &mut [F], rhs: &[F]) -> Result<()> {
    check_len("pointwise operand", dst.len(), rhs.len())?;
    dst.par_iter_mut().zip(rhs).for_each(|(d, r)| *d *= r);
    Ok(())
}

/// `x[i] *= x[i]`: [`mul_assign`] with one buffer as both operands.
pub fn square_assign<F: Field>(x: &mut [F]) {
    x.par_iter_mut().for_each(|v| {
        v.square_in_place();
    });
}

/// `dst[i] = (dst[i] - rhs[i]) * k`.
pub fn sub_mul_assign<F: Field>(dst: &mut [F], rhs: &[F], k: F) -> Result<()> {
    check_len("pointwise operand", dst.len(), rhs.len())?;
    dst.par_iter_mut().zip(rhs).for_each(|(d, r)| {
        *d -= r;
        *d *= k;
    });
    Ok(())
}
