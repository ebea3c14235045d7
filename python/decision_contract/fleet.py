"""Fleet verification and what-if: many session logs verified, or re-evaluated under another
contract, at once, on one machine or on a Dask cluster.

``verify_fleet(inputs, client=...)`` finds the logs the way ``decision replay DIR...`` does
(files as given, directories walked for ``*.jsonl`` files, symbolic links not followed),
splits them into partitions, verifies each partition on a ``dask.distributed`` worker with
:func:`decision_contract.verify_log`, and adds the partitions' totals up. The totals are the
ones ``decision replay --format json DIR...`` prints at the top of its document, and a log
fails here exactly when replay's default checks fail it.

``what_if_fleet(inputs, contract, gates=..., client=...)`` re-evaluates every recorded
decision of the same logs under another contract (or other thresholds) with
:func:`decision_contract.what_if`, on the recorded answers, no model asked, and adds the
partitions' reports up into the document ``decision what-if --format json LOG...
--contract NEW.md`` prints.

What it does not do: it does not audit approvals (``decision replay`` also checks the
approvals of logs that hold some) or check a heads manifest.

Dask is an optional dependency (``pip install "decision-contract[fleet]"``): without a
``client`` the logs are verified in this process and Dask is not imported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Protocol, Sequence, Union

from ._errors import LogError
from ._native import verify_log, what_if

__all__ = [
    "COUNTS",
    "ClusterClient",
    "FleetReport",
    "WHAT_IF_COUNTS",
    "WhatIfReport",
    "find_logs",
    "verify_fleet",
    "verify_partition",
    "what_if_fleet",
    "what_if_partition",
]

StrPath = Union[str, "os.PathLike[str]"]

#: The counts of ``decision replay --format json``, in its order.
COUNTS = (
    "records",
    "other_events",
    "runs",
    "skipped_lines",
    "verified",
    "partial",
    "unverifiable",
    "mismatch",
)

#: The counts of ``decision what-if --format json``, in its order.
WHAT_IF_COUNTS = ("decisions", "compared", "unchanged", "changed", "not_comparable", "unreadable_lines")

#: How many changes (and decisions that could not be compared) a what-if report lists, as
#: ``decision what-if`` lists them: the first ones, in the logs' order; all are counted.
MAX_LISTED = 10_000

#: Replay's own cap on a line's length (``decision replay --max-line``).
DEFAULT_MAX_LINE = 16 * 1024 * 1024


class ClusterClient(Protocol):
    """What :func:`verify_fleet` uses of a ``distributed.Client`` (whose methods are not
    annotated): its workers' threads, ``map`` and ``gather``."""

    def nthreads(self) -> Dict[str, int]: ...

    def map(self, func: Callable[..., Any], *iterables: Any, **kwargs: Any) -> List[Any]: ...

    def gather(self, futures: List[Any]) -> List[Any]: ...


@dataclass
class FleetReport:
    """What verifying a fleet found: the totals over every log, and the logs that fail."""

    #: Logs verified (unreadable ones included).
    logs: int = 0
    #: The totals of ``decision replay --format json``: see :data:`COUNTS`.
    counts: Dict[str, int] = field(default_factory=lambda: {name: 0 for name in COUNTS})
    #: Logs that do not verify (a mismatched record, a broken chain, a problem beyond the
    #: records), in path order.
    failed: List[str] = field(default_factory=list)
    #: Logs that could not be read, with the reason, in path order.
    unreadable: Dict[str, str] = field(default_factory=dict)
    #: Each log's chain status (``intact``, ``absent``, ``missing``, ``broken``), counted.
    chains: Dict[str, int] = field(default_factory=dict)

    def chain(self) -> str:
        """The fleet's chain status, as ``decision replay`` sums it up: any broken chain is
        broken, and "intact" only when every log's chain is intact."""
        if self.chains.get("broken"):
            return "broken"
        if self.chains.get("missing"):
            return "missing"
        if self.chains and set(self.chains) == {"intact"}:
            return "intact"
        return "absent"

    def totals(self) -> Dict[str, Any]:
        """The head of ``decision replay --format json``'s document: the counts and the chain."""
        return {**self.counts, "chain": self.chain()}

    def ok(self) -> bool:
        """Every log was read and verifies (``decision replay`` would exit 0)."""
        return not self.failed and not self.unreadable

    def add(self, other: "FleetReport") -> None:
        """Adds another partition's report to this one."""
        self.logs += other.logs
        for name in COUNTS:
            self.counts[name] += other.counts.get(name, 0)
        self.failed = sorted(self.failed + other.failed)
        self.unreadable = dict(sorted({**self.unreadable, **other.unreadable}.items()))
        for status, count in other.chains.items():
            self.chains[status] = self.chains.get(status, 0) + count


