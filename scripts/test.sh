#!/usr/bin/env bash
# The README's test command: sets up everything the tests need on a fresh machine, then runs every test
# of the workspace (unit, integration, doc tests).
#
# Each file in scripts/setup.d/*.sh is sourced in name order before the tests run. A setup file may
# install what its tests need, start a service, export variables for the tests, and register clean-up
# with `on_exit "command"`; clean-up runs when this script ends, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."

cleanups=()
on_exit() { cleanups+=("$1"); }
run_cleanups() {
  local i
  for ((i = ${#cleanups[@]} - 1; i >= 0; i--)); do eval "${cleanups[i]}" || true; done
}
trap run_cleanups EXIT

for setup in scripts/setup.d/*.sh; do
  [ -e "$setup" ] || continue
  echo "== setup: $setup"
  # shellcheck source=/dev/null
  source "$setup"
done

echo "== cargo test --workspace"
cargo test --workspace --all-targets "$@"
echo "== contracts: crash tests at the named failpoints (test-only feature test-failpoints, CT-167)"
cargo test -p shiftwork-contracts --features test-failpoints --test contracts -- crash::
echo "== doc tests"
cargo test --workspace --doc
