//! Runs the built `crucible` binary as a user would, each test with its own key cache.

use std::cell::Cell;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{RwLock, RwLockReadGuard};
use std::time::{Duration, Instant};

/// Held shared by every run of the binary, and alone by a test that times one: the
/// tests run in parallel, and a timing taken while another test's prover fills the
/// cores measures that test.
static MACHINE: RwLock<()> = RwLock::new(());

thread_local! {
    /// Set while this thread holds [`MACHINE`] alone.
    static ALONE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with no other test's process running.
fn alone<T>(f: impl FnOnce() -> T) -> T {
    let _machine = MACHINE.write().unwrap_or_else(|e| e.into_inner());
    ALONE.with(|a| a.set(true));
    let out = f();
    ALONE.with(|a| a.set(false));
    out
}

/// A share of [`MACHINE`] for one run, unless this thread holds it alone.
fn share_of_machine() -> Option<RwLockReadGuard<'static, ()>> {
    if ALONE.with(Cell::get) {
        None
    } else {
        Some(MACHINE.read().unwrap_or_else(|e| e.into_inner()))
    }
}

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("crucible-cli-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }

    /// A file of the key cache when this directory is `CRUCIBLE_CACHE_DIR` (its
    /// `keys` folder, made here).
    fn key(&self, file: &str) -> PathBuf {
        let keys = self.0.join("keys");
        std::fs::create_dir_all(&keys).unwrap();
        keys.join(file)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn ok(&self) -> bool {
        self.code == Some(0)
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Longest any one run of the binary may take: a hang fails the test instead of CI.
const RUN_LIMIT: Duration = Duration::from_secs(600);

/// Runs `command` to completion, killing it (and failing) if it outlives `limit`.
fn output_within(mut command: Command, limit: Duration) -> Output {
    let _share = share_of_machine();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} hung: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

fn command(args: &[String], cache: &Path, env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_crucible"));
    command
        .args(args)
        .env("CRUCIBLE_CACHE_DIR", cache)
        .env_remove("CRUCIBLE_REQUIRE")
        .env_remove("CRUCIBLE_CPU_DEVICES")
        .envs(env.iter().copied());
    command
}

fn finished(output: Output) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = output;
    Run {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

fn run_argv(args: &[String], cache: &Path, env: &[(&str, &str)]) -> Run {
    finished(output_within(command(args, cache, env), RUN_LIMIT))
}

fn argv(command: &str) -> Vec<String> {
    command.split_whitespace().map(String::from).collect()
}

/// Runs `crucible` with `command` split at whitespace.
fn crucible(command: &str, cache: &Path) -> Run {
    run_argv(&argv(command), cache, &[])
}

/// Asserts a failed run with `error: ...` naming `message` on stderr and no panic.
fn assert_fails_with(run: &Run, message: &str) {
    assert!(!run.ok(), "should fail: {run:?}");
    assert!(run.stderr.contains("error:"), "no `error:` line: {run:?}");
    assert!(
        run.stderr.contains(message),
        "expected `{message}`: {run:?}"
    );
    assert!(!run.stderr.contains("panicked"), "panicked: {run:?}");
}

#[test]
fn backends_lists_cpu() {
    let dir = TempDir::new("backends");
    let run = crucible("backends", &dir.0);
    assert!(run.ok(), "{run:?}");
    let cpu = run.stdout.lines().find(|l| l.starts_with("cpu:0"));
    let cpu = cpu.unwrap_or_else(|| panic!("{run:?}"));
    assert!(cpu.contains("available"), "{cpu}");
    assert!(cpu.contains("GiB"), "memory missing: {cpu}");
}

#[test]
fn the_template_is_listed_and_run_only_when_named() {
    let dir = TempDir::new("template");
    let run = crucible("backends", &dir.0);
    assert!(run.ok(), "{run:?}");
    assert!(
        !run.stdout.lines().any(|l| l.starts_with("template")),
        "{run:?}"
    );
    let named = crucible("backends --backend template", &dir.0);
    assert!(named.ok(), "{named:?}");
    let row = named.stdout.lines().find(|l| l.starts_with("template:0"));
    let row = row.unwrap_or_else(|| panic!("{named:?}"));
    assert!(row.contains("available"), "{row}");
    assert!(!named.stdout.contains("cpu:0"), "{named:?}");
    let auto = crucible("prove --backend auto --constraints 2^4 --no-verify", &dir.0);
    assert!(auto.ok(), "{auto:?}");
    let chose = auto.stdout.lines().find(|l| l.starts_with("auto chose "));
    let chose = chose.unwrap_or_else(|| panic!("{auto:?}"));
    assert!(!chose.starts_with("auto chose template"), "{chose}");
    let all = crucible(
        "conformance --backend all --max-log-size 3 --filter ntt/forward --seed 1",
        &dir.0,
    );
    assert!(all.ok(), "{all:?}");
    assert!(!all.stdout.contains("template"), "{all:?}");
    let bench = crucible("bench --op ntt --sizes 2^4 --repeat 1", &dir.0);
    assert!(bench.ok(), "{bench:?}");
    assert!(!bench.stdout.contains("template"), "{bench:?}");
}

#[test]
fn an_unknown_backend_lists_the_backends() {
    let dir = TempDir::new("unknown-backend");
    let run = crucible("prove --backend gpu --constraints 2^4", &dir.0);
    assert_fails_with(&run, "unknown backend `gpu`: the backends are ");
    assert!(run.stderr.contains("cpu"), "{run:?}");
    assert!(!run.stderr.contains("crucible_backend_gpu"), "{run:?}");
    assert!(!run.stderr.contains("add `use"), "{run:?}");
}

#[test]
fn a_tuning_file_is_checked_before_probing() {
    let dir = TempDir::new("tuning");
    let write = |name: &str, text: &str| {
        let path = dir.path(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let misspelt = write("misspelt.toml", "[cdua]\nmsm_window = 3\n");
    for command in [
        "backends",
        "plan --constraints 2^4",
        "conformance --filter ntt/forward",
    ] {
        let run = crucible(&format!("{command} --tuning {misspelt}"), &dir.0);
        assert_fails_with(&run, "no backend is named `cdua`");
        assert!(run.stderr.contains(&misspelt), "names the file: {run:?}");
    }
    let not_a_table = write("not-a-table.toml", "cuda = 3\n");
    let run = crucible(&format!("backends --tuning {not_a_table}"), &dir.0);
    assert_fails_with(&run, "`cuda` is not a backend table");
    let missing = dir.path("missing.toml").display().to_string();
    let run = crucible(&format!("backends --tuning {missing}"), &dir.0);
    assert_fails_with(&run, &missing);
    // The variable names the file when the flag is absent; the flag wins over it.
    let from_env = run_argv(&argv("backends"), &dir.0, &[("CRUCIBLE_TUNING", &misspelt)]);
    assert_fails_with(&from_env, "no backend is named `cdua`");
    let valid = write("valid.toml", "# defaults everywhere\n[wgpu]\n[cuda]\n");
    let run = run_argv(
        &argv(&format!("backends --tuning {valid}")),
        &dir.0,
        &[("CRUCIBLE_TUNING", &misspelt)],
    );
    assert!(run.ok(), "{run:?}");
    assert!(run.stdout.contains("cpu:0"), "{run:?}");
    let run = crucible(
        &format!("prove --backend cpu --constraints 2^4 --tuning {valid}"),
        &dir.0,
    );
    assert!(run.ok(), "{run:?}");
}

#[test]
fn an_option_a_mode_ignores_is_refused_naming_both() {
    let dir = TempDir::new("ignored-options");
    let files = "--zkey c.zkey --wtns w.wtns";
    for (flag, extra) in [
        ("--witness", "--witness bits=0.5"),
        ("--proofs", "--proofs 4"),
        ("--inputs", "--inputs 2"),
        ("--workers-per-device", "--workers-per-device 2"),
        ("--synthesis-threads", "--synthesis-threads 2"),
        ("--devices", "--devices all"),
    ] {
        let run = crucible(&format!("prove {files} {extra}"), &dir.0);
        assert_fails_with(
            &run,
            &format!("{flag} applies to the built-in circuit, not to --zkey"),
        );
    }
    let run = crucible(&format!("prove {files} --constraints 2^4"), &dir.0);
    assert!(!run.ok(), "{run:?}");
    assert!(
        run.stderr.contains("--zkey") && run.stderr.contains("--constraints"),
        "{run:?}"
    );
    // A command's --help lists only what it takes; anything else is a usage error.
    for command in [
        "bench --op ntt --sizes 2^4 --devices all",
        "conformance --devices 0",
        "backends --workers-per-device 2",
        "backends --devices all",
        "plan --constraints 2^4 --devices all",
    ] {
        let run = crucible(command, &dir.0);
        let flag = command.split_whitespace().rev().nth(1).unwrap();
        assert_eq!(run.code, Some(2), "{command}: {run:?}");
        assert_fails_with(&run, &format!("unexpected argument '{flag}'"));
        let name = command.split_whitespace().next().unwrap();
        let help = crucible(&format!("{name} --help"), &dir.0);
        assert!(help.ok(), "{help:?}");
        assert!(
            !help.stdout.contains(flag),
            "{name} --help lists {flag}: {help:?}"
        );
    }
    // bench's workers need its engine mode.
    let run = crucible("bench --op ntt --sizes 2^4 --workers-per-device 2", &dir.0);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_fails_with(&run, "--proofs");
}

#[test]
fn a_seed_with_circuit_files_warns_that_it_reveals_the_witness() {
    let dir = TempDir::new("seed-warning");
    let run = crucible("prove --zkey c.zkey --wtns w.wtns --json --seed 1", &dir.0);
    assert!(
        run.stderr
            .contains("warning: --seed fixes the proof's randomness r and s"),
        "{run:?}"
    );
    assert!(run.stderr.contains("recover the witness"), "{run:?}");
    let unseeded = crucible("prove --zkey c.zkey --wtns w.wtns --json", &dir.0);
    assert!(!unseeded.stderr.contains("warning:"), "{unseeded:?}");
    let builtin = crucible("prove --backend cpu --constraints 2^4 --seed 1", &dir.0);
    assert!(builtin.ok(), "{builtin:?}");
    assert!(!builtin.stderr.contains("warning:"), "{builtin:?}");
}

#[test]
fn an_unreachable_daemon_or_database_is_named_with_its_address() {
    let dir = TempDir::new("unreachable");
    // Port 1 on the loopback: nothing listens there.
    let run = crucible("client --addr http://127.0.0.1:1 status", &dir.0);
    assert_fails_with(&run, "cannot reach the daemon at http://127.0.0.1:1");
    let run = crucible(
        "queue --queue postgres://someone:hunter2@127.0.0.1:1/jobs status",
        &dir.0,
    );
    assert_fails_with(
        &run,
        "cannot reach the job queue's database at postgres://127.0.0.1:1/jobs",
    );
    // The cause, at once: a refused connection is not retried until a timeout.
    assert!(run.stderr.contains("refused"), "{run:?}");
    assert!(
        !run.stderr.contains("hunter2"),
        "prints the password: {run:?}"
    );
}

#[test]
fn conformance_reports_the_templates_cases_as_unsupported_never_passed() {
    let dir = TempDir::new("template-conformance");
    let command = "conformance --backend template --max-log-size 3 --filter ntt/forward --seed 1";
    let run = crucible(command, &dir.0);
    // Nothing passed: an error, though nothing failed either.
    assert_fails_with(&run, "no case passed");
    let cases: Vec<&str> = run.stdout.lines().filter(|l| l.contains("ntt/")).collect();
    assert_eq!(cases.len(), 4, "{run:?}");
    for case in &cases {
        assert!(case.starts_with("unsupported template:0"), "{case}");
        assert!(case.contains("backend-template/src/"), "says where: {case}");
    }
    let last = run.stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("0 passed, 0 failed, 4 unsupported"),
        "{run:?}"
    );
    // Required, every unsupported case is a failure, and so is its BN254 probe (the
    // template proves no BN254); `--curve bls12-381` leaves BN254 out.
    let required = run_argv(&argv(command), &dir.0, &[("CRUCIBLE_REQUIRE", "template")]);
    assert_eq!(required.code, Some(1), "{required:?}");
    assert!(
        required.stdout.contains("0 passed, 5 failed"),
        "{required:?}"
    );
    assert!(
        required.stdout.contains(
            "FAILED  template bn254/backend: required by CRUCIBLE_REQUIRE but unavailable"
        ),
        "{required:?}"
    );
    let bls_only = format!("{command} --curve bls12-381");
    let required = run_argv(
        &argv(&bls_only),
        &dir.0,
        &[("CRUCIBLE_REQUIRE", "template")],
    );
    assert_eq!(required.code, Some(1), "{required:?}");
    assert!(
        required.stdout.contains("0 passed, 4 failed"),
        "{required:?}"
    );
}

#[test]
fn prove_checks_byte_identical_to_ark_groth16() {
    let dir = TempDir::new("prove");
    let run = crucible("prove --backend cpu --constraints 2^8 --check", &dir.0);
    assert!(run.ok(), "{run:?}");
    let line = "proof 0: byte-identical to ark-groth16 (verified on cpu:0";
    assert!(run.stdout.contains(line), "{run:?}");
    let summary = "1 of 1 proofs byte-identical to ark-groth16";
    assert!(run.stdout.contains(summary), "{run:?}");
    let spinner = "generating proving key for 256 constraints (cached at";
    assert!(run.stderr.contains(spinner), "{run:?}");
    for phase in [
        "synthesize",
        "ntt",
        "msm",
        "verify",
        "stage+compute",
        "total",
    ] {
        let row = run.stdout.lines().any(|l| l.starts_with(phase));
        assert!(row, "no {phase} row: {run:?}");
    }
    // Second run: the key comes from the cache.
    let again = crucible("prove --backend auto --constraints 256 --check", &dir.0);
    assert!(again.ok(), "{again:?}");
    assert!(again.stdout.contains("auto chose cpu:0"), "{again:?}");
    assert!(again.stdout.contains("proving key (cached)"), "{again:?}");
}

#[test]
fn prove_matches_on_domain_boundaries() {
    let dir = TempDir::new("boundaries");
    let k = 5i64;
    for inputs in [0i64, 1, 3] {
        for delta in [-1i64, 0, 1] {
            // constraints + inputs + 1 (the constant) = 2^k + delta
            let constraints = (1 << k) + delta - inputs - 1;
            let command = format!(
                "prove --backend cpu --constraints {constraints} --inputs {inputs} --proofs 2 --check"
            );
            let run = crucible(&command, &dir.0);
            assert!(run.ok(), "{command}: {run:?}");
            let identical = "2 of 2 proofs byte-identical to ark-groth16";
            assert!(run.stdout.contains(identical), "{command}: {run:?}");
            let domain = if delta <= 0 { k } else { k + 1 };
            let domain = format!("domain 2^{domain} ");
            assert!(run.stdout.contains(&domain), "{command}: {run:?}");
        }
    }
}

/// (key bytes, proof bytes) from `crucible plan`'s two `total` lines.
fn plan_totals(stdout: &str) -> (u64, u64) {
    let totals: Vec<u64> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("total"))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    (totals[0], totals[1])
}

#[test]
fn engine_runs_several_workers_within_a_two_proof_budget() {
    let dir = TempDir::new("engine");
    let plan = crucible("plan --backend cpu --constraints 2^6", &dir.0);
    assert!(plan.ok(), "{plan:?}");
    let (key, proof) = plan_totals(&plan.stdout);
    let limit = key + 2 * proof;
    let common =
        format!("--backend cpu --constraints 2^6 --memory-limit {limit} --workers-per-device 4");
    let plan = crucible(&format!("plan {common}"), &dir.0);
    assert!(plan.ok(), "{plan:?}");
    // The schedule is chosen for the workers that fit; the others wait for memory.
    assert!(plan.stdout.contains("peak: key + "), "{plan:?}");
    assert!(plan.stdout.contains("floor: "), "{plan:?}");

    let run = crucible(&format!("prove {common} --proofs 12 --check"), &dir.0);
    assert!(run.ok(), "{run:?}");
    let identical = "12 of 12 proofs byte-identical to ark-groth16";
    assert!(run.stdout.contains(identical), "{run:?}");
    assert!(run.stdout.contains("12 of 12 proofs verified"), "{run:?}");
    assert!(run.stdout.contains("within the limit"), "{run:?}");
    assert!(run.stdout.contains("cpu:0: busy "), "{run:?}");

    let json = crucible(&format!("prove {common} --proofs 4 --json"), &dir.0);
    assert!(json.ok(), "{json:?}");
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["proofs"].as_array().unwrap().len(), 4);
    assert_eq!(v["stats"]["proofs"], 4);
    let budget = &v["stats"]["devices"][0]["budget"];
    assert!(budget["high_water"].as_u64().unwrap() <= limit);
    assert!(v["proofs"][0]["report"]["times"]["msm"].as_f64().is_some());
}

/// The byte count in parentheses on `crucible plan`'s line starting with `head`
/// (`peak: ... (N B) ...`, `floor: ... (N B), ...`).
fn plan_line_bytes(stdout: &str, head: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(head))
        .unwrap_or_else(|| panic!("no `{head}` line:\n{stdout}"));
    let open = line.find('(').expect("bytes in parentheses");
    line[open + 1..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no byte count in `{line}`"))
}

/// Issue 14's CI check at 2^12: proofs under the budget the fastest schedule needs,
/// halfway to the floor, and at the floor are byte-identical to ark-groth16, each with
/// the budget's high-water mark within the limit; the floor streams. On cpu all three;
/// on wgpu (llvmpipe, where each process compiles its shaders for about a minute) the
/// floor, the other schedules being the conformance suite's `schedule/` cases. (A
/// quarter of the resident need, the H200 check at 2^20, is below this small shape's
/// floor, where the chunk buffers dominate.)
#[test]
fn proofs_from_the_resident_need_down_to_the_floor_are_byte_identical() {
    let dir = TempDir::new("schedules");
    for backend in ["cpu", "wgpu"] {
        let shape = format!("--backend {backend} --constraints 2^12");
        let plan = crucible(&format!("plan {shape}"), &dir.0);
        if backend == "wgpu" && !plan.ok() && !crucible_core::registry::is_required("wgpu") {
            println!("skipped wgpu: unavailable here ({})", plan.stderr.trim());
            continue;
        }
        assert!(plan.ok(), "{plan:?}");
        let (need, floor) = (
            plan_line_bytes(&plan.stdout, "peak:"),
            plan_line_bytes(&plan.stdout, "floor:"),
        );
        assert!(floor < need, "{backend}: floor {floor}, need {need}");
        let limits = match backend {
            "cpu" => vec![need, (need + floor) / 2, floor],
            _ => vec![floor],
        };
        for limit in limits {
            let run = crucible(
                &format!("prove {shape} --check --memory-limit {limit} --json"),
                &dir.0,
            );
            let case = format!("{backend} at {limit} B (need {need}, floor {floor})");
            assert!(run.ok(), "{case}: {run:?}");
            let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
            let proof = &v["proofs"][0];
            assert_eq!(proof["check"], "byte-identical", "{case}: {v}");
            let high_water = v["stats"]["devices"][0]["budget"]["high_water"]
                .as_u64()
                .unwrap();
            assert!(high_water <= limit, "{case}: high water {high_water}");
            let schedule = proof["report"]["schedule"].as_str().unwrap();
            if limit == floor {
                assert!(schedule.contains("streamed"), "{case}: {schedule}");
            }
        }
    }
}

#[test]
fn bad_input_is_a_clear_error_never_a_panic() {
    let dir = TempDir::new("bad-input");
    let prove = |extra: &str| crucible(&format!("prove --backend cpu {extra}"), &dir.0);
    let unknown = crucible("prove --backend nosuch --constraints 16", &dir.0);
    assert_fails_with(&unknown, "unknown backend `nosuch`");
    assert_fails_with(&prove("--constraints abc"), "`abc` is not a size");
    assert_fails_with(&prove("--constraints 2^32"), "two-adicity");
    assert_fails_with(
        &prove("--constraints 0"),
        "--constraints must be at least 1",
    );
    let lots = prove("--constraints 16 --memory-limit lots");
    assert_fails_with(&lots, "not a byte size");
    let small = prove("--constraints 2^8 --memory-limit 1KiB");
    assert_fails_with(&small, "is below the floor of");
    let huge = crucible("plan --backend cpu --constraints 2^40", &dir.0);
    assert_fails_with(&huge, "two-adicity");
    // Nothing was generated for any of these (the CPU's measured rates are kept).
    assert_eq!(cached_beyond_rates(&dir.0), 0);
}

#[test]
fn corrupt_or_truncated_key_cache_is_regenerated_and_the_proof_still_checks() {
    let dir = TempDir::new("corrupt");
    let key = dir.key("bench-n100-p1-s0.pk");
    let command = "prove --backend cpu --constraints 100 --check";
    std::fs::write(&key, b"this is not a proving key").unwrap();
    let run = crucible(command, &dir.0);
    assert!(run.ok(), "{run:?}");
    let note = "note: regenerated the cached key";
    assert!(run.stderr.contains(note), "{run:?}");
    assert!(run.stdout.contains("proving key (regenerated)"), "{run:?}");
    let identical = "proof 0: byte-identical to ark-groth16";
    assert!(run.stdout.contains(identical), "{run:?}");

    let good = std::fs::read(&key).unwrap();
    std::fs::write(&key, &good[..good.len() / 2]).unwrap();
    let run = crucible(command, &dir.0);
    assert!(run.ok() && run.stderr.contains(note), "{run:?}");

    let mut flipped = std::fs::read(&key).unwrap();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    std::fs::write(&key, &flipped).unwrap();
    let run = crucible(command, &dir.0);
    assert!(run.ok() && run.stderr.contains(note), "{run:?}");
    assert!(run.stdout.contains(identical), "{run:?}");

    let run = crucible(command, &dir.0);
    assert!(
        run.ok() && run.stdout.contains("proving key (cached)"),
        "{run:?}"
    );
}

#[test]
fn an_unusable_key_cache_is_a_warning_and_the_proof_goes_on() {
    let dir = TempDir::new("unusable-cache");
    // A directory where the key file should be: it can be neither read nor replaced.
    std::fs::create_dir_all(dir.key("bench-n100-p1-s0.pk").join("x")).unwrap();
    let run = crucible("prove --backend cpu --constraints 100 --check", &dir.0);
    assert!(run.ok(), "{run:?}");
    assert!(
        run.stderr.contains("warning: the key cache is unusable"),
        "{run:?}"
    );
    assert!(run.stderr.contains("bench-n100-p1-s0.pk"), "{run:?}");
    assert!(
        run.stdout.contains("byte-identical to ark-groth16"),
        "{run:?}"
    );
    // A cache directory that cannot be created (below a regular file).
    let file = dir.path("a-file");
    std::fs::write(&file, b"").unwrap();
    let run = run_argv(
        &argv("prove --backend cpu --constraints 100 --check"),
        &file.join("cache"),
        &[],
    );
    assert!(run.ok(), "{run:?}");
    assert!(
        run.stderr.contains("warning: the key cache is unusable"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("proving key (generated, not cached)"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("byte-identical to ark-groth16"),
        "{run:?}"
    );
}

#[test]
fn plan_prints_every_item_and_whether_it_fits() {
    let dir = TempDir::new("plan");
    let run = crucible("plan --backend cpu --constraints 2^10", &dir.0);
    assert!(run.ok(), "{run:?}");
    let items = [
        "a_query",
        "b_g1_query",
        "h_query",
        "l_query",
        "b_g2_query",
        "cpu.msm_scalars",
        "total",
    ];
    for item in items {
        assert!(run.stdout.contains(item), "{item} missing: {run:?}");
    }
    assert!(run.stdout.contains("domain: 2^11 = 2048 points"), "{run:?}");
    assert!(run.stdout.contains("schedule: "), "{run:?}");
    assert!(run.stdout.contains("floor: "), "{run:?}");

    let small = crucible(
        "plan --backend cpu --constraints 2^10 --memory-limit 64KiB",
        &dir.0,
    );
    assert_fails_with(&small, "is below the floor of");

    // The domain is the power of two ≥ constraints + inputs + 1: 2^26 here, not 2^27.
    let big = crucible(
        "plan --backend cpu --constraints 67108862 --inputs 1",
        &dir.0,
    );
    assert!(
        big.stdout.contains("domain: 2^26 = 67108864 points"),
        "{big:?}"
    );
}

#[test]
fn bench_runs_on_bn254_and_names_the_curve() {
    let dir = TempDir::new("bench-bn254");
    for op in ["ntt", "msm-g1", "msm-g2", "prove"] {
        let json = dir.path(&format!("{op}.json"));
        let mut args = argv(&format!(
            "bench --backend cpu --curve bn254 --op {op} --sizes 2^4 --repeat 2"
        ));
        args.extend(["--out".into(), json.display().to_string()]);
        let run = run_argv(&args, &dir.0, &[]);
        assert!(run.ok(), "{op}: {run:?}");
        assert!(run.stdout.contains("curve: BN254"), "{op}: {run:?}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["curve"], "BN254", "{op}");
        assert_eq!(v["op"], op);
        let result = &v["results"][0];
        assert_eq!(result["size"], 16, "{op}");
        assert!(
            result["resident"]["median_ms"].as_f64().unwrap() > 0.0,
            "{op}"
        );
    }
    // BLS12-381 stays the default, and says nothing of the curve.
    let bls = crucible(
        "bench --backend cpu --op ntt --sizes 2^4 --repeat 1",
        &dir.0,
    );
    assert!(bls.ok() && !bls.stdout.contains("curve:"), "{bls:?}");
    // BN254's NTTs end at its two-adicity (2^28), checked before any work.
    let too_big = crucible(
        "bench --backend cpu --curve bn254 --op ntt --sizes 2^29",
        &dir.0,
    );
    assert_fails_with(&too_big, "two-adicity");
    let proofs = crucible(
        "bench --backend cpu --curve bn254 --op prove --sizes 2^4 --proofs 2",
        &dir.0,
    );
    assert_eq!(proofs.code, Some(2), "{proofs:?}");
    assert!(proofs.stderr.contains("BLS12-381 only"), "{proofs:?}");
}

#[test]
fn bench_writes_parseable_json_csv_and_svg() {
    let dir = TempDir::new("bench");
    let (json, csv, svg) = (dir.path("r.json"), dir.path("r.csv"), dir.path("r.svg"));
    let mut args = argv("bench --backend cpu --op msm-g1 --sizes 2^4..2^6 --repeat 3");
    for (flag, path) in [("--out", &json), ("--csv", &csv), ("--plot", &svg)] {
        args.extend([flag.to_string(), path.display().to_string()]);
    }
    let run = run_argv(&args, &dir.0, &[]);
    assert!(run.ok(), "{run:?}");
    assert!(run.stdout.contains("vs cpu"), "{run:?}");

    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = v["results"].as_array().unwrap();
    let sizes: Vec<_> = results
        .iter()
        .map(|r| r["size"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [16, 32, 64]);
    let samples = results[0]["resident"]["samples_ms"].as_array().unwrap();
    assert_eq!(samples.len(), 3);
    assert!(results[0]["with_transfers"]["median_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(results[0]["speedup_vs_cpu"]["resident"], 1.0);
    // The CPU backend has no device clock: its resident time is the host's, unmarked.
    assert_eq!(results[0]["resident_clock"], "host");
    assert!(!run.stdout.contains(" (dev)"), "{run:?}");
    assert_eq!(v["op"], "msm-g1");
    assert!(v["machine"]["cores"].as_u64().unwrap() >= 1);
    assert!(!v["git_commit"].as_str().unwrap().is_empty());
    assert_eq!(v["backends"][0]["name"], "cpu");

    let csv = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(lines[0].starts_with("op,backend,device,api,size,resident_median_ms"));
    assert!(lines[1].starts_with("msm-g1,cpu:0,"));

    let svg = std::fs::read_to_string(&svg).unwrap();
    let drawn = svg.contains("<svg") && svg.contains("cpu:0") && svg.contains("<polyline");
    assert!(drawn, "{svg}");

    // A synthetic key times the same proof; its JSON says so.
    let synthetic = dir.path("s.json");
    let command = format!(
        "bench --backend cpu --op prove --sizes 16 --repeat 1 --synthetic-key --out {}",
        synthetic.display()
    );
    let run = crucible(&command, &dir.0);
    assert!(run.ok() && run.stderr.contains("synthetic key"), "{run:?}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&synthetic).unwrap()).unwrap();
    assert_eq!(v["synthetic_key"], true);

    // Every op on the CPU; one on every backend (each GPU backend's process compiles
    // its pipelines first, seconds on a software adapter).
    for (op, backend) in [
        ("ntt", "cpu"),
        ("intt", "cpu"),
        ("coset-ntt", "cpu"),
        ("msm-g2", "cpu"),
        ("prove", "all"),
    ] {
        let command = format!("bench --backend {backend} --op {op} --sizes 16,32 --repeat 1");
        let run = crucible(&command, &dir.0);
        assert!(run.ok(), "{op}: {run:?}");
        let row = run
            .stdout
            .lines()
            .any(|l| l.starts_with("cpu:0") && l.contains(" 32 "));
        assert!(row, "{op}: {run:?}");
    }
}

#[test]
fn bench_rejects_bad_input_before_running() {
    let dir = TempDir::new("bench-bad");
    let bench = |extra: &str| crucible(&format!("bench --backend cpu {extra}"), &dir.0);
    assert_fails_with(&bench("--op fft --sizes 2^4"), "unknown op `fft`");
    assert_fails_with(&bench("--op ntt --sizes 2^10..2^4"), "is empty");
    assert_fails_with(&bench("--op ntt --sizes 2^4..x"), "`x` is not a size");
    assert_fails_with(&bench("--op ntt --sizes 1000"), "powers of two");
    assert_fails_with(&bench("--op ntt --sizes 2^33"), "two-adicity");
    let no_runs = bench("--op ntt --sizes 2^4 --repeat 0");
    assert_fails_with(&no_runs, "--repeat must be between 1 and");
    let synthetic = bench("--op msm-g1 --sizes 2^4 --synthetic-key");
    assert_fails_with(&synthetic, "--synthetic-key applies to --op prove only");
    let empty = run_argv(&argv("bench --op ntt --sizes="), &dir.0, &[]);
    assert_fails_with(&empty, "empty size list");

    let missing = dir.path("no/such/dir/r.json");
    let run = bench(&format!(
        "--op msm-g1 --sizes 2^20 --out {}",
        missing.display()
    ));
    assert_fails_with(&run, "cannot write --out file");
    let to_dir = bench(&format!("--op ntt --sizes 2^4 --plot {}", dir.0.display()));
    assert_fails_with(&to_dir, "is a directory");
    let png = dir.path("y.png");
    let run = bench(&format!("--op ntt --sizes 2^4 --plot {}", png.display()));
    assert_fails_with(&run, "the plot is written as SVG only");
    assert!(!png.exists(), "left {}", png.display());
    let unknown = crucible("bench --backend cpu,nosuch --op ntt --sizes 2^4", &dir.0);
    assert_fails_with(&unknown, "unknown backend `nosuch`");
}

#[test]
fn conformance_runs_and_honors_crucible_require() {
    let dir = TempDir::new("conformance");
    let command = "conformance --backend cpu --max-log-size 4 --filter ntt --seed 7";
    let run = crucible(command, &dir.0);
    assert!(run.ok(), "{run:?}");
    let last = run.stdout.lines().last().unwrap();
    assert!(
        last.contains(" passed, 0 failed, 0 unsupported, 0 skipped (seed 7)"),
        "{run:?}"
    );
    let case = run
        .stdout
        .lines()
        .any(|l| l.starts_with("ok ") && l.contains("ntt"));
    assert!(case, "{run:?}");

    let command = argv("conformance --backend all --filter ntt/forward");
    let required = run_argv(&command, &dir.0, &[("CRUCIBLE_REQUIRE", "nosuch")]);
    assert_eq!(required.code, Some(1), "{required:?}");
    assert!(
        required.stdout.contains("required by CRUCIBLE_REQUIRE"),
        "{required:?}"
    );

    let unknown = crucible("conformance --backend nosuch", &dir.0);
    assert_eq!(unknown.code, Some(1), "{unknown:?}");
    let named = "no registered backend named `nosuch`";
    assert!(unknown.stdout.contains(named), "{unknown:?}");
    let too_big = crucible("conformance --max-log-size 40", &dir.0);
    assert_fails_with(&too_big, "two-adicity");
}

#[test]
fn conformance_writes_json_and_junit_reports() {
    let dir = TempDir::new("conformance-reports");
    let (json, junit) = (dir.path("report.json"), dir.path("report.xml"));
    let mut args = argv("conformance --backend cpu --max-log-size 3 --filter ntt/forward --seed 9");
    args.extend([
        "--out".into(),
        json.display().to_string(),
        "--junit".into(),
        junit.display().to_string(),
    ]);
    let run = run_argv(&args, &dir.0, &[]);
    assert!(run.ok(), "{run:?}");
    let ran = run.stdout.lines().filter(|l| l.starts_with("ok ")).count();
    for what in ["the JSON report", "the JUnit report"] {
        let path = if what.contains("JSON") { &json } else { &junit };
        let said = format!("wrote {what} of {ran} cases to {}", path.display());
        assert!(run.stderr.contains(&said), "expected `{said}`: {run:?}");
    }
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["seed"], 9);
    assert_eq!(report["failed"], 0);
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(cases.len() as u64, report["passed"].as_u64().unwrap());
    assert!(cases
        .iter()
        .all(|c| c["backend"] == "cpu:0" && c["outcome"] == "passed"));
    // The filter matches the forward NTT of both curves: 2^0..2^3 each.
    let mut names: Vec<&str> = cases.iter().map(|c| c["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    let mut wanted: Vec<String> = (0..=3)
        .flat_map(|k| {
            [
                format!("ntt/forward/2^{k}"),
                format!("bn254/ntt/forward/2^{k}"),
            ]
        })
        .collect();
    wanted.sort_unstable();
    assert_eq!(names, wanted, "{report}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let suite = format!(
        "<testsuite name=\"cpu:0\" tests=\"{}\" failures=\"0\" skipped=\"0\"",
        cases.len()
    );
    assert!(xml.contains(&suite), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), cases.len(), "{xml}");
}

#[test]
fn file_flags_need_a_key_file_and_the_built_in_circuit_its_size() {
    let dir = TempDir::new("file-flags");
    let stray = crucible("prove --backend cpu --constraints 8 --wtns w.wtns", &dir.0);
    assert_fails_with(&stray, "--wtns needs a key file");
    let none = crucible("prove --backend cpu", &dir.0);
    assert_fails_with(&none, "give --constraints N for the built-in circuit");
    let missing = crucible(
        "prove --backend cpu --zkey nosuch.zkey --wtns nosuch.wtns --json",
        &dir.0,
    );
    assert_fails_with(&missing, "cannot open nosuch.zkey");
    assert_eq!(missing.code, Some(3), "{missing:?}");
    let verify = crucible(
        "verify --vk nosuch.json --proof p.json --public i.json",
        &dir.0,
    );
    assert_fails_with(&verify, "nosuch.json");
}

#[test]
fn outputs_naming_an_input_or_each_other_are_refused_before_reading() {
    let dir = TempDir::new("output-clash");
    let (zkey, wtns) = (dir.path("k.zkey"), dir.path("w.wtns"));
    std::fs::write(&zkey, b"the key's bytes").unwrap();
    std::fs::write(&wtns, b"the witness's bytes").unwrap();
    let (z, w) = (zkey.display(), wtns.display());
    let over_key = crucible(
        &format!("prove --backend cpu --zkey {z} --wtns {w} --proof {z}"),
        &dir.0,
    );
    assert_fails_with(&over_key, "names the input --zkey");
    let over_witness = crucible(
        &format!("prove --backend cpu --zkey {z} --wtns {w} --json --public {w}"),
        &dir.0,
    );
    assert_fails_with(&over_witness, "names the input --wtns");
    let out = dir.path("out.json");
    let both = crucible(
        &format!(
            "prove --backend cpu --zkey {z} --wtns {w} --proof {o} --public {o}",
            o = out.display()
        ),
        &dir.0,
    );
    assert_fails_with(&both, "--proof and --public name one file");
    // export-vk, setup and the daemon's client refuse the same, with exit status 1;
    // a hard link to the key is the key too.
    let hard = dir.path("hard.zkey");
    std::fs::hard_link(&zkey, &hard).unwrap();
    for (command, message) in [
        (
            format!("export-vk --zkey {z} --out {z}"),
            "names the input --zkey",
        ),
        (
            format!("export-vk --pk {z} --out vk.json --out {z}"),
            "names the input --pk",
        ),
        (
            format!("export-vk --zkey {z} --out {}", hard.display()),
            "names the input --zkey",
        ),
        (
            format!(
                "export-vk --zkey {z} --out {o} --out {o}",
                o = out.display()
            ),
            "--out and --out name one file",
        ),
        (
            format!("setup --r1cs {z} --out {z}"),
            "names the input --r1cs",
        ),
        (
            format!("setup --r1cs {z} --out {o} --vk {o}", o = out.display()),
            "--out and --vk name one file",
        ),
        (
            format!("client --addr http://127.0.0.1:9 prove --id k --wtns {w} --proof {w}"),
            "names the input --wtns",
        ),
    ] {
        assert_exit(&crucible(&command, &dir.0), 3, message);
    }
    // Refused before reading: the inputs are not even valid files, and are untouched.
    assert_eq!(std::fs::read(&zkey).unwrap(), b"the key's bytes");
    assert_eq!(std::fs::read(&wtns).unwrap(), b"the witness's bytes");
    assert!(!out.exists());
}

/// Entries of the cache directory `dir` other than the CPU backend's measured rates.
fn cached_beyond_rates(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.filter(|e| !e.as_ref().is_ok_and(|e| e.file_name() == "cpu-cost"))
            .count()
    })
}

/// Asserts a clean failure with exit status `code` (not a signal; the table in
/// docs/src/getting-started.md), `error:` naming `message`, no panic.
fn assert_exit(run: &Run, code: i32, message: &str) {
    assert_eq!(run.code, Some(code), "{run:?}");
    assert_fails_with(run, message);
}

#[test]
fn huge_counts_are_refused_before_any_work() {
    let dir = TempDir::new("counts");
    for (command, code, message) in [
        (
            "prove --backend cpu --constraints 16 --proofs 2^40",
            2,
            "--proofs must be between 1 and",
        ),
        (
            "prove --backend cpu --constraints 16 --proofs 18446744073709551615",
            2,
            "--proofs must be between 1 and",
        ),
        (
            "prove --backend cpu --constraints 16 --workers-per-device 2^40",
            2,
            "--workers-per-device must be between 1 and",
        ),
        (
            "plan --backend cpu --constraints 16 --workers-per-device 2^40",
            2,
            "--workers-per-device must be between 1 and",
        ),
        (
            "bench --backend cpu --op ntt --sizes 2^4 --repeat 18446744073709551615",
            2,
            "--repeat must be between 1 and",
        ),
        // Out of budget or below the floor: either names the budget, the device's.
        (
            "bench --backend cpu --op prove --sizes 2^31",
            4,
            "budget `cpu:0`",
        ),
    ] {
        let run = crucible(command, &dir.0);
        assert_exit(&run, code, message);
        assert!(
            !run.stderr.contains("generating proving key"),
            "{command}: {run:?}"
        );
    }
    assert_eq!(cached_beyond_rates(&dir.0), 0, "no key was generated");
    // Beyond usize: a usage error (exit 2), as clap reports it.
    let run = crucible("prove --backend cpu --constraints 16 --proofs 2^64", &dir.0);
    assert_eq!(run.code, Some(2), "{run:?}");
}

#[test]
fn sizes_past_what_can_exist_are_clear_errors() {
    let dir = TempDir::new("sizes");
    for size in ["2^57", "2^62", "18446744073709551615"] {
        let run = crucible(
            &format!("bench --backend cpu --op msm-g1 --sizes {size}"),
            &dir.0,
        );
        assert_exit(&run, 2, "at most 2^32 terms");
    }
    let run = crucible("bench --backend cpu --op msm-g2 --sizes 2^32", &dir.0);
    assert_exit(&run, 4, "memory plan needs");
}

#[test]
fn four_provers_on_one_empty_cache_all_succeed() {
    let dir = TempDir::new("concurrent");
    let argv = argv("prove --backend cpu --constraints 2^6 --no-verify");
    let children: Vec<_> = (0..4)
        .map(|_| {
            let command = command(&argv, &dir.0, &[]);
            std::thread::spawn(move || finished(output_within(command, RUN_LIMIT)))
        })
        .collect();
    for child in children {
        let run = child.join().unwrap();
        assert!(run.ok(), "{run:?}");
    }
    assert_eq!(
        cached_beyond_rates(&dir.0),
        1,
        "one key, no temporary file left"
    );
    // Four processes measured the CPU's rates at once: one file, no temporary one.
    let rates: Vec<_> = std::fs::read_dir(dir.0.join("cpu-cost"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(rates.len(), 1, "{rates:?}");
}

#[test]
fn a_key_copied_from_another_seed_is_never_used() {
    let dir = TempDir::new("other-seed");
    let run = crucible("prove --backend cpu --constraints 2^6 --seed 1", &dir.0);
    assert!(run.ok(), "{run:?}");
    std::fs::copy(dir.key("bench-n64-p1-s1.pk"), dir.key("bench-n64-p1-s0.pk")).unwrap();
    let run = crucible(
        "prove --backend cpu --constraints 2^6 --seed 0 --check",
        &dir.0,
    );
    assert!(run.ok(), "{run:?}");
    assert!(run.stdout.contains("proving key (regenerated)"), "{run:?}");
    assert!(run.stderr.contains("seed 1"), "{run:?}");
    assert!(
        run.stdout.contains("byte-identical to ark-groth16"),
        "{run:?}"
    );
}

#[cfg(unix)]
#[test]
fn odd_files_in_place_of_the_cached_key_never_hang() {
    let dir = TempDir::new("odd-cache");
    let key = dir.key("bench-n64-p1-s0.pk");
    let prove = || crucible("prove --backend cpu --constraints 2^6", &dir.0);
    let fifo = Command::new("mkfifo").arg(&key).status();
    if fifo.is_ok_and(|s| s.success()) {
        let run = prove();
        assert!(
            run.ok() && run.stdout.contains("(regenerated)"),
            "FIFO: {run:?}"
        );
        std::fs::remove_file(&key).unwrap();
    }
    std::os::unix::fs::symlink("/dev/zero", &key).unwrap();
    let run = prove();
    assert!(
        run.ok() && run.stdout.contains("(regenerated)"),
        "/dev/zero: {run:?}"
    );
    std::fs::remove_file(&key).unwrap();
    let sparse = std::fs::File::create(&key).unwrap();
    sparse.set_len(3 << 30).unwrap();
    drop(sparse);
    let started = Instant::now();
    let run = prove();
    assert!(
        run.ok() && run.stdout.contains("(regenerated)"),
        "sparse: {run:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "the sparse file was read"
    );
    std::fs::remove_file(&key).unwrap();
    std::fs::create_dir(&key).unwrap();
    let run = prove();
    assert!(
        run.ok() && run.stdout.contains("(generated, not cached)"),
        "directory: {run:?}"
    );
    assert!(
        run.stderr.contains("warning: the key cache is unusable"),
        "{run:?}"
    );
}

#[test]
fn an_empty_cache_dir_variable_is_unset_not_the_working_directory() {
    let dir = TempDir::new("empty-cache-var");
    let (work, xdg) = (dir.path("work"), dir.path("xdg"));
    std::fs::create_dir_all(&work).unwrap();
    let mut command = command(
        &argv("prove --backend cpu --constraints 16"),
        Path::new(""),
        &[("XDG_CACHE_HOME", xdg.to_str().unwrap())],
    );
    command.current_dir(&work);
    let run = finished(output_within(command, RUN_LIMIT));
    assert!(run.ok(), "{run:?}");
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "key in the working directory"
    );
    assert!(
        xdg.join("crucible/keys/bench-n16-p1-s0.pk").is_file(),
        "{run:?}"
    );
}

#[test]
fn settings_say_what_is_wrong_or_what_was_done() {
    let dir = TempDir::new("settings");
    let run = crucible(
        "plan --backend cpu --constraints 16 --memory-limit 1000TiB",
        &dir.0,
    );
    assert!(run.ok(), "{run:?}");
    assert!(run.stderr.contains("is more than cpu:0 offers"), "{run:?}");
    let run = run_argv(
        &argv("prove --backend cpu --constraints 16"),
        &dir.0,
        &[("CRUCIBLE_CPU_DEVICES", "abc")],
    );
    assert_exit(&run, 4, "CRUCIBLE_CPU_DEVICES=`abc` is not a device count");
    let run = crucible("prove --backend auto:0 --constraints 16", &dir.0);
    assert_exit(&run, 2, "takes no index");
    let tuning = dir.0.join("memory.toml");
    std::fs::write(&tuning, "[wgpu]\nmemory = \"8GiB\"\n").expect("tuning file");
    let run = crucible(&format!("backends --tuning {}", tuning.display()), &dir.0);
    assert!(run.ok() && !run.stdout.contains("is not a byte"), "{run:?}");
    // The wgpu table is read once an adapter is found; without one there is nothing
    // for it to size.
    let adapter = run.stdout.lines().any(|l| l.starts_with("wgpu:0"));
    std::fs::write(&tuning, "[wgpu]\nmemory = \"8 apples\"\n").expect("tuning file");
    let run = crucible(&format!("backends --tuning {}", tuning.display()), &dir.0);
    assert!(
        !adapter || run.stdout.contains("is not a byte size"),
        "{run:?}"
    );
    let mut quiet = command(&argv("backends"), &dir.0, &[]);
    quiet.env_remove("XDG_RUNTIME_DIR");
    let run = finished(output_within(quiet, RUN_LIMIT));
    assert!(
        run.ok() && !run.stderr.contains("XDG_RUNTIME_DIR"),
        "{run:?}"
    );
}

#[test]
fn conformance_passes_a_correct_backend_at_the_smallest_sizes() {
    let dir = TempDir::new("conformance-small");
    for log in [0, 1, 2] {
        let run = crucible(
            &format!("conformance --backend cpu --max-log-size {log} --seed 1"),
            &dir.0,
        );
        assert!(
            run.ok() && run.stdout.contains(" 0 failed"),
            "--max-log-size {log}: {run:?}"
        );
    }
}

#[test]
fn the_cpu_predicted_time_is_within_two_times_of_the_measured_proof() {
    let dir = TempDir::new("cpu-predicted-time");
    for log in [12, 13, 14] {
        let run = alone(|| {
            crucible(
                &format!("prove --backend cpu --constraints 2^{log} --proofs 3 --no-verify --json"),
                &dir.0,
            )
        });
        assert!(run.ok(), "{run:?}");
        let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let predicted = v["predicted"]["stage_and_compute_ms"].as_f64().unwrap();
        let measured = v["phases"]["stage+compute"]["median_ms"].as_f64().unwrap();
        let assumes = v["predicted"]["assumes"].as_str().unwrap();
        assert!(
            assumes.contains("cpu:0's cost model, measured on this host"),
            "{assumes}"
        );
        assert!(assumes.contains("host threads"), "{assumes}");
        let ratio = predicted / measured;
        assert!(
            (0.5..=2.0).contains(&ratio),
            "2^{log}: predicted {predicted:.1} ms, measured {measured:.1} ms ({ratio:.2}x)"
        );
    }
    let plan = crucible("plan --backend cpu --constraints 2^12", &dir.0);
    assert!(plan.ok(), "{plan:?}");
    assert!(
        plan.stdout.contains("(assumes cpu:0's cost model"),
        "{plan:?}"
    );
}

/// `prove --zkey` and `export-vk --zkey` report how long reading and checking the
/// key took, in text and in `--json` (`key.load_seconds`).
#[test]
fn key_files_report_their_load_time() {
    let dir = TempDir::new("load-time");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../files/tests/fixtures");
    let zkey = fixtures.join("multi_public.zkey");
    let wtns = fixtures.join("multi_public.wtns");
    let files = format!("--zkey {} --wtns {}", zkey.display(), wtns.display());
    let run = crucible(&format!("prove --backend cpu {files} --json"), &dir.0);
    assert!(run.ok(), "{run:?}");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let seconds = report["key"]["load_seconds"].as_f64();
    assert!(
        seconds.is_some_and(|s| s > 0.0 && s < 60.0),
        "{}",
        run.stdout
    );
    let proof = dir.0.join("proof.json");
    let run = crucible(
        &format!("prove --backend cpu {files} --proof {}", proof.display()),
        &dir.0,
    );
    assert!(run.ok(), "{run:?}");
    assert!(run.stdout.contains("key loaded in "), "{run:?}");
    assert!(run.stdout.contains(" MB/s)"), "{run:?}");
    let vk = dir.0.join("vk.json");
    let run = crucible(
        &format!("export-vk --zkey {} --out {}", zkey.display(), vk.display()),
        &dir.0,
    );
    assert!(run.ok(), "{run:?}");
    assert!(run.stdout.contains("key loaded in "), "{run:?}");
}

/// The fixture circuit's files (circom's `multi_public`, BLS12-381).
fn fixture(ext: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../files/tests/fixtures")
        .join(format!("multi_public.{ext}"))
        .display()
        .to_string()
}

#[test]
fn a_proof_from_files_goes_where_it_is_told_or_nowhere_at_all() {
    let dir = TempDir::new("proof-outputs");
    let files = format!("--zkey {} --wtns {}", fixture("zkey"), fixture("wtns"));
    // No --proof and no --json: refused before anything is read.
    let run = crucible(&format!("prove --backend cpu {files}"), &dir.0);
    assert_exit(&run, 2, "say where it goes with --proof");
    assert!(!run.stdout.contains("key loaded"), "{run:?}");
    // An output that cannot be written fails before the key is read: the key here is
    // not even a key.
    let junk = dir.path("junk.zkey");
    std::fs::write(&junk, b"not a key").unwrap();
    for bad in [dir.path("no/such/folder/proof.json"), dir.0.clone()] {
        let run = crucible(
            &format!(
                "prove --backend cpu --zkey {} --wtns {} --proof {}",
                junk.display(),
                fixture("wtns"),
                bad.display()
            ),
            &dir.0,
        );
        assert_exit(&run, 3, "cannot write --proof file");
        assert!(
            !run.stderr.contains("junk.zkey"),
            "read the key first: {run:?}"
        );
    }
    // --json prints the proof in snarkjs' form and as hex.
    let run = crucible(&format!("prove --backend cpu {files} --json"), &dir.0);
    assert!(run.ok(), "{run:?}");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        report["proof_json"]["protocol"], "groth16",
        "{}",
        run.stdout
    );
    assert_eq!(report["proof_json"]["curve"], "bls12381", "{}", run.stdout);
    assert!(report["proof"].as_str().is_some_and(|h| h.len() > 100));
    assert!(report["public_signals"]
        .as_array()
        .is_some_and(|p| !p.is_empty()));
}

#[test]
fn one_exit_status_for_each_kind_of_failure() {
    let dir = TempDir::new("exit-statuses");
    let (proof, public, vk) = (
        dir.path("proof.json"),
        dir.path("public.json"),
        dir.path("vk.json"),
    );
    let (proof, public, vk) = (proof.display(), public.display(), vk.display());
    let files = format!("--zkey {} --wtns {}", fixture("zkey"), fixture("wtns"));
    let made = crucible(
        &format!("prove --backend cpu {files} --proof {proof} --public {public}"),
        &dir.0,
    );
    assert_eq!(made.code, Some(0), "{made:?}");
    let export = crucible(
        &format!("export-vk --zkey {} --out {vk}", fixture("zkey")),
        &dir.0,
    );
    assert_eq!(export.code, Some(0), "{export:?}");
    let verify = format!("verify --vk {vk} --proof {proof} --public {public}");
    assert_eq!(crucible(&verify, &dir.0).code, Some(0));
    // 1: the proof does not verify (another public signal).
    let signals: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(dir.path("public.json")).unwrap()).unwrap();
    let mut other = signals.clone();
    other[0] = if signals[0] == "1" {
        "2".into()
    } else {
        "1".into()
    };
    std::fs::write(
        dir.path("public.json"),
        serde_json::to_string(&other).unwrap(),
    )
    .unwrap();
    let invalid = crucible(&verify, &dir.0);
    assert_eq!(invalid.code, Some(1), "{invalid:?}");
    assert!(invalid.stdout.contains("INVALID"), "{invalid:?}");
    // 2: usage, clap's and crucible's own.
    assert_exit(
        &crucible("prove --no-such-option", &dir.0),
        2,
        "unexpected argument",
    );
    assert_exit(
        &crucible("prove --backend cpu --constraints 0", &dir.0),
        2,
        "--constraints must be at least 1",
    );
    assert_exit(
        &crucible("ptau --power 40 --out p.ptau", &dir.0),
        2,
        "--power",
    );
    // 3: a file missing or not what it should be.
    let missing = format!(
        "verify --vk {vk} --proof {} --public {public}",
        dir.path("none.json").display()
    );
    assert_exit(&crucible(&missing, &dir.0), 3, "none.json");
    // 4: the backend.
    let unavailable = run_argv(
        &argv("prove --backend cpu --constraints 16"),
        &dir.0,
        &[("CRUCIBLE_CPU_DEVICES", "abc")],
    );
    assert_exit(&unavailable, 4, "is not a device count");
    // 5: a daemon that is not there, its cause said once.
    let remote = crucible("client --addr http://127.0.0.1:1 status", &dir.0);
    assert_exit(&remote, 5, "cannot reach the daemon");
    assert!(
        remote.stderr.matches("tcp connect error").count() <= 1,
        "{remote:?}"
    );
}

#[test]
fn an_arkworks_key_is_checked_once_then_remembered() {
    let dir = TempDir::new("arkworks-key");
    let (key, key_vk) = (dir.path("key.bin"), dir.path("key_vk.json"));
    let setup = crucible(
        &format!(
            "setup --r1cs {} --out {} --vk {} --seed 3",
            fixture("r1cs"),
            key.display(),
            key_vk.display()
        ),
        &dir.0,
    );
    assert!(setup.ok(), "{setup:?}");
    let remembered = || {
        std::fs::read_dir(dir.0.join("validated"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    let (proof, public) = (dir.path("proof.bin"), dir.path("public.bin"));
    let prove = format!(
        "prove --backend cpu --pk {} --r1cs {} --wtns {} --proof {} --public {}",
        key.display(),
        fixture("r1cs"),
        fixture("wtns"),
        proof.display(),
        public.display()
    );
    assert_eq!(remembered(), 0);
    for _ in 0..2 {
        let run = crucible(&prove, &dir.0);
        assert!(run.ok(), "{run:?}");
        assert_eq!(remembered(), 1, "one key, remembered once: {run:?}");
    }
    assert_verifies(&dir, &key_vk, &proof, &public);
}

/// `crucible verify` accepts `proof` with `public` under `vk`.
fn assert_verifies(dir: &TempDir, vk: &Path, proof: &Path, public: &Path) {
    let verify = crucible(
        &format!(
            "verify --vk {} --proof {} --public {}",
            vk.display(),
            proof.display(),
            public.display()
        ),
        &dir.0,
    );
    assert!(
        verify.ok() && verify.stdout.contains("valid:"),
        "{verify:?}"
    );
}

#[test]
fn setup_makes_the_key_on_the_curve_its_r1cs_names_and_prove_pk_proves_on_it() {
    let dir = TempDir::new("setup-bn254");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../files/tests/fixtures/bn254");
    let at = |name: &str| fixtures.join(name).display().to_string();
    let (key, vk_json, vk_bin) = (dir.path("key.bin"), dir.path("vk.json"), dir.path("vk.bin"));
    let setup = crucible(
        &format!(
            "setup --r1cs {} --out {} --vk {} --seed 5",
            at("multi_public.r1cs"),
            key.display(),
            vk_json.display()
        ),
        &dir.0,
    );
    assert!(
        setup.ok() && setup.stdout.contains("circuit on BN254"),
        "{setup:?}"
    );
    let (proof, public) = (dir.path("proof.json"), dir.path("public.json"));
    let prove = |wtns: &str| {
        crucible(
            &format!(
                "prove --backend cpu --pk {} --r1cs {} --wtns {wtns} --proof {} --public {} --check",
                key.display(),
                at("multi_public.r1cs"),
                proof.display(),
                public.display()
            ),
            &dir.0,
        )
    };
    let proved = prove(&at("multi_public.wtns"));
    assert!(proved.ok(), "{proved:?}");
    // The key file does not name its curve: export-vk tells it by its points.
    let export = crucible(
        &format!(
            "export-vk --pk {} --out {}",
            key.display(),
            vk_bin.display()
        ),
        &dir.0,
    );
    assert!(export.ok(), "{export:?}");
    for vk in [&vk_json, &vk_bin] {
        assert_verifies(&dir, vk, &proof, &public);
    }
    // A BLS12-381 witness against the BN254 circuit is refused naming both curves.
    let wrong = prove(&fixture("wtns"));
    assert_fails_with(&wrong, "BLS12-381");
    assert!(wrong.stderr.contains("BN254"), "{wrong:?}");
}

#[test]
fn verify_takes_the_curve_from_the_key_and_refuses_the_other_curves_proof() {
    let dir = TempDir::new("verify-curves");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../files/tests/fixtures");
    let at = |dir: &str, name: &str| fixtures.join(dir).join(name).display().to_string();
    let (vk, proof, public) = (
        at("bn254", "multi_public.vk.json"),
        at("bn254", "multi_public.snarkjs-proof.json"),
        at("bn254", "multi_public.snarkjs-public.json"),
    );
    let verify = |vk: &str, proof: &str, public: &str| {
        crucible(
            &format!("verify --vk {vk} --proof {proof} --public {public}"),
            &dir.0,
        )
    };
    let valid = verify(&vk, &proof, &public);
    assert!(valid.ok() && valid.stdout.contains("valid:"), "{valid:?}");

    // export-vk of the BN254 `.zkey` writes what snarkjs exported, and its binary form
    // verifies the same proof.
    let (json_vk, bin_vk) = (dir.path("vk.json"), dir.path("vk.bin"));
    let export = crucible(
        &format!(
            "export-vk --zkey {} --out {} --out {}",
            at("bn254", "multi_public.zkey"),
            json_vk.display(),
            bin_vk.display()
        ),
        &dir.0,
    );
    assert!(export.ok(), "{export:?}");
    assert!(
        export.stdout.contains("wrote the BN254 verifying key"),
        "{export:?}"
    );
    let read = |p: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    };
    assert_eq!(read(&json_vk.display().to_string()), read(&vk));
    let binary = verify(&bin_vk.display().to_string(), &proof, &public);
    assert!(
        binary.ok() && binary.stdout.contains("valid:"),
        "{binary:?}"
    );

    // The same proof for other public signals does not verify (exit 1).
    let mut signals: Vec<String> =
        serde_json::from_slice(&std::fs::read(&public).unwrap()).unwrap();
    signals[0] = "12345".into();
    let other = dir.path("other-public.json");
    std::fs::write(&other, serde_json::to_vec(&signals).unwrap()).unwrap();
    let invalid = verify(&vk, &proof, &other.display().to_string());
    assert_eq!(invalid.code, Some(1), "{invalid:?}");
    assert!(invalid.stdout.contains("INVALID"), "{invalid:?}");

    // A BN254 proof under a BLS12-381 key is refused naming both curves (exit 3).
    let bls_vk = at("", "multi_public.vk.json");
    let mixed = verify(&bls_vk, &proof, &public);
    assert_eq!(mixed.code, Some(3), "{mixed:?}");
    assert!(
        mixed.stderr.contains("BN254") && mixed.stderr.contains("BLS12-381"),
        "{mixed:?}"
    );
}

#[test]
fn ptau_writes_development_powers_of_tau_and_says_they_are_insecure() {
    let dir = TempDir::new("ptau");
    let out = dir.path("pot3.ptau");
    let run = crucible(
        &format!("ptau --power 3 --out {} --seed 1", out.display()),
        &dir.0,
    );
    assert!(run.ok(), "{run:?}");
    assert!(run.stderr.contains("INSECURE"), "{run:?}");
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..4], b"ptau", "snarkjs' container");
    // The same seed, the same file.
    let again = dir.path("again.ptau");
    let run = crucible(
        &format!("ptau --power 3 --out {} --seed 1", again.display()),
        &dir.0,
    );
    assert!(run.ok(), "{run:?}");
    assert_eq!(std::fs::read(&again).unwrap(), bytes);
}

#[test]
fn counts_are_plural_only_when_more_than_one_and_the_curve_is_short() {
    let dir = TempDir::new("wording");
    let run = crucible("prove --backend cpu --constraints 2^4", &dir.0);
    assert!(run.ok(), "{run:?}");
    assert!(run.stdout.contains("(1 worker per device)"), "{run:?}");
    assert!(!run.stdout.contains("1 workers"), "{run:?}");
    let curve_rows = |stdout: &str| {
        stdout
            .lines()
            .skip_while(|l| !l.starts_with("memory–time curve"))
            .skip(1)
            .filter(|l| l.ends_with("<- chosen") || l.contains("/s  "))
            .count()
    };
    let plan = crucible("plan --backend cpu --constraints 2^24", &dir.0);
    assert!(plan.ok(), "{plan:?}");
    let full = crucible("plan --backend cpu --constraints 2^24 --full-curve", &dir.0);
    assert!(full.ok(), "{full:?}");
    let (shown, all) = (curve_rows(&plan.stdout), curve_rows(&full.stdout));
    assert!((1..=12).contains(&shown), "{shown} rows: {plan:?}");
    assert!(all >= shown, "{full:?}");
    if all > shown {
        assert!(
            plan.stdout.contains("--full-curve prints every one"),
            "{plan:?}"
        );
    }
    assert!(plan.stdout.contains("<- chosen"), "{plan:?}");
}

/// A circom `.r1cs` of `constraints` rows `w2 · w2 = w3` over 4 wires (the constant,
/// one public output, one private input, one intermediate), as circom writes it.
fn r1cs_file(constraints: u32) -> Vec<u8> {
    // BLS12-381's scalar field modulus, little-endian.
    let prime: Vec<u8> = (0..32)
        .rev()
        .map(|i| {
            let hex = "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001";
            u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()
        })
        .collect();
    let mut header = 32u32.to_le_bytes().to_vec();
    header.extend_from_slice(&prime);
    for count in [4u32, 1, 0, 1] {
        header.extend_from_slice(&count.to_le_bytes()); // wires, outputs, public, private
    }
    header.extend_from_slice(&4u64.to_le_bytes()); // labels
    header.extend_from_slice(&constraints.to_le_bytes());
    let mut one = [0u8; 32];
    one[0] = 1;
    let mut rows = Vec::new();
    for _ in 0..constraints {
        for wire in [2u32, 2, 3] {
            rows.extend_from_slice(&1u32.to_le_bytes());
            rows.extend_from_slice(&wire.to_le_bytes());
            rows.extend_from_slice(&one);
        }
    }
    let mut file = b"r1cs".to_vec();
    file.extend_from_slice(&1u32.to_le_bytes());
    file.extend_from_slice(&2u32.to_le_bytes());
    for (kind, section) in [(1u32, header), (2, rows)] {
        file.extend_from_slice(&kind.to_le_bytes());
        file.extend_from_slice(&(section.len() as u64).to_le_bytes());
        file.extend_from_slice(&section);
    }
    file
}

/// Ctrl-C (a real SIGINT) while `setup` works: the process exits 130 and leaves
/// neither the key nor its hidden temporary file. The temporary file exists from the
/// start (a path that cannot be written fails before the setup), so the signal is
/// sent while it is there.
#[test]
fn an_interrupted_setup_leaves_no_temporary_file() {
    let dir = TempDir::new("setup-interrupt");
    let r1cs = dir.path("chain.r1cs");
    std::fs::write(&r1cs, r1cs_file(1 << 14)).unwrap();
    let out = dir.path("key.bin");
    let mut child = command(
        &argv(&format!(
            "setup --r1cs {} --out {}",
            r1cs.display(),
            out.display()
        )),
        &dir.0,
        &[],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start setup");
    let temp = dir.path(&format!(".key.bin.{}.tmp", child.id()));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !temp.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "setup ended before its temporary file was seen"
        );
        assert!(
            Instant::now() < deadline,
            "no {} after 60 s",
            temp.display()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("setup still running 60 s after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted: removed the unfinished"),
        "{stderr}"
    );
    assert!(!temp.exists() && !out.exists());
    let left: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("chain.r1cs")]);
}
