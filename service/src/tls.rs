//! TLS for the gRPC API (rustls): the PEM files an operator and a client name, read
//! and checked before anything listens or connects, so that a bad file is reported
//! with its path instead of as a failed handshake; the daemon's acceptor (its
//! handshakes bounded in time by [`crate::tls_handshakes`]); and the identity a
//! client certificate names under mutual TLS.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

use crate::identity::Role;
use crate::small_file::{read_small_file, Access};
use crate::{ServiceError, ServiceResult};

/// A PEM file of one or more X.509 certificates, checked to parse.
#[derive(Clone, Debug)]
pub struct CertificateFile {
    path: PathBuf,
    pem: Vec<u8>,
    certificates: Vec<CertificateDer<'static>>,
}

/// A PEM file of one private key (PKCS#8, PKCS#1 or SEC1), checked to parse.
#[derive(Clone)]
pub struct PrivateKeyFile {
    path: PathBuf,
    pem: Vec<u8>,
}

impl std::fmt::Debug for PrivateKeyFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key itself.
        write!(f, "PrivateKeyFile({})", self.path.display())
    }
}

/// A PEM file: a regular file of at most [`MAX_SMALL_FILE_BYTES`](crate::small_file::MAX_SMALL_FILE_BYTES).
fn read(path: &Path) -> ServiceResult<Vec<u8>> {
    read_small_file(path, "PEM file", Access::Shared)
}

