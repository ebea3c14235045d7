"""Approvals from Python: a run halted awaiting approval is listed and answered by the
library as `decision approvals` / `decision approve` do, and `decision resume` continues."""

from __future__ import annotations

from pathlib import Path

import pytest

import decision_contract as dc
from conftest import run, run_json


def halted_run(decision: Path, tmp_path: Path) -> Path:
    workdir = tmp_path / "ws"
    workdir.mkdir()
    (workdir / "keep.txt").write_text("precious")
    log = tmp_path / "run.jsonl"
    status, out, err = run(
        decision, "run", "--task", "Delete keep.txt", "--workdir", str(workdir),
        "--allow-delete", "--approvals", "queue", "--log", str(log),
    )
    assert status == 1 and "halt: awaiting_approval" in out, out + err
    return log


def test_pending_approvals_are_listed_as_the_cli_lists_them(decision: Path, tmp_path: Path) -> None:
    log = halted_run(decision, tmp_path)
    pending = dc.approvals(log)
    assert pending == run_json(decision, "approvals", str(log), "--format", "json")
    assert [(a["tool"], a["input"]) for a in pending] == [("delete_file", "keep.txt")]


def test_an_approval_answered_from_python_lets_the_run_resume(decision: Path, tmp_path: Path) -> None:
    log = halted_run(decision, tmp_path)
    approval = dc.approvals(log)[0]["id"]
    assert dc.approve(log, approval) == "approved"
    assert dc.approvals(log) == []
    with pytest.raises(dc.UsageError, match="already answered"):
        dc.approve(log, approval, deny=True)
    status, out, err = run(decision, "resume", str(log), "--workdir", str(tmp_path / "ws"), "--allow-delete")
    assert status == 0, out + err
    assert not (tmp_path / "ws" / "keep.txt").exists()
    replayed = dc.verify_log(log)
    assert replayed["mismatch"] == 0
    # The approvals are checked in the same read, as `decision replay` checks them.
    assert replayed["files"][0]["approvals"] == {"requested": 1, "answered": 1, "used": 1, "problems": []}
    assert replayed == run_json(decision, "replay", "--format", "json", "--jobs", "1", str(log))


def test_a_denial_from_python_keeps_the_file(decision: Path, tmp_path: Path) -> None:
    log = halted_run(decision, tmp_path)
    approval = dc.approvals(log)[0]["id"]
    with pytest.raises(dc.UsageError, match="reason"):
        dc.approve(log, approval, reason="no")
    assert dc.approve(log, approval, deny=True, reason="keep it") == "denied"
    status, out, _ = run(decision, "resume", str(log), "--workdir", str(tmp_path / "ws"), "--allow-delete")
    assert "halt: denied" in out
    assert (tmp_path / "ws" / "keep.txt").read_text() == "precious"


def test_an_unknown_approval_is_refused(decision: Path, tmp_path: Path) -> None:
    log = halted_run(decision, tmp_path)
    with pytest.raises(dc.UsageError, match="no approval"):
        dc.approve(log, "ap-9-9-000000000000")


def test_answers_the_tool_could_never_take_are_refused_as_the_cli_refuses_them(
    decision: Path, tmp_path: Path
) -> None:
    log = halted_run(decision, tmp_path)
    approval = dc.approvals(log)[0]["id"]
    # A path with a line break for delete_file: refused before anything is written.
    with pytest.raises(dc.UsageError) as refused:
        dc.approve(log, approval, input="keep.txt\nother.txt")
    assert (refused.value.code, refused.value.path) == ("E_USAGE", "input")
    assert "the modified input for `delete_file` is refused" in str(refused.value)
    status, _, err = run(decision, "approve", str(log), approval, "--input", '"keep.txt\\nother.txt"')
    assert status == 2 and "error[E_USAGE]: the modified input for `delete_file` is refused" in err, err
    with pytest.raises(dc.UsageError) as both:
        dc.approve(log, approval, deny=True, input="keep.txt")
    assert (both.value.code, both.value.path) == ("E_USAGE", "input")
    assert dc.approvals(log)[0]["id"] == approval, "still pending: nothing was recorded"
    # A log another writer holds: the same code from both.
    holder = dc.SessionLog(log)
    try:
        with pytest.raises(dc.LogError) as held:
            dc.approve(log, approval)
        assert held.value.code == "E_LOG_HELD"
        status, _, err = run(decision, "approve", str(log), approval)
        assert status == 2 and "error[E_LOG_HELD]" in err, err
    finally:
        holder.close()


