//! Proving keys from files crucible did not write: read only from a regular file, every
//! point validated, nothing after the key.

use std::fs::{File, Metadata};
use std::io::{BufReader, Seek};
use std::path::Path;

use ark_serialize::{CanonicalDeserialize, Compress, Validate};

use crate::groth16::{key_shape, ProvingKey};
use crate::{Error, Result};

/// Loads an arkworks-serialized proving key from an untrusted file: a regular file,
/// holding exactly one key (no bytes after it) whose queries are consistent, every
/// point on its curve and in the prime-order subgroup.
pub fn load_untrusted_key(path: &Path, compress: Compress) -> Result<ProvingKey> {
    let (file, meta) = open_regular(path, "proving key")?;
    let invalid = |why: String| {
        Error::InvalidInput(format!("proving key {} is invalid: {why}", path.display()))
    };
    let mut reader = BufReader::new(file);
    let pk =
        ProvingKey::deserialize_with_mode(&mut reader, compress, Validate::Yes).map_err(|e| {
            invalid(format!(
                "truncated, corrupt, or a point not on the curve / not in the subgroup ({e})"
            ))
        })?;
    let read = reader
        .stream_position()
        .map_err(|e| io_error(path, "cannot read", e))?;
    if read != meta.len() {
        return Err(invalid(format!(
            "{} bytes follow the key (a file holds exactly one)",
            meta.len().saturating_sub(read)
        )));
    }
    key_shape(&pk)?;
    Ok(pk)
}

pub(crate) fn io_error(path: &Path, what: &str, e: impl std::fmt::Display) -> Error {
    Error::InvalidInput(format!("{what} {}: {e}", path.display()))
}

/// What kind of thing other than a regular file `meta` describes.
fn kind_of(meta: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Opens `path` only if it is a regular file (through links): a FIFO would block the
/// open, a device would never end. The opened file is checked again.
pub fn open_regular(path: &Path, what: &str) -> Result<(File, Metadata)> {
    let not_regular = |meta: &Metadata| {
        Error::InvalidInput(format!(
            "{what} {} is {}, not a regular file",
            path.display(),
            kind_of(meta)
        ))
    };
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, "cannot open", e))?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let file = File::open(path).map_err(|e| io_error(path, "cannot open", e))?;
    let meta = file
        .metadata()
        .map_err(|e| io_error(path, "cannot inspect", e))?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok((file, meta))
}
