//! `crucible conformance`: the conformance suite on one backend or all of them.

use std::process::ExitCode;

use std::path::PathBuf;

use clap::Args;
use crucible_conformance::{json_report, junit_report, required_backends, run_registered, Config};
use crucible_core::registry::ProbeOptions;
use crucible_core::MAX_LOG_SIZE;

use crate::CliError;

/// Arguments of `crucible conformance`.
#[derive(Args)]
pub struct ConformanceArgs {
    /// A registered backend name, or `all`. Backends named in `CRUCIBLE_REQUIRE`
    /// (comma-separated) fail the run when unavailable instead of being skipped, and
    /// on every case they answer unsupported.
    #[arg(long, default_value = "all")]
    backend: String,
    /// Largest NTT is 2^k; MSM edge sizes reach 2^k + 1.
    #[arg(long, default_value_t = 8)]
    max_log_size: u32,
    /// Seed of every case's inputs (default: `CRUCIBLE_SEED`, else fresh; printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Only cases whose name contains this string (e.g. `msm/g2`).
    #[arg(long)]
    filter: Option<String>,
    /// Also write every case and the summary as JSON to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Also write a JUnit XML report to this file (one test suite per backend).
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,
}

/// Prints one line per case and the summary last; exit 1 on any failure, or when no
/// case passed.
pub fn run(args: &ConformanceArgs) -> Result<ExitCode, CliError> {
    if args.max_log_size > MAX_LOG_SIZE {
        return Err(CliError(format!(
            "--max-log-size {} exceeds the field's two-adicity (largest NTT is 2^{MAX_LOG_SIZE})",
            args.max_log_size
        )));
    }
    let mut config = Config::new(args.max_log_size);
    if let Some(seed) = args.seed {
        config.seed = seed;
    }
    config.filter = args.filter.clone();
    let mut cases = Vec::new();
    let summary = run_registered(
        &args.backend,
        &config,
        &required_backends(),
        &ProbeOptions::default(),
        &mut |case| {
            println!("{case}");
            cases.push(case.clone());
        },
    );
    println!("{summary}");
    let write = |path: &PathBuf, text: String| {
        std::fs::write(path, text)
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))
    };
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&json_report(&cases, &summary))
            .map_err(|e| CliError(format!("cannot write JSON: {e}")))?;
        write(path, text + "\n")?;
    }
    if let Some(path) = &args.junit {
        write(path, junit_report(&cases, &summary))?;
    }
    if !summary.ok() {
        return Ok(ExitCode::FAILURE);
    }
    if summary.passed == 0 && summary.unsupported > 0 {
        return Err(CliError(format!(
            "no case passed: the backend answered unsupported to all {} that ran",
            summary.unsupported
        )));
    }
    if summary.passed == 0 {
        return Err(CliError(match &args.filter {
            Some(f) => format!("no case ran (does --filter `{f}` match any case name?)"),
            None => "no case ran".into(),
        }));
    }
    Ok(ExitCode::SUCCESS)
}
