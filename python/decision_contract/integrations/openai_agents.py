"""The OpenAI Agents SDK: :class:`DecisionGuard` decides the calls of function tools by a
DECISION.md contract through the SDK's own mechanisms.

``guard.tool(function_tool, annotations={...})`` returns the tool with

- ``needs_approval``: the contract decides the call (once per ``call_id``); a call that needs a
  person makes the run stop with an interruption, as any tool with ``needs_approval`` does;
- a tool input guardrail that refuses a call the contract denied (its reason is what the model
  sees) and records that an approved call is about to run;
- a tool output guardrail that lets the call's verdict go once its output exists (kept until
  then: an agent used as a tool is asked about again when a run it stopped resumes) and, with
  ``outcome=(tool, method)`` and the guard's ``outcomes`` (tool outcome contracts,
  :class:`decision_contract.outcomes.Contracts`), checks what the tool returned against that
  contract's deliverable: a breach is recorded (``tool:outcome``, ``contract: "violated"``) and
  the model gets the typed ``contract_violation`` instead of the output.

A person answers an interruption with ``guard.approve(state, item)`` or
``guard.reject(state, item, reason=...)``: the answer is recorded, bound to the call's id and
fingerprint, and then passed to ``RunState.approve`` / ``RunState.reject``. An item whose tool
or arguments differ from the call that was decided is refused. After a restart, a new guard on
the same log answers a restored ``RunState``'s interruptions: the log holds their pending
approvals.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union

try:
    from agents import FunctionTool, RunContextWrapper, RunState, ToolApprovalItem
    from agents.tool_guardrails import (
        ToolGuardrailFunctionOutput,
        ToolInputGuardrail,
        ToolInputGuardrailData,
        ToolOutputGuardrail,
        ToolOutputGuardrailData,
    )
except ImportError as missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        "decision_contract.integrations.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'decision-contract[openai-agents]'"
    ) from missing

from .. import Contract, SessionLog
from .._errors import UsageError
from ..outcomes import Contracts
from ._core import ApprovalMode, Provider, ToolCall, ToolGate, Verdict, parse_answer, refusal_text

__all__ = ["DecisionGuard"]

#: The most verdicts a guard keeps (see ``DecisionGuard._keep``).
_KEPT_VERDICTS = 4096


class DecisionGuard:
    """Decides the calls of the function tools it guards; see the module documentation.

    The keywords are :class:`~decision_contract.integrations.ToolGate`'s: ``log`` (sealed by
    :meth:`close`), ``contract`` (default: the bundled tool gate), ``provider`` (with ``url``
    and ``model`` for ``"openai"``), ``approvals`` (``"interrupt"``: through the run's interruptions; ``"deny"``: refused);
    ``outcomes``: the tool outcome contracts (a :class:`decision_contract.outcomes.Contracts`
    or the path of a contracts file) the tools' outputs are checked against.
    """

    def __init__(
        self,
        *,
        log: Union[SessionLog, str, Path],
        contract: Union[Contract, str, Path, None] = None,
        provider: Provider = "heuristic",
        url: Optional[str] = None,
        model: Optional[str] = None,
        approvals: ApprovalMode = "interrupt",
        gate: Optional[ToolGate] = None,
        outcomes: Union[Contracts, str, Path, None] = None,
    ) -> None:
        self.gate = gate or ToolGate(log=log, contract=contract, provider=provider, url=url, model=model, approvals=approvals)
        self.outcomes = Contracts.load(outcomes) if isinstance(outcomes, (str, Path)) else outcomes
        # By (tool, call id): a call id alone may repeat (an agent used as a tool, a provider
        # with short ids). Oldest first, and at most _KEPT_VERDICTS of them.
        self._verdicts: Dict[Tuple[str, str], Verdict] = {}
        self._tools: Dict[str, Tuple[FunctionTool, Dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def tool(
        self,
        tool: FunctionTool,
        *,
        annotations: Optional[Mapping[str, Any]] = None,
        outcome: Optional[Tuple[str, str]] = None,
    ) -> FunctionTool:
        """``tool`` decided by the contract: a copy with ``needs_approval`` and the input
        guardrail set (its own input guardrails are kept, before the contract's, which records
        the call that runs; its own output guardrails after the contract's). ``annotations`` are
        the tool's MCP hints; a tool without them is taken at MCP's defaults (destructive).
        ``outcome=(tool, method)`` names the outcome contract its output is checked against
        (one of the guard's ``outcomes``; an unknown one is refused here)."""
        if tool.needs_approval is not False:
            raise UsageError(f"tool {tool.name} already sets needs_approval: the contract decides it", code="E_USAGE", path="tool")
        # The contract's output guardrail comes first, so a guardrail of the tool's own that
        # trips cannot keep it from hearing that the call finished.
        output_guardrails = [self._finished_guardrail(outcome), *(tool.tool_output_guardrails or [])]
        hints = dict(annotations or {})
        self._tools[tool.name] = (tool, hints)

        async def needs_approval(_context: RunContextWrapper[Any], arguments: Dict[str, Any], call_id: str) -> bool:
            verdict = self._decide(tool, hints, call_id, arguments)
            if verdict.outcome == "approval":
                self.gate.record_pending(verdict)
                return True
            return False

        def decided_by_contract(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
            context = data.context
            call_id = context.tool_call_id
            try:
                arguments = json.loads(context.tool_arguments or "{}")
            except ValueError:
                arguments = None
            verdict = self._decide(tool, hints, call_id, arguments)
            if verdict.outcome == "approval":
                answered = _approval_status(context, tool.name, call_id)
                if answered is None:
                    # Input guardrails asked before a person was (the run's
                    # pre_approval_tool_input_guardrails): the SDK asks for approval next and
                    # runs nothing now, so nothing is recorded now — not even an answer the
                    # log holds already. Any other run that reaches here unanswered is refused.
                    if _guardrails_run_before_approval(context):
                        return ToolGuardrailFunctionOutput.allow()
                    self._forget(tool.name, call_id)
                    return ToolGuardrailFunctionOutput.reject_content(refusal_text(verdict))
                if answered is False:
                    self._forget(tool.name, call_id)
                    return ToolGuardrailFunctionOutput.reject_content(refusal_text(verdict))
                # The SDK runs an interrupted call only once it was approved: an approval given
                # with RunState.approve alone is recorded here. An answer the log already holds
                # for the call counts, and a rejection recorded there is never overridden. That
                # the approval is used is recorded with the call, next.
                answer = self.gate.answer(verdict, {"approved": True})
                if not answer.approved:
                    self._forget(tool.name, call_id)
                    return ToolGuardrailFunctionOutput.reject_content(refusal_text(verdict, answer))
            if verdict.outcome in ("run", "approval"):
                # Its verdict is kept until its output exists: an agent used as a tool whose own
                # run stopped for approval is asked about again when the run resumes.
                self.gate.record_call(verdict)
                return ToolGuardrailFunctionOutput.allow()
            self._forget(tool.name, call_id)
            return ToolGuardrailFunctionOutput.reject_content(refusal_text(verdict))

        guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(guardrail_function=decided_by_contract, name="decision_contract")
        return dataclasses.replace(
            tool,
            needs_approval=needs_approval,
            # Last: a call a guardrail of the tool's own refuses is never recorded as running,
            # nor its approval as used.
            tool_input_guardrails=[*(tool.tool_input_guardrails or []), guardrail],
            tool_output_guardrails=output_guardrails,
        )

    def _forget(self, tool: str, call_id: str) -> None:
        """Lets go of a call's verdict: the guard hears no more of that call."""
        with self._lock:
            self._verdicts.pop((tool, call_id), None)

    def _keep(self, verdict: Verdict) -> None:
        """Keeps a call's verdict (the lock held). A call whose output never comes (a tool
        that raised out of the run, a call a guardrail of the tool's own refused) is never
        let go of, so the oldest go beyond a bound; a call that waits for a person is still
        answered from the log's pending approval."""
        self._verdicts[(verdict.call.tool, verdict.call.call_id)] = verdict
        if len(self._verdicts) > _KEPT_VERDICTS:
            del self._verdicts[next(iter(self._verdicts))]

    def _finished_guardrail(self, outcome: Optional[Tuple[str, str]]) -> ToolOutputGuardrail[Any]:
        """The output guardrail that hears a call finished (its verdict is let go) and, with
        ``outcome``, checks the output against that outcome contract."""
        check = None if outcome is None else self._outcome_check(outcome)

        def finished(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
            self._forget(data.context.tool_name, data.context.tool_call_id)
            return ToolGuardrailFunctionOutput.allow() if check is None else check(data)

        return ToolOutputGuardrail(guardrail_function=finished, name="decision_contract_outcome" if check else "decision_contract")

    def _outcome_check(self, outcome: Tuple[str, str]) -> Callable[[ToolOutputGuardrailData], ToolGuardrailFunctionOutput]:
        """The check of a tool's output against outcome contract ``(tool, method)``."""
        contracts = self.outcomes
        if contracts is None:
            raise UsageError("outcome= needs the guard's outcomes (tool outcome contracts)", code="E_USAGE", path="outcome")
        if not (isinstance(outcome, tuple) and len(outcome) == 2 and all(isinstance(part, str) for part in outcome)):
            raise UsageError(f"outcome must be (tool, method), not {outcome!r}", code="E_USAGE", path="outcome")
        name, method = outcome
        # Refused now rather than at the first call: a contract the file does not hold. (An
        # error outcome is never validated, so this checks the lookup alone.)
        contracts.validate(name, method, {"status": "error", "error_type": "probe", "error_message": "", "retriable": False, "metadata": {}})

        def checked_against_outcome_contract(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
            validated = contracts.validate(name, method, {"status": "ok", "value": _as_value(data.output)})
            violated = validated.get("status") == "error" and validated.get("error_type") == "contract_violation"
            self.gate.record_outcome(name, method, data.context.tool_call_id, validated, violated)
            if violated:
                return ToolGuardrailFunctionOutput.reject_content(json.dumps(validated, sort_keys=True, default=str))
            return ToolGuardrailFunctionOutput.allow()

        return checked_against_outcome_contract

    def _decide(self, tool: FunctionTool, hints: Mapping[str, Any], call_id: str, arguments: Any) -> Verdict:
        call = ToolCall(
            call_id=call_id,
            tool=tool.name,
            arguments=arguments if isinstance(arguments, Mapping) else {},
            description=tool.description,
            annotations=hints,
        )
        with self._lock:
            known = self._verdicts.get((tool.name, call_id))
            if known is not None and known.call.same_call(call):
                return known
            problem = _schema_problem(tool.params_json_schema, arguments)
            if problem is not None:
                verdict = Verdict(call, "deny", "invalid_arguments", f"its arguments do not fit the tool's schema: {problem}", "")
            else:
                verdict = self.gate.decide(call)
            self._keep(verdict)
            return verdict

    # -- a person's answer ----------------------------------------------------------------

    def _waiting(self, item: ToolApprovalItem) -> Verdict:
        try:
            arguments = json.loads(item.arguments or "{}")
        except ValueError:
            arguments = None
        call_id = item.call_id or ""
        asked = ToolCall(call_id=call_id, tool=item.name or "", arguments=arguments if isinstance(arguments, Mapping) else {})
        with self._lock:
            verdict = self._verdicts.get((asked.tool, call_id))
            if verdict is None:
                # A process restarted since the run stopped (its RunState was saved): the log
                # still holds the pending approval of this exact call, and the answer is bound
                # to it rather than to a decision made anew.
                verdict = self.gate.waiting(asked)
                if verdict is not None:
                    self._keep(verdict)
        guarded = self._tools.get(item.name or "")
        if verdict is None and guarded is not None:
            # The SDK asks for approval itself, without asking needs_approval, when it cannot
            # read the arguments: the contract decides the call now.
            verdict = self._decide(guarded[0], guarded[1], call_id, arguments)
        if verdict is None:
            raise UsageError(f"no guarded call has call id {call_id!r}; nothing ran", code="E_USAGE", path="item")
        if asked.tool != verdict.call.tool or asked.fingerprint() != verdict.call.fingerprint():
            raise UsageError(
                f"the item is not the call that waits for approval {verdict.approval_id} ({verdict.call.tool}); nothing ran",
                code="E_USAGE",
                path="item",
            )
        return verdict

    def approve(self, state: RunState[Any, Any], item: ToolApprovalItem) -> bool:
        """Records a person's approval of ``item`` and approves it in ``state``. A call the
        contract refuses (its arguments do not fit the tool, say) is rejected in ``state``
        instead, with the reason the model then sees: ``False`` says so."""
        verdict = self._waiting(item)
        if verdict.outcome != "approval":
            state.reject(item, rejection_message=refusal_text(verdict))
            self._forget(verdict.call.tool, verdict.call.call_id)
            return False
        answer = self.gate.answer(verdict, {"approved": True})
        if not answer.approved:
            # The log already holds a rejection of this call: it stands.
            state.reject(item, rejection_message=refusal_text(verdict, answer))
            self._forget(verdict.call.tool, verdict.call.call_id)
            return False
        state.approve(item)
        return True

    def reject(self, state: RunState[Any, Any], item: ToolApprovalItem, *, reason: str = "") -> None:
        """Records a person's rejection of ``item`` (with ``reason``) and rejects it in
        ``state``; the model is told why. A call whose approval the log holds already (given
        through :meth:`approve` before) is rejected in ``state`` all the same and never runs;
        the log keeps that approval, unused."""
        verdict = self._waiting(item)
        if verdict.outcome != "approval":
            state.reject(item, rejection_message=refusal_text(verdict))
        else:
            rejection = {"approved": False, "reason": reason}
            answer = self.gate.answer(verdict, rejection)
            if answer.approved:
                answer = parse_answer(rejection, verdict)
            state.reject(item, rejection_message=refusal_text(verdict, answer))
        # A rejected call never reaches the guardrails: its verdict is let go once the
        # rejection is recorded and in the state.
        self._forget(verdict.call.tool, verdict.call.call_id)

    # -- the log ---------------------------------------------------------------------------

    def close(self) -> Optional[str]:
        """Seals and closes the session log; returns its head (``SEQ:HASH``)."""
        return self.gate.close()

    def __enter__(self) -> "DecisionGuard":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _approval_status(context: Any, tool: str, call_id: str) -> Optional[bool]:
    """The SDK's answer for the call: ``True`` approved, ``False`` rejected, ``None`` not yet
    answered. A tool in a namespace is approved under its qualified name (``fs.delete_file``)."""
    status: Optional[bool] = context.is_tool_approved(context.qualified_tool_name, call_id)
    if status is None:
        status = context.is_tool_approved(tool, call_id)
    return status


def _guardrails_run_before_approval(context: Any) -> bool:
    """Whether the run asks a tool's input guardrails before its approval
    (``ToolExecutionConfig.pre_approval_tool_input_guardrails``)."""
    execution = getattr(getattr(context, "run_config", None), "tool_execution", None)
    return bool(getattr(execution, "pre_approval_tool_input_guardrails", False))


def _as_value(output: Any) -> Any:
    """A tool's output as the outcome's ``value``: JSON text is read as JSON (a function tool
    that returns a model's JSON), anything else is kept as it is."""
    if isinstance(output, str):
        try:
            return json.loads(output)
        except ValueError:
            return output
    return output


def _schema_problem(schema: Mapping[str, Any], arguments: Any) -> Optional[str]:
    """What is wrong with ``arguments`` at the top level of the tool's JSON schema: not an
    object, a required property missing, or a property the schema does not allow. (The SDK
    validates the rest itself before the tool runs.)"""
    if not isinstance(arguments, Mapping):
        return "the arguments are not a JSON object"
    properties = schema.get("properties") or {}
    missing = [name for name in schema.get("required") or [] if name not in arguments]
    if missing:
        return f"missing {', '.join(missing)}"
    if schema.get("additionalProperties") is False:
        extra = sorted(str(name) for name in arguments if name not in properties)
        if extra:
            return f"unexpected {', '.join(extra)}"
    return None
