#!/usr/bin/env bash
# The user guide (docs/, an mdBook): its tool reference must be what the binary prints
# (`shiftwork-mcp tools --markdown`), so the guide cannot drift from the tools the server lists; then
# the book must build. Run by CI; `bash scripts/check-docs.sh` from the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mdbook >/dev/null 2>&1; then
  cargo install mdbook --version 0.5.4 --locked
fi
cargo build -p shiftwork-mcp
generated=$(mktemp)
trap 'rm -f "$generated"' EXIT
target/debug/shiftwork-mcp tools --markdown > "$generated"
if ! diff -u docs/src/reference/tools.md "$generated"; then
  echo "docs/src/reference/tools.md differs from what the binary prints;"
  echo "regenerate it: cargo run -p shiftwork-mcp -- tools --markdown > docs/src/reference/tools.md"
  exit 1
fi
mdbook build docs
echo "the user guide builds, and its tool reference matches the binary"