impl CertificateFile {
    /// Reads `path`: every PEM `CERTIFICATE` block in it must decode as X.509, and
    /// there must be at least one.
    pub fn read(path: &Path) -> ServiceResult<CertificateFile> {
        let pem = read(path)?;
        let bad = |why: String| ServiceError::Invalid(format!("{}: {why}", path.display()));
        let certificates = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(format!("not a PEM certificate file: {e}")))?;
        if certificates.is_empty() {
            return Err(bad(
                "no PEM certificate in it (-----BEGIN CERTIFICATE-----)".into(),
            ));
        }
        for (i, der) in certificates.iter().enumerate() {
            webpki::EndEntityCert::try_from(der).map_err(|e| {
                bad(format!(
                    "certificate {} of {} is not valid X.509: {e}",
                    i + 1,
                    certificates.len()
                ))
            })?;
        }
        Ok(CertificateFile {
            path: path.to_path_buf(),
            pem,
            certificates,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn certificate(&self) -> Certificate {
        Certificate::from_pem(&self.pem)
    }
}

impl PrivateKeyFile {
    /// Reads `path`: it must hold one PEM private key and, as ssh asks of its keys, be
    /// its owner's alone (on Unix: refused when its group or other users may read or
    /// write it), since whoever reads it can pose as its owner.
    pub fn read(path: &Path) -> ServiceResult<PrivateKeyFile> {
        let pem = read_small_file(path, "private key", Access::OwnerOnly)?;
        PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
            ServiceError::Invalid(format!(
                "{}: no PEM private key in it (PKCS#8, RSA or EC): {e}",
                path.display()
            ))
        })?;
        Ok(PrivateKeyFile {
            path: path.to_path_buf(),
            pem,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The daemon's TLS: its certificate chain and key, with a client CA mutual TLS
/// (every client must present a certificate that CA signed), and how long a client
/// may take to complete its handshake.
#[derive(Clone, Debug)]
pub struct ServerTls {
    cert: CertificateFile,
    key: PrivateKeyFile,
    client_ca: Option<CertificateFile>,
    /// A connection whose TLS handshake has not completed this long after it was
    /// accepted is closed.
    pub handshake_timeout: Duration,
}

impl ServerTls {
    /// The configuration, checked: the key must be the certificate's.
    pub fn new(
        cert: CertificateFile,
        key: PrivateKeyFile,
        client_ca: Option<CertificateFile>,
        handshake_timeout: Duration,
    ) -> ServiceResult<ServerTls> {
        let tls = ServerTls {
            cert,
            key,
            client_ca,
            handshake_timeout,
        };
        tls.acceptor()?;
        Ok(tls)
    }

    /// The acceptor of the daemon's connections: TLS 1.2 and 1.3 (rustls with ring),
    /// HTTP/2 by ALPN, client certificates required under mutual TLS.
    pub fn acceptor(&self) -> ServiceResult<TlsAcceptor> {
        // ring: the provider tonic's client side and sqlx are built with here (rustls
        // marks it deprecated for its lack of post-quantum key exchange).
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| ServiceError::Invalid(format!("TLS: {e}")))?;
        let builder = match &self.client_ca {
            None => builder.with_no_client_auth(),
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                for cert in ca.certificates.iter().cloned() {
                    roots.add(cert).map_err(|e| {
                        ServiceError::Invalid(format!(
                            "{}: not a CA certificate: {e}",
                            ca.path.display()
                        ))
                    })?;
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                        .build()
                        .map_err(|e| {
                            ServiceError::Invalid(format!("{}: {e}", ca.path.display()))
                        })?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let key = PrivateKeyDer::from_pem_slice(&self.key.pem)
            .map_err(|e| ServiceError::Invalid(format!("{}: {e}", self.key.path.display())))?;
        let mut config = builder
            .with_single_cert(self.cert.certificates.clone(), key)
            .map_err(|e| {
                ServiceError::Invalid(format!(
                    "the certificate {} and the key {} do not make a TLS identity: {e}",
                    self.cert.path.display(),
                    self.key.path.display(),
                ))
            })?;
        config.alpn_protocols = vec![b"h2".to_vec()];
        Ok(TlsAcceptor::from(Arc::new(config)))
    }

    /// Whether clients must present a certificate.
    pub fn mutual(&self) -> bool {
        self.client_ca.is_some()
    }
}

/// A client's TLS: the CA that signed the daemon's certificate, and for mutual TLS
/// this client's own certificate and key.
#[derive(Clone, Debug)]
pub struct ClientTls {
    /// Trusted to sign the daemon's certificate.
    pub ca: CertificateFile,
    /// This client's certificate and key, for a daemon that asks for one.
    pub identity: Option<(CertificateFile, PrivateKeyFile)>,
}

impl ClientTls {
    /// tonic's configuration (the daemon's name is the address's host).
    pub fn config(&self) -> ClientTlsConfig {
        let config = ClientTlsConfig::new().ca_certificate(self.ca.certificate());
        match &self.identity {
            Some((cert, key)) => config.identity(Identity::from_pem(&cert.pem, &key.pem)),
            None => config,
        }
    }
}

/// An error and its sources, one after the other (tonic's transport error says
/// only "transport error" by itself).
pub fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// What a client certificate says of its holder: the subject's common name (CN)
/// names the identity, and an organization (O) of `operator` gives the operator
/// role, as Kubernetes reads CN as the user and O as its groups.
pub fn certificate_identity(der: &CertificateDer<'_>) -> Result<(String, Role), String> {
    let cert = webpki::EndEntityCert::try_from(der)
        .map_err(|e| format!("the client certificate does not parse: {e}"))?;
    let mut names = Vec::new();
    let mut role = Role::Client;
    for (oid, value) in subject_attributes(cert.subject())? {
        match oid {
            COMMON_NAME => names.push(value),
            ORGANIZATION if value == "operator" => role = Role::Operator,
            _ => {}
        }
    }
    match names.as_slice() {
        [name] if !name.is_empty() && !name.chars().any(char::is_whitespace) => {
            Ok((name.clone(), role))
        }
        [_] => Err("the client certificate's common name (CN) is empty or has spaces".into()),
        [] => Err("the client certificate's subject has no common name (CN)".into()),
        _ => Err("the client certificate's subject has more than one common name (CN)".into()),
    }
}

/// id-at-commonName (2.5.4.3) and id-at-organizationName (2.5.4.10), DER contents.
const COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];
const ORGANIZATION: &[u8] = &[0x55, 0x04, 0x0a];

/// The (type, text value) pairs of an X.509 `Name`'s contents (a sequence of sets of
/// `AttributeTypeAndValue`); values of other than a text type are skipped.
fn subject_attributes(mut name: &[u8]) -> Result<Vec<(&[u8], String)>, String> {
    const SET: u8 = 0x31;
    const SEQUENCE: u8 = 0x30;
    const OID: u8 = 0x06;
    const UTF8_STRING: u8 = 0x0c;
    const PRINTABLE_STRING: u8 = 0x13;
    const IA5_STRING: u8 = 0x16;
    let mut attributes = Vec::new();
    while !name.is_empty() {
        let (set, rest) = der_item(name, SET)?;
        name = rest;
        let mut set = set;
        while !set.is_empty() {
            let (pair, rest) = der_item(set, SEQUENCE)?;
            set = rest;
            let (oid, value) = der_item(pair, OID)?;
            let (&tag, _) = value
                .split_first()
                .ok_or("an attribute of the subject has no value")?;
            let (text, _) = der_item(value, tag)?;
            if matches!(tag, UTF8_STRING | PRINTABLE_STRING | IA5_STRING) {
                let text = std::str::from_utf8(text)
                    .map_err(|_| "an attribute of the subject is not UTF-8")?;
                attributes.push((oid, text.to_string()));
            }
        }
    }
    Ok(attributes)
}

/// The contents of the DER item at the start of `bytes`, which must have `tag`, and
/// what follows it.
fn der_item(bytes: &[u8], tag: u8) -> Result<(&[u8], &[u8]), String> {
    let malformed = || "the certificate's subject is malformed DER".to_string();
    let (&found, rest) = bytes.split_first().ok_or_else(malformed)?;
    if found != tag {
        return Err(malformed());
    }
    let (&first, mut rest) = rest.split_first().ok_or_else(malformed)?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        // Long form: the low bits count the length's bytes (a subject is far below
        // 2^32 bytes).
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return Err(malformed());
        }
        let (digits, after) = rest.split_at(count);
        rest = after;
        digits
            .iter()
            .fold(0usize, |len, &d| (len << 8) | usize::from(d))
    };
    if rest.len() < len {
        return Err(malformed());
    }
    Ok(rest.split_at(len))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;

    fn certificate(subject: &[(rcgen::DnType, &str)]) -> CertificateDer<'static> {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        for (ty, value) in subject {
            params.distinguished_name.push(ty.clone(), *value);
        }
        params.self_signed(&key).unwrap().der().clone()
    }

