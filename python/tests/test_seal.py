"""The Python `SessionLog` ends its run with the runtime's seal: on `close()` and on leaving a
`with` block, so `decision replay --require-seal` passes; a log never closed is unfinished."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import decision_contract as dc
from conftest import REPO, run


def lines(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_close_seals_the_log_and_replay_requires_it(decision: Path, tmp_path: Path) -> None:
    log_path = tmp_path / "s.jsonl"
    log = dc.SessionLog(log_path)
    log.append_event("note", {"n": 1})
    head = log.close()
    assert head is not None and head.startswith("2:")
    assert log.closed and log.close() is None
    last = lines(log_path)[-1]
    assert last["kind"] == "seal" and last["lines"] == 2 and last["run"] == 0
    status, out, err = run(decision, "replay", "--require-seal", "--allow-empty", str(log_path))
    assert status == 0, out + err


def test_a_log_left_open_is_unfinished(decision: Path, tmp_path: Path) -> None:
    log_path = tmp_path / "open.jsonl"
    log = dc.SessionLog(log_path)
    log.append_event("note", {"n": 1})
    log.commit()
    status, out, err = run(decision, "replay", "--require-seal", "--allow-empty", str(log_path))
    assert status == 1, out + err
    log.close()
    assert run(decision, "replay", "--require-seal", "--allow-empty", str(log_path))[0] == 0


def test_the_context_manager_seals_and_a_reopened_log_is_the_next_run(decision: Path, tmp_path: Path) -> None:
    log_path = tmp_path / "c.jsonl"
    with dc.SessionLog(log_path) as log:
        log.append_event("note", {"n": 1})
    with dc.SessionLog(log_path) as log:
        log.append_event("note", {"n": 2})
    records = lines(log_path)
    seals = [r for r in records if r.get("kind") == "seal"]
    assert [s["run"] for s in seals] == [0, 1]
    assert records[-2]["run"] == 1
    assert run(decision, "replay", "--require-seal", "--allow-empty", str(log_path))[0] == 0


def test_a_keyed_seal_verifies_with_the_key_only(decision: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log_path = tmp_path / "k.jsonl"
    monkeypatch.setenv("DECISION_LOG_KEY", "a-key-of-sixteen-bytes-or-more")
    with dc.SessionLog(log_path) as log:
        log.append_event("note", {"n": 1})
    assert "mac" in lines(log_path)[-1]
    assert run(decision, "replay", "--require-seal", "--allow-empty", str(log_path))[0] == 0
    monkeypatch.setenv("DECISION_LOG_KEY", "another-key-of-sixteen-bytes")
    status, out, err = run(decision, "replay", "--require-seal", "--allow-empty", str(log_path))
    assert status == 1, out + err


def test_a_short_key_is_refused_before_anything_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DECISION_LOG_KEY", "short")
    with pytest.raises(dc.UsageError, match="too short"):
        dc.SessionLog(tmp_path / "short.jsonl")
    assert not (tmp_path / "short.jsonl").exists()


def test_ask_with_a_log_path_records_a_sealed_run_each_time(decision: Path, tmp_path: Path) -> None:
    contract = dc.Contract.parse((REPO / "examples/coding-agent/DECISION.md").read_text())
    log_path = tmp_path / "ask.jsonl"
    for _ in range(2):
        contract.ask("needs_tool", {"task": "Which file defines apply_discount?"}, provider="mock", log=str(log_path))
    seals = [r for r in lines(log_path) if r.get("kind") == "seal"]
    assert [s["run"] for s in seals] == [0, 1]
    assert run(decision, "replay", "--require-seal", "--allow-empty", str(log_path))[0] == 0
    os.remove(log_path)
