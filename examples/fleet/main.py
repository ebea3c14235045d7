"""Verify a fleet of session logs on a Dask cluster and print the totals `decision replay` prints.

    python examples/fleet/main.py --logs DIR [--logs DIR ...] [--scheduler ADDRESS] [--workers N]

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

from decision_contract.fleet import verify_fleet


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--logs", action="append", required=True, metavar="DIR", help="a log or a directory of logs (repeatable)"
    )
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a running scheduler, e.g. tcp://10.0.0.5:8786")
    parser.add_argument("--workers", type=int, default=2, help="workers of the local cluster (default 2)")
    args = parser.parse_args(argv)
    # distributed's constructors are not annotated: hence the ignores.
    if args.scheduler:
        with Client(args.scheduler) as client:  # type: ignore[no-untyped-call]
            report = verify_fleet(args.logs, client=client)
    else:
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=args.workers, threads_per_worker=1, processes=False, dashboard_address=None
        )
        with cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
            report = verify_fleet(args.logs, client=client)
    summary = {"logs": report.logs, **report.totals(), "failed": report.failed, "unreadable": report.unreadable}
    print(json.dumps(summary, indent=2))
    return 0 if report.ok() else 1


if __name__ == "__main__":
    sys.exit(main())
