"""Errors are exceptions with the diagnostic's code and location, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import decision_contract as dc
from decision_contract import outcomes

from conftest import REPO

TRIAGE = REPO / "examples/support-triage"


def triage() -> dc.Contract:
    return dc.Contract.parse((TRIAGE / "DECISION.md").read_bytes(), path="triage.md")


def test_a_contract_that_does_not_parse_raises_with_code_and_location() -> None:
    text = (TRIAGE / "DECISION.md").read_text().replace("→ stop", "→ stopp", 1)
    with pytest.raises(dc.ContractError) as raised:
        dc.Contract.parse(text, path="bad.md")
    error = raised.value
    assert error.code == "DC0108" and error.path == "bad.md"
    assert error.line is not None and error.line > 1 and error.column is not None and error.column > 1
    assert error.diagnostics and error.diagnostics[0]["code"] == "DC0108"
    assert str(error).startswith(f"bad.md does not parse:\n  bad.md:{error.line}:{error.column}: DC0108")
    assert isinstance(error, ValueError) and isinstance(error, dc.DecisionError)


def test_a_clean_contract_parses() -> None:
    assert triage().blocks == ["is_actionable", "route", "refund_risk", "reply_ready"]


def test_unknown_block_profile_and_marking_are_usage_errors() -> None:
    contract = triage()
    state = json.loads((TRIAGE / "state.json").read_text())
    with pytest.raises(dc.UsageError, match="no block `nope`"):
        contract.evaluate("nope", {})
    with pytest.raises(dc.UsageError, match="no block `nope` in triage.md"):
        contract.frame("nope", state)
    with pytest.raises(dc.UsageError, match="unknown profile"):
        contract.frame("route", state, profile="other")
    with pytest.raises(dc.UsageError, match="unknown marking"):
        contract.frame("route", state, marking="none")
    with pytest.raises(dc.UsageError, match="unknown provider") as raised:
        contract.ask("route", state, provider="oracle")
    assert raised.value.code == "E_USAGE" and raised.value.path == "provider"
    # The CLI's own switch and words: `heuristic` answers only the coding host's questions.
    expected = "unknown provider `heuristic`: expected mock, script:FILE, systemone or openai"
    with pytest.raises(dc.UsageError, match=expected):
        contract.ask("route", state, provider="heuristic")
    with pytest.raises(dc.UsageError, match="replay:LOG"):
        contract.ask("route", state, provider="replay:")
    with pytest.raises(dc.UsageError):
        dc.check("schema: decision-contract/v1\n", profile="reference", capabilities="{}")


def test_a_gate_that_names_nothing_or_has_no_number_is_a_usage_error_naming_gates() -> None:
    answers = {"is_actionable": {"noul": 0.9}}
    with pytest.raises(dc.UsageError, match="no block with that id") as raised:
        triage().evaluate("is_actionable", answers, gates={"nope.q": 0.5})
    assert raised.value.code == "E_USAGE" and raised.value.path == "gates"
    with pytest.raises(dc.UsageError, match="the threshold must be a number"):
        triage().evaluate("is_actionable", answers, gates={"is_actionable.is_actionable": None})


def test_an_invalid_answer_gives_valid_false_and_escalate() -> None:
    out = triage().evaluate("is_actionable", {"is_actionable": {"noul": 1.5}})
    assert out["valid"] is False and out["action"] == "escalate" and out["rule"] is None
    assert out["problems"][0]["question"] == "is_actionable"
    good = triage().evaluate("is_actionable", {"is_actionable": {"noul": 0.9}})
    assert good["valid"] is True and good["action"] == "continue"


def test_values_that_are_not_json_are_type_errors() -> None:
    with pytest.raises(TypeError):
        triage().evaluate("is_actionable", {"is_actionable": {"noul": object()}})
    with pytest.raises(ValueError):
        triage().evaluate("is_actionable", {"is_actionable": {"noul": float("nan")}})
    with pytest.raises(dc.UsageError, match="answers must be a dict") as raised:
        triage().evaluate("is_actionable", [])  # type: ignore[arg-type]
    assert raised.value.code == "E_USAGE" and raised.value.path == "answers"


def test_a_frame_the_host_cannot_fill_is_a_contract_error() -> None:
    state = json.loads((TRIAGE / "state.json").read_text())
    # `reply_ready` reads `host:ticketFacts`, which only the support host implements.
    with pytest.raises(dc.ContractError, match="reply_ready"):
        triage().frame("reply_ready", state)


def test_capabilities_refuse_a_block_that_does_not_fit() -> None:
    state = json.loads((TRIAGE / "state.json").read_text())
    capabilities = json.loads((TRIAGE / "capabilities.json").read_text())
    assert triage().frame("route", state, capabilities=capabilities)["block"] == "route"
    capabilities["hostPositions"].pop("host:routing")
    with pytest.raises(dc.ContractError) as raised:
        triage().frame("route", state, capabilities=capabilities)
    assert raised.value.code is not None and raised.value.code.startswith("DC04") and raised.value.line


def test_verify_record_refuses_what_is_not_a_decision() -> None:
    with pytest.raises(dc.RecordError):
        dc.verify_record({"type": "tool", "step": 1})
    with pytest.raises(dc.RecordError, match="state"):
        dc.verify_record({"type": "decision", "step": 1, "id": "n"})


def test_session_log_refuses_after_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with dc.SessionLog(path, session_id="s1") as log:
        log.append_event("note", {"text": "hello"})
    with open(path, "a") as handle:
        handle.write('{"kind":"event"')
    with pytest.raises(dc.LogError) as raised:
        dc.SessionLog(path)
    # Header, event, seal, then the torn line.
    assert raised.value.code == "E_LOG_TORN" and raised.value.line == 4
    with pytest.raises(dc.LogError) as invalid:
        dc.SessionLog(tmp_path / "other.jsonl", session_id="not valid!")
    assert invalid.value.code == "E_SESSION_ID"


def test_session_log_head_follows_the_chain(tmp_path: Path, decision: Path) -> None:
    from conftest import run

    path = tmp_path / "log.jsonl"
    log = dc.SessionLog(path, session_id="s1", group_commit=True)
    first = log.head
    log.append_event("note", {"n": 1})
    assert log.head["seq"] == first["seq"] + 1 and log.head["sha256"] != first["sha256"]
    assert path.read_text().count("\n") == 1  # held until commit
    log.commit()
    assert path.read_text().count("\n") == 2
    log.close()
    with pytest.raises(dc.LogError):
        log.append_event("late")
    reopened = dc.SessionLog(path)
    assert reopened.head["seq"] == 2  # the seal that close() wrote
    reopened.close()
    # The log holds no decision record: replay passes it only when told that is expected.
    status, out, _ = run(decision, "replay", "--allow-empty", str(path))
    assert status == 0 and "chain: intact" in out


def test_outcome_contracts_with_lint_errors_raise_located(tmp_path: Path) -> None:
    with pytest.raises(dc.ContractError) as raised:
        outcomes.Contracts.load(REPO / "examples/outcomes/bad-contracts.json")
    assert raised.value.line and raised.value.column and raised.value.diagnostics
    with pytest.raises(dc.LogError):
        outcomes.Contracts.load(tmp_path / "missing.json")
    loaded = outcomes.Contracts.load(REPO / "examples/outcomes/contracts.json")
    with pytest.raises(dc.UsageError, match="no contract"):
        loaded.validate("catalog", "nope", {"status": "ok", "value": {}})
    with pytest.raises(dc.UsageError, match="not an outcome"):
        loaded.validate("catalog", "find_movies", {"value": 1})


def test_a_provider_that_cannot_be_reached_fails_closed(tmp_path: Path) -> None:
    import socket
    import time

    # A port on 127.0.0.1 that nothing listens on: bind one, note it, close it.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    contract = dc.Contract.parse((REPO / "examples/coding-agent/DECISION.md").read_bytes())
    started = time.monotonic()
    # As `decision ask` does: an outage is a decision (escalate, degraded), not an exception.
    out = contract.ask("needs_tool", {"task": "t"}, provider="openai", url=f"http://127.0.0.1:{port}/v1", timeout_ms=2000)
    assert out["action"] == "escalate" and out["valid"] is False and out["degraded"] is True
    assert "unavailable" in out["reason"]
    assert time.monotonic() - started < 60
    with pytest.raises(dc.UsageError, match="unknown openai_api"):
        contract.ask("needs_tool", {"task": "t"}, provider="openai", openai_api="bogus")
    with pytest.raises(dc.UsageError):
        contract.ask("needs_tool", {"task": "t"}, provider="script:" + str(tmp_path / "missing.json"))
