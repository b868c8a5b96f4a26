//! The proving key's bases, staged once on a device in a long-lived lease.

use std::sync::Arc;

use ark_groth16::PreparedVerifyingKey;

use super::{key_plan, ProvingKey};
use crate::{
    Bls12_381, Error, G1Buf, G2Buf, Lease, LeaseUsage, Phase, PhaseExt, ProofShape, ProverBackend,
    Result,
};

/// The sizes a proving key was made for, read from its query lengths.
pub fn key_shape(pk: &ProvingKey) -> Result<ProofShape> {
    let vars = pk.a_query.len();
    let witness = pk.l_query.len();
    let domain = pk.h_query.len() + 1;
    let bad = |what: String| {
        Err(Error::InvalidInput(format!(
            "malformed proving key: {what}"
        )))
    };
    if vars == 0 || witness >= vars {
        return bad(format!("{vars} variables with {witness} witness variables"));
    }
    if pk.b_g1_query.len() != vars || pk.b_g2_query.len() != vars {
        return bad(format!(
            "query lengths differ (a {vars}, b_g1 {}, b_g2 {})",
            pk.b_g1_query.len(),
            pk.b_g2_query.len()
        ));
    }
    if !domain.is_power_of_two() {
        return bad(format!(
            "h query of {} points is not 2^k − 1",
            pk.h_query.len()
        ));
    }
    let instance = vars - witness;
    // The verifier reads one gamma_abc point per instance variable: a longer list
    // would let a key of another circuit through, a shorter one fail only at the end.
    if pk.vk.gamma_abc_g1.len() != instance {
        return bad(format!(
            "the verifying key's gamma_abc_g1 has {} points for {instance} instance variables",
            pk.vk.gamma_abc_g1.len()
        ));
    }
    Ok(ProofShape {
        num_constraints: domain - instance,
        num_instance: instance,
        num_witness: witness,
        log_domain: domain.trailing_zeros(),
    })
}

/// A proving key whose bases live on one device, shared by every proof there.
pub struct StagedKey {
    pk: Arc<ProvingKey>,
    pvk: PreparedVerifyingKey<Bls12_381>,
    shape: ProofShape,
    backend_label: String,
    lease: Lease,
    /// `a_query` bases.
    pub a_query: G1Buf,
    /// `b_g1_query` bases.
    pub b_g1_query: G1Buf,
    /// `h_query` bases.
    pub h_query: G1Buf,
    /// `l_query` bases.
    pub l_query: G1Buf,
    /// `b_g2_query` bases.
    pub b_g2_query: G2Buf,
}

impl StagedKey {
    /// Allocates the key's lease (waiting for budget) and copies every query to the device.
    pub fn stage(backend: &dyn ProverBackend, pk: Arc<ProvingKey>) -> Result<StagedKey> {
        let shape = key_shape(&pk)?;
        let plan = key_plan(backend, &shape);
        let mut lease = backend.allocate(plan).phase(Phase::Allocate)?;
        let vars = shape.num_variables();
        let g1 = |lease: &mut Lease, item: &str, src: &[crate::G1Affine]| -> Result<G1Buf> {
            let buf = backend
                .alloc_g1(lease, item, src.len())
                .phase(Phase::Allocate)?;
            backend.stage_g1(lease, buf, src).phase(Phase::Stage)?;
            Ok(buf)
        };
        let a_query = g1(&mut lease, "a_query", &pk.a_query)?;
        let b_g1_query = g1(&mut lease, "b_g1_query", &pk.b_g1_query)?;
        let h_query = g1(&mut lease, "h_query", &pk.h_query)?;
        let l_query = g1(&mut lease, "l_query", &pk.l_query)?;
        let b_g2_query = backend
            .alloc_g2(&mut lease, "b_g2_query", vars)
            .phase(Phase::Allocate)?;
        backend
            .stage_g2(&mut lease, b_g2_query, &pk.b_g2_query)
            .phase(Phase::Stage)?;
        backend.synchronize().phase(Phase::Stage)?;
        Ok(StagedKey {
            pvk: ark_groth16::prepare_verifying_key(&pk.vk),
            pk,
            shape,
            backend_label: backend.info().label(),
            lease,
            a_query,
            b_g1_query,
            h_query,
            l_query,
            b_g2_query,
        })
    }

    /// The host copy of the key (for the final combination).
    pub fn proving_key(&self) -> &ProvingKey {
        &self.pk
    }

    /// The prepared verifying key.
    pub fn prepared_verifying_key(&self) -> &PreparedVerifyingKey<Bls12_381> {
        &self.pvk
    }

    /// The sizes the key was made for.
    pub fn shape(&self) -> &ProofShape {
        &self.shape
    }

    /// The lease holding the bases.
    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    /// The backend label it was staged on.
    pub fn backend_label(&self) -> &str {
        &self.backend_label
    }

    /// Frees the bases and returns their budget.
    pub fn release(self) -> Result<LeaseUsage> {
        self.lease.release()
    }

    /// Checks that a circuit of `shape` matches this key.
    pub fn check_matches(&self, shape: &ProofShape) -> Result<()> {
        let k = &self.shape;
        let mismatch = |what: &str, key: usize, circuit: usize| {
            Err(Error::InvalidInput(format!(
                "proving key does not match the circuit: key has {key} {what}, circuit has {circuit}"
            )))
        };
        if k.num_instance != shape.num_instance {
            return mismatch("instance variables", k.num_instance, shape.num_instance);
        }
        if k.num_witness != shape.num_witness {
            return mismatch("witness variables", k.num_witness, shape.num_witness);
        }
        if k.log_domain != shape.log_domain {
            return mismatch("domain points", k.domain_size(), shape.domain_size());
        }
        Ok(())
    }
}
