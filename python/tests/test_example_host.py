"""examples/python-host: the support desk runs, its log verifies with `decision replay`, and
its code type-checks against the package's stubs with `mypy --strict`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, run

HOST = REPO / "examples/python-host/host.py"


def test_the_host_writes_a_log_replay_verifies(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "desk.jsonl"
    done = subprocess.run([sys.executable, str(HOST), "--log", str(log)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Charged twice for my March invoice: continue → use → auto_audit" in done.stdout
    assert "Out of office: stop" in done.stdout
    status, out, err = run(decision, "replay", "--format", "json", "--jobs", "1", str(log))
    assert status == 0, out + err
    replayed = json.loads(out)
    assert replayed["records"] == 6 and replayed["verified"] == 6
    assert replayed["runs"] == 3 and replayed["chain"] == "intact"
    # The desk closes its log: the seal ends it, as `--require-seal` checks.
    status, out, err = run(decision, "replay", "--require-seal", str(log))
    assert status == 0, out + err


def test_the_host_refuses_to_overwrite_a_log(tmp_path: Path) -> None:
    log = tmp_path / "desk.jsonl"
    log.write_text("")
    done = subprocess.run([sys.executable, str(HOST), "--log", str(log)], capture_output=True, text=True)
    assert done.returncode == 2 and "exists" in done.stderr


@pytest.mark.skipif(shutil.which("mypy") is None and not Path(sys.executable).with_name("mypy").exists(), reason="mypy is not installed")
def test_the_host_type_checks_strictly() -> None:
    mypy = shutil.which("mypy") or str(Path(sys.executable).with_name("mypy"))
    done = subprocess.run([mypy, "--strict", str(HOST)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
