//! A seeded mutation fuzzer for file and message readers, run as an ordinary test for
//! a bounded time (`CRUCIBLE_FUZZ_SECONDS`, default [`DEFAULT_SECONDS`]).
//!
//! Inputs are valid seed files mutated 1 to 4 times: bit flips, bytes set to edge
//! values, truncations, length and count fields inflated (the section table and
//! section headers of iden3 containers are aimed at), numbers in text replaced by
//! edge values, and splices, insertions and deletions between seeds. The same run
//! seed (`CRUCIBLE_SEED`) replays the same inputs. Each input is checked on a worker
//! thread under `catch_unwind` with a time bound; a panic, an input that takes longer
//! than the bound, or an accepted input that fails its check (a round trip, or the
//! reader's own invariants) is a failure, written to a file to replay and named with
//! the run seed and the input's number.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Seconds a fuzz test runs when `CRUCIBLE_FUZZ_SECONDS` is not set: short, so CI
/// stays fast; longer runs set the variable.
pub const DEFAULT_SECONDS: f64 = 3.0;

/// Failures written to files per run (the rest are only counted).
const SAVED_FAILURES: usize = 5;

/// The fuzzing time from `CRUCIBLE_FUZZ_SECONDS` (fractions allowed), else the default.
pub fn fuzz_seconds() -> f64 {
    std::env::var("CRUCIBLE_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(DEFAULT_SECONDS)
}

/// What a reader made of one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Refused with an error: the expected answer to most mutated inputs.
    Rejected,
    /// Accepted, and the value passed its check.
    Accepted,
}

/// A run's counts.
#[derive(Clone, Debug)]
pub struct FuzzReport {
    /// The reader's name.
    pub name: String,
    /// The run seed.
    pub seed: u64,
    /// Inputs tried.
    pub inputs: u64,
    /// Inputs the reader accepted (each checked).
    pub accepted: u64,
    /// Panics, hangs and failed checks.
    pub failures: Vec<String>,
}

/// Deterministic mutations of seed inputs.
pub struct Mutator {
    state: u64,
    seeds: Vec<Vec<u8>>,
}

const EDGE_BYTES: [u8; 6] = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff];
const EDGE_U32: [u32; 8] = [
    0,
    1,
    2,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x0001_0000,
    0xffff,
];
const EDGE_U64: [u64; 6] = [0, 1, u64::MAX, 1 << 32, 1 << 40, i64::MAX as u64];
const EDGE_NUMBERS: [&str; 10] = [
    "0",
    "-1",
    "1e999",
    "\"\"",
    "null",
    "[]",
    // BLS12-381's r and q: one past the largest scalar and coordinate.
    "52435875175126190479447740508185965837690552500527637822603658699938581184513",
    "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629129015664037894272559787",
    "115792089237316195423570985008687907853269984665640564039457584007913129639936",
    "99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999",
];

impl Mutator {
    /// A mutator of `seeds` (at least one) driven by `seed`.
    pub fn new(seed: u64, seeds: Vec<Vec<u8>>) -> Mutator {
        assert!(!seeds.is_empty(), "a fuzzer needs at least one seed input");
        Mutator {
            state: seed ^ 0x6a09_e667_f3bc_c908,
            seeds,
        }
    }

    /// SplitMix64.
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// The next input: a seed mutated 1 to 4 times.
    pub fn input(&mut self) -> Vec<u8> {
        let pick = self.below(self.seeds.len());
        let mut data = self.seeds[pick].clone();
        for _ in 0..1 + self.below(4) {
            self.mutate(&mut data);
        }
        data
    }

    fn mutate(&mut self, data: &mut Vec<u8>) {
        if data.is_empty() {
            let other = self.below(self.seeds.len());
            data.extend_from_slice(&self.seeds[other]);
            return;
        }
        let at = self.below(data.len());
        match self.below(10) {
            0 | 1 => data[at] ^= 1 << self.below(8),
            2 => data[at] = EDGE_BYTES[self.below(EDGE_BYTES.len())],
            3 => data.truncate(at),
            4 | 5 => self.inflate(data),
            6 => self.splice(data),
            7 => {
                // Delete a range.
                let len = 1 + self.below((data.len() - at).min(256));
                data.drain(at..at + len);
            }
            8 => {
                // Duplicate a range in place.
                let len = 1 + self.below((data.len() - at).min(256));
                let copy = data[at..at + len].to_vec();
                data.splice(at..at, copy);
            }
            _ => self.replace_number(data),
        }
    }

