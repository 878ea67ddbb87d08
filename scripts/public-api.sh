#!/usr/bin/env bash
# The public API of every library crate, one line per item (cargo-public-api, from rustdoc's JSON;
# needs the nightly toolchain), compared with the snapshot committed under api/. A change of the public
# API is then always deliberate: a pull request that changes it shows the change in api/*.txt.
#
#   bash scripts/public-api.sh          check: fail when an API differs from its snapshot
#   bash scripts/public-api.sh --bless  write the snapshots anew (after a deliberate change)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo-public-api >/dev/null 2>&1; then
  cargo install cargo-public-api --version 0.52.0 --locked
fi
bless=false
[ "${1:-}" = "--bless" ] && bless=true
status=0
for spec in shiftwork-seams shiftwork-json shiftwork-core shiftwork-hours shiftwork-worklog \
            "shiftwork-contracts --features postgres" "shiftwork-watch --features postgres"; do
  set -- $spec
  crate=$1; shift
  snapshot="api/$crate.txt"
  current=$(cargo +nightly public-api -p "$crate" "$@" --simplified 2>/dev/null)
  if $bless; then
    printf '%s\n' "$current" > "$snapshot"
    echo "wrote $snapshot"
  elif ! diff -u "$snapshot" <(printf '%s\n' "$current"); then
    echo "the public API of $crate changed: if that is deliberate, run bash scripts/public-api.sh --bless and commit api/"
    status=1
  fi
done
exit $status
