"""An OpenAI Agents SDK agent whose tool calls a DECISION.md contract decides.

`DecisionGuard.tool` gives each function tool the SDK's own `needs_approval` and a tool input
guardrail, both asking the contract. A scripted model (the SDK's `Model` interface; no network,
no API key) asks to read a note and to delete it: the read runs, the delete stops the run with
an interruption; a person rejects it, and the model is told why. Then it asks to send an
e-mail, a tool that declares no risk hints and so waits too; the person approves it and it
runs once. Every decision and answer goes to a session log, sealed at the end.

    python examples/agents-openai/main.py --log /tmp/openai.jsonl
    decision replay --require-seal /tmp/openai.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, List, Optional, Union

from agents import Agent, ModelResponse, Runner, Tool, Usage, function_tool, set_tracing_disabled
from agents.models.interface import Model
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputRefusal, ResponseOutputText

import decision_contract as dc
from decision_contract.integrations.openai_agents import DecisionGuard


class Scripted(Model):
    """A stand-in for the LLM: answers each request with the next of its turns."""

    def __init__(self, *turns: List[Any]) -> None:
        self.turns = list(turns)

    async def get_response(self, *_args: Any, **_kwargs: Any) -> ModelResponse:
        return ModelResponse(output=self.turns.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *_args: Any, **_kwargs: Any) -> Any:
        raise NotImplementedError("the example does not stream")


def call(tool_name: str, call_id: str, **args: Any) -> ResponseFunctionToolCall:
    """A function call as the model's response carries it."""
    return ResponseFunctionToolCall(
        arguments=json.dumps(args), call_id=call_id, name=tool_name, type="function_call", id=f"fc_{call_id}", status="completed"
    )


def say(text: str) -> ResponseOutputMessage:
    content: List[Union[ResponseOutputText, ResponseOutputRefusal]] = [ResponseOutputText(text=text, type="output_text", annotations=[])]
    return ResponseOutputMessage(id="msg", content=content, role="assistant", status="completed", type="message")


NOTES = {"todo.txt": "pay the rent"}
OUTBOX: List[str] = []


@function_tool
def read_note(name: str) -> str:
    """Reads a note."""
    return NOTES[name]


@function_tool
def delete_note(name: str) -> str:
    """Deletes a note."""
    del NOTES[name]
    return f"deleted {name}"


@function_tool
def send_email(to: str, body: str) -> str:
    """Sends an e-mail."""
    OUTBOX.append(f"to {to}: {body}")
    return f"sent to {to}"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--log", required=True, type=Path, help="the session log to write (must not exist)")
    args = parser.parse_args(argv)
    if args.log.exists():
        parser.error(f"{args.log} exists; the example writes a new log")
    set_tracing_disabled(True)
    model = Scripted(
        [call("read_note", "c1", name="todo.txt"), call("delete_note", "c2", name="todo.txt")],
        [call("send_email", "c3", to="bank@example.com", body="Please call me back.")],
        [say("Done: the note is read and kept, the bank e-mailed.")],
    )
    with DecisionGuard(log=args.log) as guard:
        tools: List[Tool] = [
            guard.tool(read_note, annotations={"readOnlyHint": True, "openWorldHint": False}),
            guard.tool(delete_note, annotations={"destructiveHint": True, "openWorldHint": False}),
            guard.tool(send_email),  # declares nothing: MCP's defaults (destructive, open world)
        ]
        agent = Agent(name="assistant", instructions="Help with notes and mail.", model=model, tools=tools)
        answers = [False, True]
        result = Runner.run_sync(agent, "Tidy my notes and tell the bank.")
        while result.interruptions:
            state = result.to_state()
            for item in result.interruptions:
                approved = answers.pop(0)
                print(f"waits for a person: {item.name} {item.arguments} → {'approved' if approved else 'rejected'}")
                if approved:
                    guard.approve(state, item)
                else:
                    guard.reject(state, item, reason="keep the note")
            result = Runner.run_sync(agent, state)
        print(f"final answer: {result.final_output}")
    if NOTES != {"todo.txt": "pay the rent"} or len(OUTBOX) != 1:
        print(f"unexpected effects: notes {NOTES}, outbox {OUTBOX}", file=sys.stderr)
        return 1
    verified = dc.verify_log(args.log)
    print(f"log {args.log}: {verified['records']} decisions, {verified['verified']} verified, chain {verified['chain']}")
    return 0 if verified["mismatch"] == 0 and verified["chain"] == "intact" else 1


if __name__ == "__main__":
    sys.exit(main())
