//! What the operator sets for `crucible serve`.

use std::sync::Arc;
use std::time::Duration;

use crucible_core::engine::EngineConfig;
use crucible_core::ProverBackend;

use crate::admission::Limits;
use crate::auth::Auth;
use crate::connection_caps::ConnectionCaps;
use crate::key_dir::KeyDir;
use crate::tls::ServerTls;

/// How the server runs.
#[derive(Clone)]
pub struct ServeConfig {
    /// The backend's name, as reported by `Status`.
    pub backend: String,
    /// Its devices: every key is staged on each.
    pub devices: Vec<Arc<dyn ProverBackend>>,
    /// Workers per device and synthesis threads of each key's engine (proofs are
    /// always verified).
    pub engine: EngineConfig,
    /// Size each key's synthesis threads for its shape instead of taking
    /// `engine.synthesis_threads`.
    pub auto_synthesis_threads: bool,
    /// The largest request accepted, in bytes (a `.wtns` of 2^20 wires is 32 MiB);
    /// a witness is further held to its key's size, and a key whose largest witness
    /// would not fit is refused at `LoadKey`.
    pub max_message_bytes: usize,
    /// Bytes of witnesses all queued and in-flight jobs may hold together; `Submit`
    /// answers `RESOURCE_EXHAUSTED` beyond.
    pub max_queued_witness_bytes: u64,
    /// What a key may ask of the host and devices.
    pub limits: Limits,
    /// Where `zkey:` keys are read from.
    pub key_dir: KeyDir,
    /// Who may call what.
    pub auth: Auth,
    /// TLS (mutual with a client CA); plain text when `None`, which the front end
    /// allows only on a loopback address.
    pub tls: Option<ServerTls>,
    /// The most jobs one key holds, queued or in flight; `Submit` answers busy beyond.
    pub queue_capacity: usize,
    /// Ended jobs whose results stay available to `Await`.
    pub retain_results: usize,
    /// At shutdown, how long open calls and in-flight proofs may take before the
    /// daemon closes every connection and exits.
    pub drain_timeout: Duration,
    /// How many connections may be open and how long one may stay silent.
    pub connections: ConnectionPolicy,
}

/// What the daemon allows a connection: the caps on open connections (in total and
/// from one address), and the time one may read nothing before it is closed.
#[derive(Clone, Debug)]
pub struct ConnectionPolicy {
    /// The caps, shared by every connection the daemon accepts.
    pub caps: ConnectionCaps,
    /// How long a connection may send nothing (its HTTP/2 pings answered count).
    pub idle_timeout: Duration,
}
