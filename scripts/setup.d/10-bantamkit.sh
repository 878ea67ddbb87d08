# Installs the reference implementation of the shift-work tools, bantamkit 0.36.2, into a virtualenv
# under target/, for the differential test (crates/mcp-adapter/tests/shiftwork_differential.rs), and
# exports BANTAMKIT_MCP, the path of its MCP server. The test only runs it as a black box.
# Sourced by scripts/test.sh.
bantamkit_venv="${BANTAMKIT_VENV:-$PWD/target/bantamkit-0.36.2-venv}"
if [ ! -x "$bantamkit_venv/bin/bantamkit-mcp" ]; then
  python3 -m venv "$bantamkit_venv"
  "$bantamkit_venv/bin/pip" install --quiet --disable-pip-version-check 'bantamkit[mcp]==0.36.2'
fi
export BANTAMKIT_MCP="$bantamkit_venv/bin/bantamkit-mcp"
echo "bantamkit 0.36.2 reference: $BANTAMKIT_MCP"
