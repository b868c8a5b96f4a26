//! iden3's binary container, shared by circom's `.r1cs` and `.wtns` and snarkjs' `.zkey`:
//! a 4-byte magic, a version (u32), a section count (u32), then sections, each a type
//! (u32), a byte length (u64) and its bytes. Sections may come in any order, so the
//! table is read first by seeking past each body; bodies are then read in the order
//! a reader needs them, through a buffered reader, never the whole file at once.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Take};
use std::path::Path;

use crucible_core::key_file::open_regular;
use crucible_core::{Error, Result};

/// A file's display name and a way to build errors that name it.
#[derive(Clone, Debug)]
pub(crate) struct Named(pub String);

impl Named {
    /// `InvalidInput("<file>: <what>")`.
    pub fn error(&self, what: impl std::fmt::Display) -> Error {
        Error::InvalidInput(format!("{}: {what}", self.0))
    }

    /// An I/O error while reading `what`.
    pub fn io(&self, what: &str, e: std::io::Error) -> Error {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            self.error(format!("truncated while reading {what}"))
        } else {
            self.error(format!("cannot read {what}: {e}"))
        }
    }
}

/// One section's place in the file.
#[derive(Clone, Copy, Debug)]
struct Section {
    kind: u32,
    offset: u64,
    size: u64,
}

/// An opened container with its section table.
pub(crate) struct BinFile<R> {
    reader: R,
    pub name: Named,
    sections: Vec<Section>,
    len: u64,
}

/// Opens `path` as a container with this magic and a version from 1 to `max_version`.
pub(crate) fn open(
    path: &Path,
    magic: &[u8; 4],
    kind: &str,
    max_version: u32,
) -> Result<BinFile<BufReader<File>>> {
    open_with(path, magic, kind, max_version, |reader| reader)
}

/// [`open`], every byte read through `wrap`'s reader (the header included).
pub(crate) fn open_with<R: Read + Seek>(
    path: &Path,
    magic: &[u8; 4],
    kind: &str,
    max_version: u32,
    wrap: impl FnOnce(BufReader<File>) -> R,
) -> Result<BinFile<R>> {
    let (file, _) = open_regular(path, &format!("{kind} file"))?;
    BinFile::new(
        wrap(BufReader::with_capacity(1 << 20, file)),
        Named(path.display().to_string()),
        magic,
        kind,
        max_version,
    )
}

/// A reader that asks `stop` before every read and fails once it says so, so that a
/// long read can be called off: a large section is read in blocks of
/// [`crate::bulk::BLOCK_BYTES`], each one read call, so the read ends within a block
/// of `stop` turning true. The caller tells the failure from a bad file by asking
/// `stop` again (it must go on saying true once it has).
pub(crate) struct Stoppable<'a, R> {
    inner: R,
    stop: &'a dyn Fn() -> bool,
}

impl<'a, R> Stoppable<'a, R> {
    pub(crate) fn new(inner: R, stop: &'a dyn Fn() -> bool) -> Self {
        Stoppable { inner, stop }
    }
}

impl<R: Read> Read for Stoppable<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if (self.stop)() {
            return Err(std::io::Error::other("the read was called off"));
        }
        self.inner.read(buf)
    }
}

impl<R: Seek> Seek for Stoppable<'_, R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

impl<R> BinFile<R> {
    /// The reader, once the file has been read.
    pub fn into_reader(self) -> R {
        self.reader
    }
}

