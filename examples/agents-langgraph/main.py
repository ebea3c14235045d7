"""A LangGraph agent whose tool calls a DECISION.md contract decides.

The graph is LangGraph's usual agent loop — a model node and a tool node — with
`DecisionToolNode` in place of `ToolNode`. LangChain's own fake chat model stands in for the
LLM (no network, no API key) and asks, in turn, to read a note and delete a file (the read
runs, the delete waits for a person, who rejects it), to append to the note (runs: it adds
and stays inside the workspace), and to send an e-mail (a tool that declares no risk hints:
MCP's defaults make it destructive, so it waits; the person approves it and it runs once).
Every decision and answer goes to a session log, sealed at the end.

    python examples/agents-langgraph/main.py --log /tmp/langgraph.jsonl
    decision replay --require-seal /tmp/langgraph.jsonl
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command

import decision_contract as dc
from decision_contract.integrations.langgraph import DecisionToolNode


def make_tools(workspace: Path, outbox: List[str]) -> List[BaseTool]:
    """Four tools over a scratch workspace, with the MCP hints each declares (or not)."""

    @tool
    def read_note(name: str) -> str:
        """Reads a note of the workspace."""
        return (workspace / name).read_text()

    @tool
    def delete_file(name: str) -> str:
        """Deletes a file of the workspace."""
        (workspace / name).unlink()
        return f"deleted {name}"

    @tool
    def append_note(name: str, text: str) -> str:
        """Appends a line to a note of the workspace."""
        with (workspace / name).open("a") as note:
            note.write(text + "\n")
        return f"appended to {name}"

    @tool
    def send_email(to: str, body: str) -> str:
        """Sends an e-mail."""
        outbox.append(f"to {to}: {body}")
        return f"sent to {to}"

    read_note.metadata = {"readOnlyHint": True, "openWorldHint": False}
    delete_file.metadata = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
    append_note.metadata = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
    # send_email declares nothing: MCP's defaults (destructive, open world) apply.
    return [read_note, delete_file, append_note, send_email]


def call(tool_name: str, call_id: str, **args: Any) -> Dict[str, Any]:
    """A tool call as a chat model's message carries it."""
    return {"name": tool_name, "args": args, "id": call_id, "type": "tool_call"}


SCRIPT = [
    AIMessage("", tool_calls=[call("read_note", "c1", name="todo.txt"), call("delete_file", "c2", name="todo.txt")]),
    AIMessage("", tool_calls=[call("append_note", "c3", name="todo.txt", text="call the bank")]),
    AIMessage("", tool_calls=[call("send_email", "c4", to="bank@example.com", body="Please call me back.")]),
    AIMessage("Done: the note is read and extended, the file kept, the bank e-mailed."),
]


def build(tools: List[BaseTool], node: DecisionToolNode) -> Any:
    model = GenericFakeChatModel(messages=iter(SCRIPT))

    def agent(state: MessagesState) -> Dict[str, List[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", node)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=InMemorySaver())


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--log", required=True, type=Path, help="the session log to write (must not exist)")
    args = parser.parse_args(argv)
    if args.log.exists():
        parser.error(f"{args.log} exists; the example writes a new log")
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch)
        (workspace / "todo.txt").write_text("pay the rent\n")
        outbox: List[str] = []
        tools = make_tools(workspace, outbox)
        with DecisionToolNode(tools, log=args.log) as node:
            app = build(tools, node)
            config: Any = {"configurable": {"thread_id": "example"}}
            # Each answer a person gives, in the order the calls wait.
            answers: List[Dict[str, Any]] = [{"approved": False, "reason": "keep the file"}, {"approved": True}]
            result = app.invoke({"messages": [("user", "Tidy my notes and tell the bank.")]}, config)
            while "__interrupt__" in result:
                pending = result["__interrupt__"][0].value
                answer = answers.pop(0)
                print(f"waits for a person: {pending['tool']} {pending['arguments']} ({pending['reason']}) → {'approved' if answer['approved'] else 'rejected'}")
                result = app.invoke(Command(resume={"id": pending["id"], **answer}), config)
            for message in result["messages"]:
                if isinstance(message, ToolMessage):
                    print(f"{message.name}: {message.status}: {message.content}")
            print(f"final answer: {result['messages'][-1].content}")
        note = (workspace / "todo.txt").read_text()
        if note != "pay the rent\ncall the bank\n" or len(outbox) != 1:
            print(f"unexpected effects: note {note!r}, outbox {outbox}", file=sys.stderr)
            return 1
    verified = dc.verify_log(args.log)
    print(f"log {args.log}: {verified['records']} decisions, {verified['verified']} verified, chain {verified['chain']}")
    return 0 if verified["mismatch"] == 0 and verified["chain"] == "intact" else 1


if __name__ == "__main__":
    sys.exit(main())
