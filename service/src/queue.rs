//! The shared job queue in Postgres (schema: `migrations/`). Every state change is
//! one statement or one transaction, and every change a worker makes to a job it
//! claimed is fenced by (worker, attempt): a worker whose lease expired and was
//! requeued can no longer touch the job, so a job is proved into one result.

use std::time::Duration;

use sqlx::postgres::{PgConnection, PgPool, PgPoolOptions};
use sqlx::Connection;
use sqlx::Row;

use crate::key_ref::KeyRef;
use crate::witness::Witness;
use crate::{migrations, ServiceError, ServiceResult};

/// One job to queue.
#[derive(Clone, Debug)]
pub struct NewJob {
    /// Its proving key.
    pub key: KeyRef,
    /// Its witness.
    pub witness: Witness,
    /// Higher first; ties in submission order.
    pub priority: i32,
    /// Failed attempts (errors or lost leases) after which the job fails.
    pub max_failures: i32,
}

/// A job a worker has claimed.
#[derive(Clone, Debug)]
pub struct Claimed {
    /// The job's id.
    pub id: i64,
    /// The claim's number (fences every later change by this worker).
    pub attempt: i32,
    /// Its key reference, as stored.
    pub key_ref: String,
    /// Its witness kind and bytes, as stored.
    pub witness_kind: String,
    /// See `witness_kind`.
    pub witness: Vec<u8>,
}

/// Whether a worker's change to a claimed job took effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fenced {
    /// Done: the worker still held the job.
    Applied,
    /// Nothing changed: the lease had expired and the job moved on without this worker.
    LeaseLost,
}

/// A job whose lease expired and that was requeued (or failed) by [`Queue::requeue_expired`].
#[derive(Clone, Debug)]
pub struct Expired {
    /// The job.
    pub id: i64,
    /// The worker that stopped heartbeating.
    pub worker: String,
    /// The job's state now: `queued`, or `failed` when it has failed too often.
    pub state: String,
}

/// One attempt at a job.
#[derive(Clone, Debug)]
pub struct AttemptRecord {
    /// Its number (1, 2, ...).
    pub attempt: i32,
    /// Which worker.
    pub worker: String,
    /// `done`, `failed`, `lost`, `released`, or `None` while running.
    pub outcome: Option<String>,
    /// What went wrong.
    pub error: Option<String>,
}

/// A job as stored.
#[derive(Clone, Debug)]
pub struct JobRecord {
    /// Its id.
    pub id: i64,
    /// Its key reference.
    pub key_ref: String,
    /// Its witness kind and bytes.
    pub witness_kind: String,
    /// See `witness_kind`.
    pub witness: Vec<u8>,
    /// `queued`, `running`, `done` or `failed`.
    pub state: String,
    /// Claims so far.
    pub attempts: i32,
    /// Failed attempts so far.
    pub failures: i32,
    /// The worker holding it (running jobs only).
    pub lease_owner: Option<String>,
    /// The verified proof (arkworks, compressed), done jobs only.
    pub proof: Option<Vec<u8>>,
    /// Its public inputs (an arkworks `Vec<Fr>`, compressed).
    pub public_inputs: Option<Vec<u8>>,
    /// The prover's report, JSON.
    pub report: Option<String>,
    /// Every attempt, in order.
    pub attempt_log: Vec<AttemptRecord>,
}

/// Jobs by state, over the whole queue and per key.
#[derive(Clone, Debug, Default)]
pub struct QueueCounts {
    /// (key reference, state, jobs), ordered by key then state.
    pub by_key: Vec<(String, String, i64)>,
}

impl QueueCounts {
    /// Jobs in `state` over every key.
    pub fn total(&self, state: &str) -> i64 {
        self.by_key
            .iter()
            .filter(|(_, s, _)| s == state)
            .map(|(_, _, n)| n)
            .sum()
    }
}

/// The most jobs one [`Queue::submit`] queues (one transaction).
pub const MAX_JOBS_PER_SUBMIT: usize = 1 << 16;
/// The most failures a job may ask for before it fails ([`NewJob::max_failures`]);
/// workers cap it further (`crucible worker --max-failures`).
pub const MAX_FAILURES: i32 = 100;

/// A connection pool to the queue's database.
#[derive(Clone, Debug)]
pub struct Queue {
    pool: PgPool,
    failure_cap: i32,
}

