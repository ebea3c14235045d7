"""decision_contract.integrations.langgraph: DecisionToolNode with the real LangGraph and
LangChain's fake chat model (no network, no key). Skipped, with the reason, when LangGraph is
not installed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List

import pytest

pytest.importorskip("langgraph", reason="LangGraph is not installed: pip install './python[langgraph]'")

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import tools_condition  # noqa: E402
from langgraph.types import Command  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

import decision_contract as dc  # noqa: E402
from conftest import REPO, run  # noqa: E402
from decision_contract.integrations.langgraph import DecisionToolNode  # noqa: E402

RAN: List[str] = []


@tool
def read_file(path: str) -> str:
    """Reads a file."""
    RAN.append(f"read {path}")
    return f"contents of {path}"


@tool
def delete_file(path: str) -> str:
    """Deletes a file."""
    RAN.append(f"delete {path}")
    return f"deleted {path}"


@tool
def undeclared(path: str) -> str:
    """A tool that declares no hints."""
    RAN.append(f"undeclared {path}")
    return "ok"


read_file.metadata = {"readOnlyHint": True}
delete_file.metadata = {"destructiveHint": True, "openWorldHint": False}
TOOLS = [read_file, delete_file, undeclared]


def call(name: str, call_id: str, **args: Any) -> Dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def graph(node: DecisionToolNode, *turns: List[Dict[str, Any]], checkpointer: Any = None) -> Any:
    script = [AIMessage("", tool_calls=calls) for calls in turns] + [AIMessage("done")]
    model = GenericFakeChatModel(messages=iter(script))

    def agent(state: MessagesState) -> Dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    built = StateGraph(MessagesState)
    built.add_node("agent", agent)
    built.add_node("tools", node)
    built.add_edge(START, "agent")
    built.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    built.add_edge("tools", "agent")
    return built.compile(checkpointer=checkpointer or InMemorySaver())


CONFIG: Any = {"configurable": {"thread_id": "t"}}
START_INPUT = {"messages": [("user", "go")]}


def tool_messages(result: Dict[str, Any]) -> List[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def records(path: Path) -> List[Dict[str, Any]]:
    """The log's events, each with the run it belongs to."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [{**line["e"], "run": line["run"]} for line in lines if line.get("kind") == "event"]


def verified(decision: Path, log: Path) -> None:
    status, out, err = run(decision, "replay", "--require-seal", str(log))
    assert status == 0, out + err



@pytest.fixture(autouse=True)
def clean() -> None:
    RAN.clear()


