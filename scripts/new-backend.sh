#!/usr/bin/env bash
# Starts a new backend from the template: copies backend-template/ to backend-NAME/,
# renames it (crate crucible-backend-NAME, registered as NAME), and adds it to the
# workspace members and the roster (backends/: a feature, a dependency, a line). That
# is every change a backend needs outside its own crate; core does not change.
#
#   scripts/new-backend.sh mygpu
#
# Then `cargo run --release -p crucible-cli -- backends --backend NAME` lists it, and
# `cargo run --release -p crucible-cli -- conformance --backend mygpu` reports every
# case as unsupported, each saying what to implement in which file.
set -euo pipefail
cd "$(dirname "$0")/.."

name="${1:-}"
if [[ ! "$name" =~ ^[a-z][a-z0-9]*$ ]]; then
  echo "usage: $0 NAME (lowercase letters and digits, starting with a letter)" >&2
  exit 2
fi
dir="backend-$name"
if [[ -e "$dir" ]] || grep -q "\"$dir\"" Cargo.toml; then
  echo "$dir already exists" >&2
  exit 1
fi
# The anchors this script inserts after: the template's own lines.
for anchor in 'Cargo.toml:"backend-template",' \
  'backends/Cargo.toml:template = ["dep:crucible-backend-template"]' \
  'backends/Cargo.toml:crucible-backend-template = { path = "../backend-template", optional = true }' \
  'backends/src/lib.rs:pub use crucible_backend_template as template;'; do
  if ! grep -qF -- "${anchor#*:}" "${anchor%%:*}"; then
    echo "cannot find \`${anchor#*:}\` in ${anchor%%:*}" >&2
    exit 1
  fi
done

# The crate, renamed: file contents (crate, type and registered names, paths in the
# messages), not file names (the template's are the standard ones).
upper="$(tr '[:lower:]' '[:upper:]' <<<"${name:0:1}")${name:1}"
cp -R backend-template "$dir"
rm -rf "$dir/target"
find "$dir" -type f -exec sed -i -e "s/template/$name/g" -e "s/Template/$upper/g" {} +

# The workspace member.
sed -i "s|^\(\s*\)\"backend-template\",\$|&\n\1\"$dir\",|" Cargo.toml
# The roster's feature (on by default), its dependency, and its line.
sed -i \
  -e "s|^default = \[\(.*\)\]\$|default = [\1, \"$name\"]|" \
  -e "s|^template = \[\"dep:crucible-backend-template\"\]\$|&\n$name = [\"dep:crucible-backend-$name\"]|" \
  -e "s|^crucible-backend-template = { path = \"../backend-template\", optional = true }\$|&\ncrucible-backend-$name = { path = \"../$dir\", optional = true }|" \
  backends/Cargo.toml
sed -i "s|^pub use crucible_backend_template as template;\$|&\n#[cfg(feature = \"$name\")]\npub use crucible_backend_$name as $name;|" \
  backends/src/lib.rs
# rustfmt keeps the roster's lines sorted by crate.
rustfmt --edition 2021 backends/src/lib.rs

echo "added $dir (crate crucible-backend-$name, backend \`$name\`), a workspace member and a roster feature"
