"""What the contract's guard adds to one tool call, measured side by side in one run:
LangGraph's `ToolNode` against `DecisionToolNode` over the same read-only tool (heuristic
provider, decision recorded in a session log), and the gate alone (frame, evaluate, record).

    python python/benchmarks/frameworks.py [--rounds 7] [--calls 300] [--between]

Prints the median over the rounds of the per-call time of each, and the difference. The
whole graph's time moves by more than the guard costs from one round to the next (ToolNode
hands each call to a thread of a pool made for it), so the node's own part inside the graph —
its decisions before the calls run and its check of each call as it runs — is timed as well.

With ``--between``, it measures instead why the same decision costs more inside a graph than
in a tight loop: ``ToolGate.decide`` alone, each call after 2 ms of something else — nothing,
a sleep, a busy wait that touches little memory, or a busy wait that writes 1 MiB (within this
machine's 2 MiB of L2 cache a core) or 16 MiB (far beyond it) — interleaved.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from decision_contract.integrations import ToolCall, ToolGate
from decision_contract.integrations.langgraph import DecisionToolNode


@tool
def lookup(key: str) -> str:
    """Looks a key up."""
    return key.upper()


lookup.metadata = {"readOnlyHint": True}


def per_call(run: Callable[[int], Any], calls: int) -> float:
    start = time.perf_counter()
    for index in range(calls):
        run(index)
    return (time.perf_counter() - start) / calls


def message(index: int) -> Dict[str, List[AIMessage]]:
    call = {"name": "lookup", "args": {"key": f"k{index}"}, "id": f"c{index}", "type": "tool_call"}
    return {"messages": [AIMessage("", tool_calls=[call])]}


class TimedNode(DecisionToolNode):
    """``DecisionToolNode`` adding up the time of its own part: deciding the message's calls
    (``_decide_all``) and checking each call as it runs (``_refusal``)."""

    spent = 0.0

    def _decide_all(self, input: Any) -> None:
        start = time.perf_counter()
        try:
            super()._decide_all(input)
        finally:
            self.spent += time.perf_counter() - start

    def _refusal(self, request: Any) -> Any:
        start = time.perf_counter()
        try:
            return super()._refusal(request)
        finally:
            self.spent += time.perf_counter() - start


def one_node_graph(node: ToolNode) -> Any:
    """The tool node alone in a graph (a node needs the graph's runtime to run)."""
    graph = StateGraph(MessagesState)
    graph.add_node("tools", node)
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def busy_wait(seconds: float, scratch: Optional[bytearray] = None) -> None:
    """Spins for ``seconds`` without sleeping; with ``scratch``, writing it 64 KiB at a time."""
    end = time.perf_counter() + seconds
    chunk, at = b"x" * 65536, 0
    while time.perf_counter() < end:
        if scratch is not None:
            scratch[at : at + len(chunk)] = chunk
            at = (at + len(chunk)) % len(scratch)


def between(rounds: int, calls: int) -> None:
    """``ToolGate.decide`` alone, each call after 2 ms of each kind of other work."""
    small, large = bytearray(1 << 20), bytearray(16 << 20)
    before: Dict[str, Callable[[], None]] = {
        "nothing": lambda: None,
        "sleep 2 ms": lambda: time.sleep(0.002),
        "busy 2 ms": lambda: busy_wait(0.002),
        "busy 2 ms, 1 MiB written": lambda: busy_wait(0.002, small),
        "busy 2 ms, 16 MiB written": lambda: busy_wait(0.002, large),
    }
    timings: Dict[str, List[float]] = {name: [] for name in before}
    with tempfile.TemporaryDirectory() as scratch:
        with ToolGate(log=Path(scratch) / "gate.jsonl") as gate:
            serial = 0
            for _ in range(rounds):
                for name, other_work in before.items():
                    spent = []
                    for _ in range(calls):
                        serial += 1
                        call = ToolCall(f"c{serial}", "lookup", {"key": f"k{serial}"}, "Looks a key up.", {"readOnlyHint": True})
                        other_work()
                        start = time.perf_counter()
                        gate.decide(call)
                        spent.append(time.perf_counter() - start)
                    timings[name].append(statistics.median(spent))
    for name, values in timings.items():
        print(f"decide after {name:26} {statistics.median(values) * 1e6:7.1f} µs (median of the rounds' medians)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--between", action="store_true", help="time the gate after other work of each kind instead")
    args = parser.parse_args()
    if args.between:
        between(args.rounds, min(args.calls, 100))
        return
    with tempfile.TemporaryDirectory() as scratch:
        node = TimedNode([lookup], log=Path(scratch) / "node.jsonl")
        plain = one_node_graph(ToolNode([lookup]))
        guarded = one_node_graph(node)
        gate = ToolGate(log=Path(scratch) / "gate.jsonl")
        inputs = [message(i) for i in range(args.calls)]
        calls = [ToolCall(f"c{i}", "lookup", {"key": f"k{i}"}, "Looks a key up.", {"readOnlyHint": True}) for i in range(args.calls)]

        def with_gate(index: int) -> None:
            gate.record_call(gate.decide(calls[index]))

        timings: Dict[str, List[float]] = {"ToolNode": [], "DecisionToolNode": [], "node's own part": [], "gate alone": []}
        for _ in range(args.rounds):
            # Interleaved, so that a change in the machine's load falls on both alike.
            timings["ToolNode"].append(per_call(lambda i: plain.invoke(inputs[i]), args.calls))
            node.spent = 0.0
            timings["DecisionToolNode"].append(per_call(lambda i: guarded.invoke(inputs[i]), args.calls))
            timings["node's own part"].append(node.spent / args.calls)
            timings["gate alone"].append(per_call(with_gate, args.calls))
        node.close()
        gate.close()
    medians = {name: statistics.median(values) * 1e6 for name, values in timings.items()}
    for name, value in medians.items():
        print(f"{name:18} {value:9.1f} µs per call")
    print(f"{'guard adds':18} {medians['DecisionToolNode'] - medians['ToolNode']:9.1f} µs per call (the graph's difference)")


if __name__ == "__main__":
    main()
