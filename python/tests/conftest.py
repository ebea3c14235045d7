"""Shared helpers: the repository, the `decision` binary, and running it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"


def _decision_binary() -> Path:
    given = os.environ.get("DECISION_BIN")
    if given:
        return Path(given)
    subprocess.run(["cargo", "build", "-q", "--bin", "decision"], cwd=REPO, check=True)
    return REPO / "target" / "debug" / "decision"


@pytest.fixture(scope="session")
def decision() -> Path:
    return _decision_binary()


def run(binary: Path, *args: str) -> Tuple[int, str, str]:
    """Runs the CLI from the repository root: (exit status, stdout, stderr)."""
    done = subprocess.run([str(binary), *args], cwd=REPO, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def run_json(binary: Path, *args: str) -> Any:
    _, out, err = run(binary, *args)
    assert out, err
    return json.loads(out)


# A coding host's state after two steps, for the reference profile's frames.
CODING_STATE: Dict[str, Any] = {
    "task": "Which file defines `apply_discount`?",
    "lastResult": "pricing.py:\ndef apply_discount(price, pct):\n    return price * (1 - pct)",
    "history": [
        {"tool": "list_dir", "input": ".", "result": "pricing.py\ninventory.py"},
        {"tool": "read_file", "input": "pricing.py", "result": "def apply_discount(price, pct): ..."},
    ],
    "evidence": ["pricing.py defines apply_discount"],
    "steps": 2,
}


def same(library: Any, cli: Any) -> None:
    """Equal, with keys in the same order: no front end adds or drops a member."""
    assert json.dumps(library) == json.dumps(cli)


def contracts() -> List[Path]:
    found = [REPO / "examples/coding-agent/DECISION.md", REPO / "examples/support-triage/DECISION.md"]
    found += sorted((SHARED / "fixtures/jevloop").glob("*.md")) if SHARED.exists() else []
    return found
