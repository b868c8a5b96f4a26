//! The plan items the Groth16 pipeline allocates from: typed keys owned here, so the
//! plans, the schedules and the pipeline cannot drift apart.

use crate::PlanKey;

const OWNER: &str = "groth16";

/// A·z on the domain, then the quotient's values (h).
pub const DOMAIN_A: PlanKey = PlanKey::new(OWNER, "domain_a");
/// B·z on the domain; in a sequenced schedule also C·z, then the assignment z.
pub const DOMAIN_B: PlanKey = PlanKey::new(OWNER, "domain_b");
/// C·z on the domain (resident domain vectors only).
pub const DOMAIN_C: PlanKey = PlanKey::new(OWNER, "domain_c");
/// The full assignment z, the scalars of the L, A and B MSMs (resident domain vectors
/// only; a sequenced schedule draws it from [`DOMAIN_B`]).
pub const ASSIGNMENT: PlanKey = PlanKey::new(OWNER, "assignment");
/// A G1 chunk buffer of a streamed MSM (`.at(0)` and `.at(1)`).
pub const G1_CHUNK: PlanKey = PlanKey::new(OWNER, "g1_chunk");
/// A G2 chunk buffer of a streamed MSM (`.at(0)` and `.at(1)`).
pub const G2_CHUNK: PlanKey = PlanKey::new(OWNER, "g2_chunk");
/// The key's `a_query`, resident.
pub const A_QUERY: PlanKey = PlanKey::new(OWNER, "a_query");
/// The key's `b_g1_query`, resident.
pub const B_G1_QUERY: PlanKey = PlanKey::new(OWNER, "b_g1_query");
/// The key's `h_query`, resident.
pub const H_QUERY: PlanKey = PlanKey::new(OWNER, "h_query");
/// The key's `l_query`, resident.
pub const L_QUERY: PlanKey = PlanKey::new(OWNER, "l_query");
/// The key's `b_g2_query`, resident.
pub const B_G2_QUERY: PlanKey = PlanKey::new(OWNER, "b_g2_query");

/// A staged matrix's row starts (`.at(0)` A, `.at(1)` B, `.at(2)` C).
pub const MATRIX_ROW_STARTS: PlanKey = PlanKey::new(OWNER, "matrix_row_starts");
/// A staged matrix's entries (two words an entry).
pub const MATRIX_ENTRIES: PlanKey = PlanKey::new(OWNER, "matrix_entries");
/// A staged matrix's distinct coefficients.
pub const MATRIX_COEFFICIENTS: PlanKey = PlanKey::new(OWNER, "matrix_coefficients");

/// One run of a streamed matrix's row starts (counted from the run's first entry),
/// in the proof's first chunk lease.
pub const MATRIX_CHUNK_ROW_STARTS: PlanKey = PlanKey::new(OWNER, "matrix_chunk_row_starts");
/// One run of a streamed matrix's entries.
pub const MATRIX_CHUNK_ENTRIES: PlanKey = PlanKey::new(OWNER, "matrix_chunk_entries");
/// A streamed matrix's coefficients.
pub const MATRIX_CHUNK_COEFFICIENTS: PlanKey = PlanKey::new(OWNER, "matrix_chunk_coefficients");

/// Items that live in a proof's chunk leases (`.at(j)` in lease `j % 2`): the bases of
/// its streamed MSMs, and the runs of its streamed matrices.
pub fn is_chunk(key: PlanKey) -> bool {
    [
        G1_CHUNK,
        G2_CHUNK,
        MATRIX_CHUNK_ROW_STARTS,
        MATRIX_CHUNK_ENTRIES,
        MATRIX_CHUNK_COEFFICIENTS,
    ]
    .iter()
    .any(|k| key == k.at(0) || key == k.at(1))
}
