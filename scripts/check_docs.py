#!/usr/bin/env python3
"""Checks the documents (python3, standard library only; CI runs it):

- every page SUMMARY.md lists exists under docs/src/, and every page there is listed;
- every relative link in README.md, BENCHMARKS.md, CHANGELOG.md and docs/src/*.md
  names a file or folder that exists (anchors and web addresses are not checked);
- docs/ holds the guide (book.toml, src/*.md) and the result files (results/*.json) only;
- BENCHMARKS.md is what scripts/benchmarks.py makes of docs/results/;
- docs/src/tuning.md's key tables are what scripts/tuning_tables.py makes of the tuning
  structs;
- every code comment (`//`) that cites BENCHMARKS.md names a section that exists: a current one
  (`BENCHMARKS.md#anchor`, GitHub's anchor of a heading) or one of the file as of a
  commit (`d32de65:BENCHMARKS.md`, as `git show` takes it, for numbers measured before
  the tables were regenerated); a bare `BENCHMARKS.md` in code is refused.

    python3 scripts/check_docs.py
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "docs", "src")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def links(path):
    text = open(path).read()
    # Links inside code blocks are code, not links.
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return LINK.findall(text)


CITED = re.compile(r"(?:([0-9a-f]{7,40}):)?BENCHMARKS\.md(#[a-z0-9-]+)?")
CODE = (".rs", ".cu", ".cuh", ".wgsl")


def anchor(heading):
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces
    as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return "#" + text.replace(" ", "-")


def citations(tracked):
    """Problems with the BENCHMARKS.md citations in the tracked code files."""
    problems = []
    headings = [l.lstrip("#").strip() for l in open(os.path.join(ROOT, "BENCHMARKS.md"))
                if l.startswith("#")]
    anchors = {anchor(h) for h in headings}
    commits = {}
    for path in tracked:
        if not path.endswith(CODE):
            continue
        text = open(os.path.join(ROOT, path), errors="replace").read()
        for m in CITED.finditer(text):
            # Comments cite; code that names the file (a path to read) does not.
            if "//" not in text[text.rfind("\n", 0, m.start()) + 1:m.start()]:
                continue
            line = text.count("\n", 0, m.start()) + 1
            commit, section = m.group(1), m.group(2)
            where = f"{path}:{line}"
            if commit:
                if commit not in commits:
                    commits[commit] = subprocess.run(
                        ["git", "-C", ROOT, "cat-file", "-e", f"{commit}:BENCHMARKS.md"],
                        capture_output=True).returncode == 0
                if not commits[commit]:
                    problems.append(f"{where} cites {commit}:BENCHMARKS.md, which git does not have")
            elif section is None:
                problems.append(f"{where} cites BENCHMARKS.md without a section "
                                "(BENCHMARKS.md#anchor, or COMMIT:BENCHMARKS.md)")
            elif section not in anchors:
                problems.append(f"{where} cites {m.group(0)}, a section BENCHMARKS.md no longer has")
    return problems


def main():
    problems = []
    summary = os.path.join(SRC, "SUMMARY.md")
    listed = set()
    for target in links(summary):
        listed.add(os.path.normpath(target))
        if not os.path.isfile(os.path.join(SRC, target)):
            problems.append(f"docs/src/SUMMARY.md lists {target}, which does not exist")
    for name in sorted(os.listdir(SRC)):
        if name.endswith(".md") and name != "SUMMARY.md" and name not in listed:
            problems.append(f"docs/src/{name} is not listed in SUMMARY.md")

    pages = [os.path.join(ROOT, n) for n in ("README.md", "BENCHMARKS.md", "CHANGELOG.md")]
    pages += [os.path.join(SRC, n) for n in sorted(os.listdir(SRC)) if n.endswith(".md")]
    for page in pages:
        for target in links(page):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if not os.path.exists(os.path.join(os.path.dirname(page), path)):
                problems.append(f"{os.path.relpath(page, ROOT)} links to {target}, which does not exist")

    tracked = subprocess.run(["git", "-C", ROOT, "ls-files", "docs"], capture_output=True,
                             text=True, check=True).stdout.split()
    for path in tracked:
        if not (path == "docs/book.toml"
                or re.fullmatch(r"docs/src/([a-z0-9-]+|SUMMARY)\.md", path)
                or re.fullmatch(r"docs/results/[a-z0-9-]+\.json", path)):
            problems.append(f"{path}: docs/ holds the guide and the result files only")

    for script in ("benchmarks.py", "tuning_tables.py"):
        check = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script),
                                "--check"], capture_output=True, text=True)
        if check.returncode != 0:
            problems.append(check.stderr.strip() or f"scripts/{script} --check failed")

    code = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True,
                          check=True).stdout.split()
    problems += citations(code)

    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print(f"documents: {len(pages)} pages, every link and SUMMARY entry resolves")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
