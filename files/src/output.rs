//! Output files written whole or not at all: into a temporary file beside the
//! destination, synced, then renamed over it, so an interrupted run (Ctrl-C, a
//! crash, a full disk) never leaves a truncated key or proof at the path. Every
//! temporary file being written is listed, so a signal handler can remove them
//! ([`remove_unfinished`]) before the process exits. And the check, before any
//! work, that no output names an input or another output.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crucible_core::{Error, Result};

/// The temporary files being written now.
static UNFINISHED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn unfinished() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    UNFINISHED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes every temporary file being written now and returns their paths: what a
/// process stopped by a signal calls before it exits, since no destructor runs then.
pub fn remove_unfinished() -> Vec<PathBuf> {
    let mut listed = unfinished();
    for temp in listed.iter() {
        let _ = std::fs::remove_file(temp);
    }
    std::mem::take(&mut *listed)
}

/// An output being written: its temporary file exists (and is listed) from
/// [`create`](Self::create), and replaces the destination at
/// [`finish`](Self::finish); dropped unfinished, it is removed.
pub struct PendingFile {
    path: PathBuf,
    temp: PathBuf,
    what: String,
    file: Option<File>,
}

impl PendingFile {
    /// Creates the temporary file beside `path` (`.<name>.<pid>.tmp`); `what` names
    /// the file in errors. Done before the work that fills it, a path that cannot be
    /// written fails at once.
    pub fn create(path: &Path, what: &str) -> Result<PendingFile> {
        let name = path
            .file_name()
            .ok_or_else(|| cannot(what, path, &"the path names no file"))?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}.tmp", std::process::id()));
        let temp = path.with_file_name(temp_name);
        // Listed before it exists, so a signal during the creation still finds it.
        unfinished().push(temp.clone());
        let mut pending = PendingFile {
            path: path.to_path_buf(),
            temp,
            what: what.to_string(),
            file: None,
        };
        pending.file = Some(File::create(&pending.temp).map_err(|e| cannot(what, path, &e))?);
        Ok(pending)
    }

    /// The destination.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `write` fills the temporary file, which is synced and renamed over the
    /// destination; on any error it is removed and the destination left as it was.
    pub fn finish(
        mut self,
        write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
    ) -> Result<()> {
        let Some(file) = self.file.take() else {
            return Err(cannot(&self.what, &self.path, &"it was not created"));
        };
        let result = (|| {
            let mut w = BufWriter::new(file);
            write(&mut w)?;
            let file = w.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            std::fs::rename(&self.temp, &self.path)
        })();
        // On an error `Drop` removes the temporary file and unlists it.
        match result {
            Ok(()) => {
                unlist(&self.temp);
                self.temp = PathBuf::new();
                Ok(())
            }
            Err(e) => Err(cannot(&self.what, &self.path, &e)),
        }
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.temp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.temp);
            unlist(&self.temp);
        }
    }
}

fn unlist(temp: &Path) {
    unfinished().retain(|p| p != temp);
}

fn cannot(what: &str, path: &Path, e: &dyn std::fmt::Display) -> Error {
    Error::InvalidInput(format!("cannot write {what} {}: {e}", path.display()))
}

