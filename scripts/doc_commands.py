#!/usr/bin/env python3
"""Runs every shell command of README.md and the guide (docs/src/*.md) as written, so
that a page that drifts from the code fails CI (python3, standard library only).

    python3 scripts/doc_commands.py [--crucible PATH] [--root DIR] [--keep] [PAGE...]

Each page's ```sh (bash, shell, console) blocks run in order, command by command, in a
scratch folder of their own, with the built `crucible` first on the PATH (default
target/release/crucible) and circom's npm tools (interop/circom/node_modules/.bin,
`circom` being their circom2) next. A ```toml block that starts with `# NAME` is
written there as NAME first. Files a page takes as the reader's (`c.zkey`, a circuit,
a tokens file, TLS certificates) are laid in the folder beforehand, from
files/tests/fixtures/ and interop/circom/ (FIXTURES below). Every command must exit 0.

Where a page names what CI does not have, the command is run in its place, and the
line says how (REWRITES): the CPU backend for `--backend cuda`, the built binary for
`cargo run -p crucible-cli --`, the scratch folder for /etc/crucible and a key
directory, localhost for a host name, CI's Postgres (CRUCIBLE_TEST_POSTGRES_URL, a
fresh database) for a queue URL. `crucible serve` and `crucible worker` start in the
background and must say they are up; each runs until the next one starts or its page
ends, then gets SIGTERM and must exit 0. What cannot run here is listed, never skipped
silently: `checked by parse only: <reason>` (NOT_RUN; the crucible command's arguments
are still parsed by cli/src/doc_commands.rs), and a NOT_RUN entry that matches no
command fails the run. The run ends with `N passed, N failed`.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit, urlunsplit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Commands not run here, by page and a pattern of the command as written, with why.
NOT_RUN = [
    ("README.md", r"\(cd interop/circom && npm ci\) && cargo test --release --workspace$",
     "the workspace's tests: CI's `npm-ci` and `test` steps run them"),
    ("getting-started.md", r"\(cd interop/circom && npm ci\) && cargo test --release --workspace$",
     "the workspace's tests: CI's `npm-ci` and `test` steps run them"),
    ("README.md", r"^crucible prove --backend cuda --constraints 2\^20 --proofs 64",
     "a CUDA device's throughput run (64 proofs of 2^20 constraints): minutes on CI's 2 cores"),
    ("README.md", r"^crucible conformance --backend all\b",
     "the whole suite on every backend, wgpu's on llvmpipe: minutes on CI's 2 cores "
     "(CI's `test` step runs the suite on cpu and wgpu)"),
    ("memory.md", r"^crucible prove --backend cuda --constraints 2\^24",
     "a CUDA device's streamed 2^24 proofs under 6 GiB: minutes on CI's 2 cores (its plan runs above)"),
    ("tuning.md", r"cargo test --release -p crucible-backend-cuda$",
     "the CUDA backend's tests with a tuning file need a CUDA device (CI's `test` step runs them without one)"),
    ("porting.md", r"^scripts/new-backend\.sh ",
     "it adds a crate to the workspace: CI's `new-backend` step runs it, then the two commands below"),
    ("porting.md", r"-- (backends|conformance) --backend mygpu",
     "needs the backend scripts/new-backend.sh adds: CI's `new-backend` step runs it"),
    ("benchmarks.md", r"^scripts/gpu-tables\.sh ",
     "reruns every GPU table: needs a CUDA GPU (and peers/sppark's generator, built beforehand)"),
    ("curves.md", r"--vk vk\.bin ",
     "an arkworks VerifyingKey<Bn254> file, which no crucible command writes "
     "(cli/tests/evm_verifier.rs exports and runs one)"),
    ("security.md", r"cargo test --release -p crucible-cli --test fleet$",
     "the fleet test: CI's `test` step runs it against CI's Postgres"),
    ("security.md", r"^export CRUCIBLE_TEST_POSTGRES_URL=",
     "the fleet test's database, for the command below"),
]

# A queue's database as the pages name it (host `db`).
POSTGRES_URL = r"postgres://(?:\S*@)?db(?:\.internal)?/\w+"



def cpu_for_gpus(m):
    """A backend list without its GPUs, the CPU where none is left."""
    kept = [b for b in m.group(1).split(",") if b not in ("cuda", "wgpu")]
    return "--backend " + ",".join(kept or ["cpu"])


# How a command is run where CI lacks what it names: (pattern, replacement, why).
REWRITES = [
    (r"^cargo run --release -p crucible-cli -- ", "crucible ", "the built binary"),
    (r"--backend ((?:\w+,)*cuda(?:,\w+)*)\b", cpu_for_gpus,
     "no GPU here (no CUDA device; wgpu's adapter is llvmpipe, software, seconds an MSM): the CPU backend"),
    (r"/etc/crucible/", "{scratch}/etc/crucible/", "the scratch folder's etc/crucible"),
    (r"(zkey:|--key-dir |key-dir=)/(keys|srv/keys)\b", r"\1{scratch}/\2", "the scratch folder's key directory"),
    (r"https://prover\.internal:", "https://localhost:", "the daemon started here"),
    (POSTGRES_URL, "{postgres}", "CI's Postgres, a fresh database"),
]

# Commands that serve until stopped: started in the background, up once they print this.
DAEMONS = [
    (r"^crucible serve\b", r"grpc listening on"),
    (r"^crucible worker\b", r"^worker "),
]

COMMAND_TIMEOUT = 120
FIXTURES_DIR = os.path.join(ROOT, "files", "tests", "fixtures")


def fixture(scratch, source, name):
    path = os.path.join(scratch, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    shutil.copyfile(os.path.join(FIXTURES_DIR, source), path)
    return path


def secret(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)


def tls_files(scratch, ca_dir, server_dir):
    """A CA (ca.pem, ca.key in ca_dir) and a server certificate it signed for
    localhost and prover.internal (server.pem, server.key in server_dir)."""
    os.makedirs(ca_dir, exist_ok=True)
    os.makedirs(server_dir, exist_ok=True)
    ca_key, ca_pem = os.path.join(ca_dir, "ca.key"), os.path.join(ca_dir, "ca.pem")
    key, csr, pem = (os.path.join(server_dir, n) for n in ("server.key", "server.csr", "server.pem"))
    ext = os.path.join(scratch, "server.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=DNS:localhost,DNS:prover.internal,IP:127.0.0.1\n"
                "extendedKeyUsage=serverAuth\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for args in (
        ["req", "-x509", *ec, "-keyout", ca_key, "-out", ca_pem, "-days", "2", "-subj", "/CN=doc CA"],
        ["req", "-new", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=localhost"],
        ["x509", "-req", "-in", csr, "-CA", ca_pem, "-CAkey", ca_key, "-days", "2",
         "-extfile", ext, "-out", pem],
    ):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    os.chmod(key, 0o600)
    os.remove(csr)


def fixtures_readme(scratch, text):
    fixture(scratch, "multi_public.zkey", "c.zkey")
    fixture(scratch, "multi_public.wtns", "w.wtns")
    fixture(scratch, "multi_public.r1cs", "c.r1cs")
    fixture(scratch, "bn254/multi_public.zkey", "bn254.zkey")
    secret(os.path.join(scratch, "tokens.txt"), "doc-operator-token-0123456789 ops operator\n")
    os.makedirs(os.path.join(scratch, "keys"))


def fixtures_circom(scratch, text):
    src = os.path.join(ROOT, "interop", "circom")
    shutil.copyfile(os.path.join(src, "multi_public.circom"), os.path.join(scratch, "c.circom"))
    shutil.copyfile(os.path.join(src, "multi_public.input.json"), os.path.join(scratch, "input.json"))


def fixtures_curves(scratch, text):
    fixture(scratch, "bn254/multi_public.zkey", "c.zkey")
    fixture(scratch, "bn254/multi_public.vk.json", "vk.json")
    src = os.path.join(ROOT, "interop", "circom")
    shutil.copyfile(os.path.join(src, "multi_public.circom"), os.path.join(scratch, "circuit.circom"))
    shutil.copyfile(os.path.join(src, "multi_public.input.json"), os.path.join(scratch, "input.json"))


def fixtures_service(scratch, text):
    fixture(scratch, "multi_public.zkey", "keys/chain.zkey")
    for name in ("chain.wtns", "w1.wtns", "w2.wtns"):
        fixture(scratch, "multi_public.wtns", name)


def fixtures_security(scratch, text):
    tls_files(scratch, scratch, os.path.join(scratch, "etc", "crucible"))
    os.makedirs(os.path.join(scratch, "srv", "keys"))


def alice_token(scratch):
    """The client's token file: the token the page's tokens file gave `alice`."""
    with open(os.path.join(scratch, "etc", "crucible", "tokens")) as f:
        token = next(l.split()[0] for l in f if l.split()[1:2] == ["alice"])
    secret(os.path.join(scratch, "home", ".crucible-token"), token + "\n")


def fixtures_benchmarks(scratch, text):
    """The generator and the files it reads, so that regenerating writes here."""
    os.makedirs(os.path.join(scratch, "scripts"))
    shutil.copyfile(os.path.join(ROOT, "scripts", "benchmarks.py"),
                    os.path.join(scratch, "scripts", "benchmarks.py"))
    shutil.copytree(os.path.join(ROOT, "docs", "results"), os.path.join(scratch, "docs", "results"))
    shutil.copyfile(os.path.join(ROOT, "BENCHMARKS.md"), os.path.join(scratch, "BENCHMARKS.md"))


# Set up before a command of a page: (page, pattern, what, why).
BEFORE = [
    ("security.md", r"^crucible client .*--token-file ~/\.crucible-token", alice_token,
     "~/.crucible-token holds alice's token from the tokens file above"),
]

FIXTURES = {
    "README.md": fixtures_readme,
    "circom.md": fixtures_circom,
    "curves.md": fixtures_curves,
    "service.md": fixtures_service,
    "security.md": fixtures_security,
    "benchmarks.md": fixtures_benchmarks,
}


def blocks(text):
    """The fenced blocks of a page: (line number of the fence, info string, lines)."""
    found, current = [], None
    for i, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("```"):
            if current is None:
                current = (i, stripped[3:].strip(), [])
            else:
                found.append(current)
                current = None
        elif current is not None:
            current[2].append(line)
    return found


def commands(lines, first_line, console=False):
    """The commands of a shell block: (line number, text), a `\\` continuation joined to
    its line, a here-document kept with its command, comment lines dropped. In a
    console block only the lines after a `$ ` prompt are commands."""
    out, i = [], 0
    while i < len(lines):
        start, text = i, lines[i].strip()
        i += 1
        if console:
            if not text.startswith("$ "):
                continue
            text = text[2:]
        if not text or text.startswith("#"):
            continue
        while text.endswith("\\") and i < len(lines):
            text = text[:-1].rstrip() + " " + lines[i].strip()
            i += 1
        heredoc = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", text)
        if heredoc:
            body = []
            while i < len(lines) and lines[i].strip() != heredoc.group(1):
                body.append(lines[i])
                i += 1
            text = "\n".join([text, *body, heredoc.group(1)])
            i += 1
        out.append((first_line + 1 + start, text))
    return out


def not_run(page, command):
    for n, (where, pattern, reason) in enumerate(NOT_RUN):
        if where == page and re.search(pattern, command):
            return n, reason
    return None, None


def rewrite(command, values):
    """The command as it is run here, and why it differs."""
    notes = []
    for pattern, replacement, why in REWRITES:
        replaced = re.sub(pattern, replacement, command)
        if replaced != command:
            if "{postgres}" in replaced and not values.get("postgres"):
                return None, "needs a Postgres server: set CRUCIBLE_TEST_POSTGRES_URL (CI does)"
            command = replaced
            notes.append(why)
    for key, value in values.items():
        command = command.replace("{" + key + "}", value or "")
    return command, notes


class Postgres:
    """A fresh database on CI's Postgres for a page's queue, dropped at the end."""

    def __init__(self, url):
        self.url, self.name, self.made = url, f"crucible_docs_{os.getpid()}", False

    def database_url(self):
        if not self.url:
            return None
        if not self.made:
            self.psql(f"DROP DATABASE IF EXISTS {self.name}")
            self.psql(f"CREATE DATABASE {self.name}")
            self.made = True
        return urlunsplit(urlsplit(self.url)._replace(path="/" + self.name))

    def psql(self, sql):
        subprocess.run(["psql", self.url, "-qc", sql], check=True, capture_output=True)

    def drop(self):
        if self.made:
            self.psql(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")
            self.made = False


class Daemon:
    def __init__(self, where, command, ready, env, cwd, log):
        self.where, self.command, self.log_path = where, command, log
        self.log = open(log, "w")
        self.proc = subprocess.Popen(["bash", "-c", "exec " + command], cwd=cwd, env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + COMMAND_TIMEOUT
        while time.time() < deadline:
            if re.search(ready, self.output(), flags=re.M):
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"exited {self.proc.returncode} before it was up")
            time.sleep(0.1)
        raise RuntimeError(f"not up after {COMMAND_TIMEOUT} s")

    def output(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        """SIGTERM; it must exit 0 (it drains and stops)."""
        if self.proc.poll() is not None:
            return f"had exited {self.proc.returncode} before it was stopped"
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=COMMAND_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "did not stop within its timeout after SIGTERM"
        self.log.close()
        return None if code == 0 else f"exited {code} after SIGTERM"


class Run:
    def __init__(self, root, crucible, keep):
        self.root, self.keep = root, keep
        self.base = tempfile.mkdtemp(prefix="crucible-doc-commands-")
        shims = os.path.join(self.base, "bin")
        os.makedirs(shims)
        os.symlink(os.path.abspath(crucible), os.path.join(shims, "crucible"))
        npm_bin = os.path.join(root, "interop", "circom", "node_modules", ".bin")
        circom2 = os.path.join(npm_bin, "circom2")
        if os.path.exists(circom2):
            os.symlink(circom2, os.path.join(shims, "circom"))
        self.env = dict(os.environ)
        self.env["PATH"] = os.pathsep.join([shims, npm_bin, os.environ.get("PATH", "")])
        self.env["CRUCIBLE_CACHE_DIR"] = os.path.join(self.base, "cache")
        self.postgres = Postgres(os.environ.get("CRUCIBLE_TEST_POSTGRES_URL"))
        self.passed, self.failed, self.parse_only = 0, [], 0
        self.used_rules = set()
        self.pages_run = set()

    def pages(self):
        guide = os.path.join(self.root, "docs", "src")
        names = sorted(n for n in os.listdir(guide) if n.endswith(".md")) if os.path.isdir(guide) else []
        readme = os.path.join(self.root, "README.md")
        return [readme] * os.path.exists(readme) + [os.path.join(guide, n) for n in names]

    def page(self, path):
        name = os.path.basename(path)
        rel = os.path.relpath(path, self.root)
        with open(path) as f:
            text = f.read()
        shell = [(line, info, lines) for line, info, lines in blocks(text)
                 if info in ("sh", "bash", "shell", "console")]
        if not shell:
            return
        scratch = os.path.join(self.base, rel.replace(os.sep, "_").removesuffix(".md"))
        home = os.path.join(scratch, "home")
        os.makedirs(home)
        self.pages_run.add(name)
        if name in FIXTURES:
            FIXTURES[name](scratch, text)
        for line, info, lines in blocks(text):
            if info == "toml" and lines and re.match(r"#\s*[\w.-]+\.toml\s*$", lines[0]):
                with open(os.path.join(scratch, lines[0].lstrip("#").strip()), "w") as f:
                    f.write("\n".join(lines) + "\n")
        env = dict(self.env, HOME=home)
        daemon = None
        try:
            for block_line, info, lines in shell:
                for line, command in commands(lines, block_line, info == "console"):
                    where = f"{rel}:{line}"
                    rule, reason = not_run(name, command)
                    if rule is not None:
                        self.used_rules.add(rule)
                        self.parse_only += 1
                        print(f"checked by parse only: {reason}\n    {where}: {command}")
                        continue
                    for page_name, pattern, before, why in BEFORE:
                        if page_name == name and re.search(pattern, command):
                            before(scratch)
                            print(f"    (before {where}: {why})")
                    values = {"scratch": scratch}
                    if re.search(POSTGRES_URL, command):
                        values["postgres"] = self.postgres.database_url()
                    run, notes = rewrite(command, values)
                    if run is None:
                        self.parse_only += 1
                        print(f"checked by parse only: {notes}\n    {where}: {command}")
                        continue
                    shown = command if run == command else f"{command}\n      run as: {run} ({'; '.join(notes)})"
                    ready = next((r for p, r in DAEMONS if re.search(p, run)), None)
                    t0 = time.time()
                    if ready:
                        if daemon:
                            self.stop(daemon)
                        log = os.path.join(scratch, f"daemon-{line}.log")
                        try:
                            daemon = Daemon(where, run, ready, env, scratch, log)
                        except RuntimeError as e:
                            daemon = None
                            self.fail(where, shown, f"the daemon {e}", open(log, errors="replace").read())
                            continue
                        self.passed += 1
                        print(f"started {time.time() - t0:5.1f} s  {where}: {shown}")
                        continue
                    try:
                        done = subprocess.run(["bash", "-o", "pipefail", "-c", run], cwd=scratch, env=env,
                                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                              errors="replace", timeout=COMMAND_TIMEOUT)
                    except subprocess.TimeoutExpired:
                        self.fail(where, shown, f"still running after {COMMAND_TIMEOUT} s", "")
                        continue
                    took = time.time() - t0
                    if done.returncode != 0:
                        self.fail(where, shown, f"exit {done.returncode}", done.stdout + done.stderr)
                        continue
                    self.passed += 1
                    print(f"ran {took:5.1f} s  {where}: {shown}")
        finally:
            if daemon:
                self.stop(daemon)
            self.postgres.drop()

    def stop(self, daemon):
        problem = daemon.stop()
        if problem:
            self.fail(daemon.where, daemon.command, problem, daemon.output())

    def fail(self, where, shown, why, output):
        self.failed.append(where)
        tail = "\n".join(output.strip().splitlines()[-15:])
        print(f"FAILED ({why})  {where}: {shown}\n" + "".join(f"    | {l}\n" for l in tail.splitlines()),
              end="" if tail else "\n")

    def finish(self):
        stale = [rule for i, rule in enumerate(NOT_RUN)
                 if i not in self.used_rules and rule[0] in self.pages_run]
        for where, pattern, _ in stale:
            self.failed.append(where)
            print(f"FAILED: NOT_RUN entry ({where}, {pattern!r}) matches no command on its page: remove it")
        if not self.keep:
            shutil.rmtree(self.base, ignore_errors=True)
        else:
            print(f"scratch folders kept in {self.base}")
        print(f"doc commands: {self.passed} run, {self.parse_only} checked by parse only")
        print(f"{self.passed} passed, {len(self.failed)} failed")
        return 1 if self.failed else 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--crucible", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "crucible"))
    ap.add_argument("--root", default=ROOT, help="the repository whose pages run (tests)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folders")
    ap.add_argument("pages", nargs="*", help="only these pages (README.md, circom.md, ...)")
    args = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    if not os.access(args.crucible, os.X_OK):
        print(f"no crucible binary at {args.crucible} (cargo build --release -p crucible-cli, "
              "or --crucible PATH)", file=sys.stderr)
        return 2
    run = Run(os.path.abspath(args.root), args.crucible, args.keep)
    for page in run.pages():
        if not args.pages or os.path.basename(page) in args.pages:
            run.page(page)
    return run.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