    /// Writes an edge value over a length or count field: one of an iden3
    /// container's section sizes or a section's first words when `data` is one, else
    /// any offset.
    fn inflate(&mut self, data: &mut [u8]) {
        let fields = iden3_fields(data);
        let (at, wide) = if !fields.is_empty() && self.below(4) != 0 {
            fields[self.below(fields.len())]
        } else {
            (self.below(data.len()), self.below(2) == 0)
        };
        if wide {
            let old = read_le(data, at, 8);
            let values = [
                EDGE_U64[self.below(EDGE_U64.len())],
                old.wrapping_add(1),
                old << 8,
            ];
            write_le(data, at, 8, values[self.below(values.len())]);
        } else {
            let old = read_le(data, at, 4);
            let values = [
                EDGE_U32[self.below(EDGE_U32.len())] as u64,
                old.wrapping_add(1),
                old.wrapping_sub(1),
                old << 4,
            ];
            write_le(data, at, 4, values[self.below(values.len())]);
        }
    }

    /// Overwrites or inserts a run of bytes from a seed (the same or another).
    fn splice(&mut self, data: &mut Vec<u8>) {
        let other = self.below(self.seeds.len());
        let source_len = self.seeds[other].len();
        if source_len == 0 {
            return;
        }
        let from = self.below(source_len);
        let len = 1 + self.below((source_len - from).min(512));
        let piece = self.seeds[other][from..from + len].to_vec();
        let at = self.below(data.len() + 1);
        if self.below(2) == 0 {
            data.splice(at..at, piece);
        } else {
            let end = (at + piece.len()).min(data.len());
            data.splice(at..end, piece);
        }
    }

    /// Replaces a run of ASCII digits (a number in a JSON file) by an edge value, or
    /// flips a byte where there are none.
    fn replace_number(&mut self, data: &mut Vec<u8>) {
        let starts: Vec<usize> = (0..data.len())
            .filter(|&i| data[i].is_ascii_digit() && (i == 0 || !data[i - 1].is_ascii_digit()))
            .collect();
        if starts.is_empty() {
            let at = self.below(data.len());
            data[at] = !data[at];
            return;
        }
        let start = starts[self.below(starts.len())];
        let end = (start..data.len())
            .find(|&i| !data[i].is_ascii_digit())
            .unwrap_or(data.len());
        let number = EDGE_NUMBERS[self.below(EDGE_NUMBERS.len())];
        data.splice(start..end, number.bytes());
    }
}

fn read_le(data: &[u8], at: usize, width: usize) -> u64 {
    let mut v = 0u64;
    for (i, b) in data[at..].iter().take(width).enumerate() {
        v |= (*b as u64) << (8 * i);
    }
    v
}

fn write_le(data: &mut [u8], at: usize, width: usize, value: u64) {
    for (i, b) in data[at..].iter_mut().take(width).enumerate() {
        *b = (value >> (8 * i)) as u8;
    }
}

/// In an iden3 container (4-byte magic, version, section count, then sections of a
/// u32 type and a u64 size): the section count, each section's size (8 bytes wide)
/// and its body's first four u32 words. Empty when `data` is not one.
fn iden3_fields(data: &[u8]) -> Vec<(usize, bool)> {
    if data.len() < 12 || !data[..4].iter().all(u8::is_ascii_alphanumeric) {
        return Vec::new();
    }
    let mut fields = vec![(4, false), (8, false)];
    let mut pos = 12usize;
    while pos + 12 <= data.len() {
        fields.push((pos, false));
        fields.push((pos + 4, true));
        let body = pos + 12;
        for word in 0..4 {
            if body + 4 * word + 4 <= data.len() {
                fields.push((body + 4 * word, false));
            }
        }
        let size = read_le(data, pos + 4, 8);
        match body.checked_add(size as usize) {
            Some(next) if next <= data.len() => pos = next,
            _ => break,
        }
    }
    fields
}

