//! How many host threads synthesize ahead of the devices when the caller does not say.

use crate::ProofShape;

/// Threads for `workers` device workers (all devices together) proving `shape`, on a
/// host of `cores` cores with `available` bytes of memory free.
///
/// Two threads per worker keep every worker fed even when one synthesis takes twice a
/// proof's device work (at 2^20 on the H200 an assignment and its evaluation take a
/// thread about 0.2 s, the device 0.08 s). Half the cores at most: the evaluation's
/// parallel loops, the workers' verification and the CPU backend use the rest. Each
/// thread holds one synthesized assignment, with its evaluations (A·z, B·z, C·z) where
/// the host evaluates (the engine evaluates on these threads too; not where the
/// devices do, `device_evaluation`); beyond the threads' proofs the engine holds one
/// being placed on a device, and per worker one being proved and one waiting in its
/// device's queue. Together they may take a quarter of the memory available, so a large
/// circuit on a small host gets fewer threads.
pub fn auto_synthesis_threads(
    workers: usize,
    shape: &ProofShape,
    device_evaluation: bool,
    cores: usize,
    available: u64,
) -> usize {
    let evaluations = if device_evaluation {
        0
    } else {
        3 * shape.num_constraints + shape.num_instance
    };
    let values = shape.num_variables() + evaluations;
    let per_proof = (values as u64).saturating_mul(32).max(1);
    let held_by_engine = 2 * workers as u64 + 1;
    let by_memory = (available / 4 / per_proof).saturating_sub(held_by_engine) as usize;
    (2 * workers).min(cores / 2).min(by_memory).max(1)
}

/// [`auto_synthesis_threads`] on this host.
pub fn auto_synthesis_threads_here(
    workers: usize,
    shape: &ProofShape,
    device_evaluation: bool,
) -> usize {
    auto_synthesis_threads(
        workers,
        shape,
        device_evaluation,
        crate::host::cores(),
        crate::host::memory_available(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(log: u32) -> ProofShape {
        ProofShape::new((1 << log) - 2, 2, 1 << log).unwrap()
    }

    #[test]
    fn two_a_worker_up_to_half_the_cores() {
        let s = shape(20);
        assert_eq!(auto_synthesis_threads(2, &s, false, 16, 100 << 30), 4);
        assert_eq!(auto_synthesis_threads(8, &s, false, 16, 100 << 30), 8);
        assert_eq!(auto_synthesis_threads(1, &s, false, 2, 100 << 30), 1);
        assert_eq!(auto_synthesis_threads(1, &s, false, 1, 100 << 30), 1);
    }

    #[test]
    fn a_large_circuit_on_a_small_host_gets_fewer_but_one() {
        // 2^26 variables and constraints: an assignment and its three evaluations take
        // just under 8 GiB; a quarter of 512 GiB holds 16, less the engine's 9 (one
        // being placed, one proved and one queued a worker).
        let s = shape(26);
        assert_eq!(auto_synthesis_threads(1, &s, false, 64, 16 << 30), 1);
        assert_eq!(auto_synthesis_threads(4, &s, false, 64, 512 << 30), 7);
        assert_eq!(auto_synthesis_threads(4, &s, false, 64, 256 << 30), 1);
        assert_eq!(auto_synthesis_threads(4, &s, false, 64, 64 << 30), 1);
        assert_eq!(auto_synthesis_threads(2, &s, false, 64, 1 << 30), 1);
    }

    #[test]
    fn a_device_evaluation_leaves_the_host_only_the_assignment() {
        // 2^26 on the H200's host (16 cores, ~100 GiB free), two workers: with the
        // evaluations each proof held ~8 GiB and one thread fitted a quarter; with the
        // assignment alone (2 GiB) four do.
        let s = shape(26);
        assert_eq!(auto_synthesis_threads(2, &s, false, 16, 100 << 30), 1);
        assert_eq!(auto_synthesis_threads(2, &s, true, 16, 100 << 30), 4);
    }
}
