"""DECISION.md decision contracts for Python hosts, with the engine of the ``decision``
command: every function returns the document the matching ``decision … --format json``
command prints, as dicts and lists with the same keys."""

from . import outcomes
from ._errors import ContractError, DecisionError, LogError, ProviderError, RecordError, UsageError
from ._native import (
    Contract,
    SessionLog,
    __version__,
    approvals,
    approve,
    check,
    engine,
    verify_log,
    verify_record,
    what_if,
)

__all__ = [
    "Contract",
    "ContractError",
    "DecisionError",
    "LogError",
    "ProviderError",
    "RecordError",
    "SessionLog",
    "UsageError",
    "__version__",
    "approvals",
    "approve",
    "check",
    "engine",
    "outcomes",
    "verify_log",
    "verify_record",
    "what_if",
]
