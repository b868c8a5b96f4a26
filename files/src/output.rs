//! Output files written whole or not at all: into a temporary file beside the
//! destination, synced, then renamed over it, so an interrupted run (Ctrl-C, a
//! crash, a full disk) never leaves a truncated key or proof at the path. And the
//! check, before any work, that no output names an input or another output.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crucible_core::{Error, Result};

/// Writes `path` atomically: `write` fills a temporary file in the same directory,
/// which replaces `path` only once complete; on any error it is removed and `path`
/// is left as it was. `what` names the file in errors.
pub fn write_atomically(
    path: &Path,
    what: &str,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<()> {
    let cannot = |e: &dyn std::fmt::Display| {
        Error::InvalidInput(format!("cannot write {what} {}: {e}", path.display()))
    };
    let name = path
        .file_name()
        .ok_or_else(|| cannot(&"the path names no file"))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = path.with_file_name(temp_name);
    let result = (|| {
        let mut w = BufWriter::new(File::create(&temp)?);
        write(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        cannot(&e)
    })
}

/// Refuses, before any work, outputs that would overwrite an input or each other:
/// `inputs` and `outputs` are (flag, path) pairs; paths are compared after
/// resolving links and `..` (an output that does not exist yet is compared by its
/// resolved directory and name).
pub fn check_outputs(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> Result<()> {
    let resolved: Vec<(&str, PathBuf)> = outputs
        .iter()
        .map(|(flag, path)| (*flag, resolve(path)))
        .collect();
    for (i, (flag, out)) in resolved.iter().enumerate() {
        if let Some((input, _)) = inputs.iter().find(|(_, p)| resolve(p) == *out) {
            return Err(Error::InvalidInput(format!(
                "{flag} {} names the input {input}: it would be overwritten",
                outputs[i].1.display()
            )));
        }
        if let Some((other, _)) = resolved[..i].iter().find(|(_, p)| p == out) {
            return Err(Error::InvalidInput(format!(
                "{other} and {flag} name one file ({}): one would overwrite the other",
                outputs[i].1.display()
            )));
        }
    }
    Ok(())
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
    fn outputs_naming_an_input_or_each_other_are_refused() {
        let dir = scratch("names");
        let zkey = dir.join("c.zkey");
        std::fs::write(&zkey, b"k").unwrap();
        let via_dots = dir.join("sub/../c.zkey");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let err = check_outputs(&[("--zkey", &zkey)], &[("--proof", &via_dots)]).unwrap_err();
        assert!(err.to_string().contains("names the input --zkey"), "{err}");
        let out = dir.join("out.json");
        let err = check_outputs(&[], &[("--proof", &out), ("--public", &out)]).unwrap_err();
        assert!(err.to_string().contains("--proof and --public"), "{err}");
        check_outputs(
            &[("--zkey", &zkey)],
            &[("--proof", &out), ("--public", &dir.join("p.json"))],
        )
        .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
