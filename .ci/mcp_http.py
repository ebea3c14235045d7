"""Drives `decision mcp --upstream URL` with the official Python MCP client (stdio, in front)
and the official Python SDK's server over Streamable HTTP (.ci/mcp_http_server.py, behind),
in both of the server's answer modes (event streams, JSON bodies). Checks, as a user would
see them: a read runs; a destructive call is refused and its file stays; a server killed
mid-session becomes an error within the time budget, not a hang; every log verifies. Then
HTTP on both sides: the Python client over Streamable HTTP to `--listen`, in front of the same
server at `--upstream`.

Usage: mcp_http.py DECISION_BIN WORKDIR
"""
import asyncio
import os
import socket
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

DECISION, WORK = sys.argv[1], sys.argv[2]
SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mcp_http_server.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port, notes, mode):
    server = subprocess.Popen([sys.executable, SERVER, str(port), notes, mode], stderr=subprocess.DEVNULL)
    for _ in range(200):  # at most 20 s
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise AssertionError("the HTTP server did not start")


def text(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def session(mode):
    notes = os.path.join(WORK, f"notes-{mode}")
    os.makedirs(notes, exist_ok=True)
    with open(os.path.join(notes, "a.txt"), "w") as f:
        f.write("hello\n")
    port = free_port()
    server = start_server(port, notes, mode)
    log = os.path.join(WORK, f"http-{mode}.jsonl")
    params = StdioServerParameters(
        command=DECISION,
        args=["mcp", "--log", log, "--approvals", "deny", "--time-budget", "5", "--upstream",
              f"http://127.0.0.1:{port}/mcp"],
    )
    try:
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                tools = {t.name for t in (await s.list_tools()).tools}
                assert tools == {"read_note", "delete_note"}, tools
                got = await s.call_tool("read_note", {"name": "a.txt"})
                assert not got.isError and "hello" in text(got), got
                res = await s.call_tool("delete_note", {"name": "a.txt"})
                assert res.isError and "decision gateway refused" in text(res), res
                assert os.path.exists(os.path.join(notes, "a.txt")), "the refused delete ran"
                server.kill()
                server.wait(10)
                started = time.monotonic()
                try:
                    res = await asyncio.wait_for(s.call_tool("read_note", {"name": "a.txt"}), 30)
                    failed = res.isError
                except Exception:  # the SDK raises a JSON-RPC error as McpError
                    failed = True
                assert failed and time.monotonic() - started < 10, "a killed server is an error, in time"
    finally:
        server.kill()
    out = subprocess.run([DECISION, "replay", "--require-seal", log], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "seal: sealed" in out.stdout, out.stdout + out.stderr
    answers = "JSON bodies" if mode == "json" else "event streams"
    print(f"  --upstream ({answers}): the read ran, the delete was refused, a killed server was an error in time;"
          f" {os.path.basename(log)} sealed and verified")


async def both_sides_http():
    notes = os.path.join(WORK, "notes-both")
    os.makedirs(notes, exist_ok=True)
    with open(os.path.join(notes, "a.txt"), "w") as f:
        f.write("hello\n")
    upstream_port, listen_port = free_port(), free_port()
    server = start_server(upstream_port, notes, "sse")
    logs = os.path.join(WORK, "both-logs")
    gateway = subprocess.Popen(
        [DECISION, "mcp", "--log", logs, "--listen", f"127.0.0.1:{listen_port}", "--approvals", "deny",
         "--upstream", f"http://127.0.0.1:{upstream_port}/mcp"], stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", listen_port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        async with streamablehttp_client(f"http://127.0.0.1:{listen_port}/mcp") as (r, w, _):
            async with ClientSession(r, w) as s:
                await s.initialize()
                await s.list_tools()
                got = await s.call_tool("read_note", {"name": "a.txt"})
                assert not got.isError and "hello" in text(got), got
                res = await s.call_tool("delete_note", {"name": "a.txt"})
                assert res.isError and os.path.exists(os.path.join(notes, "a.txt")), res
    finally:
        gateway.send_signal(subprocess.signal.SIGTERM)
        assert gateway.wait(60) == 0
        server.kill()
    for name in os.listdir(logs):
        out = subprocess.run([DECISION, "replay", "--require-seal", os.path.join(logs, name)],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "seal: sealed" in out.stdout, out.stdout + out.stderr
    print("  --listen in front of --upstream (Python client over HTTP, Python server over HTTP): the read ran,"
          " the delete was refused; the session log verifies")


async def main():
    os.makedirs(WORK, exist_ok=True)
    await session("sse")
    await session("json")
    await both_sides_http()


asyncio.run(main())