impl<R: Read + Seek> BinFile<R> {
    /// Reads the header and the section table of `reader`.
    pub fn new(
        mut reader: R,
        name: Named,
        magic: &[u8; 4],
        kind: &str,
        max_version: u32,
    ) -> Result<Self> {
        let len = reader
            .seek(SeekFrom::End(0))
            .and_then(|len| reader.seek(SeekFrom::Start(0)).map(|_| len))
            .map_err(|e| name.io("the file", e))?;
        let mut head = [0u8; 12];
        reader
            .read_exact(&mut head)
            .map_err(|_| name.error(format!("not a {kind} file (shorter than its header)")))?;
        if &head[..4] != magic {
            // The bytes found are not repeated: an error must not show a file's contents.
            return Err(name.error(format!(
                "not a {kind} file (it does not start with {:?})",
                String::from_utf8_lossy(magic)
            )));
        }
        let version = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        if version == 0 || version > max_version {
            return Err(name.error(format!(
                "{kind} format version {version} is not supported (1 to {max_version})"
            )));
        }
        let count = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
        let mut sections = Vec::new();
        let mut pos = 12u64;
        for i in 0..count {
            let mut sh = [0u8; 12];
            reader
                .read_exact(&mut sh)
                .map_err(|e| name.io(&format!("the header of section {i}"), e))?;
            let kind = u32::from_le_bytes([sh[0], sh[1], sh[2], sh[3]]);
            let size = u64::from_le_bytes(sh[4..12].try_into().expect("8 bytes"));
            let offset = pos + 12;
            let end = offset.checked_add(size).filter(|&end| end <= len);
            let Some(end) = end else {
                return Err(name.error(format!(
                    "truncated: section {i} (type {kind}) claims {size} bytes at offset {offset}, the file has {len}"
                )));
            };
            sections.push(Section { kind, offset, size });
            reader
                .seek(SeekFrom::Start(end))
                .map_err(|e| name.io("the section table", e))?;
            pos = end;
        }
        if pos != len {
            return Err(name.error(format!(
                "{} bytes after the last section (a corrupt or concatenated file)",
                len - pos
            )));
        }
        Ok(BinFile {
            reader,
            name,
            sections,
            len,
        })
    }

    /// The file's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether a section of this type is present.
    pub fn has(&self, kind: u32) -> bool {
        self.sections.iter().any(|s| s.kind == kind)
    }

    /// The one section of type `kind`, positioned at its start.
    pub fn section(&mut self, kind: u32, what: &'static str) -> Result<SectionReader<'_, R>> {
        let mut found = self.sections.iter().filter(|s| s.kind == kind);
        let section = match (found.next(), found.next()) {
            (Some(s), None) => *s,
            (None, _) => return Err(self.name.error(format!("missing section {kind} ({what})"))),
            (Some(_), Some(_)) => {
                return Err(self
                    .name
                    .error(format!("section {kind} ({what}) appears more than once")))
            }
        };
        self.reader
            .seek(SeekFrom::Start(section.offset))
            .map_err(|e| self.name.io(what, e))?;
        Ok(SectionReader {
            inner: (&mut self.reader).take(section.size),
            name: &self.name,
            what,
            size: section.size,
        })
    }
}

/// Reads one section's body; [`SectionReader::finish`] checks nothing is left over.
pub(crate) struct SectionReader<'a, R> {
    inner: Take<&'a mut R>,
    pub name: &'a Named,
    pub what: &'static str,
    size: u64,
}

impl<R: Read> SectionReader<'_, R> {
    /// The section's length in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> u64 {
        self.inner.limit()
    }

    /// Fills `buf` from the section (an error if the section ends first).
    pub fn bytes(&mut self, buf: &mut [u8]) -> Result<()> {
        self.inner.read_exact(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                self.name
                    .error(format!("section `{}` ends early", self.what))
            } else {
                self.name.io(self.what, e)
            }
        })
    }

    /// A little-endian u32.
    pub fn u32(&mut self) -> Result<u32> {
        let mut b = [0u8; 4];
        self.bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// A little-endian u64.
    pub fn u64(&mut self) -> Result<u64> {
        let mut b = [0u8; 8];
        self.bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// A u32 count or index, as `usize`.
    pub fn usize32(&mut self) -> Result<usize> {
        Ok(self.u32()? as usize)
    }

    /// Checks the whole section was read.
    pub fn finish(self) -> Result<()> {
        match self.inner.limit() {
            0 => Ok(()),
            left => Err(self.name.error(format!(
                "section `{}` has {left} bytes more than its contents",
                self.what
            ))),
        }
    }
}
