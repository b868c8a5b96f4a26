//! `crucible conformance`: the conformance suite on one backend or all of them.

use std::process::ExitCode;

use std::path::PathBuf;

use clap::Args;
use crucible_conformance::{json_report, junit_report, required_backends, run_registered, Config};
use crucible_core::curve::Curve;
use crucible_files::output::check_outputs;

use crate::devices::BackendArgs;
use crate::error::{CliError, Exit};

/// Arguments of `crucible conformance`.
#[derive(Args)]
pub struct ConformanceArgs {
    /// Backend (a registered name or `all`, the default), budget cap and tuning file.
    /// Backends named in `CRUCIBLE_REQUIRE` (comma-separated) fail the run when
    /// unavailable instead of being skipped, and on every case they answer unsupported.
    #[command(flatten)]
    device: BackendArgs,
    /// Only this curve's cases: `bls12-381` or `bn254` (default: both, BLS12-381's
    /// first; BN254's are named `bn254/...`).
    #[arg(long)]
    curve: Option<Curve>,
    /// Largest NTT is 2^k; MSM edge sizes reach 2^k + 1.
    #[arg(long, default_value_t = 8)]
    max_log_size: u32,
    /// Seed of every case's inputs (default: `CRUCIBLE_SEED`, else fresh; printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Only cases whose name contains this string (e.g. `msm/g2`).
    #[arg(long)]
    filter: Option<String>,
    /// Print every case and the summary as one JSON object on stdout instead of a line
    /// per case.
    #[arg(long)]
    json: bool,
    /// Also write every case and the summary as JSON to this file.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also write a JUnit XML report to this file (one test suite per backend).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

/// Prints one line per case and the summary last; exit 1 on any failure, or when no
/// case passed.
pub fn run(args: &ConformanceArgs) -> Result<ExitCode, CliError> {
    let curves = match args.curve {
        Some(curve) => vec![curve],
        None => Curve::ALL.to_vec(),
    };
    for &curve in &curves {
        let most = curve.max_log_size();
        if args.max_log_size > most {
            let other = if args.curve.is_none() && curve == Curve::Bn254 {
                " (--curve bls12-381 runs BLS12-381's cases alone)"
            } else {
                ""
            };
            return Err(CliError::usage(format!(
                "--max-log-size {} exceeds {}'s scalar field two-adicity (largest NTT is 2^{most}){other}",
                args.max_log_size,
                curve.name(),
            )));
        }
    }
    check_outputs(
        &[("--tuning", args.device.tuning.as_deref())],
        &[
            ("--out", args.out.as_deref()),
            ("--junit", args.junit.as_deref()),
        ],
    )?;
    let options = args.device.probe_options()?;
    let mut config = Config::new(args.max_log_size);
    if let Some(seed) = args.seed {
        config.seed = seed;
    }
    config.filter = args.filter.clone();
    config.curves = curves;
    let mut cases = Vec::new();
    let summary = run_registered(
        args.device.backend_or("all"),
        &config,
        &required_backends(),
        &options,
        &mut |case| {
            if !args.json {
                println!("{case}");
            }
            cases.push(case.clone());
        },
    );
    let json_text = || {
        serde_json::to_string_pretty(&json_report(&cases, &summary))
            .map_err(|e| CliError::file(format!("cannot write JSON: {e}")))
    };
    if args.json {
        println!("{}", json_text()?);
    } else {
        println!("{summary}");
    }
    // Where a report went is said on stderr, so that `--json` keeps stdout JSON.
    let write = |path: &PathBuf, text: String, what: &str| {
        std::fs::write(path, text)
            .map_err(|e| CliError::file(format!("cannot write {}: {e}", path.display())))?;
        eprintln!(
            "wrote {what} of {} to {}",
            crate::output::count(cases.len() as u64, "case"),
            path.display()
        );
        Ok::<_, CliError>(())
    };
    if let Some(path) = &args.out {
        write(path, json_text()? + "\n", "the JSON report")?;
    }
    if let Some(path) = &args.junit {
        write(path, junit_report(&cases, &summary), "the JUnit report")?;
    }
    if !summary.ok() {
        return Ok(Exit::Failed.code());
    }
    if summary.passed == 0 && summary.unsupported > 0 {
        return Err(CliError::device(format!(
            "no case passed: the backend answered unsupported to all {} that ran",
            summary.unsupported
        )));
    }
    if summary.passed == 0 {
        return Err(CliError::usage(match &args.filter {
            Some(f) => format!("no case ran (does --filter `{f}` match any case name?)"),
            None => "no case ran".into(),
        }));
    }
    Ok(ExitCode::SUCCESS)
}
