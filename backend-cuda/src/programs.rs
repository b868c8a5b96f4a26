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
//! of them).

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
    /// What reports call it: the file's name, with its part's (`msm-g2-sums`).
    pub name: String,
    /// The kernel files' sources, after the headers.
    pub files: Vec<&'static str>,
    /// Options of this program alone (a part's selection).
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

/// The programs the kernels compile as: one per kernel file, or per part of one.
pub fn programs() -> Vec<Program> {
    FILES
        .iter()
        .flat_map(|&(name, source)| {
            let parts = parts(source);
            if parts.is_empty() {
                return vec![Program {
                    name: name.into(),
                    files: vec![source],
                    defines: Vec::new(),
                }];
            }
            parts
                .into_iter()
                .map(|part| Program {
                    name: format!("{name}-{}", part.to_lowercase().replace('_', "-")),
                    files: vec![source],
                    defines: vec!["-DCRU_SELECT=1".into(), format!("-DCRU_ONLY_{part}=1")],
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
        let split = programs();
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

    #[test]
    fn parts_are_read_from_the_guards() {
        let source = "a\n#if CRU_WITH(G1_SUMS)\nx\n#endif\n  #if CRU_WITH( G2 )\n#if CRU_WITH(G1_SUMS)\n#if X\n";
        assert_eq!(parts(source), ["G1_SUMS", "G2"]);
        assert!(parts("#if CRU_SELECT\n").is_empty());
        // curve.cuh, which every program starts with, defines the guard.
        assert!(HEADERS[2].contains("#define CRU_WITH(part) (!CRU_SELECT || CRU_ONLY_##part)"));
    }
}
