#!/usr/bin/env bash
# Session logs as a data set: 1,000 generated logs (one of them edited) are exported to
# Parquet, DuckDB (the `duckdb` Python package, from PyPI, in a fresh virtual environment)
# reads the file, and its counts must agree with `decision replay` on the same logs.
# Bounded: 1,000 small logs; well under a minute after the build.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
venv="$work/venv"
if ! python3 -m venv "$venv" 2>/dev/null; then
  rm -rf "$venv"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet "duckdb==2.0.1"

cargo build -q --bin decision
decision="$PWD/target/debug/decision"

# 1,000 logs in nested directories: copies of the two bundled logs, and the edited one.
logs="$work/logs"
"$venv/bin/python" - "$logs" <<'PY'
import pathlib, shutil, sys
root = pathlib.Path(sys.argv[1])
sources = ["examples/support-triage/session.jsonl", "examples/coding-agent/session.jsonl"]
for i in range(999):
    target = root / f"host-{i % 10}" / f"day-{i // 100}" / f"run-{i:04}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sources[i % 2], target)
shutil.copyfile("examples/broken/session-edited.jsonl", root / "host-0" / "edited.jsonl")
(root / "host-0" / "notes.txt").write_text("not a log\n")
PY

"$decision" export "$logs" --format parquet -o "$work/decisions.parquet"
# Replay walks the directory too; it exits 1 (the edited log), which is expected here.
"$decision" replay --format json "$logs" > "$work/replay.json" || [ $? -eq 1 ]

"$venv/bin/python" - "$work/decisions.parquet" "$work/replay.json" <<'PY'
import duckdb, json, sys
parquet, replay = sys.argv[1], json.load(open(sys.argv[2]))
db = duckdb.connect()
q = lambda sql: db.execute(sql.replace("FILE", f"'{parquet}'")).fetchall()
verdicts = dict(q("SELECT verdict, count(*) FROM FILE WHERE kind = 'decision' GROUP BY verdict"))
for name in ["verified", "partial", "unverifiable", "mismatch"]:
    assert verdicts.get(name, 0) == replay[name], (name, verdicts, {k: replay[k] for k in ("verified", "mismatch")})
(records,), = q("SELECT count(*) FROM FILE WHERE kind = 'decision'")
assert records == replay["records"] == 3000, (records, replay["records"])
(logs,), = q("SELECT count(DISTINCT log) FROM FILE")
assert logs == len(replay["files"]) == 1000, (logs, len(replay["files"]))
broken = {f["path"] for f in replay["files"] if f["chain"] == "broken"}
failed = {row[0] for row in q("SELECT DISTINCT log FROM FILE WHERE log_verdict = 'failed'")}
assert failed == broken and len(failed) == 1 and next(iter(failed)).endswith("edited.jsonl"), (failed, broken)
(version,), = q("SELECT value FROM parquet_kv_metadata(FILE) WHERE key = 'decision.export.schema'")
assert version == b"decision-export/v1", version
print(f"fleet: DuckDB reads {records} decisions from {logs} logs; counts agree with decision replay")
PY
echo "fleet: ok"
