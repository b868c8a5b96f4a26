//! What several commands print: tables, durations, progress bars, the proving key
//! with a spinner while it is generated.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crucible_core::fixtures::key_cache::{BenchKeyId, KeyCache, KeySource};
use crucible_core::groth16::ProvingKey;
use indicatif::{ProgressBar, ProgressStyle};

use crate::error::CliError;

/// Left-aligns the first `left` columns and right-aligns the rest.
pub fn table(headers: &[&str], rows: &[Vec<String>], left: usize) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let padded: Vec<String> = cells
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, &w))| {
                if i < left {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = vec![line(&mut headers.iter().copied())];
    out.extend(
        rows.iter()
            .map(|row| line(&mut row.iter().map(String::as_str))),
    );
    out.join("\n")
}

/// `1 proof`, `2 proofs`: a count with its noun (plural by a trailing `s`).
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress_bar(len: u64, message: &str) -> ProgressBar {
    let style = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({elapsed}, eta {eta})")
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(len)
        .with_style(style)
        .with_message(message.to_string())
}

/// Runs `work` under a spinner on stderr showing `message` and the elapsed time
/// (a plain line instead when stderr is not a terminal).
pub fn spinner<T, E>(message: &str, work: impl FnOnce() -> Result<T, E>) -> Result<T, CliError>
where
    CliError: From<E>,
{
    let style = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let bar = ProgressBar::new_spinner()
        .with_style(style)
        .with_message(message.to_string());
    if bar.is_hidden() {
        eprintln!("{message}");
    }
    bar.enable_steady_tick(Duration::from_millis(100));
    let result = work();
    bar.finish_and_clear();
    Ok(result?)
}

/// `key loaded in S s (N MB, R MB/s)`: reading and validating the key file.
pub fn load_line(path: &Path, seconds: f64) -> String {
    let mb = std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6);
    format!(
        "key loaded in {seconds:.2} s ({mb:.1} MB, {:.1} MB/s)",
        mb / seconds.max(1e-9)
    )
}

/// A proving key of the benchmark circuit and where it came from.
pub struct LoadedKey {
    /// The key.
    pub key: ProvingKey,
    /// Its cache file.
    pub path: PathBuf,
    /// Cached, generated, or regenerated because the cache file could not be used.
    pub source: KeySource,
}

impl LoadedKey {
    /// `cached`, `generated` or `regenerated`.
    pub fn source_name(&self) -> &'static str {
        match self.source {
            KeySource::Cached => "cached",
            KeySource::Generated => "generated",
            KeySource::Regenerated { .. } => "regenerated",
            KeySource::Unsaved { .. } => "generated, not cached",
        }
    }
}

/// Gets benchmark key `id` (the plain chain's or the bit-heavy circuit's) from the key
/// cache, generating it (with a spinner on stderr) when missing or corrupt.
pub fn load_key_id(id: &BenchKeyId) -> Result<LoadedKey, CliError> {
    let constraints = id.constraints;
    let cache = KeyCache::new(KeyCache::default_dir());
    let path = cache.path_of(id);
    let mut spinner: Option<(ProgressBar, Instant)> = None;
    let result = cache.get_or_generate_id(id, &mut |path| {
        let message = format!(
            "generating proving key for {constraints} constraints (cached at {})",
            path.display()
        );
        let bar = ProgressBar::new_spinner().with_message(message.clone());
        if bar.is_hidden() {
            eprintln!("{message}");
        }
        bar.enable_steady_tick(Duration::from_millis(100));
        spinner = Some((bar, Instant::now()));
    });
    if let Some((bar, started)) = spinner {
        bar.finish_and_clear();
        if result.is_ok() {
            eprintln!(
                "generated the proving key in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    let (key, source) = result?;
    match &source {
        KeySource::Regenerated { why } => eprintln!("note: regenerated the cached key: {why}"),
        KeySource::Unsaved { why } => eprintln!(
            "warning: the key cache is unusable, so the key was not cached (the next run generates it again): {why}"
        ),
        KeySource::Cached | KeySource::Generated => {}
    }
    Ok(LoadedKey { key, path, source })
}

/// Checks, before any work, that `path` can be written: not a directory, its folder
/// there and writable; no file is left behind that was not there.
pub fn check_writable(path: &Path, flag: &str) -> Result<(), CliError> {
    let fail = |why: String| {
        CliError::file(format!(
            "cannot write {flag} file {}: {why}",
            path.display()
        ))
    };
    if path.is_dir() {
        return Err(fail("it is a directory".into()));
    }
    let existed = path.exists();
    OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| fail(e.to_string()))?;
    if !existed {
        std::fs::remove_file(path).map_err(|e| fail(e.to_string()))?;
    }
    Ok(())
}

/// The form a proof or public-signals file is written in, by its name.
pub fn file_form(path: &std::path::Path) -> &'static str {
    if crucible_files::artifacts::is_json(path) {
        "snarkjs JSON"
    } else {
        "arkworks binary"
    }
}

/// A database URL as errors print it: `host:port/database`, without the user and
/// password (`postgres://user:password@host:port/database`).
pub fn database_address(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    let rest = rest.split_once('?').map_or(rest, |(address, _)| address);
    format!("postgres://{rest}")
}

/// What a predicted time assumes: whose cost model and its rates, the host's threads,
/// and which phases it covers.
pub fn predicted_time_assumes(backend: &dyn crucible_core::ProverBackend) -> String {
    let m = backend.cost_model();
    let source = if backend.info().name == "cpu" {
        "measured on this host at first use"
    } else {
        "fitted to its measurements"
    };
    format!(
        "{}'s cost model, {source}: MSM G1 {:.0} ns and G2 {:.0} ns a term, NTT {:.2} ns a butterfly, staging {:.1} GB/s, a key's streamed bases {:.1} GB/s; {} host threads; stage + NTT + MSM, capped by what the synthesis threads supply where the circuit's synthesis time is known (the built-in circuits'); verification not counted",
        backend.info().label(),
        m.msm_g1_ns_per_term,
        m.msm_g2_ns_per_term,
        m.ntt_ns_per_butterfly_stage,
        m.stage_bytes_per_second / 1e9,
        m.streamed_bases_bytes_per_second / 1e9,
        crucible_core::host::cores(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_addresses_leave_out_the_password() {
        assert_eq!(
            database_address("postgres://me:secret@db.local:5433/jobs?sslmode=disable"),
            "postgres://db.local:5433/jobs"
        );
        assert_eq!(database_address("postgres://db/jobs"), "postgres://db/jobs");
    }

    #[test]
    fn counts() {
        assert_eq!(count(1u64, "proof"), "1 proof");
        assert_eq!(count(0u64, "proof"), "0 proofs");
        assert_eq!(count(64u64, "worker"), "64 workers");
    }

    #[test]
    fn tables_align() {
        let rows = vec![
            vec!["cpu".into(), "1.5".into()],
            vec!["cuda:0".into(), "10.25".into()],
        ];
        assert_eq!(
            table(&["backend", "ms"], &rows, 1),
            "backend     ms\ncpu        1.5\ncuda:0   10.25"
        );
    }
}
