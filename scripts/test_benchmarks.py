#!/usr/bin/env python3
"""Tests of scripts/benchmarks.py: every table of BENCHMARKS.md says when it was
measured, and a result file without a date in docs/results/index.json is refused
rather than rendered undated.

  python3 scripts/test_benchmarks.py
"""
import os
import re
import sys
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


if __name__ == "__main__":
    unittest.main()
