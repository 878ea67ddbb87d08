# Installs Debian's prometheus package for the metrics tests (crates/mcp-adapter/tests/telemetry.rs,
# issue 30): `promtool check metrics` judges a scrape of `serve --http`'s /metrics, and a short run of
# a real Prometheus scrapes the server. Exports SHIFTWORK_TEST_PROMTOOL and SHIFTWORK_TEST_PROMETHEUS.
# Without them the tests report that they were skipped, except under CI, where they fail.
# Sourced by scripts/test.sh.
if ! command -v promtool >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "promtool is not installed; installing Debian's prometheus"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus) >/dev/null 2>&1 || true
  # The package starts its own server where it can; the tests start theirs.
  (command -v service >/dev/null 2>&1 && service prometheus stop) >/dev/null 2>&1 || true
fi
if command -v promtool >/dev/null 2>&1; then
  export SHIFTWORK_TEST_PROMTOOL="$(command -v promtool)"
  echo "promtool: $("$SHIFTWORK_TEST_PROMTOOL" --version 2>&1 | head -1)"
fi
if command -v prometheus >/dev/null 2>&1; then
  export SHIFTWORK_TEST_PROMETHEUS="$(command -v prometheus)"
fi
