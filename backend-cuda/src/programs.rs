//! The NVRTC programs the kernel files compile as, and the options each one gets: the
//! one layout both the backend's compile at first use (`kernels.rs`) and the build
//! script's ahead-of-time compile (`build/main.rs`, which includes this file by path)
//! follow, so that a CUBIN built ahead of time is the one the backend would build.
//! It names nothing of the crate (the build script has no crate around it).
//!
//! Every kernel file is a program of its own, and a file whose kernels are split into
//! parts (curve.cuh's `#if CRU_WITH(PART)`) is one program per part. The programs
//! follow the files and the parts their sources name, not a list of kernels, so a
//! kernel added to a file lands in that file's programs (outside every part: in each
//! of them). The layout is the same for every curve; a curve's programs differ by the
//! one define that picks its block of field.cuh ([`KernelCurve`]).

/// The headers every program starts with, in this order (their include guards make
/// the `.cu` files' own `#include`s no-ops).
pub const HEADERS: [&str; 3] = [
    include_str!("../kernels/field.cuh"),
    include_str!("../kernels/fq2.cuh"),
    include_str!("../kernels/curve.cuh"),
];

/// The kernel files: the name their programs take, and the source.
pub const FILES: [(&str, &str); 5] = [
    ("ntt", include_str!("../kernels/ntt.cu")),
    ("msm", include_str!("../kernels/msm.cu")),
    ("planes", include_str!("../kernels/planes.cu")),
    ("ones", include_str!("../kernels/ones.cu")),
    (
        "sparse_product",
        include_str!("../kernels/sparse_product.cu"),
    ),
];

/// The curve the kernels are compiled for: the block of field.cuh's constants (limb
/// counts, moduli, Montgomery constants, the MSM's digit bits) that one define picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelCurve {
    /// BLS12-381: field.cuh's default block, no define, so that its programs' options
    /// and CUBINs are those of the kernels before they had another curve.
    Bls12_381,
    /// BN254 (alt_bn128): `-DCRU_CURVE_BN254`.
    Bn254,
}

impl KernelCurve {
    /// The option that picks the curve's block of field.cuh, if it is not the default.
    pub fn define(self) -> Option<&'static str> {
        match self {
            KernelCurve::Bls12_381 => None,
            KernelCurve::Bn254 => Some("-DCRU_CURVE_BN254"),
        }
    }

    /// What its programs' names end with, so that reports and cache files tell the
    /// curves apart (nothing for BLS12-381: its names as they were).
    fn name_suffix(self) -> &'static str {
        match self {
            KernelCurve::Bls12_381 => "",
            KernelCurve::Bn254 => "-bn254",
        }
    }
}

/// How a kernel file opens a part of its kernels (curve.cuh): `#if CRU_WITH(PART)`.
const PART_GUARD: &str = "#if CRU_WITH(";

/// The parts a kernel file's source names, in the order it first names them.
pub fn parts(source: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    for line in source.lines() {
        let Some(rest) = line.trim_start().strip_prefix(PART_GUARD) else {
            continue;
        };
        let part = rest.split(')').next().unwrap_or("").trim();
        if !part.is_empty() && !found.contains(&part) {
            found.push(part);
        }
    }
    found
}

/// One NVRTC program: the headers, then kernel files, with its own options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// What reports call it: the file's name, with its part's (`msm-g2-sums`) and, for
    /// a curve other than BLS12-381, the curve's (`msm-g2-sums-bn254`).
    pub name: String,
    /// The kernel files' sources, after the headers.
    pub files: Vec<&'static str>,
    /// Options of this program alone: the curve's define, then a part's selection.
    pub defines: Vec<String>,
}

impl Program {
    /// The whole source NVRTC compiles.
    pub fn source(&self) -> String {
        HEADERS.iter().chain(&self.files).copied().collect()
    }

    /// Every option of this program for `sm_{major}{minor}`: [`base_options`], then the
    /// program's own.
    pub fn options(&self, arch: (i32, i32)) -> Vec<String> {
        let mut options = base_options(arch);
        options.extend(self.defines.iter().cloned());
        options
    }
}

/// The options every program gets for `sm_{major}{minor}`.
pub fn base_options(arch: (i32, i32)) -> Vec<String> {
    vec![
        format!("--gpu-architecture=sm_{}{}", arch.0, arch.1),
        "--std=c++17".into(),
    ]
}

