-- The shared job queue of `crucible worker`: one row per proof to make, claimed by
-- workers with FOR UPDATE SKIP LOCKED, one row per attempt at it.
CREATE TABLE crucible_jobs (
    id            BIGSERIAL PRIMARY KEY,
    -- Which proving key (key_ref.rs: e.g. `bench:n=64,p=1,seed=0`).
    key_ref       TEXT NOT NULL,
    -- The witness (witness.rs): its kind and bytes.
    witness_kind  TEXT NOT NULL,
    witness       BYTEA NOT NULL,
    priority      INTEGER NOT NULL DEFAULT 0,
    state         TEXT NOT NULL DEFAULT 'queued'
                  CHECK (state IN ('queued', 'running', 'done', 'failed')),
    -- Claims so far; the current claim's number fences its lease: a worker commits
    -- only while it owns the job under the claim it made.
    attempts      INTEGER NOT NULL DEFAULT 0,
    -- Attempts that ended in an error or a lost lease; at max_failures the job fails.
    failures      INTEGER NOT NULL DEFAULT 0,
    max_failures  INTEGER NOT NULL DEFAULT 3 CHECK (max_failures > 0),
    lease_owner   TEXT,
    heartbeat_at  TIMESTAMPTZ,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at   TIMESTAMPTZ,
    -- The verified proof (arkworks, compressed), its public inputs (an
    -- arkworks-serialized Vec<Fr>, compressed) and the prover's report (JSON).
    proof         BYTEA,
    public_inputs BYTEA,
    report        JSONB,
    CHECK ((state = 'running') = (lease_owner IS NOT NULL AND heartbeat_at IS NOT NULL)),
    CHECK ((state = 'done') = (proof IS NOT NULL))
);

CREATE INDEX crucible_jobs_claim ON crucible_jobs (key_ref, priority DESC, id)
    WHERE state = 'queued';
CREATE INDEX crucible_jobs_next ON crucible_jobs (priority DESC, id)
    WHERE state = 'queued';
CREATE INDEX crucible_jobs_leases ON crucible_jobs (heartbeat_at)
    WHERE state = 'running';

CREATE TABLE crucible_job_attempts (
    job_id     BIGINT NOT NULL REFERENCES crucible_jobs (id) ON DELETE CASCADE,
    attempt    INTEGER NOT NULL,
    worker     TEXT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    ended_at   TIMESTAMPTZ,
    -- NULL while the attempt runs; `lost`: the worker stopped heartbeating;
    -- `released`: the worker gave the job back unstarted or at shutdown.
    outcome    TEXT CHECK (outcome IN ('done', 'failed', 'lost', 'released')),
    error      TEXT,
    PRIMARY KEY (job_id, attempt)
);

-- A job is proved into one result, whatever the workers do.
CREATE UNIQUE INDEX crucible_job_attempts_one_done ON crucible_job_attempts (job_id)
    WHERE outcome = 'done';
