//! What the scalar cases compare with: arkworks' NTT, and the first element where two
//! vectors differ.

use ark_ff::PrimeField;
use ark_poly::EvaluationDomain;
use crucible_core::{Domain, NttKind};

use crate::CaseError;

/// arkworks' answer.
pub fn reference<F: PrimeField>(values: &mut Vec<F>, domain: &Domain<F>, kind: NttKind) {
    let d = domain.to_ark();
    let coset = d
        .get_coset(F::GENERATOR)
        .expect("coset of a radix-2 domain");
    match kind {
        NttKind::Forward => d.fft_in_place(values),
        NttKind::Inverse => d.ifft_in_place(values),
        NttKind::CosetForward => coset.fft_in_place(values),
        NttKind::CosetInverse => coset.ifft_in_place(values),
    }
}

/// First index where two vectors differ, as a message.
pub fn first_difference<F: PrimeField>(got: &[F], want: &[F]) -> Result<(), CaseError> {
    if got.len() != want.len() {
        return Err(fail!("length {} instead of {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(fail!(
            "element {i} of {} differs: got {}, want {}",
            got.len(),
            got[i],
            want[i]
        )),
    }
}
