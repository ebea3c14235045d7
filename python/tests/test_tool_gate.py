"""decision_contract.integrations: the shared tool gate, without any framework — the bundled
contract checks clean, MCP's annotations (and their defaults) decide, a host's own model call
can answer, invalid answers never let a call run, answers are checked and bound to the call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

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


def test_an_unknown_provider_is_refused_before_any_call(tmp_path: Path) -> None:
    with pytest.raises(dc.UsageError, match="unknown provider `gpt`") as refused:
        ToolGate(log=tmp_path / "log.jsonl", provider="gpt")
    assert (refused.value.code, refused.value.path) == ("E_USAGE", "provider")
    with pytest.raises(dc.UsageError, match="a provider name or a callable"):
        ToolGate(log=tmp_path / "log.jsonl", provider=3)  # type: ignore[arg-type]
    with pytest.raises(dc.UsageError, match="approvals must be"):
        ToolGate(log=tmp_path / "log.jsonl", approvals="ask")  # type: ignore[arg-type]


class _ChatModel:
    """An OpenAI-compatible chat server on 127.0.0.1 that answers with log-probabilities, as
    a local model server does: a call that deletes is destructive (`D`), any other reads
    (`A`); the open-world question gets `B`. It keeps every prompt it was sent."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.prompts: List[str] = []
        model = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][-1]["content"]
                model.prompts.append(prompt)
                effect = "What does this tool call do" in prompt
                label = ("D" if "delete" in prompt else "A") if effect else "B"
                top = [{"token": label, "logprob": -0.05}, {"token": "C" if label != "C" else "A", "logprob": -3.0}]
                reply = {"choices": [{"message": {"content": label}, "logprobs": {"content": [
                    {"token": label, "logprob": -0.05, "top_logprobs": top}]}}]}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_an_openai_compatible_model_decides_the_calls(decision: Path, tmp_path: Path) -> None:
    model = _ChatModel()
    log = tmp_path / "log.jsonl"
    try:
        with ToolGate(log=log, provider="openai", url=model.url, model="local", timeout_ms=10_000) as gate:
            read = gate.decide(ToolCall("c1", "list_files", {"path": "."}, "Lists files.", {}))
            delete = gate.decide(ToolCall("c2", "delete_file", {"path": "notes.md"}, "Deletes a file.", {}))
    finally:
        model.close()
    # The model's answers decide, not the annotations (none were declared: MCP's defaults
    # alone would send both calls to a person).
    assert (read.outcome, read.action) == ("run", "auto"), read
    assert (delete.outcome, delete.action) == ("approval", "ask_human"), delete
    # The model saw each call's cells; the arguments marked as the agent's words.
    assert any("list_files" in p for p in model.prompts) and any("notes.md" in p for p in model.prompts)
    # Each decision is recorded by the engine, at its step, and the sealed log verifies.
    records = [json.loads(line) for line in log.read_text().splitlines()]
    decisions = [r["e"] for r in records if r.get("e", {}).get("type") == "decision"]
    assert [(d["step"], d["action"]) for d in decisions] == [(0, "auto"), (1, "ask_human")], decisions
    assert all(d["provider"].startswith("openai@127.0.0.1:") for d in decisions), decisions
    assert run(decision, "replay", "--require-seal", str(log))[0] == 0


