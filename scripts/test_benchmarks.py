#!/usr/bin/env python3
"""Tests of scripts/benchmarks.py: every table of BENCHMARKS.md says when it was
measured, a result file without a date in docs/results/index.json is refused
rather than rendered undated, and the peer harnesses' output goes to the result file
of its curve.

  python3 scripts/test_benchmarks.py
"""
import json
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchmarks  # noqa: E402


def tables(text):
    """Each table's provenance block: the lines from `Machine:` to `Reproduce:`."""
    return re.findall(r"^Machine: .*?^Reproduce:", text, flags=re.S | re.M)


class Dates(unittest.TestCase):
    def test_every_table_says_when_it_was_measured(self):
        text = benchmarks.Doc().render()
        blocks = tables(text)
        self.assertGreater(len(blocks), 5)
        for block in blocks:
            self.assertRegex(block, r"(?m)^Measured: \d{4}-\d{2}-\d{2}(, \d{4}-\d{2}-\d{2})*\.$")

    def test_a_file_without_a_date_is_refused(self):
        doc = benchmarks.Doc()
        entry = doc.entries["h100-cuda-msm-g1.json"]
        del entry["measured"]
        with self.assertRaises(SystemExit) as stop:
            doc.render()
        self.assertIn("h100-cuda-msm-g1.json", str(stop.exception.code))
        self.assertIn("measured", str(stop.exception.code))


# The end of peers/sppark/run.sh's output (two sizes, fewer modes than a real run).
SPPARK_LOG = """build.sh: sppark 0.1.16, curve {curve}, Build cuda_13.0.r13.0/compiler.36424714_0, arch sm_90
sppark 0.1.16 peer harness, curve {curve}: NVIDIA H200, 132 SMs, 139.8 GiB
sppark 0.1.16 on NVIDIA H200, curve {curve} (times in ms; median of 7 runs after one warm-up, min, max)
op      size  mode                                                               median        min        max  check
msm-g1  2^20  resident: bases+scalars on device (msm_t::invoke)                   {g1:.3f}     20.900     21.300  ok
msm-g1  2^20  all from host, pinned (mult_pippenger)                              30.000     29.000     31.000  ok
msm-g2  2^20  resident: bases+scalars on device (msm_t::invoke)                   47.800     47.000     48.000  ok
msm-g2  2^20  all from host, pinned (mult_pippenger)                              60.000     59.000     61.000  ok
ntt     2^20  resident: data on device (Base_dev_ptr, NN), device events           0.269      0.268      0.270  ok
ntt     2^20  host in/out, pinned (NTT::Base, NN), host clock                      1.600      1.500      1.700  ok
all results match the arkworks-computed expected values
"""

# peers/icicle/run.sh's table.
ICICLE_TABLE = """ICICLE open-icicle a1f8a74 (v4.0.0), CUDA backend{curve}; ms over 7 runs after one warm-up; harness exit status 0
op      size  mode                                                                 median        min        max       host  check
msm-g1  2^20  resident: bases+scalars on device (default config)                   20.090     20.000     20.200     20.100  ok
msm-g1  2^20  resident, precomputed bases (factor 14, c 19; info)                  10.910     10.800     11.000     10.920  ok
msm-g1  2^20  all from host (pinned)                                               25.000     24.900     25.100     25.010  ok
ntt     2^20  resident: data on device (NN, default domain)                         0.413      0.410      0.420      0.500  ok
ntt     2^20  host in/out (NN, pinned)                                              2.000      1.900      2.100      2.010  ok
"""


class PeerCurves(unittest.TestCase):
    """A BN254 run's output goes to MACHINE-PEER-bn254-OP.json, a BLS12-381 run's (which
    may name no curve: the harnesses' output before the BN254 mode) to MACHINE-PEER-OP.json."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.saved = benchmarks.RESULTS
        benchmarks.RESULTS = self.dir.name

    def tearDown(self):
        benchmarks.RESULTS = self.saved
        self.dir.cleanup()

    def parse(self, kind, text):
        path = os.path.join(self.dir.name, "log.txt")
        with open(path, "w") as f:
            f.write(text)
        getattr(benchmarks, kind)(path, "h200")
        return sorted(n for n in os.listdir(self.dir.name) if n.endswith(".json"))

    def load(self, name):
        with open(os.path.join(self.dir.name, name)) as f:
            return json.load(f)

    def test_sppark_bn254_rows_go_to_the_bn254_files(self):
        files = self.parse("sppark", SPPARK_LOG.format(curve="bn254", g1=12.5))
        self.assertEqual(files, ["h200-sppark-bn254-msm-g1.json", "h200-sppark-bn254-msm-g2.json",
                                 "h200-sppark-bn254-ntt.json"])
        d = self.load("h200-sppark-bn254-msm-g1.json")
        self.assertEqual(d["curve"], "bn254")
        self.assertEqual(d["peer_version"], "0.1.16")
        self.assertEqual(d["results"][0]["resident"]["median_ms"], 12.5)
        self.assertEqual(d["results"][0]["device"], "NVIDIA H200")

    def test_sppark_bls12_381_rows_keep_their_files(self):
        for text in (SPPARK_LOG.format(curve="bls12-381", g1=21.08),
                     SPPARK_LOG.format(curve="bls12-381", g1=21.08).replace(", curve bls12-381", "")
                     .replace("curve bls12-381, ", "")):
            files = self.parse("sppark", text)
            self.assertEqual(files, ["h200-sppark-msm-g1.json", "h200-sppark-msm-g2.json",
                                     "h200-sppark-ntt.json"])
            self.assertEqual(self.load("h200-sppark-msm-g1.json")["curve"], "bls12-381")

    def test_icicle_bn254_rows_go_to_the_bn254_files(self):
        files = self.parse("icicle", ICICLE_TABLE.format(curve=", curve bn254"))
        self.assertEqual(files, ["h200-icicle-bn254-msm-g1.json", "h200-icicle-bn254-msm-g2.json",
                                 "h200-icicle-bn254-ntt.json"])
        d = self.load("h200-icicle-bn254-msm-g1.json")
        self.assertEqual((d["curve"], d["peer_version"]), ("bn254", "v4.0.0"))
        self.assertEqual(d["results"][0]["precomputed"]["median_ms"], 10.91)
        files = self.parse("icicle", ICICLE_TABLE.format(curve=""))
        self.assertIn("h200-icicle-msm-g1.json", files)

    def test_an_unknown_curve_is_refused(self):
        with self.assertRaises(SystemExit):
            self.parse("sppark", SPPARK_LOG.format(curve="bls12-377", g1=1.0))

    def test_a_bn254_table_renders_under_its_own_heading(self):
        benchmarks.RESULTS = self.saved     # the repository's files
        text = benchmarks.Doc().render()
        self.assertIn("## MSM against the peers on the H100, BN254", text)
        self.assertIn("## MSM against the peers on the H100\n", text)
        # sppark ran no BN254 G2 MSM: crucible's row stands with dashes for sppark's.
        self.assertIn("| G2 2^20 | — | **", text)

if __name__ == "__main__":
    unittest.main()
