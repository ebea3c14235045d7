"""Drives `decision mcp` with the official Python MCP client, in front of the official
filesystem server (run by .ci/mcp.sh, which installs both, pinned).

Checks, as a user would see them: a read tool runs; write_file, edit_file and move_file never
change a file without an approval (refused with --approvals deny, the only approval mode
this version serves); every log verifies with `decision replay --require-seal`. Then measures the latency a forwarded read
call gains through the gateway against calling the server directly, in the same run.

Usage: mcp_client.py DECISION_BIN SERVER_JS WORKDIR
"""
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

DECISION, SERVER, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
ROOT = os.path.join(WORK, "root")
CALLS = 300


def gateway(log, *options):
    return StdioServerParameters(
        command=DECISION,
        args=["mcp", "--log", log, *options, "--", "node", SERVER, ROOT],
    )


def direct():
    return StdioServerParameters(command="node", args=[SERVER, ROOT])


def text(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def read(path):
    with open(path) as f:
        return f.read()


def verify(log):
    out = subprocess.run([DECISION, "replay", "--require-seal", log], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "seal: sealed" in out.stdout, out.stdout + out.stderr
    print(f"  {os.path.basename(log)}: sealed and verified")


async def deny_session(log):
    async with stdio_client(gateway(log, "--approvals", "deny")) as (r, w):
        async with ClientSession(r, w) as s:
            init = await s.initialize()
            print(f"  negotiated {init.protocolVersion} with {init.serverInfo.name}")
            tools = {t.name for t in (await s.list_tools()).tools}
            assert {"read_text_file", "write_file", "edit_file", "move_file"} <= tools, tools
            note = os.path.join(ROOT, "note.txt")
            got = await s.call_tool("read_text_file", {"path": note})
            assert not got.isError and "first line" in text(got), got
            for name, args in [
                ("write_file", {"path": note, "content": "overwritten"}),
                ("edit_file", {"path": note, "edits": [{"oldText": "first", "newText": "changed"}]}),
                ("move_file", {"source": note, "destination": os.path.join(ROOT, "moved.txt")}),
            ]:
                res = await s.call_tool(name, args)
                assert res.isError and "decision gateway refused" in text(res), (name, res)
            assert read(note) == "first line\n", "no file changed without an approval"
            assert not os.path.exists(os.path.join(ROOT, "moved.txt"))
    print("  deny: the read ran; write_file, edit_file and move_file were refused; nothing changed")


async def timed_reads(params, label):
    note = os.path.join(ROOT, "note.txt")
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            await s.list_tools()
            for _ in range(20):  # warm-up
                await s.call_tool("read_text_file", {"path": note})
            times = []
            for _ in range(CALLS):
                start = time.perf_counter()
                await s.call_tool("read_text_file", {"path": note})
                times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


async def main():
    os.makedirs(ROOT, exist_ok=True)
    with open(os.path.join(ROOT, "note.txt"), "w") as f:
        f.write("first line\n")
    logs = os.path.join(WORK, "logs")
    os.makedirs(logs, exist_ok=True)
    await deny_session(os.path.join(logs, "deny.jsonl"))
    direct_median, direct_p99 = await timed_reads(direct(), "direct")
    gw_median, gw_p99 = await timed_reads(gateway(os.path.join(logs, "bench.jsonl")), "gateway")
    print(f"  latency of read_text_file over {CALLS} calls, debug or release as built:")
    print(f"    direct:  median {direct_median:.3f} ms, p99 {direct_p99:.3f} ms")
    print(f"    gateway: median {gw_median:.3f} ms, p99 {gw_p99:.3f} ms")
    print(f"    added:   median {gw_median - direct_median:+.3f} ms, p99 {gw_p99 - direct_p99:+.3f} ms")
    for name in sorted(os.listdir(logs)):
        verify(os.path.join(logs, name))


asyncio.run(main())