/// Writes `path` atomically: `write` fills a temporary file in the same directory,
/// which replaces `path` only once complete; on any error it is removed and `path`
/// is left as it was. `what` names the file in errors.
pub fn write_atomically(
    path: &Path,
    what: &str,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<()> {
    PendingFile::create(path, what)?.finish(write)
}

/// Refuses, before any work, outputs that would overwrite an input or each other:
/// `inputs` and `outputs` are (flag, path) pairs, `None` for a flag not given.
/// Paths are compared after resolving links and `..` (an output that does not exist
/// yet by its resolved directory and name), and existing files by device and inode,
/// so a hard link to an input is refused too.
pub fn check_outputs(
    inputs: &[(&str, Option<&Path>)],
    outputs: &[(&str, Option<&Path>)],
) -> Result<()> {
    let inputs: Vec<(&str, &Path)> = given(inputs);
    let outputs: Vec<(&str, &Path)> = given(outputs);
    let resolved: Vec<PathBuf> = outputs.iter().map(|(_, path)| resolve(path)).collect();
    for (i, (flag, path)) in outputs.iter().enumerate() {
        let one_file = |other: &Path| resolve(other) == resolved[i] || same_file(other, path);
        if let Some((input, _)) = inputs.iter().find(|(_, p)| one_file(p)) {
            return Err(Error::InvalidInput(format!(
                "{flag} {} names the input {input}: it would be overwritten",
                path.display()
            )));
        }
        if let Some((other, _)) = outputs[..i].iter().find(|(_, p)| one_file(p)) {
            return Err(Error::InvalidInput(format!(
                "{other} and {flag} name one file ({}): one would overwrite the other",
                path.display()
            )));
        }
    }
    Ok(())
}

/// The pairs whose flag was given.
fn given<'a>(pairs: &[(&'a str, Option<&'a Path>)]) -> Vec<(&'a str, &'a Path)> {
    pairs
        .iter()
        .filter_map(|&(flag, path)| path.map(|p| (flag, p)))
        .collect()
}

/// Whether `a` and `b` are one existing file (one device and inode: hard links too).
#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Elsewhere one file has one resolved path.
#[cfg(not(unix))]
fn same_file(_: &Path, _: &Path) -> bool {
    false
}

/// `path` with links and `..` resolved, as far as it exists.
fn resolve(path: &Path) -> PathBuf {
    if let Ok(full) = path.canonicalize() {
        return full;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (dir.canonicalize(), path.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("crucible-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = scratch("atomic");
        let path = dir.join("key.bin");
        std::fs::write(&path, b"old").unwrap();
        let err = write_atomically(&path, "key", |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("interrupted"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("interrupted"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        write_atomically(&path, "key", |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unfinished_files_are_listed_until_finished_or_dropped() {
        let dir = scratch("pending");
        let temps = || -> Vec<_> {
            std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| n.ends_with(".tmp"))
                .collect()
        };
        let listed = |name: &str| unfinished().iter().any(|p| p.ends_with(name));
        let done = PendingFile::create(&dir.join("done.bin"), "key").unwrap();
        let dropped = PendingFile::create(&dir.join("dropped.bin"), "key").unwrap();
        let temp = format!(".done.bin.{}.tmp", std::process::id());
        assert_eq!(temps().len(), 2);
        assert!(listed(&temp));
        done.finish(|w| w.write_all(b"key")).unwrap();
        assert!(!listed(&temp));
        assert_eq!(std::fs::read(dir.join("done.bin")).unwrap(), b"key");
        drop(dropped);
        assert!(temps().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn outputs_naming_an_input_or_each_other_are_refused() {
        let dir = scratch("names");
        let zkey = dir.join("c.zkey");
        std::fs::write(&zkey, b"k").unwrap();
        let via_dots = dir.join("sub/../c.zkey");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let err =
            check_outputs(&[("--zkey", Some(&zkey))], &[("--proof", Some(&via_dots))]).unwrap_err();
        assert!(err.to_string().contains("names the input --zkey"), "{err}");
        #[cfg(unix)]
        {
            let hard = dir.join("hard.zkey");
            std::fs::hard_link(&zkey, &hard).unwrap();
            let err =
                check_outputs(&[("--zkey", Some(&zkey))], &[("--out", Some(&hard))]).unwrap_err();
            assert!(err.to_string().contains("names the input --zkey"), "{err}");
        }
        let out = dir.join("out.json");
        let err =
            check_outputs(&[], &[("--proof", Some(&out)), ("--public", Some(&out))]).unwrap_err();
        assert!(err.to_string().contains("--proof and --public"), "{err}");
        check_outputs(
            &[("--zkey", Some(&zkey))],
            &[
                ("--proof", Some(&out)),
                ("--public", Some(&dir.join("p.json"))),
            ],
        )
        .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
