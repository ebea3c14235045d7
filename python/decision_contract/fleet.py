"""Fleet verification: many session logs verified at once, on one machine or on a Dask cluster.

``verify_fleet(inputs, client=...)`` finds the logs the way ``decision replay DIR...`` does
(files as given, directories walked for ``*.jsonl`` files, symbolic links not followed),
splits them into partitions, verifies each partition on a ``dask.distributed`` worker with
:func:`decision_contract.verify_log`, and adds the partitions' totals up. The totals are the
ones ``decision replay --format json DIR...`` prints at the top of its document, and a log
fails here exactly when replay's default checks fail it.

What it does not do: it does not re-evaluate decisions under another contract (the package
has no what-if function; ``decision what-if`` does that one log at a time), and it does not
audit approvals (``decision replay`` also checks the approvals of logs that hold some).

Dask is an optional dependency (``pip install "decision-contract[fleet]"``): without a
``client`` the logs are verified in this process and Dask is not imported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Protocol, Sequence, Union

from ._errors import LogError
from ._native import verify_log

__all__ = ["COUNTS", "ClusterClient", "FleetReport", "find_logs", "verify_fleet", "verify_partition"]

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
    if partitions is None:
        threads = sum(client.nthreads().values())
        partitions = max(1, 4 * threads)
    size = -(-len(logs) // max(1, partitions))
    chunks = [logs[start : start + size] for start in range(0, len(logs), size)]
    futures = client.map(verify_partition, chunks, max_line=max_line, pure=False)
    report = FleetReport()
    for part in client.gather(futures):
        if not isinstance(part, FleetReport):
            raise TypeError(f"a partition's task returned {type(part).__name__}, not a FleetReport")
        report.add(part)
    return report
