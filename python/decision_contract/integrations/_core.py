"""What every framework integration shares: framing a tool call, deciding it by the contract,
recording the decision, and recording a person's answer to a call that waits for one.

A framework adapter turns its own tool call into a :class:`ToolCall`, asks
:meth:`ToolGate.decide`, and acts on the :class:`Verdict`: ``run`` runs the call, ``approval``
puts it before a person through the framework's own human-in-the-loop mechanism (the answer
then goes through :meth:`ToolGate.answer`), ``deny`` refuses it with the verdict's reason.

Approvals are recorded here and nowhere else (the ``approval:pending``, ``approval:answer``
and ``approval:used`` events of the session log, as the coding host writes them), so that a
change to how answers are bound to calls is made in one place.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Tuple, Union

from .._errors import UsageError
from .._native import Contract, SessionLog, check_provider

#: The bundled contract: decides a tool call on the tool's MCP risk annotations.
TOOL_GATE_PATH = Path(__file__).resolve().parent / "contracts" / "tool-gate.md"

#: The block of the bundled contract asked before each tool call.
TOOL_GATE_BLOCK = "tool_call"

#: MCP's annotation names, with the value MCP says holds when a tool declares nothing.
MCP_DEFAULTS: Dict[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}

#: Actions after which the call runs.
RUN_ACTIONS = frozenset({"auto", "auto_audit", "continue", "call", "use"})
#: Actions after which the call waits for a person.
APPROVAL_ACTIONS = frozenset({"ask_human", "escalate"})

#: How a call's arguments are written (compact, sorted keys): made once, since ``json.dumps``
#: with options builds a new encoder on every call.
_ARGUMENTS_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)

Outcome = Literal["run", "approval", "deny"]
#: ``"heuristic"``, a provider ``Contract.ask`` names (``"openai"``, ``"systemone"``,
#: ``"mock"``, ``"script:FILE"``, ``"replay:LOG"``), or the host's own model call: a frame
#: document in, answers out.
Provider = Union[str, Callable[[Dict[str, Any]], Dict[str, Any]]]
ApprovalMode = Literal["interrupt", "deny"]


@dataclass(frozen=True)
class ToolCall:
    """One tool call an agent asked for, as the gate sees it."""

    #: The framework's id of the call (LangChain's ``tool_call_id``, the SDK's ``call_id``).
    call_id: str
    #: The tool's name.
    tool: str
    #: The arguments the model gave.
    arguments: Mapping[str, Any]
    #: The tool's description, shown to a decision model.
    description: str = ""
    #: The MCP annotations the tool declares (only the names in :data:`MCP_DEFAULTS` count).
    annotations: Mapping[str, Any] = field(default_factory=dict)

    def arguments_json(self) -> str:
        """The arguments as compact JSON with sorted keys: the call's recorded input. Computed
        once per call (it is framed, fingerprinted and recorded)."""
        cached = self.__dict__.get("_arguments_json")
        if cached is None:
            cached = _ARGUMENTS_ENCODER.encode(self.arguments)
            object.__setattr__(self, "_arguments_json", cached)
        return str(cached)

    def fingerprint(self) -> str:
        """SHA-256 (hex) of ``{"tool", "input"}`` as compact JSON (the input being
        :meth:`arguments_json`): the fingerprint the session log records for the call."""
        return _call_fingerprint(self)

    def same_call(self, other: "ToolCall") -> bool:
        """Whether ``other`` calls the same tool with the same arguments (as written by
        :meth:`arguments_json`): the calls whose :meth:`fingerprint` is the same, found
        without hashing."""
        return self.tool == other.tool and self.arguments_json() == other.arguments_json()

    def declared_hints(self) -> Dict[str, bool]:
        """The MCP hints the tool declares, as booleans (anything else is ignored)."""
        return {name: value for name, value in self.annotations.items() if name in MCP_DEFAULTS and isinstance(value, bool)}

    def hints_json(self) -> str:
        """:meth:`declared_hints` as ``json.dumps(..., sort_keys=True)`` writes it (the frame's
        ``annotations`` cell). Written by hand: the names are MCP's four, plain ASCII, and the
        values booleans, so the text is the same, in a fraction of ``json.dumps``'s time.
        Computed once per call; an adapter that keeps a tool's text gives it with
        :func:`known_hints`."""
        cached = self.__dict__.get("_hints_json")
        if cached is None:
            hints = self.declared_hints()
            cached = "{" + ", ".join(f'"{name}": {"true" if hints[name] else "false"}' for name in sorted(hints)) + "}"
            object.__setattr__(self, "_hints_json", cached)
        return str(cached)


def known_hints(call: ToolCall, hints_json: str) -> ToolCall:
    """``call``, its :meth:`ToolCall.hints_json` given: an adapter that keeps each tool's hints
    text (it depends on the tool's annotations alone) spares writing it for every call.
    ``hints_json`` must be what :meth:`ToolCall.hints_json` would write."""
    object.__setattr__(call, "_hints_json", hints_json)
    return call


@dataclass(frozen=True)
class Verdict:
    """What the contract decided for one call."""

    call: ToolCall
    #: ``run``, ``approval`` or ``deny``.
    outcome: Outcome
    #: The policy's action (``auto``, ``ask_human``, …).
    action: str
    #: Why, as the engine says it (the rule that fired, or why the answers were refused).
    reason: str
    #: The request digest of the recorded decision.
    request_digest: str
    #: The approval's id when ``outcome`` is ``approval``.
    approval_id: Optional[str] = None
    #: The step of the recorded decision in the log's run (``-1``: none was recorded).
    step: int = -1

    def pending(self) -> Dict[str, Any]:
        """What a person is shown: the approval's id, the call and why it waits."""
        return {
            "id": self.approval_id,
            "call_id": self.call.call_id,
            "tool": self.call.tool,
            "arguments": dict(self.call.arguments),
            "rule": self.action,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Answer:
    """A person's answer to a pending approval."""

    approved: bool
    reason: str = ""


def parse_answer(value: Any, verdict: Verdict) -> Answer:
    """Reads a resume value ``{"approved": bool, "reason": str, "id": str}`` (``reason`` and
    ``id`` optional) for the approval of ``verdict``. Refuses, with a :class:`UsageError`
    that says why, a value of another shape and an answer given for another approval."""
    if not isinstance(value, Mapping):
        raise UsageError(
            f"the answer to approval {verdict.approval_id} must be a dict "
            f'{{"approved": bool, "reason": str}}, not {type(value).__name__}',
            code="E_USAGE",
            path="resume",
        )
    unknown = sorted(set(value) - {"approved", "reason", "id"})
    if unknown:
        raise UsageError(f"the answer to approval {verdict.approval_id} has unknown keys: {', '.join(map(str, unknown))}", code="E_USAGE", path="resume")
    approved = value.get("approved")
    if not isinstance(approved, bool):
        raise UsageError(f"the answer to approval {verdict.approval_id} needs `approved`: true or false", code="E_USAGE", path="resume")
    reason = value.get("reason", "")
    if not isinstance(reason, str):
        raise UsageError(f"the answer to approval {verdict.approval_id}: `reason` must be a string", code="E_USAGE", path="resume")
    answered_id = value.get("id")
    if answered_id is not None and answered_id != verdict.approval_id:
        raise UsageError(
            f"the answer is for approval {answered_id!r}, but the call waiting is approval {verdict.approval_id} "
            f"({verdict.call.tool}); nothing ran",
            code="E_USAGE",
            path="resume",
        )
    return Answer(approved=approved, reason=reason)


def heuristic_answers(call: ToolCall) -> Dict[str, Any]:
    """The answers the bundled contract's questions get from the tool's annotations alone,
    MCP's defaults standing in for what the tool does not declare."""
    hints = {**MCP_DEFAULTS, **call.declared_hints()}
    if hints["readOnlyHint"]:
        effect = "read_only"
    elif hints["destructiveHint"]:
        effect = "destructive"
    elif hints["idempotentHint"]:
        effect = "idempotent"
    else:
        effect = "additive"
    options = ["read_only", "additive", "idempotent", "destructive"]
    return {
        "effect": {"choice": effect, "probabilities": {o: (1.0 if o == effect else 0.0) for o in options}, "confidence": 1.0},
        "open_world": {"noul": 1.0 if hints["openWorldHint"] else 0.0},
    }


_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")

#: The frame's cells that carry the agent's words (the call's arguments): marked untrusted.
_UNTRUSTED_CELLS = ("arguments",)

#: :func:`heuristic_answers` by the hints a tool declares (:meth:`ToolCall.hints_json`): there
#: are at most 3⁴ of them, and the answers depend on nothing else. Read, never changed.
_ANSWERS_BY_HINTS: Dict[str, Dict[str, Any]] = {}


class ToolGate:
    """Decides tool calls by a contract and records every decision and approval in one
    session log, sealed by :meth:`close` (or on leaving a ``with`` block).

    ``contract`` is a :class:`~decision_contract.Contract`, the text or path of a
    DECISION.md, or ``None`` for the bundled tool gate; ``block`` the block asked (its
    frame reads the cells ``tool``, ``description``, ``annotations`` and ``arguments``).
    ``log`` is a :class:`~decision_contract.SessionLog` or a path. ``provider`` is
    ``"heuristic"`` (the annotations answer, no model); a provider :meth:`Contract.ask`
    names — ``"openai"`` against any OpenAI-compatible server at ``url`` (key, if any, in
    ``OPENAI_API_KEY``), ``"systemone"``, ``"mock"``, ``"script:FILE"``, ``"replay:LOG"`` —
    asked the block's questions about the call's cells (with ``model``, within
    ``timeout_ms`` for the whole call); or a callable that is given the frame document of
    :meth:`Contract.frame` (``frame``, ``questions``, ``requestDigest``) and returns the
    answers, one per question, as :meth:`Contract.evaluate` takes them — the host's own
    model call. A provider that is down or answers nonsense escalates: the call waits for a
    person (or is refused), never runs. ``approvals="deny"`` refuses a call that would wait
    for a person.
    """

    def __init__(
        self,
        *,
        log: Union[SessionLog, str, Path],
        contract: Union[Contract, str, Path, None] = None,
        block: str = TOOL_GATE_BLOCK,
        provider: Provider = "heuristic",
        approvals: ApprovalMode = "interrupt",
        session_id: Optional[str] = None,
        url: Optional[str] = None,
        model: Optional[str] = None,
        timeout_ms: int = 30_000,
    ) -> None:
        if isinstance(provider, str) and provider != "heuristic":
            # Refused now, not at the first call: the same names `Contract.ask` takes.
            check_provider(provider)
        elif not isinstance(provider, str) and not callable(provider):
            raise UsageError(
                f"provider must be a provider name or a callable that answers a frame, not {provider!r}",
                code="E_USAGE",
                path="provider",
            )
        if approvals not in ("interrupt", "deny"):
            raise UsageError(f"approvals must be 'interrupt' or 'deny', not {approvals!r}", code="E_USAGE", path="approvals")
        if isinstance(contract, Contract):
            self.contract = contract
        elif contract is None:
            self.contract = Contract.parse(TOOL_GATE_PATH.read_bytes(), path=str(TOOL_GATE_PATH))
        elif isinstance(contract, Path) or (isinstance(contract, str) and "\n" not in contract):
            path = Path(contract)
            self.contract = Contract.parse(path.read_bytes(), path=str(path))
        else:
            self.contract = Contract.parse(contract)
        if block not in self.contract.blocks:
            raise UsageError(f"the contract has no block {block!r} (it has {', '.join(self.contract.blocks)})", code="E_USAGE", path="block")
        self.block = block
        self.provider = provider
        self.url = url
        self.model = model
        self.timeout_ms = timeout_ms
        self.approvals: ApprovalMode = approvals
        # With group commit, the decision of a call that runs waits in memory for that call's
        # `tool:call` line, and the two reach the file in one write (`record_call` commits)
        # before the call runs; any other verdict is written at once (`decide` commits).
        self.log = log if isinstance(log, SessionLog) else SessionLog(Path(log), session_id=session_id, group_commit=True)
        self.step = 0

    # -- deciding -------------------------------------------------------------------------

    def state(self, call: ToolCall) -> Dict[str, Any]:
        """The cells the block's frame is compiled from."""
        return self._state(call, call.hints_json())

    @staticmethod
    def _state(call: ToolCall, hints: str) -> Dict[str, Any]:
        return {"tool": call.tool, "description": call.description, "annotations": hints, "arguments": call.arguments_json()}

    def decide(self, call: ToolCall) -> Verdict:
        """Frames the call, decides it and records the decision (before anything runs). The
        decision of a call that may run reaches the file with the call's ``tool:call`` line
        (:meth:`record_call`), in the same write, when the gate opened its log; any other is
        written before this returns."""
        provider = self.provider
        if provider == "heuristic":
            # The annotations answer: framed, evaluated and recorded in one native call.
            hints = call.hints_json()
            known = _ANSWERS_BY_HINTS.get(hints)
            if known is None:
                known = _ANSWERS_BY_HINTS.setdefault(hints, heuristic_answers(call))
            decided = self.contract.decide_and_record(
                self.block,
                self._state(call, hints),
                known,
                log=self.log,
                provider="heuristic",
                step=self.step,
                untrusted=_UNTRUSTED_CELLS,
            )
        elif isinstance(provider, str):
            # The engine frames the call's cells, asks, validates, evaluates and records.
            decided = self.contract.ask(
                self.block,
                self.state(call),
                provider=provider,
                url=self.url,
                model=self.model,
                log=self.log,
                timeout_ms=self.timeout_ms,
                cells="state",
                untrusted=_UNTRUSTED_CELLS,
                step=self.step,
            )
        else:
            # The host's own model call. The model's arguments are the agent's words:
            # untrusted, and marked so.
            frame = self.contract.frame(self.block, self.state(call), untrusted=_UNTRUSTED_CELLS)
            answers = provider(frame)
            # Answers that do not validate are not an error: the decision escalates, and an
            # escalated call waits for a person (or is refused), never runs.
            decided = self.contract.evaluate(self.block, answers)
            name = getattr(provider, "__name__", "python")
            self.log.append_decision(_decision_record(self.step, frame, answers, decided, name))
        step = self.step
        self.step += 1
        action: str = decided["action"]
        reason: str = decided.get("reason") or action
        digest: str = decided.get("requestDigest") or ""
        if action in RUN_ACTIONS:
            # Written with the call's `tool:call` line by `record_call`, before the call runs.
            return Verdict(call, "run", action, reason, digest, step=step)
        self.log.commit()
        if action in APPROVAL_ACTIONS and self.approvals == "interrupt":
            return Verdict(call, "approval", action, reason, digest, approval_id=self._approval_for_decision(call), step=step)
        if action in APPROVAL_ACTIONS:
            why = f"refused: it needs a person's approval ({reason}), and approvals are off"
            return Verdict(call, "deny", action, why, digest, step=step)
        return Verdict(call, "deny", action, f"refused by the contract: {reason}", digest, step=step)

    @staticmethod
    def approval_id(call: ToolCall) -> str:
        """The id of the first approval a call waits for: its framework id and the start of
        its fingerprint, so the same call (after a restart too) has the same id and another
        call never does. A later decision of a call with the same id and arguments (a model
        provider with short ids, a second run on the same log) after a call ran on its approval
        waits under ``ID-2``, ``ID-3``, …: see :meth:`_approval_chain`."""
        return f"ap-{_UNSAFE_ID.sub('_', call.call_id)[:64]}-{call.fingerprint()[:12]}"

    def _approval_chain(self, call: ToolCall) -> Tuple[int, str, Optional[Mapping[str, Any]]]:
        """The newest approval of ``call`` in the log, as ``(number, id, approval)`` (the first
        is number 1), or ``(1, ID, None)`` when the log holds none. A decision adds an approval to the chain once a call ran
        on the one before it, so all but the newest are used."""
        first = self.approval_id(call)
        approval_id, approval = first, self.log.approval(first)
        number = 1
        while approval is not None:
            following = f"{first}-{number + 1}"
            found = self.log.approval(following)
            if found is None:
                break
            number, approval_id, approval = number + 1, following, found
        return number, approval_id, approval

    def _approval_for_decision(self, call: ToolCall) -> str:
        """The approval a new decision of ``call`` waits for: the newest of its chain until it
        let the call run (the same call decided again after a restart keeps its approval and
        any answer recorded there: a recorded rejection stands), else a new one. A decision is
        never bound to an approval an earlier call already ran on."""
        number, approval_id, approval = self._approval_chain(call)
        if approval is None or not approval.get("used"):
            return approval_id
        return f"{self.approval_id(call)}-{number + 1}"

    # -- approvals: recorded here only --------------------------------------------------

    def waiting(self, call: ToolCall) -> Optional[Verdict]:
        """The verdict of ``call`` when the log holds an approval of it — this exact call: its
        id, tool and arguments — that an earlier process recorded and that has not let the
        call run (after a restart, the adapter's own memory is gone; the log's is not): the
        newest of its chain, answered or not (an answer recorded there stands). ``None``
        otherwise."""
        _, approval_id, approval = self._approval_chain(call)
        if approval is None or approval.get("used") or (approval["tool"], approval["input"]) != (call.tool, call.arguments_json()):
            return None
        extra = approval.get("extra") or {}
        step = extra.get("step")
        return Verdict(
            call,
            "approval",
            str(extra.get("rule") or "ask_human"),
            str(extra.get("reason") or ""),
            str(approval.get("requestDigest") or ""),
            approval_id=approval_id,
            step=step if isinstance(step, int) else -1,
        )

    def record_pending(self, verdict: Verdict) -> None:
        """Records that ``verdict``'s call waits for a person (``approval:pending``, with the
        call's fingerprint); once per approval, also across a restart (the log holds it)."""
        call = verdict.call
        approval_id = verdict.approval_id or ""
        if self.log.approval(approval_id) is not None:
            return
        extra = {"step": verdict.step, "callId": call.call_id, "rule": verdict.action, "reason": verdict.reason}
        self.log.append_pending(approval_id, call.tool, call.arguments_json(), verdict.request_digest, extra)
        self.log.commit()

    def answer(self, verdict: Verdict, value: Any) -> Answer:
        """Reads a person's answer to ``verdict``'s approval (see :func:`parse_answer`),
        records it bound to the pending call (``approval:answer``, bound as ``decision
        approve`` binds it: to this session, the call's fingerprint and its pending line).
        Returns the answer. An approval already answered in the log keeps its recorded
        answer: LangGraph replays the same resume values each time it re-executes a node.
        That an approved call is about to run is recorded by :meth:`record_call`, not here: a
        framework may still refuse the call (a guardrail of the tool's own)."""
        answer = parse_answer(value, verdict)
        approval_id = verdict.approval_id or ""
        approval = self.log.approval(approval_id)
        if approval is None:
            self.record_pending(verdict)
            approval = self.log.approval(approval_id)
        if approval is not None and (approval["tool"], approval["input"]) != (verdict.call.tool, verdict.call.arguments_json()):
            raise UsageError(
                f"approval {approval_id} was asked for another call than {verdict.call.tool} with these arguments; nothing ran",
                code="E_USAGE",
                path="resume",
            )
        recorded = approval.get("answer") if approval is not None else None
        if isinstance(recorded, Mapping):
            answer = Answer(approved=recorded.get("approved") is True, reason=str(recorded.get("reason") or ""))
        elif answer.approved:
            self.log.answer_pending(approval_id, True)
        else:
            self.log.answer_pending(approval_id, False, answer.reason or "denied by a person")
        self.log.commit()
        return answer

    def record_outcome(self, tool: str, method: str, call_id: str, outcome: Mapping[str, Any], violated: bool) -> None:
        """Records a tool's outcome as checked against its outcome contract (``tool:outcome``,
        as ``decision outcomes report`` reads it): ``contract`` is ``held`` or ``violated``."""
        event = {"tool": tool, "method": method, "call_id": call_id, "contract": "violated" if violated else "held", "outcome": dict(outcome)}
        self.log.append_event("tool:outcome", event)
        self.log.commit()

    def record_call(self, verdict: Verdict) -> None:
        """Records that ``verdict``'s call runs now (``tool:call``, at the decision's step),
        after the approval it waited for, if any, is marked used (``approval:used``): replay
        checks that an approved call ran, and a rejected one did not. Every line held before
        it — the call's decision among them — is written with it, in one write."""
        call = verdict.call
        if verdict.approval_id:
            approval = self.log.approval(verdict.approval_id)
            answer = None if approval is None else approval.get("answer")
            if approval is None or not (isinstance(answer, Mapping) and answer.get("approved") is True):
                # Never expected: every adapter records the answer first. Fails closed.
                raise UsageError(f"call {call.call_id} ({call.tool}) waits for approval {verdict.approval_id}: it may not run", code="E_USAGE", path="call")
            if not approval.get("used"):
                self.log.use_pending(verdict.approval_id, verdict.step if verdict.step >= 0 else None)
        self.log.append_event("tool:call", {"step": verdict.step, "callId": call.call_id, "tool": call.tool, "input": call.arguments_json()})
        self.log.commit()

    # -- the log --------------------------------------------------------------------------

    def close(self) -> Optional[str]:
        """Seals and closes the log; returns its head (``SEQ:HASH``), ``None`` if closed."""
        return self.log.close()

    def __enter__(self) -> "ToolGate":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _call_fingerprint(call: ToolCall) -> str:
    """The session log's fingerprint of a call (``call_fingerprint`` of the runtime): SHA-256
    of the JSON of ``{"tool": …, "input": …}``, in that order, no spaces."""
    text = json.dumps({"tool": call.tool, "input": call.arguments_json()}, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _decision_record(step: int, frame: Dict[str, Any], answers: Dict[str, Any], decided: Dict[str, Any], provider: str) -> Dict[str, Any]:
    """The `decision` event of one single-block request, with what replay re-verifies."""
    artifact = frame["frame"]
    return {
        "step": step,
        "id": artifact["node"],
        "state": artifact["state"],
        "frame": artifact,
        "requestDigest": frame["requestDigest"],
        "sentFrameDigest": artifact["digest"],
        "sentQuestions": frame["questions"],
        "batchIds": [artifact["node"]],
        "questions": frame["questions"],
        "answers": answers,
        "action": decided["action"],
        "reason": decided["reason"],
        "latencyMs": 0,
        "provider": provider,
        "escalate": decided["action"] == "escalate",
    }


def refusal_text(verdict: Verdict, answer: Optional[Answer] = None) -> str:
    """What the agent is told about a call that did not run."""
    if answer is not None and not answer.approved:
        why = answer.reason or "denied by a person"
        return f"Tool call {verdict.call.tool} was not run: a person rejected it ({why})."
    return f"Tool call {verdict.call.tool} was not run: {verdict.reason}."


__all__: List[str] = [
    "APPROVAL_ACTIONS",
    "Answer",
    "MCP_DEFAULTS",
    "Provider",
    "RUN_ACTIONS",
    "TOOL_GATE_BLOCK",
    "TOOL_GATE_PATH",
    "ToolCall",
    "ToolGate",
    "Verdict",
    "heuristic_answers",
    "known_hints",
    "parse_answer",
    "refusal_text",
]
