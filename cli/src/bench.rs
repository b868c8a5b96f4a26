//! `crucible bench`: one operation timed the same way on every backend, across sizes;
//! a table with each backend's speed-up over the CPU backend, JSON, CSV and an SVG plot.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use crucible_benches::{
    measure, op_plans, total_bytes, HostMemory, Measurement, Op, Task, Workload, PROVE_INPUTS,
};
use crucible_core::curve::Curve;
use crucible_core::engine::MAX_WORKERS_PER_DEVICE;
use crucible_core::fixtures::key_cache::{generate_key_id, BenchKeyId};
use crucible_core::fixtures::synthetic_key::synthetic_key;
use crucible_core::groth16::ProvingKey;
use crucible_core::registry::{probe_listed, Probe, ProbeOptions, RegisteredCurve};
use crucible_core::{BackendInfo, Bls12_381, Bn254, ProverBackend, ScalarMix};
use crucible_files::output::check_outputs;
use serde_json::json;

use crate::bench_throughput::{
    measure_throughput, throughput_table, ThroughputRow, ThroughputSpec,
};
use crate::devices::{select_backend, BackendArgs};
use crate::error::CliError;
use crate::memory_watch::MemoryWatch;
use crate::output::{check_writable, load_key_id, progress_bar, table};
use crate::parse::{self, SizeList};
use crate::plot::{write_svg, Series};
use crate::proof_run::BuiltIn;
use crate::prove::MAX_PROOFS;

/// Arguments of `crucible bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// Backend, budget cap and tuning file; `--backend` also takes a comma list such
    /// as `cpu,cuda,wgpu` (each must be available). The `prove` operation runs the
    /// fastest schedule that fits `--memory-limit` (streamed bases, sequenced domain
    /// vectors).
    #[command(flatten)]
    device: BackendArgs,
    /// With `--proofs`: workers per device, each holding at most one proof at a time
    /// (default 1).
    #[arg(long, requires = "proofs", value_parser = parse::size)]
    workers_per_device: Option<usize>,
    /// The curve: `bls12-381` or `bn254` (its scalar field for the NTTs, its groups
    /// for the MSMs, its keys for `prove`; `--proofs` is BLS12-381's only for now).
    #[arg(long, default_value = "bls12-381")]
    curve: Curve,
    /// Operation: ntt, intt, coset-ntt, msm-g1, msm-g2 or prove (size = constraints).
    #[arg(long, value_parser = |s: &str| s.parse::<Op>())]
    op: Op,
    /// Sizes: a doubling range `2^10..2^20` (inclusive) or a list `1024,4096`.
    #[arg(long, value_parser = parse::size_list)]
    sizes: SizeList,
    /// Timed runs per backend and size (after one warm-up run), at most 1000000
    /// (default 10). Not with `--proofs`, whose K proofs are the run.
    #[arg(long)]
    repeat: Option<usize>,
    /// `prove` only: K proofs through the engine with `--workers-per-device` workers
    /// (default 1) instead of one proof's latency: proofs per second, the predicted
    /// proofs per second, device busy, each phase's median and the host's peak
    /// resident memory. The fastest schedule for that many workers within
    /// `--memory-limit` runs; the devices evaluate A·z, B·z, C·z where they can.
    #[arg(long, value_parser = parse::size)]
    proofs: Option<usize>,
    /// Seed of the random inputs (and of the proving keys for `prove`).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// `prove` only: time proofs with a key of the benchmark circuit's shape and
    /// pseudo-random points, built in seconds, instead of a real (cached) setup, which
    /// takes minutes from about 2^22 constraints. The device work is the same; the
    /// proofs do not verify.
    #[arg(long)]
    synthetic_key: bool,
    /// MSM scalars: `full` (uniform 255-bit), or `bits=<share>`: that share of them 0
    /// or 1, as in bit-decomposition-heavy witnesses; for `prove`, the circuit's
    /// witness (that share of its constraints check a bit; its own key). Not for NTTs.
    #[arg(long, default_value = "full")]
    scalars: ScalarMix,
    /// Transforms' "+transfers" column: the host vectors in `pageable` memory (copied
    /// through the backend's staging buffers) or `pinned` by the backend for its copies
    /// before the clock starts (`ProverBackend::pin_scalars`; sppark's pinned mode).
    #[arg(long, default_value = "pageable")]
    host_memory: HostMemory,
    /// Write the results as JSON here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the results as CSV here.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Draw an SVG plot (time against size, log-log, one line per backend) here; the
    /// file name must end in `.svg`.
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// One backend at one size.
struct Row {
    info: BackendInfo,
    size: usize,
    measurement: Measurement,
}

