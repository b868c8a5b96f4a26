#!/usr/bin/env python3
"""Tests of scripts/doc_commands.py: how a page's blocks become commands and how a
command is run here, and whole runs over pages written to a temporary folder with a
stand-in `crucible`: a command the binary no longer accepts fails the run, naming the
page and line; a daemon is started, must say it is up, and must exit 0 on SIGTERM;
what is not run is listed with its reason, and a reason that no longer matches a
command fails the run.

  python3 scripts/test_doc_commands.py
"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_commands  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "doc_commands.py")

# A stand-in for the binary: `ok` succeeds, `serve --insecure` serves until SIGTERM,
# `serve --crash` serves and fails on SIGTERM; anything else is unknown (exit 2).
FAKE_CRUCIBLE = """#!/usr/bin/env bash
case "$*" in
  ok) echo fine ;;
  "serve --insecure") echo "grpc listening on 127.0.0.1:50051"; trap 'exit 0' TERM; while :; do sleep 0.05; done ;;
  "serve --crash") echo "grpc listening on 127.0.0.1:50051"; trap 'exit 3' TERM; while :; do sleep 0.05; done ;;
  *) echo "error: unexpected argument '$2' found" >&2; exit 2 ;;
esac
"""


def run_pages(pages):
    """Writes `pages` (path -> text) as a repository and runs the script over it."""
    with tempfile.TemporaryDirectory() as root:
        for name, text in pages.items():
            path = os.path.join(root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        crucible = os.path.join(root, "crucible")
        with open(crucible, "w") as f:
            f.write(FAKE_CRUCIBLE)
        os.chmod(crucible, 0o755)
        done = subprocess.run([sys.executable, SCRIPT, "--root", root, "--crucible", crucible],
                              capture_output=True, text=True, check=False)
    return done.returncode, done.stdout + done.stderr


class Commands(unittest.TestCase):
    def test_continuations_here_documents_and_comments(self):
        lines = [
            "# a comment",
            "crucible serve --listen 0.0.0.0:1 \\",
            "  --tokens t   # why",
            "",
            "cat > t <<EOF",
            "a b c",
            "EOF",
            "chmod 600 t",
        ]
        self.assertEqual(doc_commands.commands(lines, 10), [
            (12, "crucible serve --listen 0.0.0.0:1 --tokens t   # why"),
            (15, "cat > t <<EOF\na b c\nEOF"),
            (18, "chmod 600 t"),
        ])

    def test_console_blocks_run_only_what_follows_a_prompt(self):
        lines = ["$ crucible backends", "cpu:0  available", "$ crucible ok"]
        self.assertEqual(doc_commands.commands(lines, 0, console=True),
                         [(1, "crucible backends"), (3, "crucible ok")])

    def test_what_ci_lacks_is_replaced_and_said(self):
        run, notes = doc_commands.rewrite(
            "cargo run --release -p crucible-cli -- bench --backend cuda,wgpu,cpu --sizes 2^10", {})
        self.assertEqual(run, "crucible bench --backend cpu --sizes 2^10")
        self.assertEqual(len(notes), 2)
        run, _ = doc_commands.rewrite("crucible plan --backend cuda --constraints 2^24", {})
        self.assertEqual(run, "crucible plan --backend cpu --constraints 2^24")
        run, _ = doc_commands.rewrite(
            "crucible serve --tls-key /etc/crucible/server.key --key-dir /srv/keys", {"scratch": "/s"})
        self.assertEqual(run, "crucible serve --tls-key /s/etc/crucible/server.key --key-dir /s/srv/keys")
        queue = "crucible queue --queue postgres://u:p@db/crucible status"
        run, notes = doc_commands.rewrite(queue, {"postgres": "postgres://h/fresh"})
        self.assertEqual(run, "crucible queue --queue postgres://h/fresh status")
        run, why = doc_commands.rewrite(queue, {"postgres": None})
        self.assertIsNone(run)
        self.assertIn("CRUCIBLE_TEST_POSTGRES_URL", why)


class Runs(unittest.TestCase):
    def test_a_page_that_drifted_fails_the_run_naming_its_line(self):
        code, out = run_pages({
            "docs/src/page.md": "# A page\n\n```sh\ncrucible ok\ncrucible ok --renamed-flag\n```\n",
        })
        self.assertEqual(code, 1, out)
        self.assertIn("FAILED (exit 2)  docs/src/page.md:5: crucible ok --renamed-flag", out)
        self.assertIn("unexpected argument", out)
        self.assertIn("1 passed, 1 failed", out)

    def test_daemons_start_and_must_stop_cleanly(self):
        code, out = run_pages({
            "docs/src/page.md": "```sh\ncrucible serve --insecure\ncrucible ok\n```\n",
        })
        self.assertEqual(code, 0, out)
        self.assertIn("started", out)
        self.assertIn("2 passed, 0 failed", out)
        code, out = run_pages({
            "docs/src/page.md": "```sh\ncrucible serve --crash\ncrucible ok\n```\n",
        })
        self.assertEqual(code, 1, out)
        self.assertIn("exited 3 after SIGTERM", out)

    def test_what_is_not_run_is_listed_and_a_stale_reason_fails(self):
        code, out = run_pages({
            "docs/src/porting.md": "```sh\nscripts/new-backend.sh mygpu\n```\n",
        })
        self.assertIn("checked by parse only: it adds a crate to the workspace", out)
        self.assertIn("docs/src/porting.md:2: scripts/new-backend.sh mygpu", out)
        # The page no longer shows the two commands the table names for it.
        self.assertEqual(code, 1, out)
        self.assertIn("matches no command on its page", out)


if __name__ == "__main__":
    unittest.main()
