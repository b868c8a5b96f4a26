//! Backend registry: each backend crate registers a probe with `inventory::submit!`.
//!
//! A binary must link every backend crate, or the linker drops the unused crate and
//! its registration with it: the roster crate, `crucible-backends`, is the one place
//! that does (`use crucible_backends as _;` links them all).

use std::sync::Arc;

use crate::tuning_file::TuningFile;
use crate::{priority, Bls12_381, Bn254, Error, PairingCurve, ProverBackend, Result};

/// Options every probe receives.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeOptions {
    /// Cap on each device's budget, in bytes (`--memory-limit`): the device memory the
    /// backend hands out at all (the schedule's own cap is
    /// [`crate::engine::EngineConfig::schedule_cap`]).
    pub budget_cap: Option<u64>,
    /// Bytes of device memory left outside the budget for the driver and others.
    pub headroom: u64,
    /// The tuning file (`--tuning` or `CRUCIBLE_TUNING`): each backend reads its own
    /// table and refuses a probe whose table is invalid, with the reason.
    pub tuning: Arc<TuningFile>,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            budget_cap: None,
            headroom: 512 << 20,
            tuning: Arc::new(TuningFile::none()),
        }
    }
}

impl ProbeOptions {
    /// Budget capacity for a device that reports `device_bytes`.
    pub fn budget_capacity(&self, device_bytes: u64) -> u64 {
        let usable = device_bytes.saturating_sub(self.headroom);
        match self.budget_cap {
            Some(limit) => limit.min(usable),
            None => usable,
        }
    }
}

/// What a probe found for one device.
pub enum Probe<E: PairingCurve = Bls12_381> {
    /// A working backend instance.
    Available(Arc<dyn ProverBackend<E>>),
    /// The backend cannot run; never a panic.
    Unavailable {
        /// Why.
        reason: String,
    },
}

/// One registered backend.
pub struct BackendRegistration {
    /// Name users type (`cpu`, `cuda`, `wgpu`).
    pub name: &'static str,
    /// One line for `crucible backends`.
    pub description: &'static str,
    /// Finds the devices (one instance per device) or says why there are none.
    pub probe: fn(&ProbeOptions) -> Vec<Probe>,
    /// [`BackendRegistration::probe`] for BN254: the backend's devices proving
    /// BN254, or why it cannot.
    pub probe_bn254: fn(&ProbeOptions) -> Vec<Probe<Bn254>>,
}

inventory::collect!(BackendRegistration);

/// A [`BackendRegistration::probe_bn254`] for a backend that proves BLS12-381 only:
/// every probe unavailable, saying so, never a silent skip.
pub fn bn254_not_built(backend: &'static str) -> Vec<Probe<Bn254>> {
    vec![Probe::Unavailable {
        reason: format!(
            "{backend} proves BLS12-381 only: its BN254 kernels are not built yet (the cpu \
             backend proves BN254)"
        ),
    }]
}

/// A curve the registry finds backends for: which of a registration's probes serves it.
pub trait RegisteredCurve: PairingCurve {
    /// `registration`'s devices for this curve, or why there are none.
    fn probe(registration: &BackendRegistration, options: &ProbeOptions) -> Vec<Probe<Self>>;
}

impl RegisteredCurve for Bls12_381 {
    fn probe(registration: &BackendRegistration, options: &ProbeOptions) -> Vec<Probe<Self>> {
        (registration.probe)(options)
    }
}

impl RegisteredCurve for Bn254 {
    fn probe(registration: &BackendRegistration, options: &ProbeOptions) -> Vec<Probe<Self>> {
        (registration.probe_bn254)(options)
    }
}

/// Every registered backend, sorted by name.
pub fn registrations() -> Vec<&'static BackendRegistration> {
    let mut all: Vec<_> = inventory::iter::<BackendRegistration>.into_iter().collect();
    all.sort_by_key(|r| r.name);
    all
}

/// The probe results of one registered backend.
pub struct Probed<E: PairingCurve = Bls12_381> {
    /// The registration probed.
    pub registration: &'static BackendRegistration,
    /// One entry per device, or one `Unavailable`.
    pub probes: Vec<Probe<E>>,
}

/// Probes every registered backend.
pub fn probe_all<E: RegisteredCurve>(options: &ProbeOptions) -> Vec<Probed<E>> {
    registrations()
        .into_iter()
        .map(|registration| Probed {
            registration,
            probes: E::probe(registration, options),
        })
        .collect()
}