/// The states a job can be in.
pub const STATES: [&str; 4] = ["queued", "running", "done", "failed"];

impl Queue {
    /// Connects to `url` (`postgres://user:password@host/db`) with up to
    /// `connections` connections. A first connection is opened alone, so that a
    /// refused one, a wrong password or a failed TLS handshake is an error at once
    /// naming its cause (the pool would retry it until `timeout` and report only
    /// that); a server that does not answer fails within `timeout`.
    pub async fn connect(url: &str, connections: u32, timeout: Duration) -> ServiceResult<Queue> {
        match tokio::time::timeout(timeout, PgConnection::connect(url)).await {
            Ok(first) => first?.close().await?,
            Err(_) => {
                let late = std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no answer within {timeout:?}"),
                );
                return Err(ServiceError::io(
                    "connecting to the job queue's database",
                    late,
                ));
            }
        }
        let pool = PgPoolOptions::new()
            .max_connections(connections.max(1))
            .acquire_timeout(timeout)
            .connect(url)
            .await?;
        Ok(Queue {
            pool,
            failure_cap: MAX_FAILURES,
        })
    }

    /// This queue handle fails a job after at most `cap` failed attempts, whatever
    /// the job asked for (a worker's server-side cap on retries).
    pub fn with_failure_cap(mut self, cap: i32) -> Queue {
        self.failure_cap = cap.clamp(1, MAX_FAILURES);
        self
    }

    /// Checks a batch before anything is written: its size and each job's
    /// failure limit.
    pub fn check(jobs: &[NewJob]) -> ServiceResult<()> {
        if jobs.len() > MAX_JOBS_PER_SUBMIT {
            return Err(ServiceError::Limit(format!(
                "{} jobs in one submit, over the limit of {MAX_JOBS_PER_SUBMIT}",
                jobs.len()
            )));
        }
        if let Some(job) = jobs
            .iter()
            .find(|j| !(1..=MAX_FAILURES).contains(&j.max_failures))
        {
            return Err(ServiceError::Invalid(format!(
                "max_failures must be between 1 and {MAX_FAILURES}, got {}",
                job.max_failures
            )));
        }
        Ok(())
    }

    /// Applies the schema migrations not yet applied.
    pub async fn migrate(&self) -> ServiceResult<()> {
        migrations::migrator().await?.run(&self.pool).await?;
        Ok(())
    }

    /// Queues `jobs` in one transaction (checked first: [`Queue::check`]); returns
    /// their ids in order.
    pub async fn submit(&self, jobs: &[NewJob]) -> ServiceResult<Vec<i64>> {
        Queue::check(jobs)?;
        let mut tx = self.pool.begin().await?;
        let mut ids = Vec::with_capacity(jobs.len());
        for job in jobs {
            let (kind, bytes) = job.witness.encode();
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO crucible_jobs (key_ref, witness_kind, witness, priority, max_failures) \
                 VALUES ($1, $2, $3, $4, $5) RETURNING id",
            )
            .bind(job.key.to_string())
            .bind(kind)
            .bind(bytes)
            .bind(job.priority)
            .bind(job.max_failures)
            .fetch_one(&mut *tx)
            .await?;
            ids.push(id);
        }
        tx.commit().await?;
        Ok(ids)
    }

    /// Claims the next queued job for `worker`: one of `keys` if any is queued (the
    /// keys it has staged), else any. Skips rows other workers are claiming.
    pub async fn claim(&self, worker: &str, keys: &[String]) -> ServiceResult<Option<Claimed>> {
        if !keys.is_empty() {
            if let Some(c) = self.claim_where(worker, Some(keys)).await? {
                return Ok(Some(c));
            }
        }
        self.claim_where(worker, None).await
    }

    async fn claim_where(
        &self,
        worker: &str,
        keys: Option<&[String]>,
    ) -> ServiceResult<Option<Claimed>> {
        let filter = if keys.is_some() {
            "AND key_ref = ANY($2)"
        } else {
            ""
        };
        let sql = format!(
            "UPDATE crucible_jobs SET state = 'running', lease_owner = $1, heartbeat_at = now(), \
                 attempts = attempts + 1 \
             WHERE id = (SELECT id FROM crucible_jobs WHERE state = 'queued' {filter} \
                         ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED) \
             RETURNING id, attempts, key_ref, witness_kind, witness"
        );
        let mut tx = self.pool.begin().await?;
        let mut query = sqlx::query_as::<_, (i64, i32, String, String, Vec<u8>)>(&sql).bind(worker);
        if let Some(keys) = keys {
            query = query.bind(keys);
        }
        let Some((id, attempt, key_ref, witness_kind, witness)) =
            query.fetch_optional(&mut *tx).await?
        else {
            return Ok(None);
        };
        sqlx::query(
            "INSERT INTO crucible_job_attempts (job_id, attempt, worker) VALUES ($1, $2, $3)",
        )
        .bind(id)
        .bind(attempt)
        .bind(worker)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some(Claimed {
            id,
            attempt,
            key_ref,
            witness_kind,
            witness,
        }))
    }

    /// Renews `worker`'s leases on `jobs`; returns how many it still holds.
    pub async fn heartbeat(&self, worker: &str, jobs: &[i64]) -> ServiceResult<u64> {
        if jobs.is_empty() {
            return Ok(0);
        }
        let done = sqlx::query(
            "UPDATE crucible_jobs SET heartbeat_at = now() \
             WHERE state = 'running' AND lease_owner = $1 AND id = ANY($2)",
        )
        .bind(worker)
        .bind(jobs)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    /// Marks the job done with its verified proof, public inputs and report, in the
    /// same transaction as its attempt, if `worker` still holds it under `attempt`.
    pub async fn complete(
        &self,
        worker: &str,
        id: i64,
        attempt: i32,
        proof: &[u8],
        public_inputs: &[u8],
        report_json: &str,
    ) -> ServiceResult<Fenced> {
        let mut tx = self.pool.begin().await?;
        let updated = sqlx::query(
            "UPDATE crucible_jobs SET state = 'done', proof = $4, public_inputs = $5, \
                 report = $6::text::jsonb, finished_at = now(), lease_owner = NULL, heartbeat_at = NULL \
             WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND attempts = $3",
        )
        .bind(id)
        .bind(worker)
        .bind(attempt)
        .bind(proof)
        .bind(public_inputs)
        .bind(report_json)
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() != 1 {
            tx.rollback().await?;
            return Ok(Fenced::LeaseLost);
        }
        end_attempt(&mut tx, id, attempt, "done", None).await?;
        tx.commit().await?;
        Ok(Fenced::Applied)
    }

    /// Records a failed attempt: the job goes back to the queue, or fails once it
    /// has failed `max_failures` times (at most this handle's failure cap). Returns
    /// the job's new state.
    pub async fn fail_attempt(
        &self,
        worker: &str,
        id: i64,
        attempt: i32,
        error: &str,
    ) -> ServiceResult<Option<String>> {
        let mut tx = self.pool.begin().await?;
        let state: Option<String> = sqlx::query_scalar(
            "UPDATE crucible_jobs SET failures = failures + 1, \
                 state = CASE WHEN failures + 1 >= LEAST(max_failures, $4) THEN 'failed' ELSE 'queued' END, \
                 finished_at = CASE WHEN failures + 1 >= LEAST(max_failures, $4) THEN now() END, \
                 lease_owner = NULL, heartbeat_at = NULL \
             WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND attempts = $3 \
             RETURNING state",
        )
        .bind(id)
        .bind(worker)
        .bind(attempt)
        .bind(self.failure_cap)
        .fetch_optional(&mut *tx)
        .await?;
        if state.is_some() {
            end_attempt(&mut tx, id, attempt, "failed", Some(error)).await?;
        }
        tx.commit().await?;
        Ok(state)
    }

    /// Gives a claimed job back to the queue without counting a failure (the worker
    /// is stopping, or never started it).
    pub async fn release(
        &self,
        worker: &str,
        id: i64,
        attempt: i32,
        why: &str,
    ) -> ServiceResult<Fenced> {
        let mut tx = self.pool.begin().await?;
        let updated = sqlx::query(
            "UPDATE crucible_jobs SET state = 'queued', lease_owner = NULL, heartbeat_at = NULL \
             WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND attempts = $3",
        )
        .bind(id)
        .bind(worker)
        .bind(attempt)
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() != 1 {
            tx.rollback().await?;
            return Ok(Fenced::LeaseLost);
        }
        end_attempt(&mut tx, id, attempt, "released", Some(why)).await?;
        tx.commit().await?;
        Ok(Fenced::Applied)
    }

    /// Requeues (or fails, past their failure limit or this handle's failure cap)
    /// the running jobs whose lease has not been renewed for `timeout`, by the
    /// database's clock. `cause` is appended to each lost attempt's error (what this
    /// worker knows of why the lease ended, e.g. an out-of-memory kill; or empty).
    pub async fn requeue_expired(
        &self,
        timeout: Duration,
        cause: &str,
    ) -> ServiceResult<Vec<Expired>> {
        let rows = sqlx::query_as::<_, (i64, String, String)>(
            "WITH lost AS ( \
                 UPDATE crucible_jobs j SET failures = j.failures + 1, \
                     state = CASE WHEN j.failures + 1 >= LEAST(j.max_failures, $2) THEN 'failed' ELSE 'queued' END, \
                     finished_at = CASE WHEN j.failures + 1 >= LEAST(j.max_failures, $2) THEN now() END, \
                     lease_owner = NULL, heartbeat_at = NULL \
                 WHERE j.id IN (SELECT id FROM crucible_jobs \
                                WHERE state = 'running' AND heartbeat_at < now() - make_interval(secs => $1::float8) \
                                FOR UPDATE SKIP LOCKED) \
                 RETURNING j.id, j.attempts, j.state) \
             UPDATE crucible_job_attempts a SET outcome = 'lost', ended_at = now(), \
                 error = 'lease expired: worker ' || a.worker || ' sent no heartbeat for ' || $1::float8::text || ' s' || $3::text \
             FROM lost WHERE a.job_id = lost.id AND a.attempt = lost.attempts \
             RETURNING a.job_id, a.worker, lost.state",
        )
        .bind(timeout.as_secs_f64())
        .bind(self.failure_cap)
        .bind(cause)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, worker, state)| Expired { id, worker, state })
            .collect())
    }

    /// Jobs by key and state.
    pub async fn counts(&self) -> ServiceResult<QueueCounts> {
        let by_key = sqlx::query_as::<_, (String, String, i64)>(
            "SELECT key_ref, state, count(*) FROM crucible_jobs GROUP BY key_ref, state ORDER BY 1, 2",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(QueueCounts { by_key })
    }

    /// Ids of the jobs in `state`, in order.
    pub async fn ids_in(&self, state: &str) -> ServiceResult<Vec<i64>> {
        Ok(
            sqlx::query_scalar("SELECT id FROM crucible_jobs WHERE state = $1 ORDER BY id")
                .bind(state)
                .fetch_all(&self.pool)
                .await?,
        )
    }

    /// One job with its attempts.
    pub async fn job(&self, id: i64) -> ServiceResult<Option<JobRecord>> {
        let Some(row) = sqlx::query(
            "SELECT id, key_ref, witness_kind, witness, state, attempts, failures, lease_owner, \
                 proof, public_inputs, report::text AS report \
             FROM crucible_jobs WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let attempt_log = sqlx::query_as::<_, (i32, String, Option<String>, Option<String>)>(
            "SELECT attempt, worker, outcome, error FROM crucible_job_attempts \
             WHERE job_id = $1 ORDER BY attempt",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(|(attempt, worker, outcome, error)| AttemptRecord {
            attempt,
            worker,
            outcome,
            error,
        })
        .collect();
        Ok(Some(JobRecord {
            id: row.try_get("id")?,
            key_ref: row.try_get("key_ref")?,
            witness_kind: row.try_get("witness_kind")?,
            witness: row.try_get("witness")?,
            state: row.try_get("state")?,
            attempts: row.try_get("attempts")?,
            failures: row.try_get("failures")?,
            lease_owner: row.try_get("lease_owner")?,
            proof: row.try_get("proof")?,
            public_inputs: row.try_get("public_inputs")?,
            report: row.try_get("report")?,
            attempt_log,
        }))
    }
}

async fn end_attempt(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    id: i64,
    attempt: i32,
    outcome: &str,
    error: Option<&str>,
) -> ServiceResult<()> {
    sqlx::query(
        "UPDATE crucible_job_attempts SET outcome = $3, error = $4, ended_at = now() \
         WHERE job_id = $1 AND attempt = $2",
    )
    .bind(id)
    .bind(attempt)
    .bind(outcome)
    .bind(error)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
