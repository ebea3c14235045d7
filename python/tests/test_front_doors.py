"""One door: every case of tests/front-doors/cases.json given to the `decision` command and to
the Python package gives the same document (member for member, in order) or the same refusal
code. js/test/front-doors.test.js holds the npm package to the same cases, so all three
agree."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

import decision_contract as dc
from decision_contract import outcomes

from conftest import REPO, run

CASES = json.loads((REPO / "tests/front-doors/cases.json").read_text())["cases"]

# What a front end gave: ("document", the JSON text) or ("error", the code).
Result = Tuple[str, str]


def cli_args(case: Dict[str, Any]) -> List[str]:
    """The command line that asks the CLI what `case` asks."""
    command = case["command"]
    if command == "check":
        args = ["check", "--format", "json"]
        args += ["--profile", case["profile"]] if "profile" in case else []
        args += ["--capabilities", case["capabilities"]] if "capabilities" in case else []
        args += ["--deny", "warnings"] if case.get("deny_warnings") else []
        return [*args, case["contract"]]
    if command == "frame":
        args = ["frame", case["contract"], "--block", case["block"], "--state", case["state"], "--format", "json"]
        args += ["--profile", case["profile"]] if "profile" in case else []
        args += ["--marking", case["marking"]] if "marking" in case else []
        return args + [arg for cell in case.get("untrusted", []) for arg in ("--untrusted", cell)]
    if command == "eval":
        args = ["eval", case["contract"], "--block", case["block"], "--answers", case["answers"], "--format", "json"]
        args += [arg for gate in case.get("gates", []) for arg in ("--gate", gate)]
        return args + (["--candidates", case["candidates"]] if "candidates" in case else [])
    if command == "log":
        return ["replay", "--format", "json", case["log"]]
    if command == "outcomes-check":
        return ["outcomes", "check", "--format", "json", case["contracts"]]
    if command == "outcomes-validate":
        return [
            "outcomes", "validate", "--format", "json", case["contracts"],
            "--tool", case["tool"], "--method", case["method"], "--outcome", case["outcome"],
        ]  # fmt: skip
    assert command == "outcomes-report", command
    return ["outcomes", "report", "--format", "json", case["log"]]


def from_cli(decision: Path, case: Dict[str, Any]) -> Result:
    code, out, err = run(decision, *cli_args(case))
    # A refusal is the last line; lines before it may list what it is about (lint errors).
    refused = re.search(r"^error\[([A-Z0-9_]+)\]: ", err, re.MULTILINE)
    if refused:
        assert code == 2 and out == "", (code, out)
        return ("error", refused.group(1))
    assert code in (0, 1), err
    document = json.loads(out)
    if case["command"] == "check":
        document = document["files"][0]
    return ("document", json.dumps(document))


def json_or_text(relative: str) -> Any:
    """A file as the JSON value it holds, else as its text (which a caller would then pass)."""
    text = (REPO / relative).read_text()
    try:
        return json.loads(text)
    except ValueError:
        return text


def library(case: Dict[str, Any]) -> Any:
    """What the Python package gives for `case` (raises what it refuses with)."""
    command = case["command"]
    if command == "check":
        capabilities = (REPO / case["capabilities"]).read_text() if "capabilities" in case else None
        return dc.check(
            (REPO / case["contract"]).read_bytes(), path=case["contract"], profile=case.get("profile"),
            capabilities=capabilities, deny_warnings=case.get("deny_warnings", False),
        )  # fmt: skip
    if command in ("frame", "eval"):
        contract = dc.Contract.parse((REPO / case["contract"]).read_bytes(), path=case["contract"])
        if command == "frame":
            return contract.frame(
                case["block"], json_or_text(case["state"]), profile=case.get("profile"),
                untrusted=case.get("untrusted"), marking=case.get("marking", "provenance"),
            )  # fmt: skip
        gates = {}
        for gate in case.get("gates", []):
            key, value = gate.split("=", 1)
            gates[key] = float(value)
        candidates = json_or_text(case["candidates"]) if "candidates" in case else None
        return contract.evaluate(case["block"], json_or_text(case["answers"]), gates=gates, candidates=candidates)
    # Files are named as the CLI is given them: relative to the repository root, the
    # working directory of every test here.
    if command == "log":
        return dc.verify_log(Path(case["log"]))
    if command == "outcomes-check":
        return outcomes.check(Path(case["contracts"]))
    if command == "outcomes-validate":
        contracts = outcomes.Contracts.load(Path(case["contracts"]))
        return contracts.validate(case["tool"], case["method"], json_or_text(case["outcome"]))
    assert command == "outcomes-report", command
    return outcomes.report(Path(case["log"]))


def from_library(case: Dict[str, Any]) -> Result:
    try:
        return ("document", json.dumps(library(case)))
    except dc.DecisionError as error:
        assert error.code, error
        return ("error", error.code)


def test_the_cases_are_many_and_cover_every_refusal_the_front_ends_share() -> None:
    assert len(CASES) >= 40
    assert len({case["name"] for case in CASES}) == len(CASES), "names are unique"
    codes = {case["expect"] for case in CASES}
    for code in ["E_USAGE", "E_FRAME", "E_OUTCOME", "E_CONTRACTS", "E_REPORT", "DC0104", "DC0108", "document"]:
        assert code in codes, code


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_cli_and_python_give_the_same(decision: Path, case: Dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    cli = from_cli(decision, case)
    python = from_library(case)
    expected = "document" if case["expect"] == "document" else ("error", case["expect"])
    assert (cli[0] if expected == "document" else cli) == expected, cli
    assert python == cli
