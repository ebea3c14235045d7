"""decision_contract.integrations.pydantic_ai: DecisionToolset with the real PydanticAI and its
FunctionModel (no network, no key). Skipped, with the reason, when PydanticAI is not
installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

pytest.importorskip("pydantic_ai", reason="PydanticAI is not installed: pip install './python[pydantic-ai]'")

from pydantic_ai import Agent, DeferredToolRequests, FunctionToolset  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

import decision_contract as dc  # noqa: E402
from conftest import REPO, run  # noqa: E402
from decision_contract.integrations.pydantic_ai import DecisionToolset  # noqa: E402

RAN: List[str] = []


def read_file(path: str) -> str:
    """Reads a file."""
    RAN.append(f"read {path}")
    return f"contents of {path}"


def delete_file(path: str) -> str:
    """Deletes a file."""
    RAN.append(f"delete {path}")
    return f"deleted {path}"


HINTS = {"read_file": {"readOnlyHint": True}, "delete_file": {"destructiveHint": True, "openWorldHint": False}}


def agent(toolset: DecisionToolset, *turns: List[Any]) -> Agent[None, Any]:
    script = [*turns, [TextPart("done")]]

    def model(_messages: List[ModelMessage], _info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=script.pop(0))

    return Agent(FunctionModel(model), toolsets=[toolset], output_type=[str, DeferredToolRequests])


def gated(log: Path, **options: Any) -> DecisionToolset:
    return DecisionToolset.create(FunctionToolset([read_file, delete_file]), log=log, annotations=HINTS, **options)


def returns(result: Any) -> Dict[str, str]:
    return {p.tool_name: str(p.content) for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)}


def records(log: Path) -> List[Dict[str, Any]]:
    return [json.loads(line).get("e", {}) for line in log.read_text().splitlines()]


def verified(decision: Path, log: Path) -> None:
    status, out, err = run(decision, "replay", "--require-seal", str(log))
    assert status == 0, out + err



@pytest.fixture(autouse=True)
def clean() -> None:
    RAN.clear()


def test_a_read_only_call_runs(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    toolset = gated(log)
    result = agent(toolset, [ToolCallPart("read_file", {"path": "a.txt"}, tool_call_id="c1")]).run_sync("go")
    toolset.close()
    assert result.output == "done" and RAN == ["read a.txt"]
    verified(decision, log)


def test_a_destructive_call_waits_and_an_approval_runs_it_once(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    toolset = gated(log)
    app = agent(toolset, [ToolCallPart("delete_file", {"path": "a.txt"}, tool_call_id="c2")])
    first = app.run_sync("go")
    assert isinstance(first.output, DeferredToolRequests) and RAN == []
    assert first.output.metadata["c2"]["id"].startswith("ap-c2-")
    results = toolset.results(first.output, {"c2": {"approved": True}})
    second = app.run_sync(message_history=first.all_messages(), deferred_tool_results=results)
    toolset.close()
    assert second.output == "done" and RAN == ["delete a.txt"]
    verified(decision, log)


def test_a_rejection_leaves_the_call_unrun_and_says_why(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    toolset = gated(log)
    app = agent(toolset, [ToolCallPart("delete_file", {"path": "a.txt"}, tool_call_id="c2")])
    first = app.run_sync("go")
    results = toolset.results(first.output, {"c2": {"approved": False, "reason": "keep it"}})
    second = app.run_sync(message_history=first.all_messages(), deferred_tool_results=results)
    toolset.close()
    assert RAN == [] and "keep it" in returns(second)["delete_file"]
    verified(decision, log)


def test_a_call_id_that_comes_again_in_a_later_run_waits_for_an_answer_of_its_own(decision: Path, tmp_path: Path) -> None:
    # A model provider with short ids: a second run on the same log asks for the very call the
    # first did, with the same id. The person's first approval does not answer it.
    log = tmp_path / "log.jsonl"
    toolset = gated(log)
    for answer in ({"approved": True}, {"approved": False, "reason": "not twice"}):
        app = agent(toolset, [ToolCallPart("delete_file", {"path": "a.txt"}, tool_call_id="c2")])
        first = app.run_sync("go")
        results = toolset.results(first.output, {"c2": answer})
        second = app.run_sync(message_history=first.all_messages(), deferred_tool_results=results)
    toolset.close()
    assert RAN == ["delete a.txt"] and "not twice" in returns(second)["delete_file"]
    answers = [(r["id"], r["approved"]) for r in records(log) if r.get("type") == "approval:answer"]
    assert [approved for _, approved in answers] == [True, False] and answers[1][0] == f"{answers[0][0]}-2"
    verified(decision, log)


def test_no_verdict_is_kept_once_its_call_ran_or_was_refused(decision: Path, tmp_path: Path) -> None:
    # A long-lived toolset must not keep every call it decided: once a call ran, or a person
    # rejected it, its verdict is let go.
    log = tmp_path / "log.jsonl"
    toolset = gated(log)
    read = ToolCallPart("read_file", {"path": "a.txt"}, tool_call_id="c1")
    deletes = [ToolCallPart("delete_file", {"path": "a.txt"}, tool_call_id="c2"), ToolCallPart("delete_file", {"path": "b.txt"}, tool_call_id="c3")]
    app = agent(toolset, [read, *deletes])
    first = app.run_sync("go")
    assert isinstance(first.output, DeferredToolRequests) and RAN == ["read a.txt"]
    results = toolset.results(first.output, {"c2": {"approved": True}, "c3": {"approved": False, "reason": "keep it"}})
    second = app.run_sync(message_history=first.all_messages(), deferred_tool_results=results)
    toolset.close()
    assert second.output == "done" and RAN == ["read a.txt", "delete a.txt"]
    assert toolset._verdicts == {}
    verified(decision, log)


def test_approvals_deny_fails_the_call_at_once(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    toolset = gated(log, approvals="deny")
    result = agent(toolset, [ToolCallPart("delete_file", {"path": "a.txt"}, tool_call_id="c2")]).run_sync("go")
    toolset.close()
    assert result.output == "done" and RAN == []
    assert "approvals are off" in returns(result)["delete_file"]
    verified(decision, log)


@pytest.mark.parametrize("approved", [False, True])
def test_an_answer_after_a_restart_is_bound_to_the_same_call(decision: Path, tmp_path: Path, approved: bool) -> None:
    log = tmp_path / "log.jsonl"
    # The call that waits is not the run's first decision: its answer is bound to step 1.
    turn = [ToolCallPart("read_file", {"path": "r.txt"}, tool_call_id="c1"), ToolCallPart("delete_file", {"path": "a.txt"}, tool_call_id="c2")]
    before = gated(log)
    first = agent(before, turn).run_sync("go")
    assert isinstance(first.output, DeferredToolRequests) and RAN == ["read r.txt"]
    RAN.clear()
    # What survives the process: the log (sealed) and the run's messages, as JSON.
    before.close()
    history = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(first.all_messages()))
    requests = first.output
    after = gated(log)
    results = after.results(requests, {"c2": {"approved": approved, "reason": "" if approved else "keep it"}})
    second = agent(after).run_sync(message_history=history, deferred_tool_results=results)
    after.close()
    assert RAN == (["delete a.txt"] if approved else [])
    assert ("deleted a.txt" if approved else "keep it") in returns(second)["delete_file"]
    answers = [r for r in records(log) if r.get("type") == "approval:answer"]
    assert [a["approved"] for a in answers] == [approved] and answers[0]["binding"]
    # Each call decided once, also across the restart.
    assert [r["step"] for r in records(log) if r.get("type") == "decision"] == [0, 1]
    verified(decision, log)


def test_an_answer_after_a_restart_for_a_changed_call_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    before = gated(log)
    first = agent(before, [ToolCallPart("delete_file", {"path": "a.txt"}, tool_call_id="c2")]).run_sync("go")
    before.close()
    requests = first.output
    requests.approvals[0].args = {"path": "b.txt"}
    after = gated(log)
    with pytest.raises(dc.UsageError, match="not decided as waiting"):
        after.results(requests, {"c2": {"approved": True}})
    after.close()
    assert RAN == []


@pytest.mark.parametrize(
    "answers, complaint",
    [
        ({"c9": {"approved": True}}, "no call waits"),
        ({}, "wait for an answer"),
        ({"c2": {"approved": "yes"}}, "needs `approved`"),
        ({"c2": {"approved": True, "id": "ap-other"}}, "is for approval 'ap-other'"),
    ],
)
def test_a_bad_answer_is_refused_and_runs_nothing(tmp_path: Path, answers: Dict[str, Any], complaint: str) -> None:
    toolset = gated(tmp_path / "log.jsonl")
    first = agent(toolset, [ToolCallPart("delete_file", {"path": "a.txt"}, tool_call_id="c2")]).run_sync("go")
    with pytest.raises(dc.UsageError, match=complaint):
        toolset.results(first.output, answers)
    toolset.close()
    assert RAN == []


def test_the_example_runs_and_its_log_verifies(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "example.jsonl"
    done = subprocess.run([sys.executable, str(REPO / "examples/agents-pydantic-ai/main.py"), "--log", str(log)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    verified(decision, log)
