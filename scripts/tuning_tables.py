#!/usr/bin/env python3
"""The key tables of docs/src/tuning.md, made from the backends' tuning structs
(python3, standard library only; CI runs `--check` through scripts/check_docs.py).

Each table lists a struct's fields in order: the key, its type, and the field's doc
comment, which says what the key sets, what it allows and its default. A doc link to a
constant of the same file (`[`DEFAULT_STAGING_MIB`]`) is replaced by the constant's
value. The tables sit between marker comments in tuning.md; nothing else there is
touched.

    python3 scripts/tuning_tables.py           # rewrite the tables in docs/src/tuning.md
    python3 scripts/tuning_tables.py --check   # exit 1 if they differ from the structs
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "src", "tuning.md")
# (table, source file, struct)
STRUCTS = [
    ("cuda", "backend-cuda/src/tuning.rs", "CudaTuning"),
    ("wgpu", "backend-wgpu/src/tuning.rs", "WgpuTuning"),
]
TYPES = {"u32": "integer", "u64": "integer", "bool": "boolean", "String": "text"}


def fields(source, struct):
    """(name, type, doc) of each field of `struct` in `source`, in order."""
    body = re.search(r"pub struct " + struct + r" \{(.*?)\n\}", source, re.S)
    if not body:
        raise SystemExit(f"no struct {struct}")
    out, doc = [], []
    for line in body.group(1).splitlines():
        line = line.strip()
        if line.startswith("///"):
            doc.append(line[3:].strip())
            continue
        field = re.fullmatch(r"pub (\w+): Option<(\w+)>,", line)
        if field:
            if not doc:
                raise SystemExit(f"{struct}.{field.group(1)} has no doc comment")
            out.append((field.group(1), field.group(2), " ".join(doc)))
        elif line:
            raise SystemExit(f"{struct}: a field that is not `pub name: Option<T>`: {line}")
        doc = []
    return out


def constants(source):
    """The value of each `const NAME: T = value;` of `source`."""
    return {m.group(1): m.group(2).strip() for m in
            re.finditer(r"const (\w+): [^=]+= ([^;]+);", source)}


def describe(name, doc, values):
    # The cuda struct's comments begin with their key: the table already names it.
    doc = re.sub(r"^`" + name + r"`: ", "", doc)
    doc = re.sub(r"\[`(\w+)`\]", lambda m: values.get(m.group(1), "`" + m.group(1) + "`"), doc)
    doc = re.sub(r"\[`([^`]+)`\]", r"`\1`", doc)
    return doc[:1].upper() + doc[1:]


def table(name, path, struct):
    source = open(os.path.join(ROOT, path)).read()
    values = constants(source)
    rows = [f"<!-- the `[{name}]` keys, made from `{struct}` in {path} by "
            "scripts/tuning_tables.py: do not edit -->",
            "| key | type | what it sets, what it allows, its default |",
            "|---|---|---|"]
    for key, rust, doc in fields(source, struct):
        kind = TYPES.get(rust, "a word")
        rows.append(f"| `{key}` | {kind} | {describe(key, doc, values)} |")
    rows.append(f"<!-- end of the `[{name}]` keys -->")
    return "\n".join(rows)


def render(page):
    for name, path, struct in STRUCTS:
        pattern = re.compile(r"<!-- the `\[" + name + r"\]` keys.*?<!-- end of the `\[" + name
                             + r"\]` keys -->", re.S)
        if not pattern.search(page):
            raise SystemExit(f"docs/src/tuning.md has no `[{name}]` table markers")
        page = pattern.sub(lambda _: table(name, path, struct), page)
    return page


def main():
    page = open(PAGE).read()
    made = render(page)
    if "--check" in sys.argv[1:]:
        if made != page:
            print("docs/src/tuning.md's key tables differ from the tuning structs: "
                  "run python3 scripts/tuning_tables.py", file=sys.stderr)
            return 1
        return 0
    if made != page:
        open(PAGE, "w").write(made)
    return 0


if __name__ == "__main__":
    sys.exit(main())