/// A backend picked by [`select`], with why it was picked.
pub struct Selected<E: PairingCurve = Bls12_381> {
    /// The backend instance.
    pub backend: Arc<dyn ProverBackend<E>>,
    /// One sentence: which backend and why (for `auto`).
    pub reason: String,
}

/// Picks a backend: `auto` (the highest-priority available device, on the scale of
/// [`crate::priority`]; never an unranked one), `name` (its first device) or
/// `name:index`. No silent fallback: an unavailable request is an error.
pub fn select<E: RegisteredCurve>(spec: &str, options: &ProbeOptions) -> Result<Selected<E>> {
    if spec == "auto" {
        return select_auto(options);
    }
    let (name, index) = parse_spec(spec)?;
    let Found { available, reasons } = probe_named::<E>(name, options)?;
    let wanted = index.unwrap_or(0);
    match available
        .into_iter()
        .find(|b| b.info().device_index == wanted)
    {
        Some(backend) => Ok(Selected {
            reason: format!(
                "using {} ({}) as requested",
                backend.info().label(),
                backend.info().device_name
            ),
            backend,
        }),
        None => Err(Error::Unavailable {
            backend: spec.to_string(),
            reason: if reasons.is_empty() {
                format!("no device {wanted}")
            } else {
                reasons.join("; ")
            },
        }),
    }
}

/// Splits `name` or `name:N` (checked before anything is probed).
fn parse_spec(spec: &str) -> Result<(&str, Option<usize>)> {
    let Some((name, index)) = spec.split_once(':') else {
        return Ok((spec, None));
    };
    if name == "auto" {
        return Err(Error::InvalidInput(format!(
            "`{spec}`: `auto` picks the backend and device itself and takes no index; \
             write `auto`, or name the backend and device, e.g. `cpu:0` or `cuda:1`"
        )));
    }
    if name.is_empty() {
        return Err(Error::InvalidInput(format!(
            "`{spec}` names no backend (expected name or name:N, e.g. `cuda:0`)"
        )));
    }
    let index = index.parse::<usize>().map_err(|_| {
        Error::InvalidInput(format!(
            "`{index}` in `{spec}` is not a device index (expected name:N, e.g. `{name}:0`)"
        ))
    })?;
    Ok((name, Some(index)))
}

/// Environment variable naming the backends that must be available
/// (comma-separated): a required backend that is unavailable fails a test run instead
/// of being skipped.
pub const REQUIRE_ENV: &str = "CRUCIBLE_REQUIRE";

/// The backends named in [`REQUIRE_ENV`], read in this one place.
pub fn required_backends() -> Vec<String> {
    parse_required(&std::env::var(REQUIRE_ENV).unwrap_or_default())
}

/// Whether [`REQUIRE_ENV`] names backend `name`.
pub fn is_required(name: &str) -> bool {
    required_backends().iter().any(|r| r == name)
}

