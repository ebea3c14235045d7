"""What the contract's guard adds to one tool call, measured side by side in one run:
LangGraph's `ToolNode` against `DecisionToolNode` over the same read-only tool (heuristic
provider, decision recorded in a session log), and the gate alone (frame, evaluate, record).

    python python/benchmarks/frameworks.py [--rounds 7] [--calls 300]

Prints the median over the rounds of the per-call time of each, and the difference. The
whole graph's time moves by more than the guard costs from one round to the next (ToolNode
hands each call to a thread of a pool made for it), so the node's own part inside the graph —
its decisions before the calls run and its check of each call as it runs — is timed as well.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
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
