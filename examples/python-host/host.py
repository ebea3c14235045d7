"""A support desk written in Python on the `decision_contract` package.

For every ticket of a small queue, the host asks the questions of the support-triage
contract (examples/support-triage/DECISION.md) in order — is it actionable, which team, how
risky is the refund — and makes the model call itself: it compiles the frame with
`Contract.frame`, answers the questions with a deterministic stand-in for a decision model,
lets `Contract.evaluate` validate the answers and apply the policy, and records every
decision in a chained session log that `decision replay` verifies.

    python examples/python-host/host.py --log /tmp/desk.jsonl
    decision replay /tmp/desk.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import decision_contract as dc

HERE = Path(__file__).resolve().parent
TRIAGE = HERE.parent / "support-triage"

#: The customer's own words: tool-derived, untrusted bytes, marked as such in every frame.
UNTRUSTED = ["subject", "body", "earlier"]

State = Dict[str, Any]
Answers = Dict[str, Any]

TICKETS: List[State] = [
    {
        "subject": "Charged twice for my March invoice",
        "body": "My card was charged twice for invoice INV-2291 (49.00 EUR). Please refund the second charge.",
        "channel": "email",
        "customer": "Dana Whitfield",
        "tier": "team",
        "product": "Ledgerly",
        "earlier": "",
        "orders": ["INV-2291 49.00 EUR paid 3 March", "INV-2291 49.00 EUR paid 3 March"],
        "amount": "49.00 EUR",
        "draft": "",
    },
    {
        "subject": "Out of office",
        "body": "I am away until Monday and will read your message when I am back.",
        "channel": "email",
        "customer": "Sam Ortiz",
        "tier": "free",
        "product": "Ledgerly",
        "earlier": "",
        "orders": [],
        "amount": "",
        "draft": "",
    },
    {
        "subject": "Export fails with an error",
        "body": "Exporting the yearly report stops with 'error 500'. What can I do?",
        "channel": "chat",
        "customer": "Ali Kaya",
        "tier": "enterprise",
        "product": "Ledgerly",
        "earlier": "",
        "orders": [],
        "amount": "",
        "draft": "",
    },
]


def text_of(state: State) -> str:
    """The words of a frame's state, lower-cased, markers included (the rules only look for words)."""
    return " ".join(str(v) for v in state.values()).lower()


def distribution(chosen: str, options: List[str], top: float) -> Dict[str, float]:
    """`top` on the chosen option, the rest shared equally: sums to 1, argmax is `chosen`."""
    rest = (1.0 - top) / max(len(options) - 1, 1)
    return {option: (top if option == chosen else rest) for option in options}


def stand_in_model(questions: Dict[str, Any], state: State) -> Answers:
    """A deterministic decision model: keyword rules over the frame's state, one answer per
    question in the form the contract's validator expects."""
    words = text_of(state)
    answers: Answers = {}
    for question_id, question in questions.items():
        kind = question["type"]
        if kind == "noul":
            automatic = "away until" in words or "out of office" in words
            answers[question_id] = {"noul": 0.1 if automatic else 0.92}
        elif kind == "choice":
            options = list(question["criteria"])
            chosen = "billing" if ("invoice" in words or "charged" in words) else "technical"
            chosen = chosen if chosen in options else options[0]
            answers[question_id] = {"choice": chosen, "probabilities": distribution(chosen, options, 0.8), "confidence": 0.8}
        elif kind == "score":
            levels = [str(i) for i in range(len(question["criteria"]))]
            score = 1 if "49.00" in words else 2
            answers[question_id] = {
                "score": score,
                "probabilities": distribution(str(score), levels, 0.7),
                "confidence": 0.7,
            }
    return answers


def decision_record(step: int, frame: Dict[str, Any], answers: Answers, outcome: Dict[str, Any]) -> Dict[str, Any]:
    """The `decision` event of one single-node request, with everything replay re-verifies:
    the frame (and its digest), the questions sent and the request digest."""
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
        "action": outcome["action"],
        "reason": outcome["reason"],
        "latencyMs": 0,
        "provider": "python-host-rules",
        "escalate": outcome["action"] == "escalate",
    }


class Desk:
    """The host: one contract, one session log, one run per ticket."""

    def __init__(self, contract: dc.Contract, log: dc.SessionLog) -> None:
        self.contract = contract
        self.log = log
        self.step = 0

    def decide(self, block: str, ticket: State) -> str:
        frame = self.contract.frame(block, ticket, untrusted=UNTRUSTED)
        answers = stand_in_model(frame["questions"], frame["frame"]["state"])
        outcome = self.contract.evaluate(block, answers)
        self.log.append_decision(decision_record(self.step, frame, answers, outcome))
        self.step += 1
        action: str = outcome["action"]
        return action

    def handle(self, run: int, ticket: State) -> List[str]:
        """Runs the triage of one ticket; returns the actions taken, in order."""
        self.log.set_run(run)
        self.log.append_event("run:start", {"subject": ticket["subject"]})
        self.step = 0
        taken = [self.decide("is_actionable", ticket)]
        if taken[-1] == "continue":
            taken.append(self.decide("route", ticket))
            if ticket["amount"]:
                taken.append(self.decide("refund_risk", ticket))
        self.log.append_event("run:end", {"actions": taken})
        # The decisions are on disk before the desk acts on them.
        self.log.commit()
        return taken


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--log", required=True, type=Path, help="the session log to write (must not exist)")
    parser.add_argument("--contract", type=Path, default=TRIAGE / "DECISION.md")
    args = parser.parse_args(argv)
    if args.log.exists():
        parser.error(f"{args.log} exists; the desk writes a new log")
    contract = dc.Contract.parse(args.contract.read_bytes(), path=str(args.contract))
    capabilities = (TRIAGE / "capabilities.json").read_text()
    checked = dc.check(args.contract.read_bytes(), path=str(args.contract), capabilities=capabilities)
    if not checked["ok"]:
        for diagnostic in checked["diagnostics"]:
            print(f"{diagnostic['code']} line {diagnostic['line']}: {diagnostic['message']}", file=sys.stderr)
        return 1
    with dc.SessionLog(args.log, session_id="support-desk", group_commit=True) as log:
        desk = Desk(contract, log)
        for run, ticket in enumerate(TICKETS):
            print(f"{ticket['subject']}: {' → '.join(desk.handle(run, ticket))}")
    verified = dc.verify_log(args.log)
    print(
        f"log {args.log}: {verified['records']} decisions, {verified['verified']} verified, "
        f"{verified['mismatch']} mismatched, chain {verified['chain']}"
    )
    return 0 if verified["mismatch"] == 0 and verified["chain"] == "intact" else 1


if __name__ == "__main__":
    sys.exit(main())
