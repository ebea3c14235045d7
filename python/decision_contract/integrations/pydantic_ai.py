"""PydanticAI: :class:`DecisionToolset` decides the calls of the tools of any toolset by a
DECISION.md contract through PydanticAI's own deferred tools.

``DecisionToolset(toolset, log=...)`` wraps a toolset (a ``FunctionToolset``, an MCP server …).
A call the contract allows runs. A call that needs a person raises ``ApprovalRequired``
(with the pending approval as its metadata), so the run ends with ``DeferredToolRequests``
when the agent's ``output_type`` includes it; ``toolset.results(requests, answers)`` records a
person's answers, bound to each call, and returns the ``DeferredToolResults`` to continue the
run with (``agent.run(message_history=..., deferred_tool_results=...)``). After a process restart, a
new ``DecisionToolset`` on the same log answers the calls the earlier process left pending:
the log holds them, and each answer is bound to the call's pending line as before. A call the contract
refuses, or a person rejected, does not run: the model sees a failed tool result with the
reason (``ToolFailed``).

A tool's MCP annotations are read from its ``ToolDefinition.metadata`` (the hints themselves,
or a mapping under ``"annotations"``); ``annotations={tool: {...}}`` adds to them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Union

try:
    from pydantic_ai import DeferredToolRequests, DeferredToolResults, RunContext, ToolDenied
    from pydantic_ai.exceptions import ApprovalRequired, ToolFailed
    from pydantic_ai.toolsets import AbstractToolset, WrapperToolset
    from pydantic_ai.toolsets.abstract import ToolsetTool
except ImportError as missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        "decision_contract.integrations.pydantic_ai needs PydanticAI: pip install 'decision-contract[pydantic-ai]'"
    ) from missing

from .. import Contract, SessionLog
from .._errors import UsageError
from ._core import ApprovalMode, Provider, ToolCall, ToolGate, Verdict, refusal_text

__all__ = ["DecisionToolset"]


@dataclass
class DecisionToolset(WrapperToolset[Any]):
    """``toolset`` whose calls the contract decides; see the module documentation."""

    gate: ToolGate = field(kw_only=True)
    annotations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, kw_only=True)
    _verdicts: Dict[str, Verdict] = field(default_factory=dict, kw_only=True, repr=False)

    @classmethod
    def create(
        cls,
        toolset: AbstractToolset[Any],
        *,
        log: Union[SessionLog, str, Path],
        contract: Union[Contract, str, Path, None] = None,
        provider: Provider = "heuristic",
        url: Optional[str] = None,
        model: Optional[str] = None,
        approvals: ApprovalMode = "interrupt",
        annotations: Optional[Mapping[str, Mapping[str, Any]]] = None,
    ) -> "DecisionToolset":
        """Wraps ``toolset``, with a gate on ``log`` (sealed by :meth:`close`)."""
        gate = ToolGate(log=log, contract=contract, provider=provider, url=url, model=model, approvals=approvals)
        return cls(toolset, gate=gate, annotations=dict(annotations or {}))

    async def call_tool(self, name: str, tool_args: Dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]) -> Any:
        call_id = ctx.tool_call_id or ""
        metadata = tool.tool_def.metadata or {}
        nested = metadata.get("annotations")
        hints = dict(nested if isinstance(nested, Mapping) else metadata)
        hints.update(self.annotations.get(name, {}))
        call = ToolCall(call_id=call_id, tool=name, arguments=tool_args, description=tool.tool_def.description or "", annotations=hints)
        known = self._verdicts.get(call_id)
        verdict = known if known is not None and known.call.same_call(call) else self.gate.decide(call)
        if verdict.outcome == "run":
            self._verdicts.pop(call_id, None)
            self.gate.record_call(verdict)
            return await super().call_tool(name, tool_args, ctx, tool)
        if verdict.outcome == "approval":
            if ctx.tool_call_approved:
                # Answered: the verdict is not kept past this call.
                self._verdicts.pop(call_id, None)
                # Approved through DeferredToolResults: recorded here if `results` did not. An
                # answer the log already holds counts: a recorded rejection is never overridden.
                answer = self.gate.answer(verdict, {"approved": True})
                if not answer.approved:
                    raise ToolFailed(refusal_text(verdict, answer))
                self.gate.record_call(verdict)
                return await super().call_tool(name, tool_args, ctx, tool)
            # Kept while it waits: `results` binds a person's answer to it.
            self._verdicts[call_id] = verdict
            self.gate.record_pending(verdict)
            raise ApprovalRequired(metadata=verdict.pending())
        self._verdicts.pop(call_id, None)
        raise ToolFailed(refusal_text(verdict))

    def results(self, requests: DeferredToolRequests, answers: Mapping[str, Any]) -> DeferredToolResults:
        """The ``DeferredToolResults`` for a person's ``answers`` — by tool call id,
        ``{"approved": bool, "reason": str}`` — to the approvals of ``requests``, each recorded
        and bound to its call. An answer for a call that does not wait, or a call left
        unanswered, is refused."""
        waiting = {part.tool_call_id: part for part in requests.approvals}
        unknown = sorted(set(answers) - set(waiting))
        if unknown:
            raise UsageError(f"no call waits for approval under tool call id {', '.join(unknown)}; nothing ran", code="E_USAGE", path="answers")
        unanswered = sorted(set(waiting) - set(answers))
        if unanswered:
            raise UsageError(f"the calls {', '.join(unanswered)} wait for an answer too", code="E_USAGE", path="answers")
        results = DeferredToolResults()
        for call_id, value in answers.items():
            part = waiting[call_id]
            verdict = self._verdicts.get(call_id)
            if verdict is None:
                # A process restarted since the run stopped: the log still holds the pending
                # approval of this exact call, and the answer is bound to it. The verdict is kept
                # for the call that runs next, so it is not decided again at a later step.
                verdict = self.gate.waiting(ToolCall(call_id, part.tool_name, part.args_as_dict()))
                if verdict is not None:
                    self._verdicts[call_id] = verdict
            if verdict is None or verdict.outcome != "approval" or part.tool_name != verdict.call.tool:
                raise UsageError(f"tool call {call_id} was not decided as waiting for approval; nothing ran", code="E_USAGE", path="answers")
            if ToolCall(call_id, part.tool_name, part.args_as_dict()).fingerprint() != verdict.call.fingerprint():
                raise UsageError(f"tool call {call_id} is not the call that waits for approval {verdict.approval_id}; nothing ran", code="E_USAGE", path="answers")
            answer = self.gate.answer(verdict, value)
            if not answer.approved:
                # A rejected call is not called again: its verdict is not kept past here.
                self._verdicts.pop(call_id, None)
            results.approvals[call_id] = True if answer.approved else ToolDenied(refusal_text(verdict, answer))
        return results

    def close(self) -> Optional[str]:
        """Seals and closes the session log; returns its head (``SEQ:HASH``)."""
        return self.gate.close()
