"""The exceptions the engine raises. Each carries the refusal's ``code`` — the same string the
``decision`` command prints as ``error[CODE]`` and the npm package throws (a diagnostic's
``DCxxxx``, else ``E_…``; see docs/errors.md) — and, where there is one, the ``path``,
``line`` and ``column`` of the problem; ``diagnostics`` lists every problem when there were
several."""

from __future__ import annotations

from typing import Any, Dict, List, Optional


class DecisionError(Exception):
    """Base of every error the engine raises."""

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        path: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
        diagnostics: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.path = path
        self.line = line
        self.column = column
        self.diagnostics: List[Dict[str, Any]] = diagnostics or []


class ContractError(DecisionError, ValueError):
    """The contract cannot do what was asked: it does not parse (``DCxxxx``), a policy does not
    compile (``E_POLICY``), the host cannot fill a frame (``E_FRAME``), or an outcome contracts
    file does not lint clean (``E_CONTRACTS``)."""


class UsageError(DecisionError, ValueError):
    """A wrong request: an unknown block, profile, marking or provider, a malformed argument, a
    gate that does not apply (``E_USAGE``), or an outcome that is not one (``E_OUTCOME``).
    ``path`` names the argument at fault, when one is."""


class ProviderError(DecisionError):
    """A request the decider cannot make at all (``E_PROVIDER``). A provider that is down or answers nonsense
    is not an exception: the decision escalates, degraded, with the reason in `warnings`."""


class LogError(DecisionError):
    """A session log or another input file could not be read or written (``code``: ``E_IO``,
    ``E_LOG_TORN``, ``E_LOG_EMPTY``, ``E_LOG_CLOSED``, ``E_LOG_HELD`` (another writer holds the log), ``E_SESSION_ID``, ``E_REPORT``,
    ``E_UNVERIFIED`` for a log that does not verify)."""


class RecordError(DecisionError, ValueError):
    """A decision record that cannot be verified: not JSON, not a decision, missing fields
    (``E_RECORD``)."""