def find_logs(inputs: Iterable[StrPath]) -> List[str]:
    """The logs ``inputs`` name, as ``decision replay`` finds them: a file as given, a
    directory walked (symbolic links not followed) for every ``*.jsonl`` file under it, in
    name order. A path that does not exist raises :class:`FileNotFoundError`."""
    logs: List[str] = []
    for given in inputs:
        path = Path(given)
        if not path.is_dir():
            if not path.exists():
                raise FileNotFoundError(f"no such file or directory: {path}")
            logs.append(str(path))
            continue
        logs.extend(_walk(path))
    return logs


def _walk(directory: Path) -> List[str]:
    found: List[str] = []
    with os.scandir(directory) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                found.extend(_walk(Path(entry.path)))
            elif entry.is_file(follow_symlinks=False) and entry.name.endswith(".jsonl"):
                found.append(entry.path)
    return found


def verify_partition(paths: Sequence[str], max_line: int = DEFAULT_MAX_LINE) -> FleetReport:
    """Verifies ``paths`` one after the other in this process (what one Dask task runs)."""
    report = FleetReport()
    for path in paths:
        report.logs += 1
        try:
            document = verify_log(path, max_line=max_line)
        except LogError as error:
            report.unreadable[path] = str(error)
            continue
        for name in COUNTS:
            report.counts[name] += int(document.get(name, 0))
        entry = document["files"][0]
        chain = str(entry.get("chain", "absent"))
        report.chains[chain] = report.chains.get(chain, 0) + 1
        if int(document.get("mismatch", 0)) > 0 or chain == "broken" or entry.get("problems"):
            report.failed.append(path)
    return report


def verify_fleet(
    inputs: Iterable[StrPath],
    *,
    client: Optional[ClusterClient] = None,
    partitions: Optional[int] = None,
    max_line: int = DEFAULT_MAX_LINE,
) -> FleetReport:
    """Verifies every log ``inputs`` name (see :func:`find_logs`) and returns the totals.

    With a ``dask.distributed`` ``client``, the logs are split into ``partitions``
    contiguous runs (by default four per worker thread) and each is verified as one task on
    the cluster; the workers must have this package installed and see the logs at the same
    paths (a shared file system). Without one, they are verified here, one after the other.
    Raises :class:`ValueError` when the inputs hold no log.
    """
    logs = find_logs(inputs)
    if not logs:
        raise ValueError("no session logs (*.jsonl) under the given paths")
    if client is None:
        return verify_partition(logs, max_line)
    futures = client.map(verify_partition, _partitions(client, logs, partitions), max_line=max_line, pure=False)
    report = FleetReport()
    for part in client.gather(futures):
        if not isinstance(part, FleetReport):
            raise TypeError(f"a partition's task returned {type(part).__name__}, not a FleetReport")
        report.add(part)
    return report


