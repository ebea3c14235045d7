#!/usr/bin/env bash
# `decision mcp` against real MCP software from the registries, driven as a user would: the
# official filesystem server (npm) behind the gateway, the official Python client (PyPI) in
# front of it; then the Python SDK's own server over Streamable HTTP behind `--upstream`. Versions are pinned; everything runs on loopback pipes, bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."

FILESYSTEM_SERVER_VERSION=2026.8.31
PYTHON_MCP_VERSION=1.22.0

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/venv"
timeout 600 "$work/venv/bin/pip" install -q "mcp==$PYTHON_MCP_VERSION"
timeout 600 npm install -q --no-audit --no-fund --prefix "$work/npm" \
  "@modelcontextprotocol/server-filesystem@$FILESYSTEM_SERVER_VERSION"
server="$work/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"

cargo build -q --bin decision
bin="$(pwd)/target/debug/decision"

echo "decision mcp against @modelcontextprotocol/server-filesystem@$FILESYSTEM_SERVER_VERSION, Python mcp==$PYTHON_MCP_VERSION:"
timeout 600 "$work/venv/bin/python" .ci/mcp_client.py "$bin" "$server" "$work/run"
echo "decision mcp --upstream in front of the Python SDK's server over Streamable HTTP (mcp==$PYTHON_MCP_VERSION):"
timeout 300 "$work/venv/bin/python" .ci/mcp_http.py "$bin" "$work/http"
echo "mcp gateway: ok"
