"""A notes server on the official Python SDK (FastMCP) over Streamable HTTP, on loopback, for
`decision mcp --upstream` (.ci/mcp_http.py): `read_note` (read-only) and `delete_note`
(destructive). With `json` it answers requests with JSON bodies, else with event streams.

Usage: mcp_http_server.py PORT NOTES_DIR [json]
"""
import os
import sys

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

PORT, NOTES = int(sys.argv[1]), sys.argv[2]
JSON = len(sys.argv) > 3 and sys.argv[3] == "json"
server = FastMCP("notes", host="127.0.0.1", port=PORT, json_response=JSON, log_level="WARNING")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
def read_note(name: str) -> str:
    """Reads a note."""
    with open(os.path.join(NOTES, os.path.basename(name))) as f:
        return f.read()


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, openWorldHint=False))
def delete_note(name: str) -> str:
    """Deletes a note."""
    os.remove(os.path.join(NOTES, os.path.basename(name)))
    return "deleted"


server.run(transport="streamable-http")