@dataclass
class WhatIfReport:
    """What re-evaluating a fleet's decisions under another contract found: the document
    ``decision what-if --format json`` prints over the same logs, and the logs that could not
    be read."""

    #: Logs read (unreadable ones included).
    logs: int = 0
    #: The totals: see :data:`WHAT_IF_COUNTS`.
    counts: Dict[str, int] = field(default_factory=lambda: {name: 0 for name in WHAT_IF_COUNTS})
    #: By block id: ``decisions``, ``changed``, ``not_comparable``.
    by_block: Dict[str, Dict[str, int]] = field(default_factory=dict)
    #: ``old → new`` and how many decisions moved that way.
    by_action: Dict[str, int] = field(default_factory=dict)
    #: The first :data:`MAX_LISTED` changes, in the logs' order.
    changes: List[Dict[str, Any]] = field(default_factory=list)
    #: The first :data:`MAX_LISTED` decisions that could not be compared.
    not_comparable_list: List[Dict[str, Any]] = field(default_factory=list)
    #: Logs that could not be read, with the reason, in path order.
    unreadable: Dict[str, str] = field(default_factory=dict)

    def document(self) -> Dict[str, Any]:
        """The document ``decision what-if --format json`` prints for the same logs."""
        return {
            **self.counts,
            "by_block": dict(sorted(self.by_block.items())),
            "by_action": dict(sorted(self.by_action.items())),
            "changes": self.changes,
            "not_comparable_list": self.not_comparable_list,
        }

    def add_document(self, document: Dict[str, Any]) -> None:
        """Adds the report of one :func:`decision_contract.what_if` call."""
        for name in WHAT_IF_COUNTS:
            self.counts[name] += int(document.get(name, 0))
        for block, summary in document.get("by_block", {}).items():
            mine = self.by_block.setdefault(block, {})
            for key, count in summary.items():
                mine[key] = mine.get(key, 0) + int(count)
        for pair, count in document.get("by_action", {}).items():
            self.by_action[pair] = self.by_action.get(pair, 0) + int(count)
        self._list(self.changes, document.get("changes", []))
        self._list(self.not_comparable_list, document.get("not_comparable_list", []))

    def add(self, other: "WhatIfReport") -> None:
        """Adds another partition's report (of logs after this one's) to this one."""
        self.logs += other.logs
        self.add_document(other.document())
        self.unreadable = dict(sorted({**self.unreadable, **other.unreadable}.items()))

    @staticmethod
    def _list(into: List[Dict[str, Any]], more: List[Dict[str, Any]]) -> None:
        into.extend(more[: max(0, MAX_LISTED - len(into))])


def what_if_partition(paths: Sequence[str], contract: str, gates: Sequence[str] = (), label: str = "DECISION.md") -> WhatIfReport:
    """Re-evaluates the decisions of ``paths`` under ``contract`` (its text) in this process
    (what one Dask task runs); a log that cannot be read is named, not fatal."""
    report = WhatIfReport()
    for path in paths:
        report.logs += 1
        try:
            document = what_if([path], contract, gates=list(gates), label=label)
        except LogError as error:
            report.unreadable[path] = str(error)
            continue
        report.add_document(document)
    return report


def what_if_fleet(
    inputs: Iterable[StrPath],
    contract: StrPath,
    *,
    gates: Sequence[str] = (),
    client: Optional[ClusterClient] = None,
    partitions: Optional[int] = None,
) -> WhatIfReport:
    """Re-evaluates every recorded decision of the logs ``inputs`` name (see
    :func:`find_logs`) under the contract at ``contract``, with the threshold overrides
    ``gates`` (``block.question=value``, as ``decision what-if --gate`` takes them).

    The contract is read and checked here, once, and its text is sent to the tasks, so the
    workers need the logs at the same paths but not the contract. A contract or a gate that
    cannot be used raises before any task runs (the errors of
    :func:`decision_contract.what_if`). Partitions as :func:`verify_fleet` makes them.
    """
    text = Path(contract).read_text(encoding="utf-8")
    label = str(contract)
    what_if([], text, gates=list(gates), label=label)
    logs = find_logs(inputs)
    if not logs:
        raise ValueError("no session logs (*.jsonl) under the given paths")
    if client is None:
        return what_if_partition(logs, text, gates, label)
    futures = client.map(
        what_if_partition, _partitions(client, logs, partitions), contract=text, gates=list(gates), label=label, pure=False
    )
    report = WhatIfReport()
    for part in client.gather(futures):
        if not isinstance(part, WhatIfReport):
            raise TypeError(f"a partition's task returned {type(part).__name__}, not a WhatIfReport")
        report.add(part)
    return report


def _partitions(client: ClusterClient, logs: List[str], partitions: Optional[int]) -> List[List[str]]:
    """``logs`` in contiguous runs: ``partitions`` of them, by default four per worker thread."""
    if partitions is None:
        partitions = max(1, 4 * sum(client.nthreads().values()))
    size = -(-len(logs) // max(1, partitions))
    return [logs[start : start + size] for start in range(0, len(logs), size)]
