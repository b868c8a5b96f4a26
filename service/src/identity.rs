//! Who a caller is, and what its role lets it do: named by a bearer token
//! ([`crate::auth`]) or by a client certificate ([`crate::tls::certificate_identity`]).

/// What an identity may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Loads and evicts keys, and everything a client does.
    Operator,
    /// Submits, awaits and cancels its own jobs; reads the status.
    Client,
}

/// A caller, as its token names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// Its name (jobs belong to it).
    pub name: String,
    /// Its role.
    pub role: Role,
}
