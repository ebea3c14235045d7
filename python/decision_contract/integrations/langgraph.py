"""LangGraph: :class:`DecisionToolNode`, a drop-in for ``langgraph.prebuilt.ToolNode`` whose
tool calls are decided by a DECISION.md contract.

Each tool call of the last AI message is framed and decided before any of them runs. A call
the contract allows runs as ``ToolNode`` runs it. A call that needs a person raises
LangGraph's own ``interrupt(...)`` with the pending approval (``id``, ``call_id``, ``tool``,
``arguments``, ``rule``, ``reason``); nothing of the message runs until the graph is resumed
with ``Command(resume={"approved": bool, "reason": str})`` (``"id"`` may name the approval
answered, and must then be the one waiting). An answer of another shape, or for another
approval, runs nothing: the graph stops again with the same pending approval and an
``"error"`` saying what was wrong. A refused or rejected call becomes a
``ToolMessage`` with ``status="error"`` and the reason, which the agent sees.

Because every interrupt happens before any tool runs, a node that LangGraph re-executes on
resume runs each call at most once, and the approval's id — the call's ``tool_call_id`` and
the fingerprint of its tool and arguments — binds the answer to the same call after a
process restart (with a persistent checkpointer).
"""

from __future__ import annotations

import collections.abc
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

try:
    from langchain_core.messages import ToolMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool
    from langgraph.prebuilt import ToolNode
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from langgraph.runtime import Runtime
    from langgraph.types import Command, interrupt
except ImportError as missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        "decision_contract.integrations.langgraph needs langgraph: pip install 'decision-contract[langgraph]'"
    ) from missing

from .. import Contract, SessionLog
from .._errors import UsageError
from ._core import MCP_DEFAULTS, ApprovalMode, Provider, Answer, ToolCall, ToolGate, Verdict, known_hints, refusal_text

__all__ = ["DecisionToolNode", "annotations_of"]


def annotations_of(tool: BaseTool) -> Dict[str, Any]:
    """The MCP annotations a LangChain tool declares: its ``metadata`` (where
    ``langchain-mcp-adapters`` puts an MCP tool's annotations), or the ``annotations`` mapping
    inside it."""
    metadata = tool.metadata or {}
    nested = metadata.get("annotations")
    source: Mapping[str, Any] = nested if isinstance(nested, Mapping) else metadata
    return dict(source)


@dataclass(frozen=True)
class _ToolFacts:
    """What the gate reads of a tool, kept from call to call: it changes only when the tool's
    metadata, description or argument schema does, and reading it costs more than deciding
    needs (LangChain builds the call schema behind a property)."""

    #: The tool's description and argument schema, as they were read.
    description: str
    args_schema: Any
    #: The MCP annotations (:func:`annotations_of`) and their text (``ToolCall.hints_json``).
    annotations: Dict[str, Any]
    hints_json: str
    #: The names of :data:`MCP_DEFAULTS` the annotations hold: the only ones whose value's type
    #: can differ between two equal mappings (equal mappings have the same keys).
    hinted: Tuple[str, ...]
    #: Validates a call's arguments against the tool's call schema (``None``: it has none).
    validate: Optional[Callable[[Any], Any]]

    def hold_for(self, tool: BaseTool) -> bool:
        """Whether these facts are still the tool's: the same description and schema, and
        annotations equal to the ones read (a change made in place counts too)."""
        if tool.description is not self.description or tool.args_schema is not self.args_schema:
            return False
        metadata = tool.metadata or {}
        nested = metadata.get("annotations")
        current = nested if isinstance(nested, collections.abc.Mapping) else metadata
        if current != self.annotations:
            return False
        # Equal is not enough for a hint: `1 == True`, but only a boolean declares one.
        for name in self.hinted:
            if type(current.get(name)) is not type(self.annotations[name]):
                return False
        return True

    @staticmethod
    def read(tool: BaseTool) -> "_ToolFacts":
        annotations = annotations_of(tool)
        schema = tool.tool_call_schema
        return _ToolFacts(
            description=tool.description,
            args_schema=tool.args_schema,
            annotations=annotations,
            hints_json=ToolCall("", tool.name, {}, annotations=annotations).hints_json(),
            hinted=tuple(name for name in MCP_DEFAULTS if name in annotations),
            validate=getattr(schema, "model_validate", None),
        )


