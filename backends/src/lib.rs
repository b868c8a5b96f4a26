//! crucible-backends: the roster. Backends register themselves with
//! `inventory::submit!`, but the linker drops a crate nothing refers to, and its
//! registration with it; this crate refers to every backend crate whose feature is on
//! (all by default), so a binary or test that depends on it, and names it once
//! (`use crucible_backends as _;`), sees every backend in
//! [`crucible_core::registry::registrations`]. No other crate links a backend crate:
//! code that needs a backend's own type (a test building a CPU backend on a small
//! budget) reaches it here, as `crucible_backends::cpu::CpuBackend`.
//!
//! Adding a backend is its crate, a workspace member, a feature in Cargo.toml and one
//! line below.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "cpu")]
pub use crucible_backend_cpu as cpu;
#[cfg(feature = "cuda")]
pub use crucible_backend_cuda as cuda;
#[cfg(feature = "template")]
pub use crucible_backend_template as template;
#[cfg(feature = "wgpu")]
pub use crucible_backend_wgpu as wgpu;

/// The names of the backends this build links, as their registrations name them:
/// what `crucible backends` and the conformance suite will find.
pub fn linked() -> Vec<&'static str> {
    crucible_core::registry::registrations()
        .iter()
        .map(|r| r.name)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_enabled_feature_registers_its_backend() {
        let linked = super::linked();
        for (enabled, name) in [
            (cfg!(feature = "cpu"), "cpu"),
            (cfg!(feature = "cuda"), "cuda"),
            (cfg!(feature = "template"), "template"),
            (cfg!(feature = "wgpu"), "wgpu"),
        ] {
            assert_eq!(linked.contains(&name), enabled, "{name} in {linked:?}");
        }
    }
}