fn parse_required(list: &str) -> Vec<String> {
    list.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// What probing one named backend found.
struct Found<E: PairingCurve> {
    /// Its available devices.
    available: Vec<Arc<dyn ProverBackend<E>>>,
    /// The reasons given for the unavailable ones.
    reasons: Vec<String>,
}

/// Probes the backend registered as `name`.
fn probe_named<E: RegisteredCurve>(name: &str, options: &ProbeOptions) -> Result<Found<E>> {
    let registration = registrations()
        .into_iter()
        .find(|r| r.name == name)
        .ok_or_else(|| Error::InvalidInput(unknown_backend(name)))?;
    let mut available = Vec::new();
    let mut reasons = Vec::new();
    for probe in E::probe(registration, options) {
        match probe {
            Probe::Available(b) => available.push(b),
            Probe::Unavailable { reason } => reasons.push(reason),
        }
    }
    Ok(Found { available, reasons })
}

fn select_auto<E: RegisteredCurve>(options: &ProbeOptions) -> Result<Selected<E>> {
    let mut skipped = Vec::new();
    let mut best: Option<Arc<dyn ProverBackend<E>>> = None;
    for probed in probe_all::<E>(options) {
        for probe in probed.probes {
            match probe {
                Probe::Available(b) if named_only(&*b) => {}
                Probe::Available(b) => {
                    if best
                        .as_ref()
                        .is_none_or(|cur| b.info().priority > cur.info().priority)
                    {
                        best = Some(b);
                    }
                }
                Probe::Unavailable { reason } => {
                    skipped.push(format!("{}: {reason}", probed.registration.name))
                }
            }
        }
    }
    let backend = best.ok_or_else(|| Error::Unavailable {
        backend: "auto".into(),
        reason: if skipped.is_empty() {
            format!("no backend crate is linked into this binary: {LINK_HINT}")
        } else {
            format!(
                "no backend is available ({}); the CPU reference always is: {LINK_HINT}",
                skipped.join("; ")
            )
        },
    })?;
    let mut reason = format!(
        "auto chose {} ({}), the highest-priority available backend",
        backend.info().label(),
        backend.info().device_name
    );
    if !skipped.is_empty() {
        reason.push_str(&format!("; unavailable: {}", skipped.join("; ")));
    }
    Ok(Selected { backend, reason })
}

/// How a binary links a backend, for errors that find none.
const LINK_HINT: &str =
    "depend on the roster crate `crucible-backends` (or on one backend crate, such as \
`crucible-backend-cpu`) and name it once in your crate (`use crucible_backends as _;`), \
or the linker drops the backends' registrations";

fn unknown_backend(name: &str) -> String {
    let known: Vec<_> = registrations().iter().map(|r| r.name).collect();
    if known.is_empty() {
        return format!(
            "unknown backend `{name}`: no backend crate is linked into this binary: {LINK_HINT}"
        );
    }
    format!(
        "unknown backend `{name}`: the backends are {}, or `auto` for the best available (`crucible backends` lists their devices)",
        known.join(", ")
    )
}

/// Whether `backend` is run only when asked for by name: an [`priority::UNRANKED`]
/// backend (the template, for porters) is left out of `auto`, `all` and the list of
/// available backends.
pub fn named_only<E: PairingCurve>(backend: &dyn ProverBackend<E>) -> bool {
    backend.info().priority == priority::UNRANKED
}

/// [`probe_all`] without the devices of backends that run only when named
/// ([`named_only`]); a backend left with no probe is left out. What `all` means.
pub fn probe_listed<E: RegisteredCurve>(options: &ProbeOptions) -> Vec<Probed<E>> {
    probe_all::<E>(options)
        .into_iter()
        .filter_map(|mut probed| {
            let had = probed.probes.len();
            probed
                .probes
                .retain(|p| !matches!(p, Probe::Available(b) if named_only(&**b)));
            (had == 0 || !probed.probes.is_empty()).then_some(probed)
        })
        .collect()
}

/// Every available device of backend `name`, or only those whose index is listed in
/// `indices`; an index that is not available is an error naming why.
pub fn select_devices<E: RegisteredCurve>(
    name: &str,
    indices: Option<&[usize]>,
    options: &ProbeOptions,
) -> Result<Vec<Arc<dyn ProverBackend<E>>>> {
    let Found { available, reasons } = probe_named::<E>(name, options)?;
    let chosen: Vec<_> = match indices {
        None => available,
        Some(wanted) => {
            let mut chosen = Vec::new();
            for &i in wanted {
                let backend = available
                    .iter()
                    .find(|b| b.info().device_index == i)
                    .ok_or_else(|| Error::Unavailable {
                        backend: format!("{name}:{i}"),
                        reason: format!(
                            "no such device (available: {}){}",
                            available
                                .iter()
                                .map(|b| b.info().device_index.to_string())
                                .collect::<Vec<_>>()
                                .join(", "),
                            if reasons.is_empty() {
                                String::new()
                            } else {
                                format!("; {}", reasons.join("; "))
                            }
                        ),
                    })?;
                if !chosen
                    .iter()
                    .any(|c: &Arc<dyn ProverBackend<E>>| Arc::ptr_eq(c, backend))
                {
                    chosen.push(Arc::clone(backend));
                }
            }
            chosen
        }
    };
    if chosen.is_empty() {
        return Err(Error::Unavailable {
            backend: name.to_string(),
            reason: if reasons.is_empty() {
                "no device".into()
            } else {
                reasons.join("; ")
            },
        });
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_with_an_index_says_auto_takes_none() {
        let e = select::<crate::Bls12_381>("auto:0", &ProbeOptions::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("takes no index"), "{e}");
        let e = select::<crate::Bls12_381>("cpu:x", &ProbeOptions::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("not a device index"), "{e}");
        let e = select::<crate::Bls12_381>(":0", &ProbeOptions::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("names no backend"), "{e}");
    }

    #[test]
    fn an_unknown_backend_lists_the_backends_and_advises_no_crate() {
        let e = select::<crate::Bls12_381>("gpu", &ProbeOptions::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("unknown backend `gpu`"), "{e}");
        assert!(!e.contains("crucible_backend_gpu"), "{e}");
    }

    #[test]
    fn required_backends_are_a_trimmed_comma_list() {
        assert_eq!(parse_required(" cpu, wgpu ,,"), vec!["cpu", "wgpu"]);
        assert!(parse_required("").is_empty());
    }
}