/// Runs `check` on mutated inputs of `seeds` for `seconds` (at least one input;
/// tests pass [`fuzz_seconds`]) on a worker thread, each within `per_input`; prints
/// and returns the counts. `check` returns
/// `Ok(Verdict)` for a clean refusal or a checked acceptance, `Err` for an accepted
/// input that fails its check.
pub fn fuzz<F>(
    name: &str,
    seed: u64,
    seeds: Vec<Vec<u8>>,
    seconds: f64,
    per_input: Duration,
    check: F,
) -> FuzzReport
where
    F: Fn(&[u8]) -> Result<Verdict, String> + Send + 'static,
{
    let mut mutator = Mutator::new(seed, seeds);
    let (to_worker, inputs) = mpsc::channel::<Vec<u8>>();
    let (to_main, results) = mpsc::channel::<Result<Result<Verdict, String>, String>>();
    std::thread::Builder::new()
        .name(format!("fuzz-{name}"))
        .spawn(move || {
            for input in inputs {
                let outcome = catch_unwind(AssertUnwindSafe(|| check(&input))).map_err(|p| {
                    p.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "a panic without a message".into())
                });
                if to_main.send(outcome).is_err() {
                    return;
                }
            }
        })
        .expect("a fuzz worker thread");
    let budget = Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let mut report = FuzzReport {
        name: name.to_string(),
        seed,
        inputs: 0,
        accepted: 0,
        failures: Vec::new(),
    };
    while started.elapsed() < budget || report.inputs == 0 {
        let input = mutator.input();
        let number = report.inputs;
        report.inputs += 1;
        to_worker
            .send(input.clone())
            .expect("the fuzz worker is waiting");
        let failure = match results.recv_timeout(per_input) {
            Ok(Ok(Ok(Verdict::Rejected))) => None,
            Ok(Ok(Ok(Verdict::Accepted))) => {
                report.accepted += 1;
                None
            }
            Ok(Ok(Err(check))) => Some(format!("accepted, then failed its check: {check}")),
            Ok(Err(panic)) => Some(format!("panicked: {panic}")),
            Err(_) => Some(format!("took longer than {per_input:?}")),
        };
        if let Some(what) = failure {
            let saved = if report.failures.len() < SAVED_FAILURES {
                save(name, seed, number, &input)
            } else {
                "not saved".into()
            };
            report
                .failures
                .push(format!("input {number} of seed {seed} {what} ({saved})"));
            if what.starts_with("took longer") {
                // The worker is stuck on it: nothing more can be run.
                break;
            }
        }
    }
    println!(
        "fuzz {name}: {} inputs ({} accepted) in {:.1} s, seed {seed}, {} failures",
        report.inputs,
        report.accepted,
        started.elapsed().as_secs_f64(),
        report.failures.len()
    );
    report
}

fn save(name: &str, seed: u64, number: u64, input: &[u8]) -> String {
    let path: PathBuf =
        std::env::temp_dir().join(format!("crucible-fuzz-{name}-seed{seed}-input{number}.bin"));
    match std::fs::write(&path, input) {
        Ok(()) => format!("saved to {}", path.display()),
        Err(e) => format!("not saved: {e}"),
    }
}

/// Fails with every failure listed unless the run had none.
pub fn assert_no_failures(report: &FuzzReport) {
    assert!(
        report.failures.is_empty(),
        "fuzz {}: {} failures in {} inputs (seed {}; replay with CRUCIBLE_SEED={}):\n{}",
        report.name,
        report.failures.len(),
        report.inputs,
        report.seed,
        report.seed,
        report.failures.join("\n")
    );
}

/// A fuzz test: [`fuzz`] with the run's seed (`CRUCIBLE_SEED`, else fresh) for
/// [`fuzz_seconds`], then [`assert_no_failures`].
pub fn fuzz_test<F>(name: &str, seeds: Vec<Vec<u8>>, per_input: Duration, check: F)
where
    F: Fn(&[u8]) -> Result<Verdict, String> + Send + 'static,
{
    let report = fuzz(
        name,
        crate::run_seed(),
        seeds,
        fuzz_seconds(),
        per_input,
        check,
    );
    assert_no_failures(&report);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_inputs_and_mutations_change_them() {
        let seeds = vec![b"zkey\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00".to_vec(), b"{\"a\": [1, 22, 333]}".to_vec()];
        let mut x = Mutator::new(42, seeds.clone());
        let mut y = Mutator::new(42, seeds.clone());
        let xs: Vec<Vec<u8>> = (0..500).map(|_| x.input()).collect();
        let ys: Vec<Vec<u8>> = (0..500).map(|_| y.input()).collect();
        assert_eq!(xs, ys);
        let changed = xs.iter().filter(|i| !seeds.contains(i)).count();
        assert!(
            changed > 400,
            "only {changed} of 500 inputs differ from the seeds"
        );
        let mut z = Mutator::new(43, seeds);
        assert_ne!((0..500).map(|_| z.input()).collect::<Vec<_>>(), xs);
    }

    #[test]
    fn panics_and_failed_checks_are_counted_not_fatal() {
        let seeds = vec![vec![0u8; 16]];
        let report = fuzz(
            "selftest",
            7,
            seeds,
            0.3,
            Duration::from_secs(5),
            |b| match b.first() {
                Some(1) => panic!("first byte 1"),
                Some(2) => Err("first byte 2".into()),
                Some(0) => Ok(Verdict::Accepted),
                _ => Ok(Verdict::Rejected),
            },
        );
        assert!(report.inputs > 100 && report.accepted > 0, "{report:?}");
        let with = |what: &str| report.failures.iter().any(|f| f.contains(what));
        assert!(with("panicked: first byte 1"), "{report:?}");
        assert!(with("failed its check: first byte 2"), "{report:?}");
        assert!(
            report.failures.iter().all(|f| f.contains("of seed 7")),
            "{report:?}"
        );
    }
}
