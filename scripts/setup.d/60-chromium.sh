# Installs Debian's chromium and chromium-driver: the headless browser and its WebDriver server that the
# web view's browser test drives against the real binary (crates/mcp-adapter/tests/web_view_browser.rs,
# issue 38). Without them the test reports that it was skipped, except under CI (CI=true), where a
# missing browser fails it. Sourced by scripts/test.sh.
if { ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; } \
  && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "chromium or chromium-driver is not installed; installing Debian's chromium and chromium-driver"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) >/dev/null 2>&1 || true
fi
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  echo "chromium: $(chromium --version 2>/dev/null | head -1); $(chromedriver --version | head -1)"
else
  echo "chromium is not available: the browser test of the web view will report that it was skipped"
fi
