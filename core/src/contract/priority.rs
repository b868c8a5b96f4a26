//! The `auto` priority scale: [`crate::BackendInfo::priority`] of every backend comes
//! from here, so that the order `auto` picks in is written down once.
//!
//! `auto` takes the highest-priority available device. The scale ranks by expected
//! proving speed on the device a backend finds, not by vendor: a GPU through its own
//! driver API beats a GPU through a portable API, which beats the host; a portable API
//! on a software adapter (llvmpipe, SwiftShader) is slower than the arkworks reference
//! it would emulate, so it ranks below the host. A new backend takes the step that
//! describes how it reaches its device; the gaps leave room for a backend that belongs
//! between two steps (a vendor's native API measured slower than CUDA on the same
//! machine, say 250). [`UNRANKED`] keeps a backend out of `auto` entirely.

/// Never chosen by `auto`: a backend that proves nothing yet (the template), or one
/// that must be asked for by name.
pub const UNRANKED: u32 = 0;

/// A portable GPU API on a software adapter (wgpu on llvmpipe): correct, but slower
/// than [`HOST`].
pub const SOFTWARE_ADAPTER: u32 = 50;

/// The host's CPU through arkworks (the reference backend).
pub const HOST: u32 = 100;

/// A hardware GPU through a portable API (wgpu on Vulkan, Metal or DX12).
pub const PORTABLE_GPU: u32 = 200;

/// A GPU through its vendor's own driver and compiler (CUDA with NVRTC).
pub const NATIVE_GPU: u32 = 300;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_orders_native_portable_host_software_unranked() {
        let scale = [NATIVE_GPU, PORTABLE_GPU, HOST, SOFTWARE_ADAPTER, UNRANKED];
        assert!(scale.windows(2).all(|w| w[0] > w[1]), "{scale:?}");
    }
}
