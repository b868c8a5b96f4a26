//! Who may call what: bearer tokens from a file the operator writes, each naming an
//! identity and its role. Operators load and evict keys; clients (and operators)
//! submit, await and cancel their own jobs. A job is visible only to the identity
//! that submitted it. Under mutual TLS without tokens, the client's certificate names
//! the identity instead ([`crate::tls::certificate_identity`]).

// Called from tonic's handlers, which return `Status` by value.
#![allow(clippy::result_large_err)]

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use tonic::metadata::MetadataMap;
use tonic::{Request, Status};

use crate::identity::{Identity, Role};
use crate::small_file::{read_small_text, Access};
use crate::{ServiceError, ServiceResult};

/// How callers are identified.
#[derive(Clone)]
pub enum Auth {
    /// No authentication (only on a loopback address, `--insecure`): every caller
    /// is the operator `local`.
    Open,
    /// Bearer tokens: token → identity.
    Tokens(HashMap<String, Identity>),
    /// Client certificates (mutual TLS, the server's client CA having checked them):
    /// the subject's CN is the identity, an O of `operator` the operator role.
    Certificates,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auth::Open => f.write_str("Open"),
            // Never the tokens themselves.
            Auth::Tokens(t) => write!(f, "Tokens({} identities)", t.len()),
            Auth::Certificates => f.write_str("Certificates"),
        }
    }
}

impl Auth {
    /// Reads a tokens file: one `<token> <identity> <operator|client>` a line; empty
    /// lines and `#` comments skipped. Errors name the line, never a token. The file
    /// must be a regular file its owner alone may read (see [`read_small_file`]).
    ///
    /// [`read_small_file`]: crate::small_file::read_small_file
    pub fn from_file(path: &Path) -> ServiceResult<Auth> {
        let text = read_small_text(path, "tokens file", Access::OwnerOnly)?;
        let mut tokens = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: &str| {
                ServiceError::Invalid(format!(
                    "tokens file {} line {}: {why}",
                    path.display(),
                    i + 1
                ))
            };
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [token, name, role] = fields[..] else {
                return Err(bad("expected `<token> <identity> <operator|client>`"));
            };
            if token.len() < 16 {
                return Err(bad("a token is at least 16 characters"));
            }
            let role = match role {
                "operator" => Role::Operator,
                "client" => Role::Client,
                _ => return Err(bad("the role is `operator` or `client`")),
            };
            let identity = Identity {
                name: name.to_string(),
                role,
            };
            if tokens.insert(token.to_string(), identity).is_some() {
                return Err(bad("this token is given twice"));
            }
        }
        if tokens.is_empty() {
            return Err(ServiceError::Invalid(format!(
                "tokens file {} names no token",
                path.display()
            )));
        }
        Ok(Auth::Tokens(tokens))
    }

    /// The caller of `request`: `UNAUTHENTICATED` without a known bearer token, or
    /// under [`Auth::Certificates`] without a client certificate naming one.
    pub fn identify<T>(&self, request: &Request<T>) -> Result<Identity, Status> {
        match self {
            Auth::Open => Ok(Identity {
                name: "local".into(),
                role: Role::Operator,
            }),
            Auth::Tokens(tokens) => token_identity(tokens, request.metadata()),
            Auth::Certificates => {
                let certs = request
                    .peer_certs()
                    .ok_or_else(|| Status::unauthenticated("a client certificate is required"))?;
                let leaf = certs
                    .first()
                    .ok_or_else(|| Status::unauthenticated("a client certificate is required"))?;
                let (name, role) =
                    crate::tls::certificate_identity(leaf).map_err(Status::unauthenticated)?;
                Ok(Identity { name, role })
            }
        }
    }
}

/// The identity whose bearer token `metadata` carries.
fn token_identity(
    tokens: &HashMap<String, Identity>,
    metadata: &MetadataMap,
) -> Result<Identity, Status> {
    let given = metadata
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| Status::unauthenticated("a bearer token is required"))?;
    // Every token is compared in full, so the time taken says nothing of which
    // one a guess came close to.
    let mut found = None;
    for (token, identity) in tokens {
        if constant_time_eq(token.as_bytes(), given.as_bytes()) {
            found = Some(identity.clone());
        }
    }
    found.ok_or_else(|| Status::unauthenticated("unknown bearer token"))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Identity {
    /// `PERMISSION_DENIED` unless this identity is an operator.
    pub fn require_operator(&self, what: &str) -> Result<(), Status> {
        match self.role {
            Role::Operator => Ok(()),
            Role::Client => Err(Status::permission_denied(format!(
                "{what} needs the operator role; `{}` is a client",
                self.name
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_name_identities_and_roles() {
        let path = std::env::temp_dir().join(format!("crucible-tokens-{}", std::process::id()));
        std::fs::write(
            &path,
            "# comment\nop-token-0123456789 alice operator\ncl-token-0123456789 bob client\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let auth = Auth::from_file(&path).unwrap();
        let mut request = Request::new(());
        assert_eq!(
            auth.identify(&request).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        request.metadata_mut().insert(
            "authorization",
            "Bearer cl-token-0123456789".parse().unwrap(),
        );
        let bob = auth.identify(&request).unwrap();
        assert_eq!((bob.name.as_str(), bob.role), ("bob", Role::Client));
        assert!(bob.require_operator("loading a key").is_err());
        request.metadata_mut().insert(
            "authorization",
            "Bearer cl-token-0123456788".parse().unwrap(),
        );
        assert!(auth.identify(&request).is_err());
        // Without TLS there is no client certificate to name anyone.
        assert_eq!(
            Auth::Certificates.identify(&request).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        std::fs::write(&path, "short bob client\n").unwrap();
        let err = Auth::from_file(&path).unwrap_err().to_string();
        assert!(err.contains("line 1") && !err.contains("short"), "{err}");
        std::fs::remove_file(&path).unwrap();
    }
}
