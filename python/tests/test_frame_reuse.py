"""A contract's frames reuse the Python objects of its earlier frames (the parts that are
the same) and read state keys it has read before from a cache: neither may ever change a
result. Each frame here is compared with the one a freshly parsed contract makes."""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from typing import Any, Dict, List

import pytest

import decision_contract as dc

from conftest import CODING_STATE, REPO

CODING = REPO / "examples/coding-agent/DECISION.md"
TRIAGE = REPO / "examples/support-triage"

def coding_states() -> List[Dict[str, Any]]:
    """The state, then states that differ from it in one way each."""
    states = [copy.deepcopy(CODING_STATE) for _ in range(8)]
    states[1]["task"] = "Which file defines `restock`?"
    states[2]["history"].append({"tool": "read_file", "input": "inventory.py", "result": "def restock(): ..." * 40})
    states[3]["history"] = []
    states[3]["evidence"] = []
    del states[4]["lastResult"]
    states[5] = dict(reversed(list(states[5].items())))
    states[6]["lastResult"] = "x" * 5000
    states[7]["steps"] = 2.0
    return states + [copy.deepcopy(CODING_STATE)]


def triage_states() -> List[Dict[str, Any]]:
    base = json.loads((TRIAGE / "state.json").read_text())
    states = []
    # 0.0 and -0.0 are equal floats, but different Python results; so are 1 and 1.0.
    for channel in ["email", 0.0, -0.0, 0.0, 1, 1.0, True, None, ["email", "chat"], "email"]:
        state = dict(base)
        state["channel"] = channel
        states.append(state)
    states.append(dict(reversed(list(base.items()))))
    states.append(dict(base, extra="a cell the contract does not read"))
    states.append(dict(base, orders=[], earlier="an earlier message"))
    return states


def dumped(document: Any) -> str:
    """The document with its keys in order and its numbers as they are (`-0.0`, `1.0`)."""
    return json.dumps(document)


@pytest.mark.parametrize("marking", ["provenance", "reference"])
def test_reference_frames_of_changing_states_are_those_of_a_fresh_contract(marking: str) -> None:
    contract = dc.Contract.parse(CODING.read_bytes())
    for state in coding_states():
        for block in contract.blocks:
            fresh = dc.Contract.parse(CODING.read_bytes()).frame(block, state, profile="reference", marking=marking)
            assert dumped(contract.frame(block, state, profile="reference", marking=marking)) == dumped(fresh)


def test_host_cell_frames_of_changing_states_are_those_of_a_fresh_contract() -> None:
    text = (TRIAGE / "DECISION.md").read_bytes()
    contract = dc.Contract.parse(text)
    for untrusted in (["subject", "body", "earlier"], [], ["channel", "orders"]):
        for state in triage_states():
            for block in ["is_actionable", "route", "refund_risk"]:
                fresh = dc.Contract.parse(text).frame(block, state, untrusted=untrusted)
                assert dumped(contract.frame(block, state, untrusted=untrusted)) == dumped(fresh)


@pytest.mark.parametrize(("before", "after"), [(0.0, -0.0), (-0.0, 0.0), (1, 1.0), (1.0, 1), (1, True), (True, 1), (0, False)])
def test_a_value_equal_to_the_earlier_one_but_not_the_same_is_not_reused(before: Any, after: Any) -> None:
    text = (TRIAGE / "DECISION.md").read_bytes()
    base = json.loads((TRIAGE / "state.json").read_text())
    contract = dc.Contract.parse(text)
    contract.frame("is_actionable", dict(base, channel=before))
    fresh = dc.Contract.parse(text).frame("is_actionable", dict(base, channel=after))
    assert dumped(contract.frame("is_actionable", dict(base, channel=after))) == dumped(fresh)