def test_a_read_only_call_runs_and_the_log_verifies(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionToolNode(TOOLS, log=log) as node:
        result = graph(node, [call("read_file", "c1", path="a.txt")]).invoke(START_INPUT, CONFIG)
    assert RAN == ["read a.txt"]
    assert [m.status for m in tool_messages(result)] == ["success"]
    decisions = [r for r in records(log) if r.get("type") == "decision"]
    assert [d["action"] for d in decisions] == ["auto"]
    verified(decision, log)


def test_a_destructive_call_waits_and_an_approval_runs_it_once(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionToolNode(TOOLS, log=log) as node:
        app = graph(node, [call("read_file", "c1", path="a.txt"), call("delete_file", "c2", path="a.txt")])
        first = app.invoke(START_INPUT, CONFIG)
        pending = first["__interrupt__"][0].value
        assert pending["tool"] == "delete_file" and pending["arguments"] == {"path": "a.txt"}
        assert pending["rule"] == "ask_human" and pending["id"].startswith("ap-c2-")
        # Nothing of the message ran before the person answered, not even the read.
        assert RAN == []
        result = app.invoke(Command(resume={"approved": True, "id": pending["id"]}), CONFIG)
    assert sorted(RAN) == ["delete a.txt", "read a.txt"]
    assert [m.status for m in tool_messages(result)] == ["success", "success"]
    events = [r["type"] for r in records(log) if r.get("type", "").startswith("approval:")]
    assert events == ["approval:pending", "approval:answer", "approval:used"]
    verified(decision, log)


def test_a_call_is_recorded_as_running_before_it_runs_and_not_while_its_message_waits(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    seen: List[List[str]] = []

    @tool
    def peek(path: str) -> str:
        """Reads a file, after looking at what the log says is running."""
        seen.append([r["callId"] for r in records(log) if r.get("type") == "tool:call"])
        return "ok"

    peek.metadata = {"readOnlyHint": True}
    with DecisionToolNode([peek, delete_file], log=log) as node:
        app = graph(node, [call("peek", "c1", path="a"), call("delete_file", "c2", path="a")])
        app.invoke(START_INPUT, CONFIG)
        # The message waits for a person: nothing of it is recorded as running.
        assert [r for r in records(log) if r.get("type") == "tool:call"] == []
        app.invoke(Command(resume={"approved": False, "reason": "no"}), CONFIG)
    # The allowed call was on record as running when it ran; the rejected one never was.
    assert seen == [["c1"]]
    assert [r["callId"] for r in records(log) if r.get("type") == "tool:call"] == ["c1"]
    assert RAN == []


def test_a_rejection_leaves_the_call_unrun_with_an_error_the_agent_sees(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionToolNode(TOOLS, log=log) as node:
        app = graph(node, [call("delete_file", "c2", path="a.txt")])
        app.invoke(START_INPUT, CONFIG)
        result = app.invoke(Command(resume={"approved": False, "reason": "keep it"}), CONFIG)
    assert RAN == []
    (message,) = tool_messages(result)
    assert message.status == "error" and "keep it" in str(message.content)
    answer = [r for r in records(log) if r.get("type") == "approval:answer"][0]
    assert answer["approved"] is False and answer["reason"] == "keep it"
    verified(decision, log)


def test_approvals_deny_refuses_at_once(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionToolNode(TOOLS, log=log, approvals="deny") as node:
        result = graph(node, [call("delete_file", "c2", path="a.txt")]).invoke(START_INPUT, CONFIG)
    assert "__interrupt__" not in result and RAN == []
    (message,) = tool_messages(result)
    assert message.status == "error" and "approvals are off" in str(message.content)
    verified(decision, log)


def test_a_tool_that_declares_nothing_is_taken_as_destructive(tmp_path: Path) -> None:
    with DecisionToolNode(TOOLS, log=tmp_path / "log.jsonl") as node:
        first = graph(node, [call("undeclared", "c5", path="x")]).invoke(START_INPUT, CONFIG)
    assert first["__interrupt__"][0].value["tool"] == "undeclared" and RAN == []


def test_arguments_that_fail_the_schema_run_nothing_and_ask_nobody(tmp_path: Path) -> None:
    with DecisionToolNode(TOOLS, log=tmp_path / "log.jsonl") as node:
        result = graph(node, [call("delete_file", "c2", wrong=1)]).invoke(START_INPUT, CONFIG)
    assert "__interrupt__" not in result and RAN == []
    (message,) = tool_messages(result)
    assert message.status == "error" and "schema" in str(message.content)


def test_a_tool_whose_hints_or_schema_change_is_decided_by_the_new_ones(tmp_path: Path) -> None:
    @tool
    def write_note(text: str) -> str:
        """Writes a note."""
        RAN.append(f"note {text}")
        return "ok"

    class Strict(BaseModel):
        text: str = Field(max_length=3)

    write_note.metadata = {"readOnlyHint": True}
    log = tmp_path / "log.jsonl"
    with DecisionToolNode([write_note], log=log) as node:
        # Kept from the first call to the next: what the node read of the tool.
        assert tool_messages(graph(node, [call("write_note", "c1", text="a")]).invoke(START_INPUT, CONFIG))[0].status == "success"
        # Changed in place, then replaced: each change is seen at the next call.
        write_note.metadata["readOnlyHint"] = False
        assert "__interrupt__" in graph(node, [call("write_note", "c2", text="b")]).invoke(START_INPUT, {"configurable": {"thread_id": "2"}})
        write_note.metadata = {"annotations": {"readOnlyHint": True}}
        assert tool_messages(graph(node, [call("write_note", "c3", text="c")]).invoke(START_INPUT, {"configurable": {"thread_id": "3"}}))[0].status == "success"
        # Equal but no longer a boolean (`1 == True`): it declares nothing, and the call waits.
        write_note.metadata["annotations"]["readOnlyHint"] = 1
        assert "__interrupt__" in graph(node, [call("write_note", "c3b", text="d")]).invoke(START_INPUT, {"configurable": {"thread_id": "3b"}})
        write_note.metadata = {"annotations": {"readOnlyHint": True}}
        # A new argument schema is the one the arguments are checked by.
        write_note.args_schema = Strict
        result = graph(node, [call("write_note", "c4", text="too long")]).invoke(START_INPUT, {"configurable": {"thread_id": "4"}})
        (refused,) = tool_messages(result)
        assert refused.status == "error" and "schema" in str(refused.content)
    assert RAN == ["note a", "note c"]
    annotations = [json.loads(r["state"]["annotations"]) for r in records(log) if r.get("type") == "decision"]
    assert annotations == [{"readOnlyHint": True}, {"readOnlyHint": False}, {"readOnlyHint": True}, {}]


def test_a_call_is_decided_once_when_a_later_one_fails_and_the_node_is_retried(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionToolNode([read_file], log=log) as node:
        decide = node.gate.decide
        failures = iter([False, True])

        def failing_once(gate_call: Any) -> Any:
            if next(failures, False):
                raise TimeoutError("the provider did not answer")
            return decide(gate_call)

        node.gate.decide = failing_once  # type: ignore[method-assign]
        message = {"messages": [AIMessage("", tool_calls=[call("read_file", "c1", path="a"), call("read_file", "c2", path="b")])]}
        with pytest.raises(TimeoutError):
            node._decide_all(message)
        node._decide_all(message)
        # A message repeating a call id decides it once too.
        node._decide_all({"messages": [AIMessage("", tool_calls=[call("read_file", "c3", path="c"), call("read_file", "c3", path="c")])]})
    decided = [r["state"]["arguments"] for r in records(log) if r.get("type") == "decision"]
    paths = [next(p for p in "abc" if f'{{"path":"{p}"}}' in text) for text in decided]
    assert paths == ["a", "b", "c"]


@pytest.mark.parametrize(
    "value, complaint",
    [
        ("yes", "must be a dict"),
        ({"approved": "yes"}, "needs `approved`"),
        ({"approved": True, "extra": 1}, "unknown keys"),
        ({"approved": True, "id": "ap-other-123"}, "is for approval 'ap-other-123'"),
    ],
)
def test_a_bad_answer_is_refused_and_runs_nothing(decision: Path, tmp_path: Path, value: Any, complaint: str) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionToolNode(TOOLS, log=log) as node:
        app = graph(node, [call("delete_file", "c2", path="a.txt")])
        first = app.invoke(START_INPUT, CONFIG)["__interrupt__"][0].value
        again = app.invoke(Command(resume=value), CONFIG)["__interrupt__"][0].value
        # The same call still waits, and the graph says what was wrong with the answer.
        assert again["id"] == first["id"] and complaint in again["error"]
        assert RAN == []
        app.invoke(Command(resume={"approved": True}), CONFIG)
    assert RAN == ["delete a.txt"]
    answers = [r for r in records(log) if r.get("type") == "approval:answer"]
    assert len(answers) == 1 and answers[0]["approved"] is True
    verified(decision, log)


def test_a_call_id_that_comes_again_in_a_later_thread_waits_for_an_answer_of_its_own(decision: Path, tmp_path: Path) -> None:
    # A model provider with short ids: a second thread on the same log asks for the very call
    # the first did, with the same id. The person's first approval does not answer it.
    log = tmp_path / "log.jsonl"
    with DecisionToolNode(TOOLS, log=log) as node:
        answers = [{"approved": True}, {"approved": False, "reason": "not twice"}]
        for thread, answer in enumerate(answers):
            config: Any = {"configurable": {"thread_id": f"t{thread}"}}
            app = graph(node, [call("delete_file", "c2", path="a.txt")])
            pending = app.invoke(START_INPUT, config)["__interrupt__"][0].value
            result = app.invoke(Command(resume=answer), config)
    assert RAN == ["delete a.txt"]
    assert [m.status for m in tool_messages(result)] == ["error"] and "not twice" in str(tool_messages(result)[0].content)
    assert pending["id"].endswith("-2")
    recorded = [(r["id"], r["approved"]) for r in records(log) if r.get("type") == "approval:answer"]
    assert recorded == [(pending["id"][:-2], True), (pending["id"], False)]
    verified(decision, log)


RESTART = textwrap.dedent(
    """
    import sys, sqlite3
    sys.path.insert(0, {tests!r})
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command
    import test_langgraph as t
    from decision_contract.integrations.langgraph import DecisionToolNode

    phase, log, db = sys.argv[1], sys.argv[2], sys.argv[3]
    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    with DecisionToolNode(t.TOOLS, log=log) as node:
        app = t.graph(node, [t.call("delete_file", "c2", path="a.txt")], checkpointer=saver)
        if phase == "start":
            result = app.invoke(t.START_INPUT, t.CONFIG)
            print(result["__interrupt__"][0].value["id"])
        else:
            result = app.invoke(Command(resume={{"approved": True, "id": sys.argv[4]}}), t.CONFIG)
            print(t.RAN, [m.status for m in t.tool_messages(result)])
    """
)


def test_after_a_restart_the_approval_binds_to_the_same_call(decision: Path, tmp_path: Path) -> None:
    pytest.importorskip("langgraph.checkpoint.sqlite", reason="langgraph-checkpoint-sqlite is not installed")
    script = tmp_path / "restart.py"
    script.write_text(RESTART.format(tests=str(Path(__file__).parent)))
    log, db = tmp_path / "log.jsonl", tmp_path / "checkpoints.db"

    def phase(name: str, *extra: str) -> str:
        # Each phase is a process of its own: nothing but the log and the checkpoints survives.
        command = [sys.executable, str(script), name, str(log), str(db), *extra]
        done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout.strip()

    approval_id = phase("start")
    assert approval_id.startswith("ap-c2-")
    assert phase("resume", approval_id) == "['delete a.txt'] ['success']"
    pending = [r for r in records(log) if r.get("type") == "approval:pending"]
    answers = [r for r in records(log) if r.get("type") == "approval:answer"]
    assert [a["id"] for a in answers] == [approval_id]
    # The fake model, started anew in the second process, asks for the same call (same id and
    # arguments) once more: that is a new decision, which waits for an approval of its own
    # rather than reusing the answer to the first.
    assert [p["id"] for p in pending] == [approval_id, f"{approval_id}-2"]
    # The answer is written by the second process, in the run of the call it answers, and
    # bound to that call's pending line.
    decisions = [r for r in records(log) if r.get("type") == "decision"]
    assert decisions[0]["run"] == 0 and decisions[-1]["run"] == 1
    assert pending[0]["run"] == 0 and answers[0]["run"] == 0 and answers[0]["binding"]
    assert pending[0]["fingerprint"] == answers[0]["fingerprint"]
    verified(decision, log)


RESTART_TWO = textwrap.dedent(
    """
    import sys, sqlite3
    sys.path.insert(0, {tests!r})
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command
    import test_langgraph as t
    from decision_contract.integrations.langgraph import DecisionToolNode

    phase, log, db = sys.argv[1], sys.argv[2], sys.argv[3]
    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    calls = [t.call("delete_file", "c2", path="a.txt"), t.call("delete_file", "c3", path="b.txt")]
    with DecisionToolNode(t.TOOLS, log=log) as node:
        app = t.graph(node, calls, checkpointer=saver)
        result = app.invoke(t.START_INPUT if phase == "start" else Command(resume={{"approved": True}}), t.CONFIG)
        print(t.RAN, [m.status for m in t.tool_messages(result)])
    """
)


def test_a_call_answered_before_a_restart_runs_once_on_its_answer(decision: Path, tmp_path: Path) -> None:
    # Two calls of one message wait; the first is answered, then the process ends. The new
    # process decides both again: the first keeps its approval and the answer recorded there.
    pytest.importorskip("langgraph.checkpoint.sqlite", reason="langgraph-checkpoint-sqlite is not installed")
    script = tmp_path / "restart.py"
    script.write_text(RESTART_TWO.format(tests=str(Path(__file__).parent)))
    log, db = tmp_path / "log.jsonl", tmp_path / "checkpoints.db"
    printed = []
    for phase in ("start", "first", "second"):
        done = subprocess.run([sys.executable, str(script), phase, str(log), str(db)], capture_output=True, text=True, cwd=REPO)
        assert done.returncode == 0, done.stdout + done.stderr
        printed.append(done.stdout.strip())
    assert printed[-1] == "['delete a.txt', 'delete b.txt'] ['success', 'success']"
    used = [r["id"] for r in records(log) if r.get("type") == "approval:used"]
    answered = [r["id"] for r in records(log) if r.get("type") == "approval:answer"]
    assert len(used) == 2 and used == answered[:2] and not any(id.endswith("-2") for id in used)
    assert [r["type"] for r in records(log)].count("tool:call") == 2
    verified(decision, log)


def test_a_node_never_closed_leaves_an_unfinished_log(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    node = DecisionToolNode(TOOLS, log=log)
    graph(node, [call("read_file", "c1", path="a.txt")]).invoke(START_INPUT, CONFIG)
    node.gate.log.commit()
    assert run(decision, "replay", "--require-seal", str(log))[0] == 1
    node.close()
    verified(decision, log)


def test_the_example_runs_and_its_log_verifies(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "example.jsonl"
    done = subprocess.run([sys.executable, str(REPO / "examples/agents-langgraph/main.py"), "--log", str(log)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "delete_file: error" in done.stdout and "send_email: success" in done.stdout
    verified(decision, log)


def test_the_async_path_waits_and_runs_the_approved_call_once(decision: Path, tmp_path: Path) -> None:
    import asyncio

    log = tmp_path / "log.jsonl"

    async def scenario() -> None:
        with DecisionToolNode(TOOLS, log=log) as node:
            app = graph(node, [call("read_file", "c1", path="a.txt"), call("delete_file", "c2", path="a.txt")])
            first = await app.ainvoke(START_INPUT, CONFIG)
            assert first["__interrupt__"][0].value["tool"] == "delete_file" and RAN == []
            await app.ainvoke(Command(resume={"approved": True}), CONFIG)

    asyncio.run(scenario())
    assert sorted(RAN) == ["delete a.txt", "read a.txt"]
    verified(decision, log)
