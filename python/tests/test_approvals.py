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
    assert dc.verify_log(log)["mismatch"] == 0


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
