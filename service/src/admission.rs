//! Admission before work: a key is planned from its sizes alone (a benchmark key's
//! counts, a `.zkey`'s header) and checked against the operator's limits, the host
//! memory its load needs and every device's budget, before anything is generated,
//! read or allocated. The device check is the schedule choice `crucible plan` and
//! `crucible prove` make ([`crucible_core::groth16::schedule::choose`]).

use std::sync::{Arc, Mutex};

use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::fixtures::key_cache::key_bytes;
use crucible_core::groth16::schedule::choose;
use crucible_core::groth16::Reduction;
use crucible_core::{human_bytes, Error, ProofShape, ProverBackend, ScalarMix};
use crucible_files::Zkey;

use crate::cgroup_memory::cgroup_memory_limit;
use crate::key_dir::KeyDir;
use crate::key_ref::KeyRef;
use crate::{ServiceError, ServiceResult};

/// Default of [`Limits::max_constraints`]: 2^25.
pub const DEFAULT_MAX_CONSTRAINTS: usize = 1 << 25;
/// Default of [`Limits::max_inputs`]: 2^16.
pub const DEFAULT_MAX_INPUTS: usize = 1 << 16;
/// Default of [`Limits::max_log_domain`]: 2^26 points.
pub const DEFAULT_MAX_LOG_DOMAIN: u32 = 26;
/// A key's load holds this many times its uncompressed size in host memory at its
/// peak (the key, and the setup's working set or the `.zkey`'s matrices and buffers).
pub const LOAD_FACTOR: u64 = 3;

/// The operator's limits on what a request may ask of the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most constraints of a key.
    pub max_constraints: usize,
    /// The most public inputs of a key (the constant one not counted).
    pub max_inputs: usize,
    /// The largest evaluation domain, as log2 of its points.
    pub max_log_domain: u32,
    /// Host memory all keys loading or resident may take together, in bytes.
    pub max_key_memory: u64,
}

impl Default for Limits {
    /// The defaults: 2^25 constraints, 2^16 inputs, 2^26 domain points, half the
    /// memory this process may use for keys ([`usable_memory`]).
    fn default() -> Self {
        Limits {
            max_constraints: DEFAULT_MAX_CONSTRAINTS,
            max_inputs: DEFAULT_MAX_INPUTS,
            max_log_domain: DEFAULT_MAX_LOG_DOMAIN,
            max_key_memory: usable_memory() / 2,
        }
    }
}

/// The memory this process may use: the host's, or its cgroup's limit where that is
/// smaller (a container, a systemd slice), which is what the out-of-memory killer
/// enforces.
pub fn usable_memory() -> u64 {
    let host = crucible_core::host::memory_total();
    cgroup_memory_limit().map_or(host, |limit| limit.min(host))
}

/// A key admitted: its sizes and the host bytes reserved for it.
#[derive(Debug)]
pub struct Admitted {
    /// The proof's sizes the key implies.
    pub shape: ProofShape,
    /// Host bytes reserved for the key (returned when this is dropped).
    pub reservation: Reservation,
}

/// Host bytes held for a key, given back to the [`KeyMemory`] when dropped.
#[derive(Debug)]
pub struct Reservation {
    bytes: u64,
    pool: Arc<Mutex<u64>>,
}

impl Reservation {
    /// The bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut used = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        *used = used.saturating_sub(self.bytes);
    }
}

/// The host memory keys hold: every load reserves what it needs before it starts,
/// and keeps it while the key is resident.
#[derive(Debug, Default)]
pub struct KeyMemory {
    used: Arc<Mutex<u64>>,
}

