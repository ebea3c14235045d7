"""`decision_contract.fleet` on a local Dask cluster of two workers: the same totals and the
same failing logs as `decision replay DIR`, and the example as a user runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from conftest import REPO, run

distributed = pytest.importorskip("distributed")

from decision_contract import ContractError, UsageError, what_if  # noqa: E402
from decision_contract.fleet import (  # noqa: E402
    FleetReport,
    WhatIfReport,
    find_logs,
    verify_fleet,
    verify_partition,
    what_if_fleet,
)

TRIAGE = REPO / "examples/support-triage/DECISION.md"

SOURCES = ["examples/support-triage/session.jsonl", "examples/coding-agent/session.jsonl"]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 logs in nested directories, one of them edited, and a file that is not a log."""
    root = tmp_path_factory.mktemp("fleet")
    for i in range(59):
        target = root / f"host-{i % 3}" / f"run-{i:03}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / SOURCES[i % 2], target)
    shutil.copyfile(REPO / "examples/broken/session-edited.jsonl", root / "host-0" / "edited.jsonl")
    (root / "host-1" / "notes.txt").write_text("not a log\n")
    return root


@pytest.fixture(scope="module")
def client() -> Iterator["distributed.Client"]:
    # Two workers as threads of this process (processes=False): the package's verification
    # releases the GIL, so the two verify in parallel; worker processes would only add start-up.
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        yield client


def test_the_totals_and_the_failing_logs_are_those_of_decision_replay(
    decision: Path, logs: Path, client: "distributed.Client"
) -> None:
    assert len(client.nthreads()) == 2
    code, out, err = run(decision, "replay", "--format", "json", str(logs))
    assert code == 1, err
    replayed = json.loads(out)
    report = verify_fleet([logs], client=client, partitions=7)
    expected = {key: replayed[key] for key in report.totals()}
    assert report.totals() == expected
    assert report.logs == len(replayed["files"]) == 60
    assert report.counts["records"] == 180
    failing = sorted(
        f["path"] for f in replayed["files"] if f.get("problems") or f["chain"] == "broken"
    )
    assert report.failed == failing == [str(logs / "host-0" / "edited.jsonl")]
    assert not report.ok()
    # Without a cluster, the same, in this process.
    local = verify_fleet([logs])
    assert (local.totals(), local.failed, local.logs) == (report.totals(), report.failed, report.logs)


def test_logs_are_found_as_replay_finds_them_and_an_unreadable_log_is_named(
    logs: Path, client: "distributed.Client", tmp_path: Path
) -> None:
    found = find_logs([logs])
    assert len(found) == 60 and all(p.endswith(".jsonl") for p in found)
    assert find_logs([logs / "host-0" / "run-000.jsonl"]) == [str(logs / "host-0" / "run-000.jsonl")]
    with pytest.raises(FileNotFoundError):
        find_logs([tmp_path / "absent"])
    with pytest.raises(ValueError):
        verify_fleet([tmp_path], client=client)
    # A log deleted between the listing and its task is named as unreadable, not dropped.
    gone = str(tmp_path / "gone.jsonl")
    report = verify_partition([gone, str(logs / "host-0" / "run-000.jsonl")])
    assert list(report.unreadable) == [gone] and report.logs == 2 and not report.ok()
    assert report.counts["verified"] == 3


def test_partition_reports_add_up() -> None:
    a, b = FleetReport(), FleetReport()
    a.logs, b.logs = 1, 2
    a.counts["records"], b.counts["records"] = 3, 4
    a.chains, b.chains = {"intact": 1}, {"intact": 1, "broken": 1}
    b.failed = ["z.jsonl"]
    a.add(b)
    assert (a.logs, a.counts["records"], a.chain(), a.failed) == (3, 7, "broken", ["z.jsonl"])


def test_the_example_prints_the_totals_and_exits_1_on_a_failing_log(decision: Path, logs: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "examples/fleet/main.py"), "--logs", str(logs)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    printed = json.loads(done.stdout)
    _, out, _ = run(decision, "replay", "--format", "json", str(logs))
    replayed = json.loads(out)
    assert {k: printed[k] for k in ("records", "verified", "mismatch", "chain")} == {
        k: replayed[k] for k in ("records", "verified", "mismatch", "chain")
    }
    assert printed["failed"] == [str(logs / "host-0" / "edited.jsonl")]


def test_what_if_on_the_cluster_gives_the_document_of_decision_what_if(
    decision: Path, logs: Path, client: "distributed.Client"
) -> None:
    found = find_logs([logs])
    gate = "route.queue=0.99"
    code, out, err = run(decision, "what-if", *found, "--contract", str(TRIAGE), "--gate", gate, "--format", "json")
    assert code == 0, err
    expected = json.loads(out)
    report = what_if_fleet([logs], TRIAGE, gates=[gate], client=client, partitions=7)
    assert report.document() == expected
    # 30 support-triage logs and the edited one each have a `route` decision.
    assert (report.logs, report.counts["changed"], report.by_action) == (60, 31, {"use → escalate": 31})
    assert not report.unreadable
    # The same contract changes nothing; without a cluster, the same document.
    same = what_if_fleet([logs], TRIAGE)
    assert same.counts["changed"] == 0 and same.counts["decisions"] == expected["decisions"]
    assert what_if_fleet([logs], TRIAGE, gates=[gate]).document() == expected


def test_what_if_refuses_a_bad_gate_before_any_task_and_names_an_unreadable_log(
    logs: Path, client: "distributed.Client", tmp_path: Path
) -> None:
    with pytest.raises(UsageError):
        what_if_fleet([logs], TRIAGE, gates=["not a gate"], client=client)
    broken = tmp_path / "broken.md"
    broken.write_text("# a contract\n\n## x\n\nkind: nope\n")
    with pytest.raises(ContractError) as raised:
        what_if_fleet([logs], broken, client=client)
    assert "broken.md" in str(raised.value)
    gone = str(tmp_path / "gone.jsonl")
    from decision_contract.fleet import what_if_partition

    part = what_if_partition([gone, str(REPO / SOURCES[0])], TRIAGE.read_text())
    assert list(part.unreadable) == [gone] and part.logs == 2 and part.counts["decisions"] == 3
    assert what_if([], TRIAGE.read_text())["decisions"] == 0


def test_what_if_reports_add_up_and_list_at_most_the_cap() -> None:
    a, b = WhatIfReport(), WhatIfReport()
    a.add_document({"decisions": 2, "changed": 1, "by_action": {"auto → ask_human": 1}, "changes": [{"n": 1}]})
    b.add_document({"decisions": 3, "changed": 2, "by_action": {"auto → ask_human": 2}, "changes": [{"n": 2}, {"n": 3}]})
    b.logs = 4
    a.add(b)
    assert (a.logs, a.counts["decisions"], a.counts["changed"]) == (4, 5, 3)
    assert a.by_action == {"auto → ask_human": 3}
    assert [c["n"] for c in a.changes] == [1, 2, 3]
    import decision_contract.fleet as fleet

    capped = WhatIfReport()
    capped.add_document({"changes": [{"n": i} for i in range(fleet.MAX_LISTED + 5)]})
    assert len(capped.changes) == fleet.MAX_LISTED


def test_the_example_also_runs_what_if_with_a_contract(decision: Path, logs: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "examples/fleet/main.py"),
            "--logs",
            str(logs),
            "--contract",
            str(TRIAGE),
            "--gate",
            "route.queue=0.99",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    printed = json.loads(done.stdout)
    assert printed["what_if"]["changed"] == 31
    assert printed["what_if"]["by_action"] == {"use → escalate": 31}
