#!/usr/bin/env python3
"""Compile the kernels exactly as the host will: NVRTC on the concatenation
field.cuh + fq2.cuh + curve.cuh + <file>.cu, once per part the file names with
`#if CRU_WITH(PART)` (-DCRU_SELECT=1 -DCRU_ONLY_<PART>=1, as backend-cuda/src/programs.rs
splits them; a file without parts once), for each curve asked (BN254's programs with
-DCRU_CURVE_BN254 and named bn254-<program>), each timed (wall and CPU seconds), then (if
ptxas is found) assemble the PTX for sm_90 and print register / spill usage per kernel.

Needs no GPU. Needs libnvrtc (pip: nvidia-cuda-nvrtc-cu12) and, optionally, ptxas
(pip: nvidia-cuda-nvcc-cu12). Usage:
  nvrtc_check.py [--arch compute_90] [--out DIR] [--curve bls12-381|bn254|all] [--only PROGRAM ...]
(--only: the programs named as printed, e.g. --only 'ntt.cu[TILE]' --only 'bn254-ntt.cu[TILE]')
Exit status 0 when every file compiles."""
import argparse, ctypes, glob, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
KDIR = os.path.dirname(HERE)
HEADERS = ["field.cuh", "fq2.cuh", "curve.cuh"]
FILES = ["ntt.cu", "msm.cu", "planes.cu", "ones.cu", "sparse_product.cu"]
# The define that picks each curve's block of field.cuh, and the prefix of its programs'
# names (BLS12-381 is the default block: no define).
CURVES = {"bls12-381": ([], ""), "bn254": (["-DCRU_CURVE_BN254"], "bn254-")}


def programs(curve="bls12-381"):
    """(name, files, defines) of each program the host compiles for `curve`."""
    curve_defines, prefix = CURVES[curve]
    out = []
    for f in FILES:
        parts = []
        for line in open(os.path.join(KDIR, f)).read().splitlines():
            line = line.strip()
            if line.startswith("#if CRU_WITH("):
                part = line[len("#if CRU_WITH("):].split(")")[0].strip()
                if part and part not in parts:
                    parts.append(part)
        if not parts:
            out.append((prefix + f, [f], curve_defines))
        for part in parts:
            out.append((f"{prefix}{f}[{part}]", [f], curve_defines + ["-DCRU_SELECT=1", f"-DCRU_ONLY_{part}=1"]))
    return out


def find(pattern):
    for base in sys.path + [os.path.join(sys.prefix, "lib")]:
        hits = glob.glob(os.path.join(base, "nvidia", pattern))
        if hits:
            return hits[0]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="compute_90")
    ap.add_argument("--out", default=None, help="write <file>.ptx here")
    ap.add_argument("--only", action="append", default=[], help="only this program (as printed)")
    ap.add_argument("--curve", default="all", choices=sorted(CURVES) + ["all"])
    args = ap.parse_args()
    lib = find("cuda_nvrtc/lib/libnvrtc.so.*")
    if lib is None:
        print("libnvrtc not found (pip install nvidia-cuda-nvrtc-cu12)")
        return 2
    nvrtc = ctypes.CDLL(lib)
    ptxas = find("cuda_nvcc/bin/ptxas")
    header = "".join(open(os.path.join(KDIR, h)).read() for h in HEADERS)
    ok = True
    curves = sorted(CURVES) if args.curve == "all" else [args.curve]
    for src, files, defines in (p for curve in curves for p in programs(curve)):
        if args.only and src not in args.only:
            continue
        text = header + "".join(open(os.path.join(KDIR, f)).read() for f in files)
        prog = ctypes.c_void_p()
        assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), text.encode(), src.encode(), 0, None, None) == 0
        opts = [b"--gpu-architecture=" + args.arch.encode(), b"-std=c++17"]
        opts += [d.encode() for d in defines]
        arr = (ctypes.c_char_p * len(opts))(*opts)
        t0, c0 = time.time(), time.process_time()
        rc = nvrtc.nvrtcCompileProgram(prog, len(opts), arr)
        t_nvrtc, c_nvrtc = time.time() - t0, time.process_time() - c0
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetProgramLog(prog, log)
        if log.value.strip():
            print(log.value.decode())
        if rc != 0:
            print(f"{src}: NVRTC FAILED ({rc})")
            ok = False
            continue
        nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetPTX(prog, ptx)
        out_dir = args.out or "/tmp"
        path = os.path.join(out_dir, src + ".ptx")
        with open(path, "wb") as f:
            f.write(ptx.value)
        kernels = [l.split()[-1].rstrip("(") for l in ptx.value.decode().splitlines() if l.startswith(".visible .entry")]
        print(f"{src}: NVRTC ok in {t_nvrtc:.1f} s ({c_nvrtc:.1f} s CPU), {len(kernels)} kernels -> {path}: {' '.join(kernels)}")
        if ptxas:
            sm = "sm_" + args.arch.split("_")[1]
            t0 = time.time()
            r = subprocess.run([ptxas, f"-arch={sm}", "-v", path, "-o", "/dev/null"], capture_output=True, text=True)
            print(f"    ptxas {time.time() - t0:.1f} s")
            if r.returncode != 0:
                print(r.stderr)
                print(f"{src}: ptxas FAILED")
                ok = False
            else:
                for line in r.stderr.splitlines():
                    if "Compiling entry" in line or "Used" in line or "spill" in line:
                        print("   ", line.replace("ptxas info    : ", ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
