#!/usr/bin/env python3
"""The import graph of the crates given: for each module, the modules of the same
crate it uses (`use crate::...`, `crate::...` paths, `use super::...` and a parent's
`use child::...`), printed one module a line; exits 1 if the graph has a cycle (a
module that imports, directly or not, a module that imports it). Tests (a file's
`#[cfg(test)] mod tests`) are left out: they may use what they test. A name the crate
or a parent module re-exports (`pub use module::Name`) counts as an import of the
module that defines it: the re-exporting module only forwards it (and its `pub use`
lines are no imports of its own). With no crate named, every crate of the workspace
is checked.

With --backends it also checks that no backend crate (backend-*) depends on another
one: backends meet only in the roster crate (backends/).

  scripts/import_graph.py --backends
"""
import os
import re
import sys


def module_of(src, path):
    rel = os.path.relpath(path, src)[: -len(".rs")].split(os.sep)
    if rel[-1] in ("lib", "main"):
        rel = rel[:-1]
    elif rel[-1] == "mod":
        rel = rel[:-1]
    return "::".join(rel) or "crate"


def code_of(text):
    # The test module closes a file by convention; comments and strings hold no paths.
    cut = re.search(r"#\[cfg\(test\)\]\s*mod tests", text)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def use_leaves(tree):
    """The (path, name) pairs a use tree binds: `a::{b as c, d::{e, f}}` -> (a::b, c),
    (a::d::e, e), (a::d::f, f). The alias is read while the words are still apart, so
    a name that merely ends in "as" (`ntt_cases`, `Lease`) is never cut."""
    tree = re.sub(r"\s+as\s+(\w+)", r"@\1", tree.strip())
    return [_leaf(p) for p in _flat_paths(re.sub(r"\s+", "", tree))]


def _leaf(path):
    target, _, alias = path.partition("@")
    return target, alias or target.split("::")[-1]


def _flat_paths(tree):
    brace = tree.find("{")
    if brace < 0:
        return [tree] if tree else []
    prefix, inner = tree[:brace], tree[brace + 1 : tree.rindex("}")]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    out = []
    for part in parts:
        for p in _flat_paths(part):
            target = p.partition("@")[0]
            out.append(prefix + p if target not in ("", "self") else prefix.rstrip(":") + p[len(target):])
    return out


def use_paths(tree):
    """The paths a use tree names, aliases dropped: `a::{b, c::{d as x}}` -> a::b, a::c::d."""
    return [target for target, _ in use_leaves(tree)]


def resolve(path, here, modules, reexports=None):
    """The module `path` (as written in module `here`) lands in, if one of ours; a name
    a module re-exports (`pub use child::Name`) lands in the module it comes from."""
    segs = [s for s in path.split("::") if s]
    if not segs:
        return None
    if segs[0] in ("crate", "$crate"):
        base = []
        segs = segs[1:]
    elif segs[0] == "super":
        base = [] if here == "crate" else here.split("::")[:-1]
        segs = segs[1:]
    elif segs[0] == "self":
        base = [] if here == "crate" else here.split("::")
        segs = segs[1:]
    else:
        base = [] if here == "crate" else here.split("::")
        if "::".join(base + segs[:1]) not in modules:
            return None  # an outside crate
    best, matched = "::".join(base) or "crate", 0
    for n in range(1, len(segs) + 1):
        candidate = "::".join(base + segs[:n])
        if candidate in modules:
            best, matched = candidate, n
    forwarded = (reexports or {}).get(best, {})
    if matched < len(segs) and segs[matched] in forwarded:
        return forwarded[segs[matched]]
    return best


def reexports_of(files, modules):
    """Module -> {name: the module it comes from (None: another crate)} for every name
    a module forwards with `pub use`."""
    found = {}
    for module, path in files.items():
        names = {}
        for tree in re.findall(r"\bpub\s+use\s+([^;]+);", code_of(open(path).read())):
            for target, name in use_leaves(tree):
                if name in ("*", "self", ""):
                    continue
                names[name] = resolve(target, module, modules)
        if names:
            found[module] = names
    return found


def graph(crate):
    src = os.path.join(crate, "src")
    files = {}
    for root, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(root, name)
                files[module_of(src, path)] = path
    modules = set(files)
    reexports = reexports_of(files, modules)
    edges = {m: set() for m in modules}
    for module, path in files.items():
        # A module's own `pub use` lines forward names to its importers: not imports.
        code = re.sub(r"\bpub\s+use\s+[^;]+;", "", code_of(open(path).read()))
        paths = []
        for tree in re.findall(r"\buse\s+([^;]+);", code):
            paths += use_paths(tree)
        # Paths in code: from the crate root, or from a child module or a parent by name.
        paths += re.findall(r"(?<![\w:])\$?(?:crate|super|self)(?:::\w+)+", code)
        paths += re.findall(r"(?<![\w:])\w+(?:::\w+)+", code)
        for p in paths:
            target = resolve(p, module, modules, reexports)
            if target and target != module:
                edges[module].add(target)
    return edges


def find_cycle(edges):
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == "open":
                return stack[stack.index(n) :] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = "done"
        return None

    for m in sorted(edges):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def backend_dependencies(root):
    """(backend crate, the other backend crates its Cargo.toml names)."""
    found = []
    for name in sorted(os.listdir(root)):
        manifest = os.path.join(root, name, "Cargo.toml")
        if name.startswith("backend-") and os.path.isfile(manifest):
            own = "crucible-" + name
            deps = set(re.findall(r"^(crucible-backend-[\w-]+)\s*[.=]", open(manifest).read(), re.M))
            found.append((name, sorted(deps - {own})))
    return found


def workspace_crates(root):
    """The members of the workspace's Cargo.toml that have a src/ folder."""
    manifest = open(os.path.join(root, "Cargo.toml")).read()
    members = re.search(r"members\s*=\s*\[(.*?)\]", manifest, re.S).group(1)
    names = re.findall(r'"([^"]+)"', members)
    return [n for n in names if os.path.isdir(os.path.join(root, n, "src"))]


def main(args):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ok = True
    crates = [a for a in args if not a.startswith("--")] or workspace_crates(root)
    for crate in crates:
        edges = graph(os.path.join(root, crate))
        print(f"{crate}: module -> modules it imports")
        for m in sorted(edges, key=lambda m: (m != "crate", m)):
            print(f"  {m} -> {', '.join(sorted(edges[m])) or '(none)'}")
        cycle = find_cycle(edges)
        if cycle:
            print(f"  CYCLE: {' -> '.join(cycle)}")
            ok = False
        else:
            print("  no cycle")
    if "--backends" in args:
        for crate, deps in backend_dependencies(root):
            print(f"{crate} depends on backend crates: {', '.join(deps) or '(none)'}")
            ok &= not deps
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
