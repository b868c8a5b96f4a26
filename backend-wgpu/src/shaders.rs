//! The shader modules and the assembly of their WGSL source from shaders/*.wgsl.

use crate::field::{fq_wgsl, wgsl_constants, wgsl_programs};

/// Threads per workgroup in every kernel (`@workgroup_size(64)` in the shaders).
pub const WORKGROUP: u32 = 64;

/// A shader module: which WGSL files it is made of, in order, after the constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Module {
    /// NTT stages and pointwise ops over Fr.
    Ntt,
    /// MSM scalar conversion and counting sort.
    MsmSort,
    /// MSM bucket accumulation and reduction, G1 and G2.
    MsmBuckets,
    /// Test entry point for Fr.
    FrTest,
    /// Test entry point for the interpreter's programs (Fq, Fq2, G1, G2).
    ProgramTest,
}

const FR: &str = include_str!("../shaders/fr.wgsl");
const PROGRAM: &str = include_str!("../shaders/program.wgsl");
const NTT: &str = include_str!("../shaders/ntt.wgsl");
const MSM_COMMON: &str = include_str!("../shaders/msm_common.wgsl");
const MSM_SORT: &str = include_str!("../shaders/msm_sort.wgsl");
const MSM: &str = include_str!("../shaders/msm.wgsl");
const FR_TEST: &str = include_str!("../shaders/fr_test.wgsl");
const PROGRAM_TEST: &str = include_str!("../shaders/program_test.wgsl");

impl Module {
    /// Every module, in the order of [`Module::index`].
    pub const ALL: [Module; 5] = [
        Module::Ntt,
        Module::MsmSort,
        Module::MsmBuckets,
        Module::FrTest,
        Module::ProgramTest,
    ];

    /// The module's shader files in order; `None` stands for Fq's field code (made
    /// from fr.wgsl by [`fq_wgsl`](crate::field::fq_wgsl)).
    fn parts(self) -> &'static [Option<&'static str>] {
        match self {
            Module::Ntt => &[Some(FR), Some(NTT)],
            Module::MsmSort => &[Some(FR), Some(MSM_COMMON), Some(MSM_SORT)],
            Module::MsmBuckets => &[None, Some(PROGRAM), Some(MSM_COMMON), Some(MSM)],
            Module::FrTest => &[Some(FR), Some(FR_TEST)],
            Module::ProgramTest => &[None, Some(PROGRAM), Some(PROGRAM_TEST)],
        }
    }

    /// The module's position in [`Module::ALL`]: a slot in a per-module table.
    pub fn index(self) -> usize {
        Module::ALL.iter().position(|m| *m == self).unwrap_or(0)
    }

    /// The module's full WGSL source.
    pub fn source(self) -> String {
        let mut s = wgsl_constants();
        if self.parts().contains(&Some(PROGRAM)) {
            s.push_str(&wgsl_programs());
        }
        for part in self.parts() {
            s.push('\n');
            match part {
                Some(text) => s.push_str(text),
                None => s.push_str(&fq_wgsl(FR)),
            }
        }
        s
    }
}
