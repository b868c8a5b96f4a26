//! The small files an operator or a client names (tokens, certificates, private
//! keys): read only when each is a regular file, never beyond a size cap, so a FIFO
//! cannot block start-up and `/dev/zero` cannot fill memory; a secret one only when
//! no one but its owner may read or change it.

use std::io::Read;
use std::path::Path;

use crucible_core::key_file::open_regular;

use crate::{ServiceError, ServiceResult};

/// The most bytes read from such a file: a tokens file of thousands of identities,
/// a certificate chain, fit many times over.
pub const MAX_SMALL_FILE_BYTES: u64 = 1 << 20;

/// Who may have access to a file besides its owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Anyone may read it (a certificate).
    Shared,
    /// A secret (bearer tokens, a private key): refused when its group or other users
    /// may read or write it.
    OwnerOnly,
}

/// Reads `path`, named `what` in errors (`--tokens`, `--tls-cert`): it must be a
/// regular file (links followed) of at most [`MAX_SMALL_FILE_BYTES`], and under
/// [`Access::OwnerOnly`] accessible to its owner alone.
pub fn read_small_file(path: &Path, what: &str, access: Access) -> ServiceResult<Vec<u8>> {
    let bad = |why: String| ServiceError::Invalid(format!("{what} {}: {why}", path.display()));
    // Checked before opening (a FIFO would block the open) and on the opened file.
    let (file, meta) = open_regular(path, what)?;
    if meta.len() > MAX_SMALL_FILE_BYTES {
        return Err(bad(format!(
            "{} bytes, more than such a file may hold ({MAX_SMALL_FILE_BYTES})",
            meta.len()
        )));
    }
    if access == Access::OwnerOnly {
        check_owner_only(&meta).map_err(bad)?;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // Capped again while reading: the file may have grown since.
    file.take(MAX_SMALL_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ServiceError::io(format!("{what} {}", path.display()), e))?;
    if bytes.len() as u64 > MAX_SMALL_FILE_BYTES {
        return Err(bad(format!(
            "more than {MAX_SMALL_FILE_BYTES} bytes, more than such a file may hold"
        )));
    }
    Ok(bytes)
}

/// [`read_small_file`] as UTF-8 text.
pub fn read_small_text(path: &Path, what: &str, access: Access) -> ServiceResult<String> {
    String::from_utf8(read_small_file(path, what, access)?)
        .map_err(|_| ServiceError::Invalid(format!("{what} {}: not UTF-8 text", path.display())))
}

#[cfg(unix)]
fn check_owner_only(meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "it holds secrets, yet its mode {mode:03o} lets other users read or change it; \
             make it its owner's alone (chmod 600)"
        ));
    }
    Ok(())
}

/// Elsewhere the file's access is the operating system's.
#[cfg(not(unix))]
fn check_owner_only(_: &std::fs::Metadata) -> Result<(), String> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_small_regular_files_and_secrets_only_their_owners() {
        let dir = std::env::temp_dir().join(format!("crucible-small-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("tokens");
        std::fs::write(&file, b"a token").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(
            read_small_file(&file, "--tls-cert", Access::Shared).unwrap(),
            b"a token"
        );
        let e = read_small_file(&file, "--tokens", Access::OwnerOnly)
            .unwrap_err()
            .to_string();
        assert!(e.contains("mode 644") && e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            read_small_text(&file, "--tokens", Access::OwnerOnly).unwrap(),
            "a token"
        );
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        for (path, kind) in [
            (fifo.as_path(), "a FIFO"),
            (Path::new("/dev/zero"), "a device"),
            (dir.as_path(), "a directory"),
        ] {
            let e = read_small_file(path, "--tokens", Access::Shared)
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("is {kind}, not a regular file")), "{e}");
        }
        let big = dir.join("big");
        std::fs::write(&big, vec![b'x'; MAX_SMALL_FILE_BYTES as usize + 1]).unwrap();
        let e = read_small_file(&big, "--tls-cert", Access::Shared)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than such a file may hold"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
