//! Keys whose points were checked before, remembered by a digest of the bytes read,
//! so that a `.zkey` read again skips the subgroup checks, most of its load time
//! (tens of microseconds a G1 point, more a G2 point, on one core). The digest is of
//! the bytes as the reader consumed them, positions included, so a file changed
//! after it was remembered, or while it is read, digests differently and is checked
//! again: nothing unchecked is ever accepted for a remembered name or path.
//!
//! The memory is a folder of empty files named by the BLAKE3 digests (the hash the
//! key cache checks its files with), the cache
//! directory's `validated/` by default: whoever may write there may also replace the
//! cached proving keys, so it adds no one who could slip a key past the checks.

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

/// A reader that digests every byte read through it, and every seek.
pub(crate) struct Digesting<R> {
    inner: R,
    hasher: blake3::Hasher,
}

impl<R> Digesting<R> {
    pub(crate) fn new(inner: R) -> Self {
        Digesting {
            inner,
            hasher: blake3::Hasher::new(),
        }
    }

    pub(crate) fn digest(self) -> blake3::Hash {
        self.hasher.finalize()
    }
}

impl<R: Read> Read for Digesting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

impl<R: Seek> Seek for Digesting<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let at = self.inner.seek(pos)?;
        // Where the following bytes were read from is part of what was read.
        self.hasher.update(b"@");
        self.hasher.update(&at.to_le_bytes());
        Ok(at)
    }
}

/// Digests of keys whose every point passed the checks.
#[derive(Clone, Debug)]
pub struct ValidatedKeys {
    dir: PathBuf,
}

impl ValidatedKeys {
    /// The cache directory's `validated/` folder ([`crucible_core::cache_dir`]).
    pub fn in_cache() -> Self {
        ValidatedKeys::at(crucible_core::cache_dir::cache_folder(
            crucible_core::cache_dir::VALIDATED,
        ))
    }

    /// The folder `dir`.
    pub fn at(dir: PathBuf) -> Self {
        ValidatedKeys { dir }
    }

    /// Whether a key that digests to `digest` passed the checks before.
    pub fn contains(&self, digest: &blake3::Hash) -> bool {
        std::fs::symlink_metadata(self.dir.join(digest.to_hex().as_str()))
            .is_ok_and(|m| m.is_file())
    }

    /// Remembers that a key that digests to `digest` passed the checks. A folder that
    /// cannot be written only means the checks run again next time.
    pub fn remember(&self, digest: &blake3::Hash) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        std::fs::write(self.dir.join(digest.to_hex().as_str()), b"")
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn digest_of(data: &[u8], seek_to: u64) -> blake3::Hash {
        let mut r = Digesting::new(Cursor::new(data.to_vec()));
        r.seek(SeekFrom::Start(seek_to)).unwrap();
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).unwrap();
        r.digest()
    }

    #[test]
    fn the_digest_covers_the_bytes_and_where_they_were_read() {
        let data = b"0123456789abcdef";
        assert_eq!(digest_of(data, 4), digest_of(data, 4));
        assert_ne!(digest_of(data, 4), digest_of(data, 5));
        let mut changed = *data;
        changed[10] ^= 1;
        assert_ne!(digest_of(data, 4), digest_of(&changed, 4));
        // A byte never read is not covered.
        changed = *data;
        changed[0] ^= 1;
        assert_eq!(digest_of(data, 4), digest_of(&changed, 4));
    }

    #[test]
    fn remembered_digests_are_found_and_others_are_not() {
        let dir = std::env::temp_dir().join(format!("crucible-validated-{}", std::process::id()));
        let keys = ValidatedKeys::at(dir.clone());
        let (a, b) = (
            blake3::Hash::from_bytes([1; 32]),
            blake3::Hash::from_bytes([2; 32]),
        );
        assert!(!keys.contains(&a));
        keys.remember(&a).unwrap();
        assert!(keys.contains(&a) && !keys.contains(&b));
        std::fs::remove_dir_all(&dir).unwrap();
        // A folder that cannot be made: an error to ignore, never a panic.
        let blocked = ValidatedKeys::at(PathBuf::from("/dev/null/validated"));
        assert!(blocked.remember(&a).is_err() && !blocked.contains(&a));
    }
}