def test_a_host_that_changes_a_returned_frame_does_not_change_the_next() -> None:
    contract = dc.Contract.parse(CODING.read_bytes())
    first = contract.frame("pick_tool", CODING_STATE, profile="reference")
    expected = dumped(dc.Contract.parse(CODING.read_bytes()).frame("pick_tool", CODING_STATE, profile="reference"))
    # Every level of the document, dicts and lists alike.
    first["block"] = "changed"
    first["frame"]["state"]["task"] = "changed"
    first["frame"]["fields"].append({"key": "extra"})
    first["frame"]["fields"][0]["key"] = "changed"
    first["frame"]["excluded"][0][1] = "changed"
    first["frame"]["untrusted"].clear()
    first["questions"]["tool"]["criteria"].clear()
    first["dynamic"]["reads"].append("changed")
    second = contract.frame("pick_tool", CODING_STATE, profile="reference")
    assert dumped(second) == expected
    # Nor do two returned frames share a dict or a list.
    second["frame"]["provenance"][0]["trust"] = "changed"
    assert dumped(contract.frame("pick_tool", CODING_STATE, profile="reference")) == expected


def fresh(value: Any) -> Any:
    """The value with every str a new object (not interned)."""
    if isinstance(value, str):
        return "".join(list(value))
    if isinstance(value, list):
        return [fresh(item) for item in value]
    if isinstance(value, dict):
        return {fresh(key): fresh(item) for key, item in value.items()}
    return value


def test_strings_made_afresh_each_call_are_read_as_their_own_text() -> None:
    """Strings are read once per object: strings that are freed, and whose memory is used
    again for other strings, must still be read as what they say."""
    text = (TRIAGE / "DECISION.md").read_bytes()
    contract = dc.Contract.parse(text)
    base = json.loads((TRIAGE / "state.json").read_text())
    names = list(base)
    for turn in range(200):
        # The same cells in a changing order, and the values of two of them swapped.
        order = names[turn % len(names):] + names[: turn % len(names)]
        state = {name: base[name] for name in order}
        if turn % 2:
            state["subject"], state["body"] = state["body"], state["subject"]
        expected = dumped(dc.Contract.parse(text).frame("route", state, untrusted=["body"]))
        assert dumped(contract.frame("route", fresh(state), untrusted=["body"])) == expected


def test_a_state_with_more_strings_than_are_kept_frames_as_a_fresh_contract_does() -> None:
    text = (TRIAGE / "DECISION.md").read_bytes()
    contract = dc.Contract.parse(text)
    base = json.loads((TRIAGE / "state.json").read_text())
    for turn in range(3):
        state = dict(base, orders=[f"INV-{turn}-{n} 49.00 EUR" for n in range(5000)])
        expected = dumped(dc.Contract.parse(text).frame("refund_risk", state))
        assert dumped(contract.frame("refund_risk", state)) == expected
        assert dumped(contract.frame("refund_risk", state)) == expected


def test_a_state_of_subclasses_frames_as_the_plain_state() -> None:
    class Text(str):
        pass

    class Items(list):  # type: ignore[type-arg]
        pass

    text = (TRIAGE / "DECISION.md").read_bytes()
    base = json.loads((TRIAGE / "state.json").read_text())
    made: Dict[str, Any] = OrderedDict(
        (Text(key), Items(Text(item) for item in value) if isinstance(value, list) else Text(value))
        for key, value in base.items()
    )
    contract = dc.Contract.parse(text)
    for block in ["is_actionable", "route", "refund_risk"]:
        assert dumped(contract.frame(block, made)) == dumped(dc.Contract.parse(text).frame(block, base))


def test_frames_made_on_many_threads_are_the_frames_of_one() -> None:
    """The strings read and made are kept for the process, not per thread (thread-pool hosts
    call from new threads): frames made on threads that start and end, several at a time,
    are the frames a fresh contract makes on the main thread."""
    from concurrent.futures import ThreadPoolExecutor

    text = (TRIAGE / "DECISION.md").read_bytes()
    contract = dc.Contract.parse(text)
    base = json.loads((TRIAGE / "state.json").read_text())
    states = [dict(base, subject=f"order {turn} never arrived", orders=[f"INV-{turn}-{n}" for n in range(turn % 7)]) for turn in range(60)]
    expected = [dumped(dc.Contract.parse(text).frame("refund_risk", state)) for state in states]

    def framed(turn: int) -> str:
        return dumped(contract.frame("refund_risk", fresh(states[turn])))

    for _ in range(3):
        # A new pool each round: its threads are new, as LangChain's are for each tool call.
        with ThreadPoolExecutor(max_workers=4) as pool:
            assert list(pool.map(framed, range(len(states)))) == expected
