"""Hostile values from a host: dicts and lists nested far too deep, values that contain
themselves, and a `jobs` count far beyond the machine. Each is a Python exception (or a bound
honoured), never a crash of the interpreter: every case runs in a child interpreter, so a
segfault fails the test instead of ending the run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import decision_contract as dc

from conftest import REPO

# Run in a child interpreter: builds the hostile value `VALUE` (see `_value`) and calls each
# entrance with it, printing one line per call: `<entrance> <exception type>: <message>`.
_PROBE = textwrap.dedent(
    """
    import json, sys, tempfile
    from pathlib import Path
    import decision_contract as dc
    from decision_contract import outcomes

    kind, depth = sys.argv[1], int(sys.argv[2])
    def nested(make):
        value = 0
        for _ in range(depth):
            value = make(value)
        return value
    if kind == "list":
        VALUE = nested(lambda inner: [inner])
    elif kind == "dict":
        VALUE = nested(lambda inner: {"k": inner})
    elif kind == "tuple":
        VALUE = nested(lambda inner: (inner,))
    elif kind == "cyclic-list":
        VALUE = [1]
        VALUE.append(VALUE)
    elif kind == "cyclic-dict":
        VALUE = {"a": 1}
        VALUE["self"] = {"again": VALUE}
    else:
        raise SystemExit("unknown kind " + kind)

    triage = Path(sys.argv[3])
    contract = dc.Contract.parse((triage / "DECISION.md").read_bytes())
    state = json.loads((triage / "state.json").read_text())
    capabilities = json.loads((triage / "capabilities.json").read_text())
    contracts = outcomes.Contracts.load(Path(sys.argv[4]))
    log = dc.SessionLog(Path(tempfile.mkdtemp()) / "log.jsonl", session_id="hostile")
    calls = {
        "evaluate.answers": lambda: contract.evaluate("is_actionable", {"is_actionable": {"noul": VALUE}}),
        "evaluate.candidates": lambda: contract.evaluate("route", {}, candidates={"route": VALUE}),
        "frame.state": lambda: contract.frame("route", {**state, "body": VALUE}),
        "frame.capabilities": lambda: contract.frame("route", state, capabilities={**capabilities, "x": VALUE}),
        "ask.state": lambda: contract.ask("is_actionable", {**state, "body": VALUE}, provider="mock"),
        "check.capabilities": lambda: dc.check("schema: decision-contract/v1\\n", capabilities={"x": VALUE}),
        "verify_record": lambda: dc.verify_record({"type": "decision", "step": 1, "state": {"x": VALUE}}),
        "append_decision": lambda: log.append_decision({"type": "decision", "state": {"x": VALUE}}),
        "append_event": lambda: log.append_event("note", {"x": VALUE}),
        "outcomes.validate": lambda: contracts.validate("catalog", "find_movies", {"status": "ok", "value": VALUE}),
    }
    for name, call in calls.items():
        try:
            call()
            print(name, "returned")
        except Exception as error:
            print(name, type(error).__name__ + ":", str(error).splitlines()[0])
    """
)


def _probe(kind: str, depth: int = 0) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, kind, str(depth), str(REPO / "examples/support-triage"),
         str(REPO / "examples/outcomes/contracts.json")],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, f"the interpreter ended with {done.returncode}: {done.stderr[-2000:]}"
    results = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert len(results) == 10, done.stdout
    return results


def test_values_nested_far_too_deep_raise_in_every_entrance() -> None:
    for kind in ["list", "dict", "tuple"]:
        for name, result in _probe(kind, 100_000).items():
            assert result.startswith("ValueError: dicts and lists nest more than 128 deep"), (kind, name, result)


def test_a_value_that_contains_itself_raises_as_a_cycle_in_every_entrance() -> None:
    for kind in ["cyclic-list", "cyclic-dict"]:
        for name, result in _probe(kind).items():
            assert result.startswith("ValueError: a ") and "contains itself" in result, (kind, name, result)


def test_a_value_at_the_depth_limit_is_read_and_one_level_deeper_is_refused(tmp_path: Path) -> None:
    def nested(depth: int) -> object:
        value: object = 0
        for _ in range(depth):
            value = [value]
        return value

    with dc.SessionLog(tmp_path / "log.jsonl", session_id="depth") as log:
        # The payload is the outermost dict: with 127 lists inside it, 128 levels in all.
        log.append_event("note", {"x": nested(127)})
        try:
            log.append_event("note", {"x": nested(128)})
        except ValueError as error:
            assert "nest more than 128 deep" in str(error)
        else:
            raise AssertionError("a value 129 deep was read")


def test_verify_log_runs_no_more_threads_than_the_machine_has_cores(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with dc.SessionLog(path, session_id="jobs") as log:
        for step in range(50):
            log.append_event("note", {"step": step})
    started = time.monotonic()
    report = dc.verify_log(path, jobs=1_000_000)
    # A thread per job took 36 s and 988 MB; capped at the cores it is immediate.
    assert time.monotonic() - started < 10
    assert report["other_events"] >= 50