    #[test]
    fn the_common_name_names_the_identity_and_the_organization_its_role() {
        use rcgen::DnType::{CommonName, CountryName, OrganizationName};
        /// A subject, and the identity and role it names or what its refusal says.
        type Case = (
            Vec<(rcgen::DnType, &'static str)>,
            Result<(&'static str, Role), &'static str>,
        );
        let cases: Vec<Case> = vec![
            (vec![(CommonName, "alice")], Ok(("alice", Role::Client))),
            (
                vec![
                    (CountryName, "NZ"),
                    (OrganizationName, "operator"),
                    (CommonName, "ops-bot"),
                ],
                Ok(("ops-bot", Role::Operator)),
            ),
            (
                vec![(OrganizationName, "operators"), (CommonName, "bob")],
                Ok(("bob", Role::Client)),
            ),
            (vec![(OrganizationName, "operator")], Err("no common name")),
            (vec![(CommonName, "two words")], Err("has spaces")),
        ];
        for (i, (subject, expected)) in cases.into_iter().enumerate() {
            let got = certificate_identity(&certificate(&subject));
            match (got, expected) {
                (Ok((name, role)), Ok((want_name, want_role))) => {
                    assert_eq!((name.as_str(), role), (want_name, want_role), "case {i}")
                }
                (Err(e), Err(want)) => assert!(e.contains(want), "case {i}: {e}"),
                (got, want) => panic!("case {i}: got {got:?}, expected {want:?}"),
            }
        }
    }

    #[test]
    fn long_form_lengths_and_truncation() {
        let long = vec![b'x'; 300];
        let mut item = vec![0x0c, 0x82, 0x01, 0x2c];
        item.extend_from_slice(&long);
        item.push(0xff);
        let (value, rest) = der_item(&item, 0x0c).unwrap();
        assert_eq!((value.len(), rest), (300, &[0xff][..]));
        assert!(der_item(&item[..100], 0x0c).is_err());
        assert!(der_item(&item, 0x13).is_err());
        assert!(der_item(&[0x0c, 0x80], 0x0c).is_err());
        assert!(der_item(&[], 0x0c).is_err());
    }

    #[test]
    fn bad_pem_files_are_named() {
        let dir = std::env::temp_dir().join(format!("crucible-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let other = rcgen::KeyPair::generate().unwrap();
        let files = [
            ("cert.pem", cert.pem()),
            ("key.pem", key.serialize_pem()),
            ("other.pem", other.serialize_pem()),
            ("empty.pem", String::new()),
            (
                "garbage.pem",
                "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".into(),
            ),
        ];
        for (name, text) in &files {
            std::fs::write(dir.join(name), text).unwrap();
            // Key files must be their owner's alone (a test of its own below).
            #[cfg(unix)]
            std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o600))
                .unwrap();
        }
        let path = |name: &str| dir.join(name);
        let cert = CertificateFile::read(&path("cert.pem")).unwrap();
        let key = PrivateKeyFile::read(&path("key.pem")).unwrap();
        assert!(format!("{key:?}").contains("key.pem"));
        ServerTls::new(cert.clone(), key, None, Duration::from_secs(10)).unwrap();
        for bad in ["empty.pem", "garbage.pem", "key.pem", "missing.pem"] {
            let e = CertificateFile::read(&path(bad)).unwrap_err().to_string();
            assert!(e.contains(&path(bad).display().to_string()), "{bad}: {e}");
        }
        for bad in ["empty.pem", "cert.pem"] {
            let e = PrivateKeyFile::read(&path(bad)).unwrap_err().to_string();
            assert!(e.contains(&path(bad).display().to_string()), "{bad}: {e}");
        }
        let other = PrivateKeyFile::read(&path("other.pem")).unwrap();
        let e = ServerTls::new(cert, other, None, Duration::from_secs(10))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cert.pem") && e.contains("other.pem"),
            "a key that is not the certificate's: {e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_private_key_others_may_read_is_refused_with_its_mode_and_the_fix() {
        let dir = std::env::temp_dir().join(format!("crucible-tls-mode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("server.key");
        std::fs::write(&path, rcgen::KeyPair::generate().unwrap().serialize_pem()).unwrap();
        for mode in [0o644, 0o640, 0o604, 0o660] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = PrivateKeyFile::read(&path).unwrap_err().to_string();
            assert!(
                e.contains(&path.display().to_string())
                    && e.contains(&format!("mode {mode:03o}"))
                    && e.contains("chmod 600"),
                "{mode:o}: {e}"
            );
        }
        for mode in [0o600, 0o400] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            PrivateKeyFile::read(&path).unwrap();
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
