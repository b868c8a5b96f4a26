//! Writes a large valid `.zkey` and measures how fast crucible reads and validates one.
//!
//!     cargo run --profile test -p crucible-files --example zkey_load -- write OUT.zkey LOG_DOMAIN WIRES [SEED]
//!     cargo run --profile test -p crucible-files --example zkey_load -- read FILE.zkey [TIMES]
//!
//! The key written is `tests/files/big_zkey.rs`'s (one term per row, distinct
//! points; not a setup). `read` prints each load's seconds and MB/s, the threads used
//! (`RAYON_NUM_THREADS` sets them) and whether the subgroup checks ran: the first read
//! of a key checks every point, later ones find its bytes among the keys that passed
//! (the cache directory's `validated/`; point `CRUCIBLE_CACHE_DIR` at an empty folder
//! to time the checks again).

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use crucible_files::validated_keys::ValidatedKeys;
use crucible_files::{SubgroupChecks, Zkey};

#[path = "../tests/files/big_zkey.rs"]
mod big_zkey;

const USAGE: &str =
    "usage: zkey_load write OUT.zkey LOG_DOMAIN WIRES [SEED] | zkey_load read FILE.zkey [TIMES]";

fn write(out: &str, log_domain: u32, wires: usize, seed: u64) -> crucible_core::Result<()> {
    let started = Instant::now();
    big_zkey::big_zkey(log_domain, wires, seed).write(Path::new(out))?;
    let bytes = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    println!(
        "wrote {out}: 2^{log_domain} domain, {wires} wires, {:.1} MB in {:.1} s",
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn read(path: &str, times: usize) -> crucible_core::Result<()> {
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) as f64;
    let validated = ValidatedKeys::in_cache();
    for _ in 0..times {
        let started = Instant::now();
        let (key, checks) =
            Zkey::<crucible_core::Bls12_381>::read_remembering(Path::new(path), &validated)?;
        let seconds = started.elapsed().as_secs_f64();
        let checks = match checks {
            SubgroupChecks::Ran => "subgroup checks ran",
            SubgroupChecks::Remembered => "checked before",
        };
        println!(
            "read {path} ({:.1} MB, {} wires, domain {}) in {seconds:.3} s: {:.1} MB/s on {} threads, {checks}",
            bytes / 1e6,
            key.num_wires,
            key.domain_size,
            bytes / 1e6 / seconds,
            rayon::current_num_threads()
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["write", out, log, wires, rest @ ..] if rest.len() <= 1 => {
            match (
                log.parse(),
                wires.parse(),
                rest.first().map_or(Ok(1), |s| s.parse()),
            ) {
                (Ok(log), Ok(wires), Ok(seed)) => write(out, log, wires, seed),
                _ => {
                    eprintln!("{USAGE}");
                    return ExitCode::from(2);
                }
            }
        }
        ["read", path, rest @ ..] if rest.len() <= 1 => {
            match rest.first().map_or(Ok(1), |s| s.parse()) {
                Ok(times) => read(path, times),
                Err(_) => {
                    eprintln!("{USAGE}");
                    return ExitCode::from(2);
                }
            }
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("zkey_load: {e}");
            ExitCode::FAILURE
        }
    }
}
