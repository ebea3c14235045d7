"""The MCP conformance suite's server scenarios (@modelcontextprotocol/conformance, installed
pinned by .ci/mcp.sh) run twice in one go: against @modelcontextprotocol/server-everything
serving Streamable HTTP itself, and against `decision mcp --listen --mode shadow` in front of
the same server on stdio. The server does not implement every scenario's test tools, so some
fail either way; the gateway must not make any scenario fail that passes directly. Every
session log the gateway wrote must verify. Prints both summaries.

Usage: mcp_conformance.py DECISION_BIN NPM_PREFIX WORKDIR
"""
import os
import re
import signal
import socket
import subprocess
import sys
import time

DECISION, NPM, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
EVERYTHING = os.path.join(NPM, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
CONFORMANCE = os.path.join(NPM, "node_modules/.bin/conformance")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port):
    for _ in range(300):  # at most 30 s
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


def run_suite(url):
    """Each scenario's name → whether it passed."""
    out = subprocess.run([CONFORMANCE, "server", "--url", url], capture_output=True, text=True, timeout=900)
    summary = out.stdout[out.stdout.find("=== SUMMARY ===") :]
    results = {m.group(2): m.group(1) == "✓" for m in re.finditer(r"^([✓✗]) ([\w-]+):", summary, re.M)}
    assert results, out.stdout[-2000:] + out.stderr[-2000:]
    return results, summary.strip()


def main():
    os.makedirs(WORK, exist_ok=True)
    port = free_port()
    direct = subprocess.Popen(["node", EVERYTHING, "streamableHttp"], env={**os.environ, "PORT": str(port)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(port)
        alone, alone_summary = run_suite(f"http://127.0.0.1:{port}/mcp")
    finally:
        direct.kill()
    logs = os.path.join(WORK, "conformance-logs")
    port = free_port()
    gateway = subprocess.Popen(
        [DECISION, "mcp", "--log", logs, "--listen", f"127.0.0.1:{port}", "--mode", "shadow", "--",
         "node", EVERYTHING, "stdio"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(port)
        gated, gated_summary = run_suite(f"http://127.0.0.1:{port}/mcp")
    finally:
        gateway.send_signal(signal.SIGTERM)
        assert gateway.wait(60) == 0, "the gateway stops on SIGTERM"
    print("  server-everything serving Streamable HTTP itself:")
    print("    " + alone_summary.splitlines()[-1])
    print("  the same server behind decision mcp --listen --mode shadow:")
    print("\n".join("    " + line for line in gated_summary.splitlines()[1:]))
    broken = sorted(name for name, passed in alone.items() if passed and not gated.get(name, False))
    assert not broken, f"scenarios that pass directly but not through the gateway: {broken}"
    written = sorted(f for f in os.listdir(logs) if f.endswith(".jsonl"))
    for name in written:
        out = subprocess.run([DECISION, "replay", "--require-seal", "--allow-empty", os.path.join(logs, name)],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "seal: sealed" in out.stdout, name + out.stdout
    gained = sorted(name for name, passed in gated.items() if passed and not alone.get(name, False))
    print(f"  no scenario that passes directly fails through the gateway; passing only through it: {gained or 'none'};"
          f" {len(written)} session logs sealed and verified")


main()
