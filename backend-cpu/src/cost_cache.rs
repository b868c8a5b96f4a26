//! The CPU cost model's measured rates, kept in the cache directory so that a process
//! measures them once per machine instead of at every start (a quarter to half a
//! second, more than a small proof takes).
//!
//! A file is named by what the rates depend on: this crate's version (the timed calls
//! may change with it), the processor's model and the threads rayon runs on (what the
//! MSMs and NTT are timed with). Another machine, version or thread count reads
//! another file. A file older than [`MAX_AGE`] is measured again (a measurement made
//! on a loaded machine does not stay forever), and one that does not parse, names
//! another machine or holds a rate that is not a positive number is measured again
//! and replaced: a bad file costs one measurement, never a wrong model.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crucible_core::hash::Fnv1a;

/// The cache directory's folder of measured CPU rates.
pub const FOLDER: &str = "cpu-cost";

/// How long a measurement is kept.
pub const MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);

/// The rates the CPU backend measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    /// Nanoseconds of the timed G1 MSM.
    pub g1_ns: f64,
    /// Nanoseconds of the timed G1 MSM with scalars of 0 and 1.
    pub g1_bits_ns: f64,
    /// Nanoseconds of the timed G2 MSM.
    pub g2_ns: f64,
    /// Nanoseconds of the timed NTT.
    pub ntt_ns: f64,
}

impl Rates {
    const NAMES: [&'static str; 4] = ["g1_ns", "g1_bits_ns", "g2_ns", "ntt_ns"];

    fn values(&self) -> [f64; 4] {
        [self.g1_ns, self.g1_bits_ns, self.g2_ns, self.ntt_ns]
    }
}

/// What the rates were measured on: one line of text, also the file's first line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine(pub String);

impl Machine {
    /// This process's: the crate's version and build profile (a debug build's arkworks
    /// runs tens of times slower, and its rates must not stand for a release build's),
    /// the processor's model, rayon's threads.
    pub fn here() -> Self {
        Machine(format!(
            "crucible-backend-cpu {}{}; {}; {} threads",
            env!("CARGO_PKG_VERSION"),
            if cfg!(debug_assertions) {
                " (debug)"
            } else {
                ""
            },
            cpu_model(),
            rayon::current_num_threads()
        ))
    }

    /// The file of this machine's rates in `dir`.
    pub fn file_in(&self, dir: &Path) -> PathBuf {
        let id = Fnv1a::default().write(self.0.as_bytes()).finish();
        dir.join(format!("{id:016x}.txt"))
    }
}

/// The processor's model as the system names it (Linux's `/proc/cpuinfo`), else the
/// architecture.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .and_then(|rest| rest.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// The rates kept in `dir` for `machine`, when there are any, younger than `max_age`,
/// and whole.
pub fn load(dir: &Path, machine: &Machine, max_age: Duration) -> Option<Rates> {
    let path = machine.file_in(dir);
    let age = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())?;
    if age >= max_age {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let mut lines = text.lines();
    if lines.next()? != machine.0 {
        return None;
    }
    let mut values = [0.0; 4];
    for (value, name) in values.iter_mut().zip(Rates::NAMES) {
        let (key, number) = lines.next()?.split_once('=')?;
        *value = number.trim().parse::<f64>().ok()?;
        if key.trim() != name || !value.is_finite() || *value <= 0.0 {
            return None;
        }
    }
    let [g1_ns, g1_bits_ns, g2_ns, ntt_ns] = values;
    Some(Rates {
        g1_ns,
        g1_bits_ns,
        g2_ns,
        ntt_ns,
    })
}

/// Keeps `rates` in `dir` for `machine`, written whole (a temporary file renamed over
/// the old one, so that a process reading at the same time sees one or the other).
pub fn save(dir: &Path, machine: &Machine, rates: &Rates) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut text = format!("{}\n", machine.0);
    for (name, value) in Rates::NAMES.iter().zip(rates.values()) {
        text.push_str(&format!("{name}={value}\n"));
    }
    let path = machine.file_in(dir);
    let temp = path.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(&temp, text)?;
    std::fs::rename(&temp, &path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

/// The rates kept in `dir`, else those `measure` returns, then kept (a folder that
/// cannot be written only means the next process measures again).
pub fn remembered_or(dir: &Path, measure: impl FnOnce() -> Rates) -> Rates {
    let machine = Machine::here();
    if let Some(rates) = load(dir, &machine, MAX_AGE) {
        return rates;
    }
    let rates = measure();
    let _ = save(dir, &machine, &rates);
    rates
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dir(PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn dir(name: &str) -> Dir {
        Dir(std::env::temp_dir().join(format!("crucible-cpu-cost-{name}-{}", std::process::id())))
    }

    const RATES: Rates = Rates {
        g1_ns: 4.5e6,
        g1_bits_ns: 1.25e6,
        g2_ns: 7.0e6,
        ntt_ns: 3.0e5,
    };

    #[test]
    fn rates_are_measured_once_then_read() {
        let d = dir("once");
        let mut measured = 0;
        let mut measure = || {
            measured += 1;
            RATES
        };
        assert_eq!(remembered_or(&d.0, &mut measure), RATES);
        assert_eq!(remembered_or(&d.0, &mut measure), RATES);
        assert_eq!(measured, 1, "the second process read the first one's rates");
    }

    #[test]
    fn another_machine_an_old_file_or_a_bad_one_is_measured_again() {
        let d = dir("stale");
        let here = Machine::here();
        save(&d.0, &here, &RATES).unwrap();
        assert_eq!(load(&d.0, &here, MAX_AGE), Some(RATES));
        // Another processor, version or thread count: another file.
        let other = Machine(format!("{} (another)", here.0));
        assert_ne!(other.file_in(&d.0), here.file_in(&d.0));
        assert_eq!(load(&d.0, &other, MAX_AGE), None);
        // Older than allowed.
        assert_eq!(load(&d.0, &here, Duration::ZERO), None);
        // A file holding another machine's line, a missing rate, a zero rate, text.
        let path = here.file_in(&d.0);
        for bad in [
            format!("{}\ng1_ns=1\ng1_bits_ns=1\ng2_ns=1\nntt_ns=1\n", other.0),
            format!("{}\ng1_ns=1\ng1_bits_ns=1\ng2_ns=1\n", here.0),
            format!("{}\ng1_ns=1\ng1_bits_ns=0\ng2_ns=1\nntt_ns=1\n", here.0),
            format!("{}\ng1_ns=1\ng1_bits_ns=1\ng2_ns=fast\nntt_ns=1\n", here.0),
        ] {
            std::fs::write(&path, &bad).unwrap();
            assert_eq!(load(&d.0, &here, MAX_AGE), None, "{bad}");
            let mut measured = false;
            let rates = remembered_or(&d.0, || {
                measured = true;
                RATES
            });
            assert!(measured && rates == RATES, "{bad}");
            assert_eq!(load(&d.0, &here, MAX_AGE), Some(RATES), "replaced: {bad}");
        }
    }

    #[test]
    fn a_folder_that_cannot_be_written_measures_every_time() {
        let blocked = Path::new("/dev/null/cpu-cost");
        let mut measured = 0;
        for _ in 0..2 {
            remembered_or(blocked, || {
                measured += 1;
                RATES
            });
        }
        assert_eq!(measured, 2);
    }
}
