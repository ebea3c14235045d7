#!/usr/bin/env bash
# `decision mcp` against real MCP software from the registries, driven as a user would: the
# official filesystem server (npm) behind the gateway with the official Python client (PyPI) in
# front of it; the Python SDK's own server over Streamable HTTP behind `--upstream` (and the
# Python client over HTTP to `--listen`); the reference time server (PyPI); the TypeScript
# SDK's client over stdio and `--listen`; the MCP conformance suite's server scenarios against
# server-everything, directly and through `--listen`. Versions are pinned; everything runs on
# loopback, bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."

FILESYSTEM_SERVER_VERSION=2026.8.31
EVERYTHING_SERVER_VERSION=2026.8.31
TYPESCRIPT_SDK_VERSION=1.32.2
# 0.1.13: the newest that runs on Node 20 (0.1.14 on use `fs.globSync`, Node 22).
CONFORMANCE_VERSION=0.1.13
PYTHON_MCP_VERSION=1.22.0
TIME_SERVER_VERSION=2026.10.19

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/venv"
timeout 600 "$work/venv/bin/pip" install -q "mcp==$PYTHON_MCP_VERSION"
# The time server needs a newer `mcp` than the pinned client: it gets a virtual environment of its own.
python3 -m venv "$work/time-venv"
timeout 600 "$work/time-venv/bin/pip" install -q "mcp-server-time==$TIME_SERVER_VERSION"
timeout 600 npm install -q --no-audit --no-fund --prefix "$work/npm" \
  "@modelcontextprotocol/server-filesystem@$FILESYSTEM_SERVER_VERSION" \
  "@modelcontextprotocol/server-everything@$EVERYTHING_SERVER_VERSION" \
  "@modelcontextprotocol/sdk@$TYPESCRIPT_SDK_VERSION" \
  "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
server="$work/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"

cargo build -q --bin decision
bin="$(pwd)/target/debug/decision"

echo "decision mcp against @modelcontextprotocol/server-filesystem@$FILESYSTEM_SERVER_VERSION, Python mcp==$PYTHON_MCP_VERSION:"
timeout 600 "$work/venv/bin/python" .ci/mcp_client.py "$bin" "$server" "$work/run"
echo "decision mcp --upstream in front of the Python SDK's server over Streamable HTTP (mcp==$PYTHON_MCP_VERSION):"
timeout 300 "$work/venv/bin/python" .ci/mcp_http.py "$bin" "$work/http"
echo "decision mcp in front of mcp-server-time==$TIME_SERVER_VERSION (PyPI), Python client:"
timeout 300 "$work/venv/bin/python" .ci/mcp_time.py "$bin" "$work/time-venv/bin/python" "$work/time"
echo "decision mcp driven by the TypeScript SDK's client (@modelcontextprotocol/sdk@$TYPESCRIPT_SDK_VERSION), stdio and --listen:"
# The script imports the SDK as a module: it runs from the prefix the SDK is installed in.
cp .ci/mcp_ts_client.mjs "$work/npm/"
timeout 300 node "$work/npm/mcp_ts_client.mjs" "$bin" "$server" "$work/ts"
echo "the MCP conformance suite (@modelcontextprotocol/conformance@$CONFORMANCE_VERSION), server scenarios, direct and through --listen:"
timeout 900 python3 .ci/mcp_conformance.py "$bin" "$work/npm" "$work/conformance"
echo "mcp gateway: ok"
