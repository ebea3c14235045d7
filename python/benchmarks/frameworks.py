"""What the contract's guard adds to one tool call, measured side by side in one run:
LangGraph's `ToolNode` against `DecisionToolNode` over the same read-only tool (heuristic
provider, decision recorded in a session log), and the gate alone (frame, evaluate, record);
then an OpenAI Agents SDK run and a PydanticAI run of one call of that tool, with the tool
plain and guarded (`DecisionGuard`, `DecisionToolset`), each framework's own stand-in for the
model answering.

    python python/benchmarks/frameworks.py [--rounds 7] [--calls 300] [--between]
        [--framework all|langgraph|openai-agents|pydantic-ai]

Prints the median over the rounds of the per-call time of each, and the difference. The
whole graph's time moves by more than the guard costs from one round to the next (ToolNode
hands each call to a thread of a pool made for it), so the node's own part inside the graph —
its decisions before the calls run and its check of each call as it runs — is timed as well,
and for the other two frameworks the gate's part (its decisions and its `tool:call` records).

With ``--between``, it measures instead why the same decision costs more inside a graph than
in a tight loop: ``ToolGate.decide`` alone, each call after 2 ms of something else — nothing,
a sleep, a busy wait that touches little memory, or a busy wait that writes 1 MiB (within this
machine's 2 MiB of L2 cache a core) or 16 MiB (far beyond it) — interleaved.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from decision_contract.integrations import ToolCall, ToolGate, Verdict
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


class TimedGate(ToolGate):
    """``ToolGate`` adding up the time of its decisions and of its ``tool:call`` records."""

    spent = 0.0

    def decide(self, call: ToolCall) -> Verdict:
        start = time.perf_counter()
        try:
            return super().decide(call)
        finally:
            self.spent += time.perf_counter() - start

    def record_call(self, verdict: Verdict) -> None:
        start = time.perf_counter()
        try:
            super().record_call(verdict)
        finally:
            self.spent += time.perf_counter() - start


def lookup_function(key: str) -> str:
    """Looks a key up."""
    return key.upper()


async def time_runs(runs: Dict[str, Callable[[], Any]], gate: TimedGate, rounds: int, calls: int) -> Dict[str, List[float]]:
    """Awaits each of ``runs`` (an agent run of one tool call) ``calls`` times a round,
    interleaved, and the gate's part in the guarded one."""
    timings: Dict[str, List[float]] = {name: [] for name in runs}
    timings["gate's part"] = []
    for _ in range(rounds):
        for name, run in runs.items():
            gate.spent = 0.0
            start = time.perf_counter()
            for _ in range(calls):
                await run()
            timings[name].append((time.perf_counter() - start) / calls)
            if name == "guarded":
                timings["gate's part"].append(gate.spent / calls)
    if gate.step != rounds * calls:
        # A guard that let calls through undecided would make the figures meaningless.
        raise RuntimeError(f"the guarded runs made {gate.step} decisions, not {rounds * calls}")
    return timings


def openai_agents(rounds: int, calls: int, scratch: Path) -> Dict[str, List[float]]:
    """An OpenAI Agents SDK run whose scripted model asks for one call of the read-only tool
    (plain, then guarded by ``DecisionGuard``) and then answers."""
    from agents import Agent, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
    from agents.models.interface import Model
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from decision_contract.integrations.openai_agents import DecisionGuard

    set_tracing_disabled(True)
    serial = 0

    class OneCall(Model):
        """Asks for one call, then, once it sees the call's output, answers."""

        async def get_response(self, system_instructions: Any, input: Any, *_args: Any, **_kwargs: Any) -> ModelResponse:
            nonlocal serial
            last = input[-1] if isinstance(input, list) and input else None
            if isinstance(last, dict) and last.get("type") == "function_call_output":
                text = ResponseOutputText(text="done", type="output_text", annotations=[])
                answer = ResponseOutputMessage(id="m", content=[text], role="assistant", status="completed", type="message")
                return ModelResponse(output=[answer], usage=Usage(), response_id=None)
            serial += 1
            call = ResponseFunctionToolCall(
                arguments=json.dumps({"key": f"k{serial}"}), call_id=f"c{serial}", name="lookup", type="function_call", status="completed"
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)

        def stream_response(self, *_args: Any, **_kwargs: Any) -> Any:
            raise NotImplementedError

    tool = function_tool(lookup_function, name_override="lookup")
    gate = TimedGate(log=scratch / "openai-agents.jsonl")
    with DecisionGuard(log=gate.log, gate=gate) as guard:
        plain = Agent(name="a", model=OneCall(), tools=[tool])
        guarded = Agent(name="a", model=OneCall(), tools=[guard.tool(tool, annotations={"readOnlyHint": True})])
        runs = {"plain": lambda: Runner.run(plain, "go"), "guarded": lambda: Runner.run(guarded, "go")}
        return asyncio.run(time_runs(runs, gate, rounds, calls))


