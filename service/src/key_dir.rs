//! Where `zkey:` keys may come from: a directory the operator names. A client's path
//! resolves inside it (relative to it, or absolute within it), with every `..` and
//! symbolic link followed first, so no path reaches a file outside. Errors name the
//! path as the client gave it, never the file's contents.

use std::path::{Path, PathBuf};

use crate::{ServiceError, ServiceResult};

/// The operator's key directory, or none (then no `zkey:` key is accepted).
#[derive(Clone, Debug, Default)]
pub struct KeyDir {
    root: Option<PathBuf>,
}

impl KeyDir {
    /// No key directory: `zkey:` keys are refused.
    pub fn none() -> KeyDir {
        KeyDir { root: None }
    }

    /// `dir`, which must be a directory (its links resolved once, here).
    pub fn new(dir: &Path) -> ServiceResult<KeyDir> {
        let root = dir
            .canonicalize()
            .map_err(|e| ServiceError::io(format!("key directory {}", dir.display()), e))?;
        if !root.is_dir() {
            return Err(ServiceError::Invalid(format!(
                "key directory {} is not a directory",
                dir.display()
            )));
        }
        Ok(KeyDir { root: Some(root) })
    }

    /// The file `given` names inside the key directory: an error when there is no
    /// key directory, when it names nothing, or when it (through `..` or a link)
    /// leaves the directory. The last two give one answer, so a client cannot learn
    /// whether a path outside the directory exists.
    pub fn resolve(&self, given: &Path) -> ServiceResult<PathBuf> {
        let shown = given.display();
        let Some(root) = &self.root else {
            return Err(ServiceError::Invalid(format!(
                "key `zkey:{shown}`: this server reads no .zkey keys (its operator named no key directory)"
            )));
        };
        let nothing = || {
            ServiceError::Invalid(format!(
                "key `zkey:{shown}` names no file inside the key directory"
            ))
        };
        let resolved = root.join(given).canonicalize().map_err(|_| nothing())?;
        if !resolved.starts_with(root) {
            return Err(nothing());
        }
        Ok(resolved)
    }

    /// A reader's error about `resolved` as the client sees it: naming `given`.
    pub fn client_error(
        &self,
        given: &Path,
        resolved: &Path,
        e: crucible_core::Error,
    ) -> ServiceError {
        let text = e.to_string().replace(
            &resolved.display().to_string(),
            &given.display().to_string(),
        );
        match e {
            crucible_core::Error::Unsupported(_) | crucible_core::Error::InvalidInput(_) => {
                ServiceError::Invalid(text)
            }
            _ => ServiceError::Invalid(format!("key `zkey:{}`: {text}", given.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_directory() {
        let base = std::env::temp_dir().join(format!("crucible-key-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let keys = base.join("keys");
        std::fs::create_dir_all(keys.join("sub")).unwrap();
        std::fs::write(keys.join("sub/a.zkey"), b"x").unwrap();
        std::fs::write(base.join("secret"), b"x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(base.join("secret"), keys.join("link.zkey")).unwrap();
        let dir = KeyDir::new(&keys).unwrap();
        let inside = dir.resolve(Path::new("sub/a.zkey")).unwrap();
        assert!(inside.ends_with("keys/sub/a.zkey"), "{inside:?}");
        assert!(dir.resolve(&keys.join("sub/../sub/a.zkey")).is_ok());
        // Outside or missing, one answer: whether a path exists is not told.
        for bad in [
            "../secret",
            "../missing",
            "sub/../../secret",
            "/etc/passwd",
            "/etc/no-such-file",
            "missing.zkey",
            #[cfg(unix)]
            "link.zkey",
        ] {
            let e = dir.resolve(Path::new(bad)).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("key `zkey:{bad}` names no file inside the key directory")
            );
        }
        assert!(KeyDir::none().resolve(Path::new("sub/a.zkey")).is_err());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
