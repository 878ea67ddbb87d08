# Installs the openssl command, which makes the throwaway certificate of the HTTPS test
# (crates/mcp-adapter/tests/http.rs: serve --http with --tls-cert/--tls-key). Without it the test
# reports that it was skipped, except under CI (CI=true), where a missing openssl fails it. Sourced by
# scripts/test.sh.
if ! command -v openssl >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "openssl is not installed; installing Debian's openssl"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl) >/dev/null 2>&1 || true
fi
if command -v openssl >/dev/null 2>&1; then
  echo "openssl: $(openssl version)"
else
  echo "openssl is not available: the HTTPS test of shiftwork-mcp serve --http will report that it was skipped"
fi