# -- The writer that holds the log: SessionLog's own approval methods ----------------------


def held_log(path: Path) -> "dc.SessionLog":
    log = dc.SessionLog(path, session_id="held-1")
    log.append_pending("ap-1", "delete_file", '{"path":"a.txt"}', "00ff", {"step": 0, "rule": "ask_human"})
    log.append_pending("ap-2", "delete_file", '{"path":"b.txt"}', "00ff", {"step": 1})
    return log


def test_answers_recorded_by_the_writer_are_bound_and_replay(decision: Path, tmp_path: Path) -> None:
    path = tmp_path / "held.jsonl"
    log = held_log(path)
    approval = log.approval("ap-1")
    assert approval["tool"] == "delete_file" and approval["answer"] is None and not approval["used"]
    assert approval["extra"] == {"step": 0, "rule": "ask_human"}
    event = log.answer_pending("ap-1", True)
    assert event["approved"] is True and event["keyed"] is False and len(event["binding"]) == 64
    log.use_pending("ap-1", 0)
    log.append_event("tool:call", {"step": 0, "tool": "delete_file", "input": '{"path":"a.txt"}'})
    denied = log.answer_pending("ap-2", False, "keep it")
    assert denied["reason"] == "keep it"
    log.close()
    status, out, err = run(decision, "replay", "--require-seal", "--allow-empty", str(path))
    assert status == 0, out + err


def test_an_approval_is_answered_once_used_once_and_only_when_approved(tmp_path: Path) -> None:
    log = held_log(tmp_path / "held.jsonl")
    with pytest.raises(dc.UsageError, match="no answer yet"):
        log.use_pending("ap-1")
    log.answer_pending("ap-1", True)
    with pytest.raises(dc.UsageError, match="already answered"):
        log.answer_pending("ap-1", False)
    log.use_pending("ap-1")
    with pytest.raises(dc.UsageError, match="already used"):
        log.use_pending("ap-1")
    log.answer_pending("ap-2", False)
    with pytest.raises(dc.UsageError, match="denied"):
        log.use_pending("ap-2")
    with pytest.raises(dc.UsageError, match="no approval `ap-9`"):
        log.answer_pending("ap-9", True)
    with pytest.raises(dc.UsageError, match="already in the log"):
        log.append_pending("ap-1", "delete_file", "{}", "00")
    log.append_pending("ap-3", "t", "{}", "00")
    with pytest.raises(dc.UsageError, match="reason"):
        log.answer_pending("ap-3", True, "why")
    log.close()


def test_a_reopened_log_answers_what_an_earlier_run_left_pending(decision: Path, tmp_path: Path) -> None:
    path = tmp_path / "held.jsonl"
    held_log(path).close()
    # Another process, another run of the same log: it reads the pending approvals back.
    log = dc.SessionLog(path)
    assert log.approval("ap-2")["run"] == 0
    log.answer_pending("ap-2", False, "not today")
    log.answer_pending("ap-1", True)
    log.use_pending("ap-1", 5)
    log.append_event("tool:call", {"step": 5, "tool": "delete_file", "input": '{"path":"a.txt"}'})
    log.close()
    again = dc.SessionLog(path)
    assert again.approval("ap-1")["used"] and again.approval("ap-1")["answer"]["binding"] == {"status": "unkeyed"}
    with pytest.raises(dc.UsageError, match="already answered"):
        again.answer_pending("ap-2", True)
    again.close()
    status, out, err = run(decision, "replay", "--require-seal", "--allow-empty", str(path))
    assert status == 0, out + err


def test_a_keyed_log_binds_answers_under_its_key(decision: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DECISION_LOG_KEY", "0123456789abcdef0123456789abcdef")
    path = tmp_path / "keyed.jsonl"
    log = held_log(path)
    assert log.answer_pending("ap-1", True)["keyed"] is True
    log.answer_pending("ap-2", False)
    log.close()
    status, out, err = run(decision, "replay", "--require-seal", "--allow-empty", str(path))
    assert status == 0, out + err
    with dc.SessionLog(path) as reopened:
        assert reopened.approval("ap-1")["answer"]["binding"] == {"status": "verified"}
