//! A schedule: which queries stay resident, where the domain vectors live and where
//! A·z, B·z and C·z are computed.

use std::fmt;

use super::{MatrixSizes, Query, QuerySet};
use crate::groth16::Reduction;
use crate::{Error, ProofShape, Result};

/// Where a proof keeps its domain vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DomainVectors {
    /// A·z, B·z, C·z and the assignment each in its own buffer, all at once (the
    /// staging of one overlaps the transforms of the last).
    Resident,
    /// Two domain-sized buffers: a → coset; b → coset, a·b; c into b's buffer →
    /// coset, the quotient; then the assignment into b's buffer.
    Sequenced,
}

/// Where A·z, B·z and C·z are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evaluation {
    /// On the host (in parallel over rows); the three vectors are staged per proof.
    Host,
    /// On the device ([`ProverBackend::sparse_product`](crate::ProverBackend::sparse_product)) from the circuit's matrices,
    /// staged once with the key; per proof only the assignment is staged, and the
    /// assignment stays on the device for the whole proof.
    Device,
    /// On the device as [`Evaluation::Device`], the matrices streamed per proof instead
    /// (for budgets that cannot hold them beside the key): each matrix's coefficients,
    /// then its rows in runs of at most `chunk` rows and `chunk` entries, through one
    /// chunk buffer, multiplied out run by run.
    DeviceStreamed {
        /// The most rows, and the most entries, of one run.
        chunk: usize,
    },
}

impl Evaluation {
    /// Whether the sparse products run on the device (matrices staged or streamed).
    pub fn on_device(self) -> bool {
        self != Evaluation::Host
    }
}

/// How one proof uses device memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Schedule {
    /// Queries staged once with the key; the rest stream from the host per proof.
    pub resident: QuerySet,
    /// The domain vectors' layout.
    pub domain: DomainVectors,
    /// Points per chunk of a streamed MSM (ignored when nothing streams).
    pub chunk: usize,
    /// Where A·z, B·z and C·z are computed.
    pub evaluation: Evaluation,
}

impl Schedule {
    /// Everything resident, evaluated on the host: the fastest schedule without the
    /// circuit's matrices.
    pub const RESIDENT: Schedule = Schedule {
        resident: QuerySet::ALL,
        domain: DomainVectors::Resident,
        chunk: 0,
        evaluation: Evaluation::Host,
    };

    /// Whether any query streams.
    pub fn streams(&self) -> bool {
        self.resident != QuerySet::ALL
    }

    /// The schedule as a key of `shape` runs it: a query with no term to sum (the l
    /// query of a circuit without witness variables, the h query of a domain of one
    /// point, a, b_g1 and b_g2 with the constant as the only variable) is resident, as
    /// it has nothing to stream; its buffer holds at most the constant's point and its
    /// MSM sums nothing to the identity. So every query of every schedule is either
    /// resident or streamed.
    pub fn for_shape(self, shape: &ProofShape, reduction: Reduction) -> Schedule {
        let resident = Query::ALL
            .into_iter()
            .filter(|q| q.msm_terms(shape, reduction) == 0)
            .fold(self.resident, QuerySet::with);
        let chunk = if resident == QuerySet::ALL {
            0
        } else {
            self.chunk
        };
        Schedule {
            resident,
            chunk,
            ..self
        }
    }

    /// Checks the schedule can run for a key with `matrices` (`None`: without the
    /// circuit's matrices): a streamed query needs chunks of at least a point, a
    /// device evaluation the matrices, and one without C all three domain vectors
    /// (its C·z is a product of the other two, computed before their transforms).
    pub fn validate(&self, matrices: Option<&MatrixSizes>) -> Result<()> {
        if self.streams() && self.chunk == 0 {
            return Err(Error::InvalidInput(
                "a schedule that streams bases needs a chunk of at least one point".into(),
            ));
        }
        if self.evaluation.on_device() {
            match matrices {
                None => {
                    return Err(Error::InvalidInput(
                        "a schedule that evaluates on the device needs the circuit's matrices"
                            .into(),
                    ))
                }
                Some(m) if !m.has_c && self.domain == DomainVectors::Sequenced => {
                    return Err(Error::InvalidInput(
                        "a circuit without C (a .zkey's) evaluates on the device only with resident domain vectors".into(),
                    ))
                }
                Some(_) => {}
            }
        }
        if let (Evaluation::DeviceStreamed { chunk }, Some(m)) = (self.evaluation, matrices) {
            if chunk == 0 || chunk < m.longest_row {
                return Err(Error::InvalidInput(format!(
                    "streamed matrices in runs of {chunk} entries: the longest row has {}",
                    m.longest_row
                )));
            }
        }
        Ok(())
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Schedule::RESIDENT {
            return f.write_str("resident");
        }
        if self.evaluation.on_device() {
            let host = Schedule {
                evaluation: Evaluation::Host,
                ..*self
            };
            return match self.evaluation {
                Evaluation::DeviceStreamed { chunk } => write!(
                    f,
                    "{host}; evaluated on the device, the matrices streamed in runs of {chunk} entries"
                ),
                _ => write!(f, "{host}; evaluated on the device"),
            };
        }
        let domain = match self.domain {
            DomainVectors::Resident => "resident",
            DomainVectors::Sequenced => "sequenced",
        };
        if self.streams() {
            let streamed = self.resident.complement();
            write!(
                f,
                "bases resident: {}, streamed: {} in chunks of {} points; domain vectors {domain}",
                self.resident, streamed, self.chunk
            )
        } else {
            write!(f, "bases resident; domain vectors {domain}")
        }
    }
}