impl KeyMemory {
    /// Bytes reserved now.
    pub fn used(&self) -> u64 {
        *self.used.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn reserve(&self, bytes: u64, limit: u64, what: &str) -> ServiceResult<Reservation> {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        let total = used.saturating_add(bytes);
        if total > limit {
            return Err(ServiceError::Limit(format!(
                "{what} needs {} of host memory to load, and {} of the limit max_key_memory = {} is taken by other keys",
                human_bytes(bytes),
                human_bytes(*used),
                human_bytes(limit)
            )));
        }
        *used = total;
        Ok(Reservation {
            bytes,
            pool: Arc::clone(&self.used),
        })
    }
}

fn over(
    what: &str,
    value: impl std::fmt::Display,
    limit: &str,
    max: impl std::fmt::Display,
) -> ServiceError {
    ServiceError::Limit(format!(
        "{what} has {value}, over the limit {limit} = {max}"
    ))
}

impl Limits {
    /// The shape's counts against the limits.
    pub fn check_shape(&self, what: &str, shape: &ProofShape) -> ServiceResult<()> {
        if shape.num_constraints > self.max_constraints {
            return Err(over(
                what,
                format!("{} constraints", shape.num_constraints),
                "max_constraints",
                self.max_constraints,
            ));
        }
        let inputs = shape.num_instance.saturating_sub(1);
        if inputs > self.max_inputs {
            return Err(over(
                what,
                format!("{inputs} public inputs"),
                "max_inputs",
                self.max_inputs,
            ));
        }
        if shape.log_domain > self.max_log_domain {
            return Err(over(
                what,
                format!("a domain of 2^{} points", shape.log_domain),
                "max_log_domain",
                self.max_log_domain,
            ));
        }
        Ok(())
    }

    /// Plans `key` from its sizes alone and checks it: the shape limits, the host
    /// memory its load needs (reserved in `memory` when it fits), and a schedule for
    /// `workers` proofs at once on every device. Reads at most a `.zkey`'s header;
    /// `key_dir` resolves a `.zkey` path.
    pub fn admit(
        &self,
        key: &KeyRef,
        key_dir: &KeyDir,
        devices: &[Arc<dyn ProverBackend>],
        workers: usize,
        memory: &KeyMemory,
    ) -> ServiceResult<Admitted> {
        let what = format!("key {key}");
        let (shape, reduction, host_bytes) = match key {
            &KeyRef::Bench {
                constraints,
                inputs,
                ..
            } => {
                if constraints > self.max_constraints {
                    return Err(over(
                        &what,
                        format!("{constraints} constraints"),
                        "max_constraints",
                        self.max_constraints,
                    ));
                }
                if inputs > self.max_inputs {
                    return Err(over(
                        &what,
                        format!("{inputs} public inputs"),
                        "max_inputs",
                        self.max_inputs,
                    ));
                }
                let shape = BenchCircuit::shape(constraints, inputs)?;
                (shape, Reduction::Libsnark, key_bytes(&shape))
            }
            KeyRef::Zkey { path } => {
                let file = key_dir.resolve(path)?;
                let header = Zkey::<crucible_core::Bls12_381>::read_header(&file)
                    .map_err(|e| key_dir.client_error(path, &file, e))?;
                let shape = header.shape()?;
                self.check_shape(&what, &shape)?;
                (
                    shape,
                    Reduction::Circom,
                    Some(header.file_bytes.max(key_bytes(&shape).unwrap_or(u64::MAX))),
                )
            }
        };
        self.check_shape(&what, &shape)?;
        let need = host_bytes.map_or(u64::MAX, |b| b.saturating_mul(LOAD_FACTOR));
        let reservation = memory.reserve(need, self.max_key_memory, &what)?;
        for device in devices {
            let capacity = device.budget().capacity();
            match choose(
                &**device,
                &shape,
                reduction,
                capacity,
                workers,
                None,
                ScalarMix::FULL,
                None,
            ) {
                Ok(_) => {}
                Err(e @ Error::BelowFloor { .. }) => {
                    return Err(ServiceError::Limit(format!(
                        "{what} does not fit on {}: {e}",
                        device.info().label()
                    )))
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Admitted { shape, reservation })
    }
}
