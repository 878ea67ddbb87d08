# Installs tmux, the pseudo-terminal the live view's test drives the real binary in
# (crates/mcp-adapter/tests/watch.rs, issue 15). Without it the test reports that it was skipped,
# except under CI (CI=true), where a missing tmux fails it. Sourced by scripts/test.sh.
if ! command -v tmux >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "tmux is not installed; installing Debian's tmux"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux) >/dev/null 2>&1 || true
fi
if command -v tmux >/dev/null 2>&1; then
  echo "tmux: $(tmux -V)"
else
  echo "tmux is not available: the terminal test of shiftwork-mcp watch will report that it was skipped"
fi
