//! The CUDA C kernels, embedded and compiled with NVRTC for the device's own
//! architecture at first use, then kept for the life of the backend.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};

use crate::error::{CudaError, CudaResult};

/// Sources in the order NVRTC sees them (the headers' include guards make the
/// `.cu` files' own `#include`s no-ops).
const SOURCES: [&str; 5] = [
    include_str!("../kernels/field.cuh"),
    include_str!("../kernels/fq2.cuh"),
    include_str!("../kernels/curve.cuh"),
    include_str!("../kernels/ntt.cu"),
    include_str!("../kernels/msm.cu"),
];

/// Every kernel the host launches.
const NAMES: [&str; 18] = [
    "ntt_bit_reverse",
    "ntt_butterfly_stage",
    "fr_scale_by_powers",
    "fr_scale",
    "fr_mul_assign",
    "fr_sub_scale",
    "msm_scalars_to_canonical",
    "msm_count_digits",
    "msm_prefix_sum",
    "msm_scatter",
    "msm_g1_bucket_accumulate",
    "msm_g1_bucket_reduce",
    "msm_g1_window_reduce",
    "msm_g1_final",
    "msm_g2_bucket_accumulate",
    "msm_g2_bucket_reduce",
    "msm_g2_window_reduce",
    "msm_g2_final",
];

/// The loaded kernels of one device.
pub struct Kernels {
    functions: HashMap<&'static str, CudaFunction>,
    /// Milliseconds NVRTC and the module load took.
    pub compile_ms: f64,
}

impl Kernels {
    /// Compiles every kernel for `compute_{major}{minor}` and loads them into `ctx`.
    pub fn compile(ctx: &Arc<CudaContext>, arch: (i32, i32)) -> CudaResult<Kernels> {
        let start = std::time::Instant::now();
        let source: String = SOURCES.concat();
        let mut flags = vec![
            format!("--gpu-architecture=compute_{}{}", arch.0, arch.1),
            "--std=c++17".into(),
        ];
        // Plain 64-bit C++ instead of inline-PTX carry chains, to tell a PTX fault
        // from an algorithmic one.
        if std::env::var_os("CRUCIBLE_CUDA_PORTABLE_ARITH").is_some() {
            flags.push("-DCRUCIBLE_PORTABLE_ARITH".into());
        }
        let options = CompileOptions {
            options: flags,
            name: Some("crucible.cu".into()),
            ..Default::default()
        };
        let ptx = compile_ptx_with_opts(source, options)?;
        let module = ctx.load_module(ptx)?;
        let mut functions = HashMap::new();
        for name in NAMES {
            functions.insert(name, module.load_function(name)?);
        }
        Ok(Kernels {
            functions,
            compile_ms: start.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// The kernel named `name` (one of [`NAMES`]).
    pub fn get(&self, name: &str) -> CudaResult<&CudaFunction> {
        self.functions
            .get(name)
            .ok_or_else(|| CudaError::Size(format!("kernel `{name}` is not loaded")))
    }
}
