//! How many host threads synthesize ahead of the devices when the caller does not say.

use crate::ProofShape;

/// Threads for `workers` device workers (all devices together) proving `shape`, on a
/// host of `cores` cores with `available` bytes of memory free.
///
/// Two threads per worker keep every worker fed even when one synthesis takes twice a
/// proof's device work (at 2^20 on the H200 an assignment and its evaluation take a
/// thread about 0.2 s, the device 0.08 s). Half the cores at most: the evaluation's
/// parallel loops, the workers' verification and the CPU backend use the rest. Each
/// thread holds one synthesized assignment with its evaluations (A·z, B·z, C·z: the
/// engine evaluates on these threads too) and one waits in the queue per worker, and
/// together they may take a quarter of the memory available, so a large circuit on a
/// small host gets fewer.
pub fn auto_synthesis_threads(
    workers: usize,
    shape: &ProofShape,
    cores: usize,
    available: u64,
) -> usize {
    let values = shape.num_variables() + 3 * shape.num_constraints + shape.num_instance;
    let per_proof = (values as u64).saturating_mul(32).max(1);
    let by_memory = (available / 4 / per_proof).saturating_sub(workers as u64) as usize;
    (2 * workers).min(cores / 2).min(by_memory).max(1)
}

/// [`auto_synthesis_threads`] on this host.
pub fn auto_synthesis_threads_here(workers: usize, shape: &ProofShape) -> usize {
    auto_synthesis_threads(
        workers,
        shape,
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
        assert_eq!(auto_synthesis_threads(2, &s, 16, 100 << 30), 4);
        assert_eq!(auto_synthesis_threads(8, &s, 16, 100 << 30), 8);
        assert_eq!(auto_synthesis_threads(1, &s, 2, 100 << 30), 1);
        assert_eq!(auto_synthesis_threads(1, &s, 1, 100 << 30), 1);
    }

    #[test]
    fn a_large_circuit_on_a_small_host_gets_fewer_but_one() {
        // 2^26 variables and constraints: an assignment and its three evaluations take
        // just under 8 GiB; a quarter of 256 GiB holds 8, less one queued a worker.
        let s = shape(26);
        assert_eq!(auto_synthesis_threads(1, &s, 64, 16 << 30), 1);
        assert_eq!(auto_synthesis_threads(4, &s, 64, 256 << 30), 4);
        assert_eq!(auto_synthesis_threads(4, &s, 64, 64 << 30), 1);
        assert_eq!(auto_synthesis_threads(2, &s, 64, 1 << 30), 1);
    }
}
