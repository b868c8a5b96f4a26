//! The operations a benchmark can time, and the sizes each accepts.

use std::fmt;
use std::str::FromStr;

use crucible_core::{Domain, Error, ProofShape, Result, MAX_LOG_SIZE};

/// The largest MSM a benchmark runs.
const MAX_MSM_TERMS: usize = 1 << MAX_LOG_SIZE;

/// Public inputs of the benchmark circuit when timing whole proofs.
pub const PROVE_INPUTS: usize = 1;

/// An operation to time; its size is the NTT length, the MSM length, or the number of
/// constraints of a whole proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// Forward NTT.
    Ntt,
    /// Inverse NTT.
    Intt,
    /// Forward NTT onto the coset g·H.
    CosetNtt,
    /// MSM over G1.
    MsmG1,
    /// MSM over G2.
    MsmG2,
    /// A whole Groth16 proof of the benchmark circuit (key staged once).
    Prove,
}

impl Op {
    /// Every operation, in the order `--help` lists them.
    pub const ALL: [Op; 6] = [
        Op::Ntt,
        Op::Intt,
        Op::CosetNtt,
        Op::MsmG1,
        Op::MsmG2,
        Op::Prove,
    ];

    /// The name users type.
    pub fn name(self) -> &'static str {
        match self {
            Op::Ntt => "ntt",
            Op::Intt => "intt",
            Op::CosetNtt => "coset-ntt",
            Op::MsmG1 => "msm-g1",
            Op::MsmG2 => "msm-g2",
            Op::Prove => "prove",
        }
    }

    /// What one unit of size means, for table headers (`points`, `terms`, `constraints`).
    pub fn size_unit(self) -> &'static str {
        match self {
            Op::Ntt | Op::Intt | Op::CosetNtt => "points",
            Op::MsmG1 | Op::MsmG2 => "terms",
            Op::Prove => "constraints",
        }
    }

    /// Checks that `size` is valid for this operation: at least 1; NTTs a power of two
    /// no larger than the field's two-adicity allows; MSMs no longer than a proof over
    /// the largest domain runs; proofs a domain that exists.
    pub fn check_size(self, size: usize) -> Result<()> {
        if size == 0 {
            return Err(Error::InvalidInput(format!(
                "{} size must be at least 1",
                self.name()
            )));
        }
        match self {
            Op::Ntt | Op::Intt | Op::CosetNtt => {
                if !size.is_power_of_two() {
                    return Err(Error::InvalidInput(format!(
                        "{} sizes must be powers of two, got {size}",
                        self.name()
                    )));
                }
                Domain::<crucible_core::Fr>::with_log_size(size.trailing_zeros()).map(drop)
            }
            Op::MsmG1 | Op::MsmG2 => {
                if size > MAX_MSM_TERMS {
                    return Err(Error::InvalidInput(format!(
                        "{} sizes are at most 2^{MAX_LOG_SIZE} terms (the MSMs of a proof \
                         over the largest domain), got {size}",
                        self.name()
                    )));
                }
                Ok(())
            }
            Op::Prove => prove_shape(size, PROVE_INPUTS).map(drop),
        }
    }
}

/// The shape of the benchmark circuit with `constraints` constraints and `inputs` public
/// inputs ([`BenchCircuit::shape`](crucible_core::fixtures::circuit::BenchCircuit::shape)).
pub fn prove_shape(constraints: usize, inputs: usize) -> Result<ProofShape> {
    crucible_core::fixtures::circuit::BenchCircuit::shape(constraints, inputs)
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Op {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Op, String> {
        Op::ALL
            .into_iter()
            .find(|op| op.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Op::ALL.iter().map(|op| op.name()).collect();
                format!("unknown op `{s}` (expected one of: {})", names.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ops_list_the_valid_ones() {
        for op in Op::ALL {
            assert_eq!(op.name().parse::<Op>(), Ok(op));
        }
        let err = "fft".parse::<Op>().unwrap_err();
        assert!(
            err.contains("unknown op `fft`") && err.contains("msm-g2"),
            "{err}"
        );
    }

    #[test]
    fn sizes_are_checked_per_op() {
        assert!(Op::Ntt.check_size(1 << 10).is_ok());
        assert!(Op::Ntt.check_size(1000).is_err());
        assert!(Op::Ntt.check_size(0).is_err());
        assert!(Op::MsmG1.check_size(1000).is_ok());
        assert!(Op::MsmG1.check_size(1 << 32).is_ok());
        let too_big = Op::MsmG2.check_size(1 << 57).unwrap_err().to_string();
        assert!(too_big.contains("at most 2^32 terms"), "{too_big}");
        let too_big = Op::CosetNtt.check_size(1 << 33).unwrap_err().to_string();
        assert!(too_big.contains("two-adicity"), "{too_big}");
        let too_big = Op::Prove.check_size(1 << 32).unwrap_err().to_string();
        assert!(too_big.contains("2^32"), "{too_big}");
    }
}
