//! snarkjs' R1CS-to-QAP reduction as an ark-groth16 `R1CSToQAP`: the reference that
//! crucible's circom reduction is checked against, and the setup that makes keys with
//! a `.zkey`'s layout without snarkjs.
//!
//! snarkjs differs from ark-groth16's `LibsnarkReduction` in three ways:
//! - its roots of unity come from the field's smallest quadratic non-residue (5 for
//!   BLS12-381's scalar field), where arkworks' come from its multiplicative
//!   generator (7): row i of the constraints sits at ω_snarkjs^i, another point;
//! - the quotient is evaluated on the coset g·H with g the domain's 2n-th root of
//!   unity ("odd" points), where Z(x) = xⁿ − 1 is the constant −2: no division,
//!   and no inverse transform back to coefficients;
//! - so the key's H query has n points, `L'_j(τ)·Z(τ) / (−2δ)` for the Lagrange
//!   basis `L'` of that coset.

use ark_ff::{FftField, PrimeField};
use ark_groth16::r1cs_to_qap::{evaluate_constraint, R1CSToQAP};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_relations::gr1cs::{ConstraintSystemRef, Matrix, SynthesisError, R1CS_PREDICATE_LABEL};
use crucible_core::groth16::snarkjs_root_of_unity;

/// snarkjs' (ffjavascript's) reduction; see the module documentation.
pub struct CircomReduction;

/// The radix-2 domain of `size` points with snarkjs' generator (and `offset`).
pub fn snarkjs_domain<F: PrimeField + FftField>(
    size: usize,
    offset: F,
) -> Result<Radix2EvaluationDomain<F>, SynthesisError> {
    let ark =
        Radix2EvaluationDomain::<F>::new(size).ok_or(SynthesisError::PolynomialDegreeTooLarge)?;
    let gen = snarkjs_root_of_unity::<F>(ark.log_size_of_group)
        .ok_or(SynthesisError::PolynomialDegreeTooLarge)?;
    let domain = Radix2EvaluationDomain {
        group_gen: gen,
        group_gen_inv: gen.inverse().ok_or(SynthesisError::DivisionByZero)?,
        ..ark
    };
    domain
        .get_coset(offset)
        .ok_or(SynthesisError::DivisionByZero)
}

/// The coset snarkjs evaluates the quotient on: its 2n-th root of unity times H.
fn odd_coset<F: PrimeField + FftField>(
    size: usize,
) -> Result<Radix2EvaluationDomain<F>, SynthesisError> {
    let log = size.trailing_zeros() + 1;
    let g = snarkjs_root_of_unity::<F>(log).ok_or(SynthesisError::PolynomialDegreeTooLarge)?;
    snarkjs_domain(size, g)
}

impl R1CSToQAP for CircomReduction {
    #[allow(clippy::type_complexity)]
    fn instance_map_with_evaluation<F: PrimeField, D: EvaluationDomain<F>>(
        cs: ConstraintSystemRef<F>,
        t: &F,
    ) -> Result<(Vec<F>, Vec<F>, Vec<F>, F, usize, usize), SynthesisError> {
        let matrices = cs.to_matrices()?;
        let matrices = matrices
            .get(R1CS_PREDICATE_LABEL)
            .ok_or(SynthesisError::PredicateNotFound)?;
        let num_constraints = cs.num_constraints();
        let num_instance = cs.num_instance_variables();
        let size = D::compute_size_of_domain(num_constraints + num_instance)
            .ok_or(SynthesisError::PolynomialDegreeTooLarge)?;
        let domain = snarkjs_domain::<F>(size, F::one())?;
        let zt = domain.evaluate_vanishing_polynomial(*t);
        let u = domain.evaluate_all_lagrange_coefficients(*t);
        let num_variables = num_instance + cs.num_witness_variables();
        let (mut a, mut b, mut c) = (
            vec![F::zero(); num_variables],
            vec![F::zero(); num_variables],
            vec![F::zero(); num_variables],
        );
        // The public-input rows after the constraints, as in every Groth16 setup.
        a[..num_instance].copy_from_slice(&u[num_constraints..num_constraints + num_instance]);
        for (i, u_i) in u.iter().enumerate().take(num_constraints) {
            for (m, out) in [&mut a, &mut b, &mut c].into_iter().enumerate() {
                for &(coeff, var) in &matrices[m][i] {
                    out[var] += *u_i * coeff;
                }
            }
        }
        Ok((a, b, c, zt, num_variables - 1, size))
    }

    fn witness_map_from_matrices<F: PrimeField, D: EvaluationDomain<F>>(
        matrices: &[Matrix<F>],
        num_inputs: usize,
        num_constraints: usize,
        full_assignment: &[F],
    ) -> Result<Vec<F>, SynthesisError> {
        let size = D::compute_size_of_domain(num_constraints + num_inputs)
            .ok_or(SynthesisError::PolynomialDegreeTooLarge)?;
        let domain = snarkjs_domain::<F>(size, F::one())?;
        let coset = odd_coset::<F>(size)?;
        let evaluations = |m: usize| {
            let mut v = vec![F::zero(); size];
            for (out, row) in v.iter_mut().zip(&matrices[m]).take(num_constraints) {
                *out = evaluate_constraint(row, full_assignment);
            }
            if m == 0 {
                v[num_constraints..num_constraints + num_inputs]
                    .copy_from_slice(&full_assignment[..num_inputs]);
            }
            // Evaluations on H to evaluations on the odd coset.
            domain.ifft_in_place(&mut v);
            coset.fft_in_place(&mut v);
            v
        };
        let (a, b, c) = (evaluations(0), evaluations(1), evaluations(2));
        Ok(a.iter()
            .zip(&b)
            .zip(&c)
            .map(|((a, b), c)| *a * b - c)
            .collect())
    }

    fn h_query_scalars<F: PrimeField, D: EvaluationDomain<F>>(
        max_power: usize,
        t: F,
        zt: F,
        delta_inverse: F,
    ) -> Result<Vec<F>, SynthesisError> {
        let size = max_power + 1;
        let coset = odd_coset::<F>(size)?;
        let minus_half = -F::from(2u64)
            .inverse()
            .ok_or(SynthesisError::DivisionByZero)?;
        let k = zt * delta_inverse * minus_half;
        let lagrange = coset.evaluate_all_lagrange_coefficients(t);
        Ok(lagrange.into_iter().map(|l| l * k).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::{Field, One};
    use crucible_core::Fr;

    #[test]
    fn roots_are_ffjavascripts_not_arkworks() {
        // ffjavascript's `Fr.w[4]` for bls12381 (snarkjs 0.7.6), printed by node.
        let w4: Fr =
            "35811073542294463015946892559272836998938171743018714161809767624935956676211"
                .parse()
                .unwrap();
        assert_eq!(snarkjs_root_of_unity::<Fr>(4), Some(w4));
        let ark = Radix2EvaluationDomain::<Fr>::new(16).unwrap().group_gen;
        assert_ne!(
            ark, w4,
            "arkworks' root would put each row at another point"
        );
        for log in 0..=Fr::TWO_ADICITY {
            let w = snarkjs_root_of_unity::<Fr>(log).unwrap();
            assert!(w.pow([1u64 << log]).is_one(), "2^{log}-th root");
            if log > 0 {
                assert!(
                    !w.pow([1u64 << (log - 1)]).is_one(),
                    "primitive 2^{log}-th root"
                );
            }
        }
        assert_eq!(snarkjs_root_of_unity::<Fr>(Fr::TWO_ADICITY + 1), None);
    }
}
