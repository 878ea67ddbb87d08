# Installs the official MCP SDKs the client tests drive the binary with (crates/mcp-adapter/tests/
# sdk_clients.rs, issue 29): the Python SDK 2.3.0 in a virtualenv under target/ and the TypeScript
# SDK 1.32.2 in a directory under target/, and exports SHIFTWORK_TEST_PYTHON_SDK (that virtualenv's
# python) and SHIFTWORK_TEST_TS_SDK (that directory). Sourced by scripts/test.sh. Without Python or
# Node.js the tests report that they were skipped, except under CI, where they fail.
mcp_python_venv="$PWD/target/mcp-python-sdk-2.3.0"
if [ ! -x "$mcp_python_venv/bin/python" ] || ! "$mcp_python_venv/bin/python" -c 'import mcp' 2>/dev/null; then
  python3 -m venv "$mcp_python_venv" \
    && "$mcp_python_venv/bin/pip" install --quiet --disable-pip-version-check 'mcp==2.3.0' \
    || echo "the MCP Python SDK could not be installed"
fi
if "$mcp_python_venv/bin/python" -c 'import mcp' 2>/dev/null; then
  export SHIFTWORK_TEST_PYTHON_SDK="$mcp_python_venv/bin/python"
  echo "MCP Python SDK: $("$mcp_python_venv/bin/pip" show mcp 2>/dev/null | sed -n 's/^Version: //p')"
fi
mcp_ts_dir="$PWD/target/mcp-ts-sdk-1.32.2"
if command -v npm >/dev/null 2>&1; then
  if [ ! -d "$mcp_ts_dir/node_modules/@modelcontextprotocol/sdk" ]; then
    mkdir -p "$mcp_ts_dir"
    (cd "$mcp_ts_dir" && echo '{"private":true}' > package.json \
      && npm install --silent --no-audit --no-fund '@modelcontextprotocol/sdk@1.32.2' >/dev/null 2>&1) \
      || echo "the MCP TypeScript SDK could not be installed"
  fi
  if [ -d "$mcp_ts_dir/node_modules/@modelcontextprotocol/sdk" ]; then
    export SHIFTWORK_TEST_TS_SDK="$mcp_ts_dir"
    echo "MCP TypeScript SDK: 1.32.2 in $mcp_ts_dir"
  fi
fi