def test_a_model_that_cannot_be_reached_never_lets_a_call_run(decision: Path, tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "log.jsonl"
    url = f"http://127.0.0.1:{port}/v1"
    with ToolGate(log=log, provider="openai", url=url, timeout_ms=2_000, approvals="deny") as gate:
        verdict = gate.decide(ToolCall("c1", "list_files", {"path": "."}, "Lists files.", {"readOnlyHint": True}))
    assert (verdict.outcome, verdict.action) == ("deny", "escalate"), verdict
    assert run(decision, "replay", "--require-seal", str(log))[0] == 0


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


def test_the_one_call_record_is_the_record_frame_and_evaluate_make(decision: Path, tmp_path: Path) -> None:
    """The heuristic gate frames, evaluates and records in one native call; a host function
    giving the same answers goes through `frame` and `evaluate`: the two logs hold the same
    decisions but for the provider's name (and `degraded`, which the engine's record states:
    no fallback was taken)."""
    from decision_contract.integrations._core import heuristic_answers

    calls = [
        ToolCall("c1", "search", {"q": "ünïcode ⟨x⟩"}, "Searches.", {"readOnlyHint": True}),
        ToolCall("c2", "rm", {"path": "/"}, "Removes.", {}),
        ToolCall("c3", "post", {"body": "x" * 2000}, "Posts.", {"destructiveHint": False}),
    ]

    def answers_like_the_heuristic(frame: Dict[str, Any]) -> Dict[str, Any]:
        tool = frame["frame"]["state"]["tool"]
        return heuristic_answers(next(c for c in calls if c.tool in tool))

    decided: Dict[str, List[Dict[str, Any]]] = {}
    for name, provider in (("native", "heuristic"), ("python", answers_like_the_heuristic)):
        log = tmp_path / f"{name}.jsonl"
        with ToolGate(log=log, provider=provider) as gate:
            verdicts = [gate.decide(call) for call in calls]
        assert [v.outcome for v in verdicts] == ["run", "approval", "approval"]
        assert run(decision, "replay", "--require-seal", str(log))[0] == 0
        events = [json.loads(line)["e"] for line in log.read_text().splitlines() if '"type":"decision"' in line]
        if name == "native":
            assert all(e.pop("degraded") is False for e in events)
        decided[name] = [{k: v for k, v in e.items() if k != "provider"} for e in events]
    assert decided["native"] == decided["python"]
    assert len(decided["native"]) == 3


def test_the_answers_kept_by_hints_are_the_answers_of_each_call(tmp_path: Path) -> None:
    """The gate keeps the heuristic's answers by the hints a tool declares: one gate deciding
    every combination of hints, in an order that revisits each, records for every call the
    answers `heuristic_answers` gives that call."""
    import itertools

    from decision_contract.integrations._core import heuristic_answers

    names = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]
    combinations = [
        {name: value for name, value in zip(names, values) if value is not None}
        for values in itertools.product([True, False, None], repeat=4)
    ]
    calls = [ToolCall(f"c{i}", "tool", {"i": i}, "", hints) for i, hints in enumerate(combinations + combinations[::-1])]
    log = tmp_path / "log.jsonl"
    with ToolGate(log=log) as gate:
        for call in calls:
            gate.decide(call)
    recorded = [json.loads(line)["e"]["answers"] for line in log.read_text().splitlines() if '"type":"decision"' in line]
    assert recorded == [heuristic_answers(call) for call in calls]


def test_the_arguments_are_written_as_json_dumps_writes_them() -> None:
    for arguments in [{}, {"b": 1, "a": [1, {"z": None, "y": "é"}]}, {"when": Path("/x")}, {"n": 1.5e300, "s": "\u2028"}]:
        expected = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        assert ToolCall("c", "t", arguments).arguments_json() == expected


def _lines(path: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _types(path: Path) -> List[str]:
    """Each line's event type (``decision``, ``tool:call``), or its kind (``header``, ``seal``)."""
    return [str(line["e"]["type"] if line["kind"] == "event" else line["kind"]) for line in _lines(path)]


def test_a_decision_is_in_the_file_before_the_call_runs_and_a_refusal_at_once(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with ToolGate(log=log) as gate:
        before = _types(log)
        # A call that waits for a person: its decision is written before `decide` returns.
        waits = gate.decide(ToolCall("c1", "rm", {"path": "a"}, "", {}))
        assert waits.outcome == "approval" and _types(log) == before + ["decision"]
        # A call that may run: its decision and its `tool:call` line are written together,
        # the decision first, when the call is recorded as running.
        runs = gate.decide(ToolCall("c2", "cat", {"path": "a"}, "", {"readOnlyHint": True}))
        assert runs.outcome == "run" and _types(log) == before + ["decision"]  # held for one write
        gate.record_call(runs)
        assert _types(log) == before + ["decision", "decision", "tool:call"]
        decision, call = (line["e"] for line in _lines(log)[-2:])
        assert decision["step"] == call["step"] == runs.step and call["callId"] == "c2"
        # A decided call that is never recorded as running is still written, at the seal.
        gate.decide(ToolCall("c3", "cat", {"path": "b"}, "", {"readOnlyHint": True}))
    assert _types(log)[-2:] == ["decision", "seal"]
    assert dc.verify_log(log)["chain"] == "intact"


@pytest.mark.parametrize("answer", [None, {"approved": False, "reason": "no"}, {"approved": True}])
def test_a_call_that_waits_is_recorded_as_running_only_once_approved(decision: Path, tmp_path: Path, answer: Any) -> None:
    log = tmp_path / "log.jsonl"
    with ToolGate(log=log) as gate:
        verdict = gate.decide(ToolCall("c1", "delete_file", {"path": "a.txt"}))
        gate.record_pending(verdict)
        if answer is not None:
            gate.answer(verdict, answer)
        if answer == {"approved": True}:
            gate.record_call(verdict)
        else:
            with pytest.raises(dc.UsageError, match="waits for approval"):
                gate.record_call(verdict)
    kinds = [json.loads(line)["e"]["type"] for line in log.read_text().splitlines() if '"kind":"event"' in line]
    ran = answer == {"approved": True}
    assert ("approval:used" in kinds, "tool:call" in kinds) == (ran, ran)
    status, out, err = run(decision, "replay", "--require-seal", str(log))
    assert status == 0, out + err
