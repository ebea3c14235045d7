"""Drives `decision mcp` with the official Python MCP client, in front of the official
filesystem server (run by .ci/mcp.sh, which installs both, pinned).

Checks, as a user would see them: a read tool runs; write_file, edit_file and move_file never
change a file without an approval (refused with --approvals deny; held with --approvals
queue until `decision approve` answers from another process: a denial leaves the file as it
was, an approval writes it, once); every log verifies with `decision replay --require-seal`.
Then measures the latency a forwarded read call gains through the gateway against calling
the server directly, in the same run.

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


async def held_id(log, tool):
    """The id of the call of `tool` the gateway holds, as `decision approvals` lists it."""
    for _ in range(300):  # at most 30 s
        out = await asyncio.to_thread(
            subprocess.run, [DECISION, "approvals", "--format", "json", log], capture_output=True, text=True, timeout=60
        )
        held = [a for a in json.loads(out.stdout or "[]") if a["tool"] == tool]
        if held:
            return held[0]["id"]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no held call of {tool} in {log}")


async def answer(log, approval, *options):
    out = await asyncio.to_thread(
        subprocess.run, [DECISION, "approve", *options, log, approval], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0 and "handed to it" in out.stdout, out.stdout + out.stderr


async def queue_session(log):
    note = os.path.join(ROOT, "queued.txt")
    with open(note, "w") as f:
        f.write("as it was\n")
    async with stdio_client(gateway(log, "--approvals", "queue", "--approval-timeout", "120")) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            await s.list_tools()
            # Held, then denied: the file never changes.
            call = asyncio.create_task(s.call_tool("write_file", {"path": note, "content": "denied write"}))
            approval = await held_id(log, "write_file")
            await asyncio.sleep(0.5)
            assert not call.done() and read(note) == "as it was\n", "nothing runs while the call is held"
            await answer(log, approval, "--deny", "--reason", "not this file")
            res = await asyncio.wait_for(call, 30)
            assert res.isError and "not this file" in text(res), res
            assert read(note) == "as it was\n", "a denied write changed the file"
            # Held, then approved: the file changes, once.
            call = asyncio.create_task(s.call_tool("write_file", {"path": note, "content": "approved write"}))
            approval = await held_id(log, "write_file")
            assert read(note) == "as it was\n", "nothing runs before the approval"
            await answer(log, approval)
            res = await asyncio.wait_for(call, 30)
            assert not res.isError, res
            assert read(note) == "approved write", read(note)
    with open(log) as f:
        used = sum(1 for line in f if '"approval:used"' in line)
    assert used == 1, used
    print("  queue: write_file held until `decision approve`; the denied write changed nothing, the approved one ran once")


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
    await queue_session(os.path.join(logs, "queue.jsonl"))
    direct_median, direct_p99 = await timed_reads(direct(), "direct")
    gw_median, gw_p99 = await timed_reads(gateway(os.path.join(logs, "bench.jsonl")), "gateway")
    print(f"  latency of read_text_file over {CALLS} calls, debug or release as built:")
    print(f"    direct:  median {direct_median:.3f} ms, p99 {direct_p99:.3f} ms")
    print(f"    gateway: median {gw_median:.3f} ms, p99 {gw_p99:.3f} ms")
    print(f"    added:   median {gw_median - direct_median:+.3f} ms, p99 {gw_p99 - direct_p99:+.3f} ms")
    for name in sorted(os.listdir(logs)):
        verify(os.path.join(logs, name))


asyncio.run(main())