/// The machine the numbers were measured on.
struct Machine {
    hostname: String,
    cpu_model: String,
    cores: usize,
}

impl Machine {
    fn here() -> Machine {
        let read = |path: &str| {
            std::fs::read_to_string(path)
                .ok()
                .map(|s| s.trim().to_string())
        };
        let hostname = read("/proc/sys/kernel/hostname")
            .or_else(|| read("/etc/hostname"))
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unknown".into());
        let cpu_model = read("/proc/cpuinfo")
            .and_then(|info| {
                info.lines()
                    .filter_map(|l| l.split_once(':'))
                    .find(|(k, _)| k.trim() == "model name")
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Machine {
            hostname,
            cpu_model,
            cores,
        }
    }
}

/// Most timed runs per backend and size.
const MAX_REPEAT: usize = 1_000_000;

const GIT_COMMIT: &str = env!("CRUCIBLE_GIT_COMMIT");
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn write_file(path: &Path, contents: &str) -> Result<(), CliError> {
    std::fs::write(path, contents)
        .map_err(|e| CliError::file(format!("cannot write {}: {e}", path.display())))
}

/// The backends to run on curve `E`, and the (name, reason) of those skipped.
type Backends<E> = (Vec<Arc<dyn ProverBackend<E>>>, Vec<(String, String)>);

fn backends<E: RegisteredCurve>(
    spec: &str,
    options: &ProbeOptions,
) -> Result<Backends<E>, CliError> {
    let mut chosen: Vec<Arc<dyn ProverBackend<E>>> = Vec::new();
    let mut skipped = Vec::new();
    if spec == "all" {
        for probed in probe_listed::<E>(options) {
            for probe in probed.probes {
                match probe {
                    Probe::Available(b) => chosen.push(b),
                    Probe::Unavailable { reason } => {
                        skipped.push((probed.registration.name.to_string(), reason))
                    }
                }
            }
        }
    } else {
        for name in spec.split(',').map(str::trim) {
            if name.is_empty() {
                return Err(CliError::usage(format!(
                    "empty backend name in `--backend {spec}`"
                )));
            }
            let backend = select_backend::<E>(name, options)?.backend;
            if !chosen
                .iter()
                .any(|b| b.info().label() == backend.info().label())
            {
                chosen.push(backend);
            }
        }
    }
    if chosen.is_empty() {
        return Err(CliError::device("no backend is available to benchmark"));
    }
    Ok((chosen, skipped))
}

/// Runs the benchmark; every input is checked before the first timed run.
pub fn run(args: &BenchArgs) -> Result<ExitCode, CliError> {
    let sizes = &args.sizes.0;
    let repeat = args.repeat.unwrap_or(10);
    if !(1..=MAX_REPEAT).contains(&repeat) {
        return Err(CliError::usage(format!(
            "--repeat must be between 1 and {MAX_REPEAT}, got {repeat}"
        )));
    }
    if let Some(proofs) = args.proofs {
        if args.op != Op::Prove {
            return Err(CliError::usage("--proofs applies to --op prove only"));
        }
        if !(1..=MAX_PROOFS).contains(&proofs) {
            return Err(CliError::usage(format!(
                "--proofs must be between 1 and {MAX_PROOFS} (2^20), got {proofs}"
            )));
        }
        for (given, flag) in [
            (args.repeat.is_some(), "--repeat"),
            (args.csv.is_some(), "--csv"),
            (args.plot.is_some(), "--plot"),
            (args.host_memory != HostMemory::Pageable, "--host-memory"),
        ] {
            if given {
                return Err(CliError::usage(format!(
                    "{flag} does not apply with --proofs (K proofs through the engine: JSON and the table only)"
                )));
            }
        }
    }
    if args.synthetic_key && args.op != Op::Prove {
        return Err(CliError::usage(
            "--synthetic-key applies to --op prove only",
        ));
    }
    let workers = args.workers_per_device.unwrap_or(1);
    if !(1..=MAX_WORKERS_PER_DEVICE).contains(&workers) {
        return Err(CliError::usage(format!(
            "--workers-per-device must be between 1 and {MAX_WORKERS_PER_DEVICE}, got {workers}"
        )));
    }
    for &size in sizes {
        args.op
            .check_size(size)
            .map_err(|e| CliError::usage(format!("--sizes: {e}")))?;
    }
    check_outputs(
        &[("--tuning", args.device.tuning.as_deref())],
        &[
            ("--out", args.out.as_deref()),
            ("--csv", args.csv.as_deref()),
            ("--plot", args.plot.as_deref()),
        ],
    )?;
    for (path, flag) in [
        (&args.out, "--out"),
        (&args.csv, "--csv"),
        (&args.plot, "--plot"),
    ] {
        if let Some(path) = path {
            check_writable(path, flag)?;
        }
    }
    if let Some(plot) = &args.plot {
        if !plot
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("svg"))
        {
            return Err(CliError::usage(format!(
                "--plot {}: the plot is written as SVG only; give a file name ending in .svg",
                plot.display()
            )));
        }
    }
    if args.proofs.is_some() && args.curve != Curve::Bls12_381 {
        return Err(CliError::usage(format!(
            "--proofs runs on BLS12-381 only for now (the {} throughput run is not built yet); without --proofs, --op prove times one {} proof",
            args.curve.name(),
            args.curve.name()
        )));
    }
    let options = args.device.probe_options()?;
    if let Some(proofs) = args.proofs {
        let (backends, skipped) = backends::<Bls12_381>(args.device.backend_or("all"), &options)?;
        for (name, reason) in &skipped {
            eprintln!("skipped {name}: {reason}");
        }
        return run_throughput(args, &backends, &skipped, &options, proofs, workers);
    }
    match args.curve {
        Curve::Bls12_381 => run_on::<Bls12_381>(args, &options, repeat),
        Curve::Bn254 => run_on::<Bn254>(args, &options, repeat),
    }
}

/// A curve `bench` runs on: where its real benchmark keys come from.
trait BenchCurve: RegisteredCurve {
    /// The real key of `id`.
    fn bench_key(id: &BenchKeyId) -> Result<ProvingKey<Self>, CliError>;
}

/// From the key cache (made once by ark-groth16's setup).
impl BenchCurve for Bls12_381 {
    fn bench_key(id: &BenchKeyId) -> Result<ProvingKey<Self>, CliError> {
        Ok(load_key_id(id)?.key)
    }
}

/// Made by ark-groth16's setup on every run: the key cache holds BLS12-381 keys.
impl BenchCurve for Bn254 {
    fn bench_key(id: &BenchKeyId) -> Result<ProvingKey<Self>, CliError> {
        eprintln!(
            "generating a BN254 key for {} constraints (ark-groth16's setup; BN254 keys are not cached: --synthetic-key builds one in seconds)",
            id.constraints
        );
        Ok(generate_key_id::<Bn254>(id)?)
    }
}

/// [`run`] on curve `E`, the arguments checked.
fn run_on<E: BenchCurve>(
    args: &BenchArgs,
    options: &ProbeOptions,
    repeat: usize,
) -> Result<ExitCode, CliError> {
    let sizes = &args.sizes.0;
    let (backends, skipped) = backends::<E>(args.device.backend_or("all"), options)?;
    for (name, reason) in &skipped {
        eprintln!("skipped {name}: {reason}");
    }
    // Every budget is checked before any work (a proof's key can take minutes to make).
    for backend in &backends {
        for &size in sizes {
            let label = backend.info().label();
            let context = format!("{} at size {size} on {label}", args.op);
            let at = |e: crucible_core::Error| CliError::core_in(&context, e);
            let plans = op_plans(&**backend, args.op, size).map_err(at)?;
            backend
                .budget()
                .check_fits(total_bytes(&plans).map_err(at)?)
                .map_err(at)?;
        }
    }
    let tasks: Vec<(usize, Task<E>)> = sizes
        .iter()
        .map(|&size| {
            let task = Task::new(args.op, size, |n| prove_key::<E>(args, n))?
                .with_scalar_mix(args.scalars)?
                .with_host_memory(args.host_memory)?;
            Ok((size, task))
        })
        .collect::<Result<_, CliError>>()?;
    let runs = (backends.len() * tasks.len()) as u64 * (repeat as u64 + 1);
    let bar = progress_bar(runs, "benchmarking");
    let mut rows = Vec::new();
    for backend in &backends {
        let label = backend.info().label();
        for (size, task) in &tasks {
            bar.set_message(format!("{} {label} {size}", args.op));
            let seed = args.seed ^ (*size as u64);
            let mut workload = Workload::prepare(&**backend, task.clone(), seed).map_err(|e| {
                CliError::core_in(&format!("{} at size {size} on {label}", args.op), e)
            })?;
            let watch = MemoryWatch::start(Arc::clone(backend));
            let measured = measure(&mut workload, repeat, &mut || bar.inc(1));
            if let Some(sampled) = watch.and_then(MemoryWatch::finish) {
                bar.println(format!(
                    "{label} {} {size}: {}",
                    args.op,
                    sampled.describe(backend.budget().capacity())
                ));
            }
            let released = workload.release();
            let measurement = measured.map_err(|e| {
                CliError::core_in(&format!("{} at size {size} on {label}", args.op), e)
            })?;
            released?;
            rows.push(Row {
                info: backend.info().clone(),
                size: *size,
                measurement,
            });
        }
    }
    bar.finish_and_clear();
    rows.sort_by_key(|r| r.size);

    if args.curve != Curve::Bls12_381 {
        println!("curve: {}", args.curve.name());
    }
    if args.host_memory != HostMemory::Pageable {
        println!(
            "host memory: {} (the +transfers column's vectors)",
            args.host_memory
        );
    }
    if args.scalars != ScalarMix::FULL {
        println!(
            "scalars: {} (that share of them 0 or 1, the rest full width; prove: of the witness)",
            args.scalars
        );
    }
    println!("{}", text_table(args.op, &rows));
    if !rows.iter().any(|r| r.info.name == "cpu") {
        println!("(add cpu to --backend for the speed-up columns)");
    }
    let machine = Machine::here();
    let infos: Vec<&BackendInfo> = backends.iter().map(|b| b.info()).collect();
    if let Some(path) = &args.out {
        let text =
            serde_json::to_string_pretty(&json_report(args, &machine, &infos, &skipped, &rows))
                .map_err(|e| CliError::file(format!("cannot write JSON: {e}")))?;
        write_file(path, &(text + "\n"))?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = &args.csv {
        write_file(path, &csv_report(args, &machine, &rows))?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = &args.plot {
        let title = format!(
            "{} on {} ({} cores), median of {}",
            args.op, machine.cpu_model, machine.cores, repeat
        );
        write_svg(
            path,
            &title,
            &format!("size ({})", args.op.size_unit()),
            &plot_series(&infos, &rows),
        )?;
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The proving key of the built-in circuit at `constraints` on curve `E`: synthetic,
/// or the real one ([`BenchCurve::bench_key`]).
fn prove_key<E: BenchCurve>(
    args: &BenchArgs,
    constraints: usize,
) -> Result<Arc<ProvingKey<E>>, CliError> {
    if args.synthetic_key {
        eprintln!(
            "building a synthetic key for {constraints} constraints (proofs will not verify)"
        );
        return Ok(Arc::new(synthetic_key::<E>(
            constraints,
            PROVE_INPUTS,
            args.seed,
        )?));
    }
    let id = BenchKeyId {
        constraints,
        inputs: PROVE_INPUTS,
        seed: args.seed,
        bits_per_mille: args.scalars.per_mille(),
    };
    Ok(Arc::new(E::bench_key(&id)?))
}

/// `--proofs K`: every backend's throughput at every size, then the table and JSON.
fn run_throughput(
    args: &BenchArgs,
    backends: &[Arc<dyn ProverBackend>],
    skipped: &[(String, String)],
    options: &ProbeOptions,
    proofs: usize,
    workers: usize,
) -> Result<ExitCode, CliError> {
    let mut rows = Vec::new();
    for &size in &args.sizes.0 {
        let key = prove_key::<Bls12_381>(args, size)?;
        for backend in backends {
            rows.push(measure_throughput(ThroughputSpec {
                backend,
                options,
                circuit: BuiltIn {
                    constraints: size,
                    inputs: PROVE_INPUTS,
                    seed: args.seed,
                    bits_per_mille: args.scalars.per_mille(),
                },
                key: Arc::clone(&key),
                proofs,
                workers,
                verify: !args.synthetic_key,
            })?);
        }
    }
    if args.scalars != ScalarMix::FULL {
        println!(
            "witness: {} (that share of the constraints check a bit)",
            args.scalars
        );
    }
    println!("{}", throughput_table(&rows));
    if let Some(path) = &args.out {
        let machine = Machine::here();
        let infos: Vec<&BackendInfo> = backends.iter().map(|b| b.info()).collect();
        let mut report = report_head(args, &machine, &infos, skipped);
        report["mode"] = json!("throughput");
        report["results"] = json!(rows.iter().map(ThroughputRow::json).collect::<Vec<_>>());
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::file(format!("cannot write JSON: {e}")))?;
        write_file(path, &(text + "\n"))?;
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// (resident, with transfers) speed-ups of `row` over the CPU backend at the same size.
fn speedup(row: &Row, rows: &[Row]) -> Option<(f64, f64)> {
    let cpu = rows
        .iter()
        .find(|r| r.size == row.size && r.info.name == "cpu")?;
    let ratio = |cpu: f64, this: f64| if this > 0.0 { cpu / this } else { f64::NAN };
    Some((
        ratio(
            cpu.measurement.resident.median_ms,
            row.measurement.resident.median_ms,
        ),
        ratio(
            cpu.measurement.with_transfers.median_ms,
            row.measurement.with_transfers.median_ms,
        ),
    ))
}

fn text_table(op: Op, rows: &[Row]) -> String {
    let f = |x: f64| format!("{x:.3}");
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let (res, tr) = (&r.measurement.resident, &r.measurement.with_transfers);
            let (s_res, s_tr) = match speedup(r, rows) {
                Some((a, b)) => (format!("{a:.2}x"), format!("{b:.2}x")),
                None => ("-".into(), "-".into()),
            };
            vec![
                r.info.label(),
                r.size.to_string(),
                format!(
                    "{}{}",
                    f(res.median_ms),
                    if r.measurement.device_clock {
                        " (dev)"
                    } else {
                        ""
                    }
                ),
                f(res.min_ms),
                f(res.max_ms),
                f(tr.median_ms),
                f(tr.min_ms),
                f(tr.max_ms),
                s_res,
                s_tr,
            ]
        })
        .collect();
    let size = format!("{op} {}", op.size_unit());
    let headers = [
        "backend",
        &size,
        "median ms",
        "min ms",
        "max ms",
        "+transfers median",
        "min",
        "max",
        "vs cpu",
        "vs cpu +transfers",
    ];
    format!(
        "{}\n(ms: device-resident, launch to synchronize, \"(dev)\": timed by device events around the operation (prove: the proof's stage + NTT + MSM phases, key staged); +transfers: staging, compute and read-back (msm: the one-shot MSM from host bases and scalars, pipelined from 2^22 terms, nothing resident; prove: key staging, the whole proof, key release); vs cpu: cpu median / backend median)",
        table(&headers, &cells, 1)
    )
}

fn json_report(
    args: &BenchArgs,
    machine: &Machine,
    backends: &[&BackendInfo],
    skipped: &[(String, String)],
    rows: &[Row],
) -> serde_json::Value {
    let results: Vec<_> = rows
        .iter()
        .map(|r| {
            json!({
                "backend": r.info.label(),
                "device": r.info.device_name,
                "size": r.size,
                "resident": r.measurement.resident,
                "resident_clock": if r.measurement.device_clock { "device" } else { "host" },
                "with_transfers": r.measurement.with_transfers,
                "speedup_vs_cpu": speedup(r, rows).map(|(res, tr)| json!({ "resident": res, "with_transfers": tr })),
            })
        })
        .collect();
    let mut report = report_head(args, machine, backends, skipped);
    report["mode"] = json!("latency");
    report["repeat"] = json!(args.repeat.unwrap_or(10));
    report["results"] = json!(results);
    report
}

/// What every `--out` report starts with: the version, the machine, the run's options.
fn report_head(
    args: &BenchArgs,
    machine: &Machine,
    backends: &[&BackendInfo],
    skipped: &[(String, String)],
) -> serde_json::Value {
    json!({
        "crucible_version": VERSION,
        "git_commit": GIT_COMMIT,
        "machine": { "hostname": machine.hostname, "cpu_model": machine.cpu_model, "cores": machine.cores },
        "curve": args.curve.name(),
        "op": args.op,
        "size_unit": args.op.size_unit(),
        "seed": args.seed,
        "synthetic_key": args.synthetic_key,
        "scalars": args.scalars.to_string(),
        "memory_limit_bytes": args.device.memory_limit,
        "workers_per_device": args.workers_per_device.unwrap_or(1),
        "backends": backends,
        "skipped": skipped.iter().map(|(name, reason)| json!({ "backend": name, "reason": reason })).collect::<Vec<_>>(),
    })
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv_report(args: &BenchArgs, machine: &Machine, rows: &[Row]) -> String {
    let mut out = String::from(
        "op,backend,device,api,size,resident_median_ms,resident_min_ms,resident_max_ms,\
         transfers_median_ms,transfers_min_ms,transfers_max_ms,speedup_vs_cpu_resident,\
         speedup_vs_cpu_transfers,repeat,crucible_version,git_commit,hostname,cpu_model,cores\n",
    );
    for r in rows {
        let (res, tr) = (&r.measurement.resident, &r.measurement.with_transfers);
        let (s_res, s_tr) = speedup(r, rows).map_or((String::new(), String::new()), |(a, b)| {
            (a.to_string(), b.to_string())
        });
        let fields = [
            args.op.to_string(),
            r.info.label(),
            r.info.device_name.clone(),
            r.info.api.clone(),
            r.size.to_string(),
            res.median_ms.to_string(),
            res.min_ms.to_string(),
            res.max_ms.to_string(),
            tr.median_ms.to_string(),
            tr.min_ms.to_string(),
            tr.max_ms.to_string(),
            s_res,
            s_tr,
            args.repeat.unwrap_or(10).to_string(),
            VERSION.to_string(),
            GIT_COMMIT.to_string(),
            machine.hostname.clone(),
            machine.cpu_model.clone(),
            machine.cores.to_string(),
        ];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// A solid line of device-resident medians per backend, and for GPU backends a dashed
/// line including transfers (on the CPU the two coincide).
fn plot_series(backends: &[&BackendInfo], rows: &[Row]) -> Vec<Series> {
    let mut series = Vec::new();
    for (colour, info) in backends.iter().enumerate() {
        let label = info.label();
        let mine: Vec<&Row> = rows.iter().filter(|r| r.info.label() == label).collect();
        let line = |pick: fn(&Measurement) -> f64| {
            mine.iter()
                .map(|r| (r.size as f64, pick(&r.measurement)))
                .collect()
        };
        series.push(Series {
            label: label.clone(),
            points: line(|m| m.resident.median_ms),
            colour,
            dashed: false,
        });
        if info.name != "cpu" {
            series.push(Series {
                label: format!("{label} incl. transfers"),
                points: line(|m| m.with_transfers.median_ms),
                colour,
                dashed: true,
            });
        }
    }
    series
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn unwritable_paths_are_refused_and_nothing_is_left_behind() {
        let dir = std::env::temp_dir();
        assert!(check_writable(&dir, "--out").is_err());
        assert!(check_writable(Path::new("/nonexistent-dir/r.json"), "--out").is_err());
        let path = dir.join(format!("crucible-writable-{}.json", std::process::id()));
        assert!(check_writable(&path, "--out").is_ok());
        assert!(!path.exists());
    }
}
