//! How a job enters (submitted, admitted against its key and the witness budget)
//! and how its caller waits for it to end.

use ark_std::rand::rngs::OsRng;
use ark_std::rand::RngCore;
use tonic::Status;

use super::results::status_of;
use super::state::State;
use crate::feed::Push;
use crate::job_table::has_ended;
use crate::proto::{self, JobResult};
use crate::witness::Witness;

impl State {
    /// A fresh job id: random, so ids are not reused across restarts or daemons and
    /// cannot be guessed (63 bits, never 0).
    pub(super) fn new_job_id(&self) -> u64 {
        loop {
            let id = OsRng.next_u64() >> 1;
            if id != 0 && !self.jobs.contains(id) {
                return id;
            }
        }
    }

    pub(super) fn submit(
        &self,
        owner: &str,
        request: proto::SubmitRequest,
    ) -> Result<proto::SubmitResponse, Status> {
        use proto::submit_response::Outcome;
        let resident = self.resident(&request.key_id)?;
        let witness = Witness::from_proto(request.witness.as_ref()).map_err(status_of)?;
        let bytes = witness.byte_len() as u64;
        if bytes > resident.max_witness_bytes {
            return Err(Status::invalid_argument(format!(
                "the witness has {bytes} bytes, more than a witness of key `{}` can hold ({} bytes)",
                request.key_id, resident.max_witness_bytes
            )));
        }
        let id = self.new_job_id();
        let job = witness.job(id, &resident.circuit).map_err(status_of)?;
        self.jobs
            .insert(id, &request.key_id, owner, bytes)
            .map_err(|held| {
                Status::resource_exhausted(format!(
                    "queued witnesses hold {held} bytes; {bytes} more would pass the limit max_queued_witness_bytes = {}",
                    self.config.max_queued_witness_bytes
                ))
            })?;
        let outcome = match resident.hot.try_push(job) {
            Push::Queued => Outcome::JobId(id),
            Push::Busy { depth, .. } => {
                self.jobs.remove(id);
                self.metrics
                    .busy
                    .with_label_values(&[request.key_id.as_str()])
                    .inc();
                Outcome::Busy(proto::Busy {
                    depth: depth as u64,
                    capacity: resident.hot.capacity() as u64,
                })
            }
            Push::Closed(_) => {
                self.jobs.remove(id);
                return Err(Status::not_found(format!(
                    "key `{}` is being evicted",
                    request.key_id
                )));
            }
        };
        Ok(proto::SubmitResponse {
            outcome: Some(outcome),
        })
    }

    pub(super) async fn wait(&self, owner: &str, job_id: u64) -> Result<JobResult, Status> {
        let mut rx = self
            .jobs
            .subscribe(job_id, owner)
            .ok_or_else(|| Status::not_found(format!("no job {job_id}")))?;
        let result = rx
            .wait_for(|r| has_ended(r.state()))
            .await
            .map(|r| r.clone())
            .map_err(|_| Status::internal(format!("job {job_id} was dropped before it ended")))?;
        Ok(result)
    }
}
