"""`decision mcp` in front of the reference time server from PyPI (`mcp-server-time`, in its own
virtual environment: it needs a newer `mcp` than the pinned client), driven by the official
Python client. Its tools declare annotations (read-only) and output schemas: both calls run,
their structured results conform to the tools' output schemas (no schema violation is
recorded), and with deliverable contracts one result that meets its contract is relayed while
one that lacks a promised member reaches the agent as a typed `contract_violation`. Every log
verifies, and `decision outcomes report` reads it.

Usage: mcp_time.py DECISION_BIN SERVER_PYTHON WORKDIR
"""
import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

DECISION, SERVER_PYTHON, WORK = sys.argv[1], sys.argv[2], sys.argv[3]


def events(log, kind):
    with open(log) as f:
        lines = [json.loads(line) for line in f]
    return [line["e"] for line in lines if line.get("e", {}).get("type") == kind]


def verify(log):
    out = subprocess.run([DECISION, "replay", "--require-seal", log], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "seal: sealed" in out.stdout, out.stdout + out.stderr


async def session(log, *options):
    params = StdioServerParameters(
        command=DECISION,
        args=["mcp", "--log", log, "--approvals", "deny", *options, "--",
              SERVER_PYTHON, "-m", "mcp_server_time", "--local-timezone", "UTC"],
    )
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            init = await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert {"get_current_time", "convert_time"} <= set(tools), tools
            assert tools["get_current_time"].outputSchema, "the server declares an output schema"
            now = await s.call_tool("get_current_time", {"timezone": "Europe/Paris"})
            converted = await s.call_tool(
                "convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})
            return init, now, converted


async def main():
    os.makedirs(WORK, exist_ok=True)
    plain = os.path.join(WORK, "time.jsonl")
    init, now, converted = await session(plain)
    assert not now.isError and now.structuredContent["timezone"] == "Europe/Paris", now
    assert not converted.isError and "Asia/Tokyo" in json.dumps(converted.structuredContent), converted
    assert not events(plain, "mcp:schema-violation"), "the server's results conform to its schemas"
    assert len(events(plain, "tool:outcome")) == 2
    verify(plain)
    print(f"  {init.serverInfo.name} {init.serverInfo.version}: both read-only calls ran; their structured results"
          " conform to the tools' output schemas")

    contracts = os.path.join(WORK, "time-contracts.json")
    with open(contracts, "w") as f:
        json.dump({"contracts": [
            {"tool": "mcp", "method": "get_current_time", "purpose": "The time in a zone.",
             "deliverable": {"type": "object", "required": ["timezone", "datetime"]},
             "acceptance": "The zone asked for and an ISO 8601 datetime."},
            {"tool": "mcp", "method": "convert_time", "purpose": "A time in another zone.",
             "deliverable": {"type": "object", "required": ["source", "target", "utc_offset"]},
             "acceptance": "Both times and the offset between them."},
        ]}, f)
    checked = os.path.join(WORK, "time-contracts.jsonl")
    _, now, converted = await session(checked, "--outcome-contracts", contracts)
    assert not now.isError, now
    assert converted.isError and "contract_violation" in converted.content[0].text, converted
    verdicts = [(e["method"], e["contract"]) for e in events(checked, "tool:outcome")]
    assert verdicts == [("get_current_time", "held"), ("convert_time", "violated")], verdicts
    verify(checked)
    report = subprocess.run([DECISION, "outcomes", "report", "--format", "json", checked],
                            capture_output=True, text=True, timeout=60)
    assert report.returncode == 0 and json.loads(report.stdout)["outcome_events"] == 2, report.stdout
    print("  with deliverable contracts: get_current_time held, convert_time (no utc_offset) reached the agent as"
          " contract_violation; both logs verify")


asyncio.run(main())
