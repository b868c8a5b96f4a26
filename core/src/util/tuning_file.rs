//! The tuning file: one TOML file with a table per backend (`[cuda]`, `[wgpu]`), named
//! by `--tuning FILE` or the `CRUCIBLE_TUNING` variable.
//!
//! Each GPU backend owns a typed tuning struct with defaults per device class; the file
//! only overrides fields. A backend reads its table with [`TuningFile::section`], which
//! refuses unknown keys and out-of-range values with an error that names the file, the
//! key and what is allowed.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::{Error, Result};

/// The variable that names the tuning file when `--tuning` is not given.
pub const TUNING_VAR: &str = "CRUCIBLE_TUNING";

/// A parsed tuning file (empty when none is named).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TuningFile {
    origin: Option<PathBuf>,
    tables: toml::Table,
}

impl TuningFile {
    /// No file: every backend uses its defaults.
    pub fn none() -> Self {
        TuningFile::default()
    }

    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::InvalidInput(format!("tuning file {}: {e}", path.display())))?;
        Self::parse(&text, Some(path.to_path_buf()))
    }

    /// The file named by `CRUCIBLE_TUNING`, or none when the variable is unset or empty.
    pub fn from_env() -> Result<Self> {
        match std::env::var_os(TUNING_VAR) {
            Some(path) if !path.is_empty() => Self::load(Path::new(&path)),
            _ => Ok(Self::none()),
        }
    }

    /// `path` when given, else the file `CRUCIBLE_TUNING` names, else none.
    pub fn from_arg_or_env(path: Option<&Path>) -> Result<Self> {
        match path {
            Some(path) => Self::load(path),
            None => Self::from_env(),
        }
    }

    /// Parses TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: Option<PathBuf>) -> Result<Self> {
        let file = TuningFile {
            tables: toml::Table::new(),
            origin,
        };
        let tables: toml::Table = toml::from_str(text)
            .map_err(|e| Error::InvalidInput(format!("{}: {}", file.name(), e.message())))?;
        for (key, value) in &tables {
            if !value.is_table() {
                return Err(Error::InvalidInput(format!(
                    "{}: `{key}` is not a backend table (write `[{key}]` with its keys below)",
                    file.name()
                )));
            }
        }
        Ok(TuningFile { tables, ..file })
    }

    /// The file's path, when it came from one.
    pub fn origin(&self) -> Option<&Path> {
        self.origin.as_deref()
    }

    /// Whether the file sets nothing.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// Refuses tables for backends that are not in `known` (a misspelt `[cdua]` would
    /// otherwise be ignored).
    pub fn check_backends(&self, known: &[&str]) -> Result<()> {
        for name in self.tables.keys() {
            if !known.contains(&name.as_str()) {
                return Err(Error::InvalidInput(format!(
                    "{}: no backend is named `{name}` (tables allowed: {})",
                    self.name(),
                    known
                        .iter()
                        .map(|k| format!("[{k}]"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        Ok(())
    }

    /// `backend`'s table as `T` (`T::default()` when the file has none). `T` should
    /// refuse unknown keys (`#[serde(deny_unknown_fields)]`) so that a misspelt key is an
    /// error that names it.
    pub fn section<T: DeserializeOwned + Default>(&self, backend: &str) -> Result<T> {
        match self.tables.get(backend) {
            None => Ok(T::default()),
            Some(value) => value.clone().try_into().map_err(|e: toml::de::Error| {
                Error::InvalidInput(format!("{}, [{backend}]: {}", self.name(), e.message()))
            }),
        }
    }

    /// An error about `key` of `backend`'s table: for range checks a backend makes after
    /// parsing.
    pub fn invalid(&self, backend: &str, key: &str, problem: &str) -> Error {
        Error::InvalidInput(format!("{}, [{backend}] {key}: {problem}", self.name()))
    }

    fn name(&self) -> String {
        match &self.origin {
            Some(path) => format!("tuning file {}", path.display()),
            None => "tuning file".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Default, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Example {
        window_bits: Option<u32>,
        reduce: Option<Mode>,
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Tree,
        Levels,
    }

    #[test]
    fn sections_parse_and_default() {
        let file = TuningFile::parse("[cuda]\nwindow_bits = 12\nreduce = \"tree\"\n", None)
            .expect("parses");
        let cuda: Example = file.section("cuda").expect("cuda");
        assert_eq!(
            cuda,
            Example {
                window_bits: Some(12),
                reduce: Some(Mode::Tree)
            }
        );
        let wgpu: Example = file.section("wgpu").expect("wgpu");
        assert_eq!(wgpu, Example::default());
        file.check_backends(&["cuda", "wgpu"]).expect("known");
    }

    #[test]
    fn errors_name_the_key_and_the_allowed_values() {
        let file = TuningFile::parse("[cuda]\nreduce = \"fast\"\n", Some("t.toml".into()))
            .expect("parses");
        let e = file.section::<Example>("cuda").unwrap_err().to_string();
        assert!(e.contains("t.toml") && e.contains("[cuda]"), "{e}");
        assert!(
            e.contains("fast") && e.contains("tree") && e.contains("levels"),
            "{e}"
        );

        let file = TuningFile::parse("[cuda]\nwindow_bit = 12\n", None).expect("parses");
        let e = file.section::<Example>("cuda").unwrap_err().to_string();
        assert!(e.contains("window_bit") && e.contains("window_bits"), "{e}");

        let file = TuningFile::parse("[cdua]\n", None).expect("parses");
        let e = file
            .check_backends(&["cuda", "wgpu"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cdua") && e.contains("[cuda]"), "{e}");

        let e = TuningFile::parse("window_bits = 3\n", None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("window_bits") && e.contains("backend table"),
            "{e}"
        );
    }
}