def pydantic_ai(rounds: int, calls: int, scratch: Path) -> Dict[str, List[float]]:
    """A PydanticAI run whose ``FunctionModel`` asks for one call of the read-only tool
    (plain, then through ``DecisionToolset``) and then answers."""
    from pydantic_ai import Agent, FunctionToolset
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from decision_contract.integrations.pydantic_ai import DecisionToolset

    serial = 0

    def one_call(messages: List[ModelMessage], _info: AgentInfo) -> ModelResponse:
        nonlocal serial
        if isinstance(messages[-1].parts[-1], ToolReturnPart):
            return ModelResponse(parts=[TextPart("done")])
        serial += 1
        return ModelResponse(parts=[ToolCallPart("lookup_function", {"key": f"k{serial}"}, tool_call_id=f"c{serial}")])

    model = FunctionModel(one_call)
    gate = TimedGate(log=scratch / "pydantic-ai.jsonl")
    toolset = DecisionToolset(FunctionToolset([lookup_function]), gate=gate, annotations={"lookup_function": {"readOnlyHint": True}})
    plain = Agent(model, toolsets=[FunctionToolset([lookup_function])])
    guarded = Agent(model, toolsets=[toolset])
    try:
        runs = {"plain": lambda: plain.run("go"), "guarded": lambda: guarded.run("go")}
        return asyncio.run(time_runs(runs, gate, rounds, calls))
    finally:
        toolset.close()


def print_medians(title: str, timings: Dict[str, List[float]], plain: str, guarded: str) -> None:
    medians = {name: statistics.median(values) * 1e6 for name, values in timings.items()}
    print(title)
    for name, value in medians.items():
        print(f"  {name:18} {value:9.1f} µs per call")
    print(f"  {'guard adds':18} {medians[guarded] - medians[plain]:9.1f} µs per call")


def langgraph(rounds: int, calls: int, scratch: Path) -> Dict[str, List[float]]:
    """``ToolNode`` and ``DecisionToolNode`` alone in a graph, and the gate alone."""
    node = TimedNode([lookup], log=scratch / "node.jsonl")
    plain = one_node_graph(ToolNode([lookup]))
    guarded = one_node_graph(node)
    gate = ToolGate(log=scratch / "gate.jsonl")
    inputs = [message(i) for i in range(calls)]
    gate_calls = [ToolCall(f"c{i}", "lookup", {"key": f"k{i}"}, "Looks a key up.", {"readOnlyHint": True}) for i in range(calls)]

    def with_gate(index: int) -> None:
        gate.record_call(gate.decide(gate_calls[index]))

    timings: Dict[str, List[float]] = {"ToolNode": [], "DecisionToolNode": [], "node's own part": [], "gate alone": []}
    for _ in range(rounds):
        # Interleaved, so that a change in the machine's load falls on both alike.
        timings["ToolNode"].append(per_call(lambda i: plain.invoke(inputs[i]), calls))
        node.spent = 0.0
        timings["DecisionToolNode"].append(per_call(lambda i: guarded.invoke(inputs[i]), calls))
        timings["node's own part"].append(node.spent / calls)
        timings["gate alone"].append(per_call(with_gate, calls))
    node.close()
    gate.close()
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--between", action="store_true", help="time the gate after other work of each kind instead")
    parser.add_argument("--framework", choices=("all", "langgraph", "openai-agents", "pydantic-ai"), default="all")
    args = parser.parse_args()
    if args.between:
        between(args.rounds, min(args.calls, 100))
        return
    frameworks = ("langgraph", "openai-agents", "pydantic-ai") if args.framework == "all" else (args.framework,)
    with tempfile.TemporaryDirectory() as scratch:
        for framework in frameworks:
            try:
                if framework == "langgraph":
                    timings = langgraph(args.rounds, args.calls, Path(scratch))
                    print_medians("LangGraph, the tool node alone in a graph", timings, "ToolNode", "DecisionToolNode")
                elif framework == "openai-agents":
                    timings = openai_agents(args.rounds, args.calls, Path(scratch))
                    print_medians("OpenAI Agents SDK, a run of one tool call", timings, "plain", "guarded")
                else:
                    timings = pydantic_ai(args.rounds, args.calls, Path(scratch))
                    print_medians("PydanticAI, a run of one tool call", timings, "plain", "guarded")
            except ImportError as missing:
                # The OpenAI Agents SDK and PydanticAI are imported when they are measured.
                if args.framework != "all":
                    parser.exit(2, f"frameworks.py: {framework} is not installed ({missing}): pip install './python[{framework}]'\n")
                print(f"{framework}: skipped, not installed ({missing}): pip install './python[{framework}]'")


if __name__ == "__main__":
    main()
