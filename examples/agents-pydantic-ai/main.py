"""A PydanticAI agent whose tool calls a DECISION.md contract decides.

`DecisionToolset` wraps the agent's toolset: a call the contract allows runs, one that needs
a person raises PydanticAI's `ApprovalRequired`, so the run ends with `DeferredToolRequests`;
the person's answers go back as `DeferredToolResults`. PydanticAI's `FunctionModel` stands
in for the LLM (no network, no API key): it asks to read a note and to delete it (the read
runs, the delete waits and is rejected), then to send an e-mail (no risk hints: it waits,
is approved and runs once). Every decision and answer goes to a session log, sealed at the
end.

    python examples/agents-pydantic-ai/main.py --log /tmp/pydantic-ai.jsonl
    decision replay --require-seal /tmp/pydantic-ai.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from pydantic_ai import Agent, DeferredToolRequests, FunctionToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponsePart, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import decision_contract as dc
from decision_contract.integrations.pydantic_ai import DecisionToolset

NOTES = {"todo.txt": "pay the rent"}
OUTBOX: List[str] = []


def read_note(name: str) -> str:
    """Reads a note."""
    return NOTES[name]


def delete_note(name: str) -> str:
    """Deletes a note."""
    del NOTES[name]
    return f"deleted {name}"


def send_email(to: str, body: str) -> str:
    """Sends an e-mail."""
    OUTBOX.append(f"to {to}: {body}")
    return f"sent to {to}"


TURNS: List[List[ModelResponsePart]] = [
    [ToolCallPart("read_note", {"name": "todo.txt"}, tool_call_id="c1"), ToolCallPart("delete_note", {"name": "todo.txt"}, tool_call_id="c2")],
    [ToolCallPart("send_email", {"to": "bank@example.com", "body": "Please call me back."}, tool_call_id="c3")],
    [TextPart("Done: the note is read and kept, the bank e-mailed.")],
]


def scripted(_messages: List[ModelMessage], _info: AgentInfo) -> ModelResponse:
    """A stand-in for the LLM: the next turn of the script."""
    return ModelResponse(parts=TURNS.pop(0))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--log", required=True, type=Path, help="the session log to write (must not exist)")
    args = parser.parse_args(argv)
    if args.log.exists():
        parser.error(f"{args.log} exists; the example writes a new log")
    hints: Dict[str, Dict[str, bool]] = {
        "read_note": {"readOnlyHint": True, "openWorldHint": False},
        "delete_note": {"destructiveHint": True, "openWorldHint": False},
        # send_email declares nothing: MCP's defaults (destructive, open world) apply.
    }
    toolset = DecisionToolset.create(FunctionToolset([read_note, delete_note, send_email]), log=args.log, annotations=hints)
    try:
        agent = Agent(FunctionModel(scripted), toolsets=[toolset], output_type=[str, DeferredToolRequests])
        answers: List[Dict[str, Any]] = [{"approved": False, "reason": "keep the note"}, {"approved": True}]
        result = agent.run_sync("Tidy my notes and tell the bank.")
        while isinstance(result.output, DeferredToolRequests):
            given: Dict[str, Any] = {}
            for part in result.output.approvals:
                answer = answers.pop(0)
                print(f"waits for a person: {part.tool_name} {part.args_as_dict()} → {'approved' if answer['approved'] else 'rejected'}")
                given[part.tool_call_id] = answer
            results = toolset.results(result.output, given)
            result = agent.run_sync(message_history=result.all_messages(), deferred_tool_results=results)
        print(f"final answer: {result.output}")
    finally:
        toolset.close()
    if NOTES != {"todo.txt": "pay the rent"} or len(OUTBOX) != 1:
        print(f"unexpected effects: notes {NOTES}, outbox {OUTBOX}", file=sys.stderr)
        return 1
    verified = dc.verify_log(args.log)
    print(f"log {args.log}: {verified['records']} decisions, {verified['verified']} verified, chain {verified['chain']}")
    return 0 if verified["mismatch"] == 0 and verified["chain"] == "intact" else 1


if __name__ == "__main__":
    sys.exit(main())
