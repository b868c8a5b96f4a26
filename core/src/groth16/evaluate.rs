//! A·z, B·z and C·z on the host, laid out over the domain as ark-groth16 does.

use ark_ff::Zero;
use rayon::prelude::*;

use super::Synthesized;
use crate::{Error, Fr, Result};

/// The three evaluation vectors, each of the domain's size.
pub struct Evaluations {
    /// A·z, then the instance assignment at rows `m..m + num_instance`.
    pub a: Vec<Fr>,
    /// B·z.
    pub b: Vec<Fr>,
    /// C·z.
    pub c: Vec<Fr>,
}

fn row_value(row: &[(Fr, usize)], z: &[Fr]) -> Fr {
    row.iter().map(|(coeff, var)| *coeff * z[*var]).sum()
}

/// Evaluates the matrices at the assignment and checks every constraint holds
/// (an unsatisfied witness is an error naming the first failing constraint).
pub fn evaluate(s: &Synthesized) -> Result<Evaluations> {
    let n = s.shape.domain_size();
    let m = s.shape.num_constraints;
    let z = &s.assignment;
    if z.len() != s.shape.num_variables() {
        return Err(Error::InvalidInput(format!(
            "assignment has {} values for {} variables",
            z.len(),
            s.shape.num_variables()
        )));
    }
    let mut a = vec![Fr::zero(); n];
    let mut b = vec![Fr::zero(); n];
    let mut c = vec![Fr::zero(); n];
    a[..m]
        .par_iter_mut()
        .zip(&mut b[..m])
        .zip(&mut c[..m])
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
