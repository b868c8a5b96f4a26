//! The queries of a proving key, and sets of them (a schedule's resident ones).

use std::fmt;

use crate::groth16::{items, Reduction};
use crate::{ElementKind, PlanKey, ProofShape, ScalarMix};

/// One query of a proving key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Query {
    /// `h_query` (G1), the quotient's bases.
    H,
    /// `l_query` (G1), over the witness.
    L,
    /// `a_query` (G1).
    A,
    /// `b_g1_query` (G1).
    BG1,
    /// `b_g2_query` (G2).
    BG2,
}

impl Query {
    /// Every query, in the order the proof runs their MSMs.
    pub const ALL: [Query; 5] = [Query::H, Query::L, Query::A, Query::BG1, Query::BG2];

    /// The name users see.
    pub fn name(self) -> &'static str {
        match self {
            Query::H => "h",
            Query::L => "l",
            Query::A => "a",
            Query::BG1 => "b_g1",
            Query::BG2 => "b_g2",
        }
    }

    /// G1 or G2 bases.
    pub fn kind(self) -> ElementKind {
        match self {
            Query::BG2 => ElementKind::G2,
            _ => ElementKind::G1,
        }
    }

    /// The plan item of the query when it is resident.
    pub fn key(self) -> PlanKey {
        match self {
            Query::H => items::H_QUERY,
            Query::L => items::L_QUERY,
            Query::A => items::A_QUERY,
            Query::BG1 => items::B_G1_QUERY,
            Query::BG2 => items::B_G2_QUERY,
        }
    }

    /// Points of this query in a key of `shape`.
    pub fn len(self, shape: &ProofShape, reduction: Reduction) -> usize {
        match self {
            Query::H => reduction.h_len(shape.domain_size()),
            Query::L => shape.num_witness,
            Query::A | Query::BG1 | Query::BG2 => shape.num_variables(),
        }
    }

    /// Terms of this query's MSM in a proof (A and B skip the constant one, which the
    /// final combination adds directly).
    pub fn msm_terms(self, shape: &ProofShape, reduction: Reduction) -> usize {
        match self {
            Query::A | Query::BG1 | Query::BG2 => shape.num_variables() - 1,
            other => other.len(shape, reduction),
        }
    }

    /// The mix of this query's MSM scalars in a proof whose witness is of `witness`:
    /// the quotient's coefficients (`h`) are full width whatever the witness.
    pub fn scalars(self, witness: ScalarMix) -> ScalarMix {
        match self {
            Query::H => ScalarMix::FULL,
            _ => witness,
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of queries (the resident ones of a schedule).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct QuerySet(u8);

impl QuerySet {
    /// No query.
    pub const NONE: QuerySet = QuerySet(0);
    /// Every query.
    pub const ALL: QuerySet = QuerySet(0b1_1111);

    /// Whether `q` is in the set.
    pub fn contains(self, q: Query) -> bool {
        self.0 & q.bit() != 0
    }

    /// The set with `q` added.
    pub fn with(self, q: Query) -> QuerySet {
        QuerySet(self.0 | q.bit())
    }

    /// The set without `q`.
    pub fn without(self, q: Query) -> QuerySet {
        QuerySet(self.0 & !q.bit())
    }

    /// The queries in the set, in [`Query::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Query> {
        Query::ALL.into_iter().filter(move |q| self.contains(*q))
    }

    /// The queries not in the set.
    pub fn complement(self) -> QuerySet {
        QuerySet(Self::ALL.0 & !self.0)
    }

    /// Every subset of the five queries.
    pub fn all_subsets() -> impl Iterator<Item = QuerySet> {
        (0..=Self::ALL.0).map(QuerySet)
    }
}

impl fmt::Display for QuerySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == QuerySet::NONE {
            return f.write_str("none");
        }
        let names: Vec<&str> = self.iter().map(Query::name).collect();
        f.write_str(&names.join(","))
    }
}

impl serde::Serialize for QuerySet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}
