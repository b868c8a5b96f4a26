//! The three QAP evaluation vectors, A·z, B·z and C·z, as the host computes them
//! ([`super::evaluate`], [`super::QapMatrices::evaluate`]) before the NTTs.

use crate::Fr;

/// The three evaluation vectors' leading rows; every later row of the domain is zero.
pub struct Evaluations<F = Fr> {
    /// A·z (m rows), then the instance assignment at rows `m..m + num_instance`.
    pub a: Vec<F>,
    /// B·z (m rows).
    pub b: Vec<F>,
    /// C·z (m rows).
    pub c: Vec<F>,
}
