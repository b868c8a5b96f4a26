//! The CUBINs compiled when the crate was built (`build/main.rs`: sm_80 and sm_90 in
//! release builds), from the same sources and with the same options as the compile at
//! first use (`programs.rs`): a device of such an architecture loads them and never
//! waits for NVRTC (16.5 s cold on a fresh H200 machine). A build without NVRTC or a
//! device of another architecture find none here, and the backend compiles with NVRTC
//! (`kernels.rs`).

/// One program's CUBIN, compiled at build time.
pub struct Embedded {
    /// The program ([`crate::programs::Program::name`]).
    pub program: &'static str,
    /// The architecture it was compiled for, `(major, minor)`.
    pub arch: (i32, i32),
    /// Every option it was compiled with ([`crate::programs::Program::options`]).
    pub options: &'static [&'static str],
    /// The CUBIN.
    pub cubin: &'static [u8],
}

// `EMBEDDED: &[Embedded]` and `BUILT: &str` (what the build script did, or why not).
include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// What the build embedded: the NVRTC and architectures, or why there is nothing.
pub fn built() -> &'static str {
    BUILT
}

/// The CUBIN of `program` that runs on a device of `arch`, among `table`: compiled for
/// that architecture, or else for the closest one below it of the same major version
/// (a CUBIN for sm_XY runs on sm_XZ, Z >= Y), with exactly the options `options_for`
/// gives for the architecture it was compiled for.
pub fn find(
    table: &'static [Embedded],
    program: &str,
    arch: (i32, i32),
    options_for: impl Fn((i32, i32)) -> Vec<String>,
) -> Option<&'static Embedded> {
    table
        .iter()
        .filter(|e| e.program == program && e.arch.0 == arch.0 && e.arch.1 <= arch.1)
        .filter(|e| {
            e.options
                .iter()
                .copied()
                .eq(options_for(e.arch).iter().map(String::as_str))
        })
        .max_by_key(|e| e.arch.1)
}

/// This build's table ([`find`] over it).
pub fn table() -> &'static [Embedded] {
    EMBEDDED
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::programs::{programs, KernelCurve};

    fn options(arch: (i32, i32)) -> Vec<String> {
        vec![format!("--gpu-architecture=sm_{}{}", arch.0, arch.1)]
    }

    const fn entry(
        program: &'static str,
        arch: (i32, i32),
        options: &'static [&'static str],
        cubin: &'static [u8],
    ) -> Embedded {
        Embedded {
            program,
            arch,
            options,
            cubin,
        }
    }

    const SM80: &[&str] = &["--gpu-architecture=sm_80"];
    const SM86: &[&str] = &["--gpu-architecture=sm_86"];
    const SM90: &[&str] = &["--gpu-architecture=sm_90"];
    static TABLE: [Embedded; 4] = [
        entry("msm-sort", (8, 0), SM80, b"80"),
        entry("msm-sort", (8, 6), SM86, b"86"),
        entry("msm-sort", (9, 0), SM90, b"90"),
        entry("ntt-tile", (9, 0), SM90, b"tile"),
    ];

    #[test]
    fn a_device_gets_its_own_architecture_or_the_closest_below_of_its_major() {
        let cubin = |program: &str, arch| find(&TABLE, program, arch, options).map(|e| e.cubin);
        assert_eq!(cubin("msm-sort", (9, 0)), Some(&b"90"[..]));
        assert_eq!(cubin("msm-sort", (8, 6)), Some(&b"86"[..]));
        assert_eq!(cubin("msm-sort", (8, 9)), Some(&b"86"[..]));
        assert_eq!(cubin("msm-sort", (8, 0)), Some(&b"80"[..]));
        // Never across a major version, never from a higher minor.
        assert_eq!(cubin("msm-sort", (10, 0)), None);
        assert_eq!(cubin("msm-sort", (7, 5)), None);
        assert_eq!(cubin("ntt-tile", (8, 6)), None);
        assert_eq!(cubin("ntt-pointwise", (9, 0)), None);
    }

    #[test]
    fn options_that_differ_at_all_find_nothing() {
        let with = |extra: &'static str| {
            move |arch| {
                let mut o = options(arch);
                o.push(extra.to_string());
                o
            }
        };
        assert!(find(&TABLE, "msm-sort", (9, 0), with("-DCRU_OTHER=1")).is_none());
        assert!(find(&TABLE, "msm-sort", (9, 0), |_| Vec::new()).is_none());
    }

    /// What this build embedded: every BLS12-381 program of the layout for each
    /// architecture it names, once, with the options the backend would compile it
    /// with, and a CUBIN (an ELF file). A build without NVRTC embeds nothing and says
    /// why ([`built`]); this test then checks that the table is empty.
    #[test]
    fn the_build_embedded_every_program_for_each_architecture_it_names() {
        let archs: Vec<(i32, i32)> = {
            let mut a: Vec<_> = table().iter().map(|e| e.arch).collect();
            a.sort();
            a.dedup();
            a
        };
        println!("embedded: {} ({} CUBINs)", built(), table().len());
        if archs.is_empty() {
            assert!(
                built().starts_with("none"),
                "an empty table says why: {}",
                built()
            );
        }
        let layout = programs(KernelCurve::Bls12_381);
        for arch in archs {
            for program in &layout {
                let found: Vec<_> = table()
                    .iter()
                    .filter(|e| e.program == program.name && e.arch == arch)
                    .collect();
                assert_eq!(
                    found.len(),
                    1,
                    "{} for sm_{}{}",
                    program.name,
                    arch.0,
                    arch.1
                );
                let e = found[0];
                assert!(e.cubin.starts_with(b"\x7fELF"), "{}", e.program);
                let hit = find(table(), &program.name, arch, |a| program.options(a));
                assert!(
                    hit.is_some(),
                    "{} sm_{}{}: options differ",
                    program.name,
                    arch.0,
                    arch.1
                );
            }
            assert_eq!(
                table().iter().filter(|e| e.arch == arch).count(),
                layout.len()
            );
        }
    }
}
