#!/usr/bin/env bash
# Semver of the library crates against the last release (cargo-semver-checks), and a changelog entry
# for every crate whose version changed since then.
#
# 1. Each library crate's public API is compared with the one it had at the baseline release: a change
#    that breaks a user (a removed item, a changed signature, a new variant of an exhaustive enum, …)
#    fails unless the crate's version says so (0.1.x -> 0.2.0). cargo-semver-checks builds both APIs
#    from rustdoc's JSON.
# 2. Each crate whose version differs from the baseline's has its heading in CHANGELOG.md:
#    `### <crate> <version>`.
#
# The baseline is the tag of the last release; a clone without tags (CI's fresh clone may have none)
# uses the commit recorded below, fetched when the clone is shallow. When neither can be found the step
# fails: it never passes by checking nothing.
#
#   bash scripts/semver.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# The last release: its tag, and the commit the tag names (the fallback when the clone has no tags).
BASELINE_TAG="v0.1.0"
BASELINE_COMMIT="78cee7115b76566af7accaaa8edd1db6c72a0ba9"
# The version of cargo-semver-checks this script was checked with (its rustdoc JSON reader must know
# the format of the toolchain in use: 0.51.0 reads rustc 1.95's).
SEMVER_CHECKS_VERSION="0.51.0"
# The library crates (the binary package, the benches and the examples publish no API).
CRATES=(shiftwork-seams shiftwork-json shiftwork-core shiftwork-hours shiftwork-worklog
        shiftwork-contracts shiftwork-watch)

baseline=""
if git rev-parse -q --verify "refs/tags/$BASELINE_TAG^{commit}" >/dev/null; then
  baseline=$(git rev-parse "refs/tags/$BASELINE_TAG^{commit}")
elif git cat-file -e "$BASELINE_COMMIT^{commit}" 2>/dev/null; then
  baseline=$BASELINE_COMMIT
else
  echo "semver: neither the tag $BASELINE_TAG nor the commit $BASELINE_COMMIT is in this clone; fetching it"
  if [ "$(git rev-parse --is-shallow-repository)" = "true" ]; then
    git fetch --quiet --unshallow || true
  fi
  git fetch --quiet origin "$BASELINE_COMMIT" 2>/dev/null || git fetch --quiet --tags origin 2>/dev/null || true
  if git cat-file -e "$BASELINE_COMMIT^{commit}" 2>/dev/null; then
    baseline=$BASELINE_COMMIT
  fi
fi
if [ -z "$baseline" ]; then
  echo "semver: FAILED: the baseline release ($BASELINE_TAG, commit $BASELINE_COMMIT) cannot be found or fetched;"
  echo "        the semver check cannot run without it (fetch the tag, or the commit, and run again)."
  exit 1
fi
echo "semver: baseline $BASELINE_TAG = $baseline"

installed=$(cargo semver-checks --version 2>/dev/null | awk '{print $2}' || true)
if [ "$installed" != "$SEMVER_CHECKS_VERSION" ]; then
  cargo install cargo-semver-checks --version "$SEMVER_CHECKS_VERSION" --locked
fi

# The version of a package at the baseline commit, from its manifest there (a `version.workspace`
# package takes the workspace's).
baseline_version() {
  local crate=$1 dir manifest
  dir=$(git ls-tree -r --name-only "$baseline" -- crates | grep '/Cargo.toml$' | while read -r m; do
    if git show "$baseline:$m" | grep -q "^name = \"$crate\"$"; then dirname "$m"; fi
  done)
  [ -n "$dir" ] || return 0
  manifest=$(git show "$baseline:$dir/Cargo.toml")
  if printf '%s\n' "$manifest" | grep -q '^version.workspace = true'; then
    git show "$baseline:Cargo.toml" | sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p'
  else
    printf '%s\n' "$manifest" | sed -n 's/^version = "\(.*\)"/\1/p' | head -1
  fi
}

current_version() {
  cargo metadata --no-deps --format-version 1 |
    python3 -c "import json,sys; print(next(p['version'] for p in json.load(sys.stdin)['packages'] if p['name']=='$1'))"
}

status=0
missing=()
for crate in "${CRATES[@]}"; do
  before=$(baseline_version "$crate")
  now=$(current_version "$crate")
  if [ -z "$before" ]; then
    echo "semver: $crate is new since $BASELINE_TAG ($now): nothing to compare"
    continue
  fi
  echo "semver: $crate $before -> $now"
  if [ "$before" != "$now" ] && ! grep -qx "### $crate $now" CHANGELOG.md; then
    missing+=("$crate $now")
  fi
done

# One run over every crate: the baseline is built once.
args=()
for crate in "${CRATES[@]}"; do args+=(--package "$crate"); done
if ! cargo semver-checks check-release "${args[@]}" --baseline-rev "$baseline" --all-features; then
  echo "semver: FAILED: a public API changed incompatibly without the version bump that says so;"
  echo "        bump the crate's version (0.x: the minor number) and record the change in CHANGELOG.md."
  status=1
fi
if [ ${#missing[@]} -gt 0 ]; then
  for m in "${missing[@]}"; do
    echo "semver: FAILED: $m has no entry in CHANGELOG.md (a heading '### $m' with what changed)"
  done
  status=1
fi
[ $status -eq 0 ] && echo "semver: every crate's version says what its API did"
exit $status
