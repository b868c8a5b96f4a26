//! A·z, B·z and C·z on the host, laid out over the domain as ark-groth16 does: only
//! the rows that can be non-zero are kept (the rest of the domain is zero, and the
//! backend zeroes it when it stages them: `stage_scalars_padded`).

use ark_ff::PrimeField;

use rayon::prelude::*;

use super::{Evaluations, Synthesized};
use crate::{Error, Result};

fn row_value<F: PrimeField>(row: &[(F, usize)], z: &[F]) -> F {
    row.iter().map(|(coeff, var)| *coeff * z[*var]).sum()
}

/// Evaluates the matrices at the assignment and checks every constraint holds
/// (an unsatisfied witness is an error naming the first failing constraint); from
/// the device layout where the circuit carries it (the same values).
pub fn evaluate<F: PrimeField>(s: &Synthesized<F>) -> Result<Evaluations<F>> {
    if let Some(qap) = &s.qap {
        return qap.evaluate(&s.assignment);
    }
    let m = s.shape.num_constraints;
    let z = &s.assignment;
    if z.len() != s.shape.num_variables() {
        return Err(Error::InvalidInput(format!(
            "assignment has {} values for {} variables",
            z.len(),
            s.shape.num_variables()
        )));
    }
    let mut a = vec![F::zero(); m + s.shape.num_instance];
    let mut b = vec![F::zero(); m];
    let mut c = vec![F::zero(); m];
    a[..m]
        .par_iter_mut()
        .zip(&mut b)
        .zip(&mut c)
        .enumerate()
        .for_each(|(i, ((a, b), c))| {
            *a = row_value(&s.a[i], z);
            *b = row_value(&s.b[i], z);
            *c = row_value(&s.c[i], z);
        });
    if let Some(bad) = (0..m).into_par_iter().find_first(|&i| a[i] * b[i] != c[i]) {
        return Err(Error::InvalidInput(format!(
            "the witness does not satisfy constraint {bad} of {m}"
        )));
    }
    a[m..m + s.shape.num_instance].copy_from_slice(&z[..s.shape.num_instance]);
    Ok(Evaluations { a, b, c })
}
