"""decision_contract.integrations: the shared tool gate, without any framework — the bundled
contract checks clean, MCP's annotations (and their defaults) decide, a host's own model call
can answer, invalid answers never let a call run, answers are checked and bound to the call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

import decision_contract as dc
from conftest import run
from decision_contract.integrations import TOOL_GATE_PATH, ToolCall, ToolGate
from decision_contract.integrations._core import parse_answer


def test_the_bundled_contract_checks_clean(decision: Path) -> None:
    status, out, err = run(decision, "check", "--deny", "warnings", str(TOOL_GATE_PATH))
    assert status == 0, out + err


@pytest.mark.parametrize(
    "hints, outcome",
    [
        ({"readOnlyHint": True}, "run"),
        ({"readOnlyHint": True, "openWorldHint": True}, "run"),
        ({"destructiveHint": False, "openWorldHint": False}, "run"),
        ({"destructiveHint": False, "idempotentHint": True, "openWorldHint": False}, "run"),
        ({"destructiveHint": False}, "approval"),  # open world by default
        ({"destructiveHint": True, "openWorldHint": False}, "approval"),
        ({}, "approval"),  # nothing declared: MCP's defaults, destructive
        ({"readOnlyHint": "yes"}, "approval"),  # not a boolean: not a declaration
    ],
)
def test_annotations_decide(tmp_path: Path, hints: Dict[str, Any], outcome: str) -> None:
    with ToolGate(log=tmp_path / "log.jsonl") as gate:
        verdict = gate.decide(ToolCall("c1", "tool", {"a": 1}, "A tool.", hints))
    assert verdict.outcome == outcome


def test_approvals_deny_refuses_what_would_wait(tmp_path: Path) -> None:
    with ToolGate(log=tmp_path / "log.jsonl", approvals="deny") as gate:
        verdict = gate.decide(ToolCall("c1", "rm", {}, "", {}))
        assert verdict.outcome == "deny" and "approvals are off" in verdict.reason
        assert gate.decide(ToolCall("c2", "cat", {}, "", {"readOnlyHint": True})).outcome == "run"


def test_a_host_model_call_answers_and_invalid_answers_never_run(decision: Path, tmp_path: Path) -> None:
    seen = []

    def model(frame: Dict[str, Any]) -> Dict[str, Any]:
        seen.append(frame["frame"]["state"]["tool"])
        return {"effect": {"choice": "read_only", "probabilities": {"read_only": 0.9, "additive": 0.05, "idempotent": 0.03, "destructive": 0.02}, "confidence": 0.9},
                "open_world": {"noul": 0.1}}

    def broken(frame: Dict[str, Any]) -> Dict[str, Any]:
        return {"effect": {"noul": 7}}

    log = tmp_path / "log.jsonl"
    with ToolGate(log=log, provider=model) as gate:
        assert gate.decide(ToolCall("c1", "ls", {}, "", {})).outcome == "run"
    assert seen == ["ls"]
    with ToolGate(log=log, provider=broken) as gate:
        verdict = gate.decide(ToolCall("c2", "cat", {}, "", {"readOnlyHint": True}))
    assert verdict.action == "escalate" and verdict.outcome == "approval"
    assert run(decision, "replay", "--require-seal", str(log))[0] == 0


def test_a_named_provider_is_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(dc.UsageError, match="'heuristic' or a callable"):
        ToolGate(log=tmp_path / "log.jsonl", provider="openai")
    with pytest.raises(dc.UsageError, match="approvals must be"):
        ToolGate(log=tmp_path / "log.jsonl", approvals="ask")  # type: ignore[arg-type]


def test_a_custom_contract_and_an_unknown_block(tmp_path: Path) -> None:
    text = TOOL_GATE_PATH.read_text().replace("- else → auto", "- else → ask_human")
    with ToolGate(log=tmp_path / "a.jsonl", contract=text) as gate:
        closed_write = {"destructiveHint": False, "openWorldHint": False}
        assert gate.decide(ToolCall("c1", "touch", {}, "", closed_write)).outcome == "approval"
    with pytest.raises(dc.UsageError, match="no block 'gate'"):
        ToolGate(log=tmp_path / "b.jsonl", contract=TOOL_GATE_PATH, block="gate")


def test_answers_are_checked_and_bound_to_the_call(tmp_path: Path) -> None:
    with ToolGate(log=tmp_path / "log.jsonl") as gate:
        verdict = gate.decide(ToolCall("call-1", "rm", {"path": "a"}, "", {}))
        assert verdict.approval_id is not None and verdict.approval_id.startswith("ap-call-1-")
        other = gate.decide(ToolCall("call-1", "rm", {"path": "b"}, "", {}))
        assert other.approval_id != verdict.approval_id  # the same id, other arguments
        for bad, complaint in [([], "must be a dict"), ({"approved": 1}, "needs `approved`"),
                               ({"approved": True, "reason": 3}, "must be a string"),
                               ({"approved": True, "id": other.approval_id}, "is for approval")]:
            with pytest.raises(dc.UsageError, match=complaint):
                parse_answer(bad, verdict)
        gate.record_pending(verdict)
        gate.record_pending(verdict)  # LangGraph's re-execution: recorded once
        assert gate.answer(verdict, {"approved": False, "reason": "no"}).approved is False
    lines = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    kinds = [line["e"]["type"] for line in lines if line.get("kind") == "event"]
    assert kinds.count("approval:pending") == 1 and kinds.count("approval:answer") == 1


def test_the_annotations_cell_is_written_as_json_dumps_writes_it() -> None:
    import itertools

    names = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]
    for values in itertools.product([True, False, None, "yes"], repeat=4):
        annotations = {name: value for name, value in zip(names, values) if value is not None}
        annotations["title"] = "not a hint"
        call = ToolCall("c", "t", {}, "", annotations)
        assert call.hints_json() == json.dumps(call.declared_hints(), sort_keys=True), annotations
