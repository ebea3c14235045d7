"""Verify a fleet of session logs on a Dask cluster and print the totals `decision replay` prints.

    python examples/fleet/main.py --logs DIR [--logs DIR ...] [--scheduler ADDRESS] [--workers N]
                                  [--contract NEW.md [--gate block.question=value ...]]

With ``--contract`` the recorded decisions are also re-evaluated under that contract (and the
``--gate`` threshold overrides), and the totals ``decision what-if --format json`` prints are
added under ``what_if``.

Without ``--scheduler`` a local cluster of ``--workers`` workers (threads of this process) is
started for the run. With it, the workers of the running cluster verify the logs: each needs
``decision-contract`` installed and the logs at the same paths. Exits 1 when a log does not
verify or cannot be read, as ``decision replay`` does.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

from distributed import Client, LocalCluster

from decision_contract.fleet import WhatIfReport, verify_fleet, what_if_fleet


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--logs", action="append", required=True, metavar="DIR", help="a log or a directory of logs (repeatable)"
    )
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a running scheduler, e.g. tcp://10.0.0.5:8786")
    parser.add_argument("--workers", type=int, default=2, help="workers of the local cluster (default 2)")
    parser.add_argument("--contract", metavar="NEW.md", help="also re-evaluate the decisions under this contract")
    parser.add_argument(
        "--gate", action="append", default=[], metavar="block.question=value", help="a threshold override (repeatable)"
    )
    args = parser.parse_args(argv)
    if args.gate and not args.contract:
        parser.error("--gate needs --contract")
    changed: Optional[WhatIfReport] = None
    # distributed's constructors are not annotated: hence the ignores.
    if args.scheduler:
        client = Client(args.scheduler)  # type: ignore[no-untyped-call]
        cluster = None
    else:
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=args.workers, threads_per_worker=1, processes=False, dashboard_address=None
        )
        client = Client(cluster)  # type: ignore[no-untyped-call]
    try:
        report = verify_fleet(args.logs, client=client)
        if args.contract:
            changed = what_if_fleet(args.logs, args.contract, gates=args.gate, client=client)
    finally:
        client.close()  # type: ignore[no-untyped-call]
        if cluster is not None:
            cluster.close()
    summary = {"logs": report.logs, **report.totals(), "failed": report.failed, "unreadable": report.unreadable}
    if changed is not None:
        document = changed.document()
        summary["what_if"] = {
            key: document[key] for key in ("decisions", "compared", "unchanged", "changed", "not_comparable", "by_action")
        }
    print(json.dumps(summary, indent=2))
    return 0 if report.ok() else 1


if __name__ == "__main__":
    sys.exit(main())