class DecisionToolNode(ToolNode):
    """``ToolNode(tools)`` whose calls a contract decides; see the module documentation.

    ``contract`` (default: the bundled tool gate), ``log`` (a path or a
    :class:`~decision_contract.SessionLog`; sealed by :meth:`close`), ``provider``
    (``"heuristic"``: the tools' annotations answer; ``"openai"`` with ``url`` and ``model``:
    an OpenAI-compatible server is asked, as :class:`~decision_contract.integrations.ToolGate`
    says), ``approvals`` (``"interrupt"`` or ``"deny"``); the other keywords are
    ``ToolNode``'s.
    """

    def __init__(
        self,
        tools: Sequence[Union[BaseTool, Callable[..., Any]]],
        *,
        log: Union[SessionLog, str, Path],
        contract: Union[Contract, str, Path, None] = None,
        provider: Provider = "heuristic",
        url: Optional[str] = None,
        model: Optional[str] = None,
        approvals: ApprovalMode = "interrupt",
        gate: Optional[ToolGate] = None,
        **tool_node_options: Any,
    ) -> None:
        if "wrap_tool_call" in tool_node_options or "awrap_tool_call" in tool_node_options:
            raise TypeError("DecisionToolNode decides every call itself: wrap_tool_call is not supported")
        super().__init__(tools, wrap_tool_call=self._gated, awrap_tool_call=self._agated, **tool_node_options)
        self.gate = gate or ToolGate(log=log, contract=contract, provider=provider, url=url, model=model, approvals=approvals)
        # The verdicts of the message being run, by tool_call_id: written before the calls
        # run, read by the wrapper in ToolNode's worker threads.
        self._verdicts: Dict[str, Verdict] = {}
        self._answers: Dict[str, Answer] = {}
        # The verdicts of calls not yet run or refused, kept across the passes LangGraph makes
        # over the node while it waits: a call is decided (and recorded) once per process.
        self._decided: Dict[str, Verdict] = {}
        self._lock = threading.Lock()
        # What the gate reads of each tool, by name.
        self._facts: Dict[str, _ToolFacts] = {}

    # -- deciding before anything runs ---------------------------------------------------

    def _decide_all(self, input: Any) -> None:
        calls, _ = self._parse_input(input)
        verdicts: List[Verdict] = []
        for call in calls:
            verdict = self._decide_one(call)
            # Kept at once: a later call that fails to be decided must not make a retry
            # decide (and record) this one again, nor may a repeated call id.
            with self._lock:
                self._decided[verdict.call.call_id] = verdict
                self._verdicts[call["id"] or ""] = verdict
            verdicts.append(verdict)
        for verdict in verdicts:
            if verdict.outcome != "approval":
                continue
            question = verdict.pending()
            # LangGraph keeps every resume value of a task and hands them out in order, one
            # per `interrupt`: an answer that is refused is followed by a new interrupt, which
            # says why, rather than by an error that the same stored value would repeat.
            while True:
                try:
                    value = interrupt(question)
                except BaseException:
                    # LangGraph stops the node here (GraphInterrupt) until a person answers.
                    self.gate.record_pending(verdict)
                    raise
                try:
                    answer = self.gate.answer(verdict, value)
                    break
                except UsageError as refused:
                    question = {**verdict.pending(), "error": refused.message}
            with self._lock:
                self._answers[verdict.call.call_id] = answer
        # Every call of the message is decided and every approval answered: the calls that
        # may run are recorded as running now, here, in the graph's own thread. (ToolNode runs
        # each call in a thread made for it; the engine's first allocation in a new thread
        # costs more than the rest of the decision.)
        for verdict in verdicts:
            given = self._answers.get(verdict.call.call_id)
            if verdict.outcome == "run" or (given is not None and given.approved):
                self.gate.record_call(verdict)

    def _decide_one(self, call: Mapping[str, Any]) -> Verdict:
        name = str(call.get("name", ""))
        call_id = str(call.get("id") or "")
        arguments = call.get("args") or {}
        if type(arguments) is not dict and not isinstance(arguments, collections.abc.Mapping):
            arguments = {"value": arguments}
        tool = self.tools_by_name.get(name)
        if tool is None:
            gate_call = ToolCall(call_id, name, arguments)
        else:
            facts = self._facts_of(tool)
            gate_call = known_hints(ToolCall(call_id, name, arguments, tool.description, facts.annotations), facts.hints_json)
        # A dict's `get` is atomic: the wrapper's threads only remove entries.
        known = self._decided.get(call_id)
        if known is not None and known.call.tool == name and known.call.fingerprint() == gate_call.fingerprint():
            return known
        if tool is None:
            return Verdict(gate_call, "deny", "unknown_tool", f"there is no tool named {json.dumps(name)}", "")
        problem = _schema_problem(facts.validate, call.get("args") or {})
        if problem is not None:
            return Verdict(gate_call, "deny", "invalid_arguments", f"its arguments do not fit the tool's schema: {problem}", "")
        return self.gate.decide(gate_call)

    def _facts_of(self, tool: BaseTool) -> _ToolFacts:
        facts = self._facts.get(tool.name)
        if facts is None or not facts.hold_for(tool):
            facts = self._facts[tool.name] = _ToolFacts.read(tool)
        return facts

    def _func(self, input: Any, config: RunnableConfig, runtime: Runtime[Any]) -> Any:
        self._decide_all(input)
        return super()._func(input, config, runtime)

    async def _afunc(self, input: Any, config: RunnableConfig, runtime: Runtime[Any]) -> Any:
        self._decide_all(input)
        return await super()._afunc(input, config, runtime)

    # -- running what was allowed ----------------------------------------------------------

    def _refusal(self, request: ToolCallRequest) -> Optional[ToolMessage]:
        """The error the agent sees for a call that may not run; ``None`` for one that may
        (and that `_decide_all` recorded as running)."""
        call_id = request.tool_call["id"] or ""
        with self._lock:
            verdict = self._verdicts.pop(call_id, None)
            answer = self._answers.pop(call_id, None)
            self._decided.pop(call_id, None)
        if verdict is None:
            # A call decided in no pass of this node (never expected): fail closed.
            return _error(request, "Tool call was not run: it was not decided by the contract.")
        if verdict.outcome == "run" or (answer is not None and answer.approved):
            return None  # recorded as running by `_decide_all`
        return _error(request, refusal_text(verdict, answer))

    def _gated(
        self, request: ToolCallRequest, execute: Callable[[ToolCallRequest], Union[ToolMessage, Command[Any]]]
    ) -> Union[ToolMessage, Command[Any]]:
        refused = self._refusal(request)
        return refused if refused is not None else execute(request)

    async def _agated(self, request: ToolCallRequest, execute: Any) -> Union[ToolMessage, Command[Any]]:
        refused = self._refusal(request)
        if refused is not None:
            return refused
        result: Union[ToolMessage, Command[Any]] = await execute(request)
        return result

    # -- the log ---------------------------------------------------------------------------

    def close(self) -> Optional[str]:
        """Seals and closes the session log; returns its head (``SEQ:HASH``)."""
        return self.gate.close()

    def __enter__(self) -> "DecisionToolNode":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _error(request: ToolCallRequest, text: str) -> ToolMessage:
    return ToolMessage(text, name=request.tool_call["name"], tool_call_id=request.tool_call["id"] or "", status="error")


def _schema_problem(validate: Optional[Callable[[Any], Any]], arguments: Any) -> Optional[str]:
    """Why ``arguments`` do not fit the tool's argument schema, whose validator is ``validate``
    (``None`` when they do, or when the tool has no schema to validate them by)."""
    if validate is None:
        return None
    try:
        validate(arguments)
    except Exception as error:  # pydantic's ValidationError, or a TypeError for a non-dict
        return " ".join(str(error).split())[:300]
    return None