/// The programs the kernels compile as for `curve`: one per kernel file, or per part
/// of one.
pub fn programs(curve: KernelCurve) -> Vec<Program> {
    let suffix = curve.name_suffix();
    let curve_defines: Vec<String> = curve.define().into_iter().map(String::from).collect();
    FILES
        .iter()
        .flat_map(|&(name, source)| {
            let parts = parts(source);
            if parts.is_empty() {
                return vec![Program {
                    name: format!("{name}{suffix}"),
                    files: vec![source],
                    defines: curve_defines.clone(),
                }];
            }
            parts
                .into_iter()
                .map(|part| {
                    let mut defines = curve_defines.clone();
                    defines.extend(["-DCRU_SELECT=1".into(), format!("-DCRU_ONLY_{part}=1")]);
                    Program {
                        name: format!("{name}-{}{suffix}", part.to_lowercase().replace('_', "-")),
                        files: vec![source],
                        defines,
                    }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_is_compiled_once_per_part_it_names() {
        let split = programs(KernelCurve::Bls12_381);
        let names: Vec<&str> = split.iter().map(|p| p.name.as_str()).collect();
        // Every program there is (a new part of a file adds its own program).
        for expected in [
            "ntt-pointwise",
            "ntt-tile",
            "ntt-tilew",
            "msm-sort",
            "msm-g1-sums",
            "msm-g1-fold",
            "msm-g1-tiles",
            "msm-g1-records",
            "msm-g2-sums",
            "msm-g2-fold",
            "msm-g2-tiles",
            "msm-g2-records",
            "planes-g1",
            "planes-g2",
            "ones-g1",
            "ones-g2",
            "sparse_product",
        ] {
            assert!(names.contains(&expected), "{expected} not in {names:?}");
        }
        assert_eq!(names.len(), 17, "{names:?}");
        for (name, source) in FILES {
            let of_file: Vec<&Program> = split.iter().filter(|p| p.files == [source]).collect();
            let parts = parts(source);
            if parts.is_empty() {
                assert_eq!(of_file.len(), 1, "{name}");
                assert!(of_file[0].defines.is_empty(), "{name}");
            } else {
                let defines: Vec<Vec<String>> = of_file.iter().map(|p| p.defines.clone()).collect();
                let expected: Vec<Vec<String>> = parts
                    .iter()
                    .map(|part| vec!["-DCRU_SELECT=1".into(), format!("-DCRU_ONLY_{part}=1")])
                    .collect();
                assert_eq!(defines, expected, "{name}");
            }
            // Every program starts with the headers, which define CRU_WITH.
            for p in of_file {
                assert!(p.source().starts_with(HEADERS[0]), "{}", p.name);
                assert!(p.source().ends_with(source), "{}", p.name);
            }
        }
    }

    /// BN254's programs are BLS12-381's with the curve's define first and the curve in
    /// their names; BLS12-381's options carry no curve define at all (field.cuh's
    /// default block), so its CUBINs, embedded or cached, stay what they were.
    #[test]
    fn each_curve_has_the_same_programs_picked_by_one_define() {
        let bls = programs(KernelCurve::Bls12_381);
        let bn = programs(KernelCurve::Bn254);
        assert_eq!(bls.len(), bn.len());
        for (b, n) in bls.iter().zip(&bn) {
            assert_eq!(n.name, format!("{}-bn254", b.name));
            assert_eq!(n.files, b.files);
            assert_eq!(n.defines[0], "-DCRU_CURVE_BN254");
            assert_eq!(n.defines[1..], b.defines[..]);
            assert!(
                !b.defines.iter().any(|d| d.starts_with("-DCRU_CURVE")),
                "{}",
                b.name
            );
            assert_eq!(n.source(), b.source());
        }
        // The define is the one field.cuh's curve block tests.
        assert!(HEADERS[0].contains("#if defined(CRU_CURVE_BN254)"));
        assert_eq!(KernelCurve::Bn254.define(), Some("-DCRU_CURVE_BN254"));
    }

    #[test]
    fn parts_are_read_from_the_guards() {
        let source = "a\n#if CRU_WITH(G1_SUMS)\nx\n#endif\n  #if CRU_WITH( G2 )\n#if CRU_WITH(G1_SUMS)\n#if X\n";
        assert_eq!(parts(source), ["G1_SUMS", "G2"]);
        assert!(parts("#if CRU_SELECT\n").is_empty());
        // curve.cuh, which every program starts with, defines the guard.
        assert!(HEADERS[2].contains("#define CRU_WITH(part) (!CRU_SELECT || CRU_ONLY_##part)"));
    }
}
