#!/usr/bin/env python3
"""Tests of scripts/import_graph.py on small crates written to a temporary folder: a
circle must be reported (`CYCLE`, exit 1), a crate without one must not, and names
that end in "as" (`ntt_cases`, `Lease`) must resolve to their modules.

  python3 scripts/test_import_graph.py
"""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "import_graph.py")


def run_on(files):
    """Writes `files` (path under src/ -> text) as a crate and runs the script on it."""
    with tempfile.TemporaryDirectory() as crate:
        for name, text in files.items():
            path = os.path.join(crate, "src", name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        done = subprocess.run(
            [sys.executable, SCRIPT, crate], capture_output=True, text=True, check=False
        )
    return done.returncode, done.stdout


class ImportGraph(unittest.TestCase):
    def test_a_runner_and_its_cases_importing_each_other_is_a_cycle(self):
        status, out = run_on(
            {
                "lib.rs": "mod msm_cases;\nmod ntt_cases;\nmod suite;\n",
                "suite.rs": "use crate::{msm_cases, ntt_cases};\npub struct Runner;\n",
                "msm_cases.rs": "",
                "ntt_cases.rs": "use crate::suite::Runner;\n",
            }
        )
        self.assertIn("CYCLE: ntt_cases -> suite -> ntt_cases", out)
        self.assertEqual(status, 1)

    def test_a_cycle_through_names_re_exported_under_an_alias(self):
        status, out = run_on(
            {
                "lib.rs": "mod holder;\nmod lease;\npub use holder::Holder as Keeper;\npub use lease::Lease;\n",
                "lease.rs": "use crate::Keeper;\npub struct Lease;\n",
                "holder.rs": "use crate::{\n    Lease as Held,\n};\npub struct Holder;\n",
            }
        )
        self.assertIn("CYCLE: holder -> lease -> holder", out)
        self.assertEqual(status, 1)

    def test_leaves_importing_a_shared_runner_are_no_cycle(self):
        status, out = run_on(
            {
                "lib.rs": "mod ntt_cases;\nmod runner;\nmod suite;\npub use runner::Runner;\n",
                "runner.rs": "pub struct Runner;\n",
                "ntt_cases.rs": "use crate::Runner as Driver;\nuse crate::runner::{self as r};\n",
                "suite.rs": "use crate::{ntt_cases, runner::Runner};\n",
            }
        )
        self.assertIn("  ntt_cases -> runner\n", out)
        self.assertIn("  suite -> ntt_cases, runner\n", out)
        self.assertIn("  no cycle", out)
        self.assertNotIn("CYCLE", out)
        self.assertEqual(status, 0)


if __name__ == "__main__":
    unittest.main()
