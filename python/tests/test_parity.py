"""Each function against the CLI's JSON on the repository's examples: run both, compare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import pytest

import decision_contract as dc
from decision_contract import outcomes

from conftest import CODING_STATE, REPO, contracts, run, run_json, same

TRIAGE = REPO / "examples/support-triage"
CODING = REPO / "examples/coding-agent/DECISION.md"
OUTCOMES = REPO / "examples/outcomes"


def rel(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


@pytest.mark.parametrize("contract", contracts(), ids=lambda p: p.name)
@pytest.mark.parametrize("host", [[], ["--profile", "reference"], ["--capabilities", str(TRIAGE / "capabilities.json")]])
@pytest.mark.parametrize("deny", [False, True])
def test_check(decision: Path, contract: Path, host: List[str], deny: bool) -> None:
    args = ["check", "--format", "json", *host, *(["--deny", "warnings"] if deny else []), rel(contract)]
    cli = run_json(decision, *args)["files"][0]
    profile = "reference" if "--profile" in host else None
    capabilities = (TRIAGE / "capabilities.json").read_text() if "--capabilities" in host else None
    library = dc.check(
        contract.read_bytes(), path=rel(contract), profile=profile, capabilities=capabilities, deny_warnings=deny
    )
    same(library, cli)
    assert "engine" not in library


def test_check_of_a_broken_contract_lists_located_diagnostics(decision: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.md"
    broken.write_text(CODING.read_text().replace("→ escalate", "→ escalatte", 1))
    cli = run_json(decision, "check", "--format", "json", str(broken))["files"][0]
    library = dc.check(broken.read_text(), path=str(broken))
    same(library, cli)
    assert library["ok"] is False
    assert any(d["code"] == "DC0108" and d["line"] > 0 for d in library["diagnostics"])


@pytest.mark.parametrize("contract", contracts(), ids=lambda p: p.name)
def test_explain(decision: Path, contract: Path) -> None:
    _, out, _ = run(decision, "explain", rel(contract))
    document = dc.Contract.parse(contract.read_bytes(), path=rel(contract)).explain()
    assert document["text"] == out
    assert [b["id"] for b in document["blocks"]] == dc.Contract.parse(contract.read_bytes()).blocks
    assert document["schema"] == "decision-contract/v1" and "engine" not in document


def coding_state(tmp_path: Path) -> Path:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(CODING_STATE))
    return path


@pytest.mark.parametrize("marking", ["provenance", "reference"])
@pytest.mark.parametrize("block", ["needs_tool", "pick_tool", "pick_input", "grade_risk", "step_ok", "is_done", "can_deliver"])
def test_frame_reference_profile(decision: Path, tmp_path: Path, block: str, marking: str) -> None:
    state = coding_state(tmp_path)
    args = ["frame", rel(CODING), "--block", block, "--state", str(state), "--profile", "reference"]
    cli = run_json(decision, *args, "--marking", marking, "--format", "json")
    contract = dc.Contract.parse(CODING.read_bytes(), path=rel(CODING))
    library = contract.frame(block, json.loads(state.read_text()), profile="reference", marking=marking)
    same(library, cli)


@pytest.mark.parametrize("block", ["is_actionable", "route", "refund_risk"])
def test_frame_host_cells(decision: Path, block: str) -> None:
    state = TRIAGE / "state.json"
    untrusted = ["subject", "body", "earlier"]
    flags = [arg for cell in untrusted for arg in ("--untrusted", cell)]
    cli = run_json(decision, "frame", rel(TRIAGE / "DECISION.md"), "--block", block, "--state", rel(state), *flags, "--format", "json")
    contract = dc.Contract.parse((TRIAGE / "DECISION.md").read_bytes(), path=rel(TRIAGE / "DECISION.md"))
    library = contract.frame(block, json.loads(state.read_text()), untrusted=untrusted)
    same(library, cli)


def test_frames_prepared_once_per_host_cells_follow_each_state(decision: Path, tmp_path: Path) -> None:
    """A frame prepared for one set of cells is reused only for states with the same keys,
    value kinds and untrusted cells: trust, a value's kind and new keys each frame anew,
    past the number of prepared frames kept as well."""
    contract = dc.Contract.parse((TRIAGE / "DECISION.md").read_bytes(), path=rel(TRIAGE / "DECISION.md"))
    base = json.loads((TRIAGE / "state.json").read_text())
    variants = [
        (base, []),
        (base, ["body"]),
        ({**base, "orders": "INV-1 49.00 EUR"}, ["body"]),
        ({**base, "extra": "not read"}, []),
    ] + [({**base, f"cell{i}": "x"}, []) for i in range(70)]
    for index, (state, untrusted) in enumerate(variants):
        library = contract.frame("refund_risk", state, untrusted=untrusted)
        if index < 4 or index == len(variants) - 1:
            path = tmp_path / f"state{index}.json"
            path.write_text(json.dumps(state))
            flags = [arg for cell in untrusted for arg in ("--untrusted", cell)]
            cli = run_json(decision, "frame", rel(TRIAGE / "DECISION.md"), "--block", "refund_risk", "--state", str(path),
                           *flags, "--format", "json")
            same(library, cli)
    assert contract.frame("refund_risk", base)["frame"]["digest"] != contract.frame("refund_risk", base, untrusted=["orders"])["frame"]["digest"]


EVALS = [
    ("route", "answers.json", "candidates.json", []),
    ("refund_risk", "answers-refund_risk.json", None, []),
    ("refund_risk", "answers-refund_risk.json", None, ["refund_risk.refund_risk=3"]),
    ("is_actionable", "answers-is_actionable.json", None, []),
    ("is_actionable", "answers-is_actionable.json", None, ["is_actionable.is_actionable=0.99"]),
    ("reply_ready", "answers-reply_ready.json", None, []),
    ("route", "answers.json", None, []),
]


@pytest.mark.parametrize("block,answers,candidates,gates", EVALS)
def test_evaluate(decision: Path, block: str, answers: str, candidates: str, gates: List[str]) -> None:
    args = ["eval", rel(TRIAGE / "DECISION.md"), "--block", block, "--answers", rel(TRIAGE / answers)]
    args += ["--candidates", rel(TRIAGE / candidates)] if candidates else []
    args += [arg for gate in gates for arg in ("--gate", gate)]
    cli = run_json(decision, *args, "--format", "json")
    contract = dc.Contract.parse((TRIAGE / "DECISION.md").read_bytes(), path=rel(TRIAGE / "DECISION.md"))
    given = json.loads((TRIAGE / candidates).read_text()) if candidates else None
    gate_values = {g.split("=")[0]: float(g.split("=")[1]) for g in gates} or None
    library = contract.evaluate(block, json.loads((TRIAGE / answers).read_text()), gates=gate_values, candidates=given)
    same(library, cli)


def test_an_invalid_answer_escalates_as_the_cli_does(decision: Path, tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"queue": {"choice": "legal", "probabilities": {"legal": 1.0}, "confidence": 1.0}}))
    cli = run_json(decision, "eval", rel(TRIAGE / "DECISION.md"), "--block", "route", "--answers", str(answers), "--format", "json")
    library = dc.Contract.parse((TRIAGE / "DECISION.md").read_text()).evaluate("route", json.loads(answers.read_text()))
    same(library, cli)
    assert library["valid"] is False and library["action"] == "escalate" and library["problems"]


def test_ask_with_the_mock_provider(decision: Path, tmp_path: Path) -> None:
    state = coding_state(tmp_path)
    cli = run_json(decision, "ask", rel(CODING), "--block", "needs_tool", "--state", str(state), "--provider", "mock", "--format", "json")
    library = dc.Contract.parse(CODING.read_bytes()).ask("needs_tool", json.loads(state.read_text()), provider="mock")
    cli.pop("latencyMs")
    library.pop("latencyMs")
    same(library, cli)


def test_ask_with_a_script_records_a_log_replay_verifies(decision: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"needs_tool": [{"noul": 0.8}]}))
    state = coding_state(tmp_path)
    log = tmp_path / "ask.jsonl"
    contract = dc.Contract.parse(CODING.read_bytes())
    answer = contract.ask("needs_tool", json.loads(state.read_text()), provider="script:" + str(script), log=log)
    cli = run_json(decision, "ask", rel(CODING), "--block", "needs_tool", "--state", str(state),
                   "--provider", "script:" + str(script), "--format", "json")
    for document in (answer, cli):
        document.pop("latencyMs")
    same(answer, cli)
    assert answer["action"] == "use_tool"
    # A SessionLog object takes the decision too, on the same chain.
    with dc.SessionLog(log) as opened:
        contract.ask("needs_tool", json.loads(state.read_text()), provider="mock", log=opened)
    status, out, err = run(decision, "replay", "--format", "json", str(log))
    assert status == 0, out + err
    replayed = json.loads(out)
    assert replayed["records"] == 2 and replayed["chain"] == "intact" and replayed["mismatch"] == 0


@pytest.mark.parametrize("verbose", [False, True])
def test_verify_log(decision: Path, verbose: bool) -> None:
    log = TRIAGE / "session.jsonl"
    cli = run_json(decision, "replay", "--format", "json", "--jobs", "1", *(["--verbose"] if verbose else []), rel(log))
    same(dc.verify_log(rel(log), verbose=verbose), cli)
    same(dc.verify_log(rel(log), jobs=2, verbose=verbose), cli)


def test_verify_record_agrees_with_replay(decision: Path) -> None:
    log = TRIAGE / "session.jsonl"
    cli = run_json(decision, "replay", "--format", "json", "--verbose", rel(log))
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    decisions = [line for line in lines if line.get("e", {}).get("type") == "decision"]
    assert len(decisions) == len(cli["results"]) > 0
    for line, listed in zip(decisions, cli["results"]):
        verdict = dc.verify_record(line["e"])
        assert verdict["status"] == listed["status"]
        assert verdict["checks"] == listed["checks"]
        assert verdict["schema"] == "decision-record/v1" and "engine" not in verdict
        assert dc.verify_record(line)["status"] == listed["status"]


def test_a_tampered_log_mismatches_in_both(decision: Path, tmp_path: Path) -> None:
    text = (TRIAGE / "session.jsonl").read_text()
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text(text.replace("charged twice", "charged thrice", 1))
    assert tampered.read_text() != text
    status, out, _ = run(decision, "replay", "--format", "json", "--jobs", "1", str(tampered))
    library = dc.verify_log(str(tampered))
    same(library, json.loads(out))
    assert status == 1
    assert library["mismatch"] >= 1 or library["chain"] == "broken"
    assert library["chain"] == "broken"


def test_an_unreadable_log_raises(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(dc.LogError) as raised:
        dc.verify_log(missing)
    assert raised.value.code == "E_IO" and raised.value.path == str(missing)


@pytest.mark.parametrize("outcome", sorted((OUTCOMES / "outcomes").glob("*.json")), ids=lambda p: p.name)
def test_outcomes_validate(decision: Path, outcome: Path) -> None:
    document = json.loads(outcome.read_text())
    tool = document.get("tool", "catalog")
    method = document.get("method", "find_movies")
    contracts_file = OUTCOMES / "contracts.json"
    status, out, err = run(decision, "outcomes", "validate", rel(contracts_file), "--tool", tool, "--method", method,
                           "--outcome", rel(outcome), "--format", "json")
    loaded = outcomes.Contracts.load(contracts_file)
    if status == 2:
        with pytest.raises(dc.UsageError):
            loaded.validate(tool, method, document)
        return
    same(loaded.validate(tool, method, document), json.loads(out))


def test_outcomes_report_and_check(decision: Path) -> None:
    log = OUTCOMES / "outcome-log.jsonl"
    same(outcomes.report(rel(log)), run_json(decision, "outcomes", "report", "--format", "json", rel(log)))
    for contracts_file in (OUTCOMES / "contracts.json", OUTCOMES / "bad-contracts.json"):
        same(outcomes.check(rel(contracts_file)), run_json(decision, "outcomes", "check", "--format", "json", rel(contracts_file)))


def test_verify_log_lets_other_threads_run(tmp_path: Path) -> None:
    import sys
    import threading
    import time

    sys.path.insert(0, str(REPO / "python/benchmarks"))
    import timing

    log = tmp_path / "large.jsonl"
    timing.write_log(log, 10000)
    finished = threading.Event()
    took: List[float] = []
    results: List[dict] = []

    def verify() -> None:
        started = time.perf_counter()
        results.append(dc.verify_log(log))
        took.append(time.perf_counter() - started)
        finished.set()

    worker = threading.Thread(target=verify)
    # Timed from before the start: a new thread may run first, and hold the GIL from there.
    longest_gap = 0.0
    last = time.perf_counter()
    worker.start()
    while not finished.is_set():
        now = time.perf_counter()
        longest_gap = max(longest_gap, now - last)
        last = now
    worker.join()
    assert results[0]["verified"] == 10000
    # Had verification held the GIL, this thread would have stopped for all of it (checked
    # against a call that holds it: the longest gap was then 90% of the call).
    assert longest_gap < took[0] / 2, (longest_gap, took[0])


@pytest.mark.parametrize("host", [["--cells", "state", "--untrusted", "body"], ["--capabilities", str(TRIAGE / "capabilities.json")]])
def test_ask_for_a_host_with_its_own_cells(decision: Path, host: List[str]) -> None:
    state = TRIAGE / "state.json"
    script = "script:" + str(TRIAGE / "script.json")
    cli = run_json(decision, "ask", rel(TRIAGE / "DECISION.md"), "--block", "is_actionable", "--state", str(state),
                   "--provider", script, "--format", "json", *host)
    contract = dc.Contract.parse((TRIAGE / "DECISION.md").read_bytes())
    if "--capabilities" in host:
        library = contract.ask("is_actionable", json.loads(state.read_text()), provider=script,
                               capabilities=(TRIAGE / "capabilities.json").read_text())
    else:
        library = contract.ask("is_actionable", json.loads(state.read_text()), provider=script, cells="state",
                               untrusted=["body"])
    for document in (library, cli):
        document.pop("latencyMs")
    same(library, cli)
    assert library["action"] == "continue"


def test_ask_names_the_host_and_the_argument_when_the_cells_do_not_fit() -> None:
    contract = dc.Contract.parse((TRIAGE / "DECISION.md").read_bytes())
    state = json.loads((TRIAGE / "state.json").read_text())
    script = "script:" + str(TRIAGE / "script.json")
    with pytest.raises(dc.ContractError, match=r"reference coding host's.*cells=\"state\""):
        contract.ask("is_actionable", state, provider=script)
    narrow = json.loads((TRIAGE / "capabilities.json").read_text())
    narrow["stateCells"] = [c for c in narrow["stateCells"] if c != "subject"]
    with pytest.raises(dc.ContractError, match="subject"):
        contract.ask("is_actionable", state, provider=script, capabilities=narrow)
    with pytest.raises(dc.UsageError, match="not both"):
        contract.ask("is_actionable", state, provider=script, cells="state", capabilities=narrow)
    with pytest.raises(dc.UsageError, match="untrusted"):
        contract.ask("is_actionable", state, provider=script, untrusted=["body"])
    with pytest.raises(dc.UsageError, match="unknown cells"):
        contract.ask("is_actionable", state, provider=script, cells="mine")
