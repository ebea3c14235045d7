#!/usr/bin/env bash
# Session logs as a data set: 1,000 generated logs (one of them edited) are exported to
# Parquet, DuckDB (the `duckdb` Python package, from PyPI, in a fresh virtual environment)
# reads the file, and its counts must agree with `decision replay` on the same logs. Then the
# logs are checked against a heads manifest after one is cut, one rewritten and one deleted:
# replay must name exactly those three. Bounded: 1,000 small logs and three short runs of the
# coding host; well under a minute after the build.
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

# --- Heads: the manifest `decision run --heads` appends to, over the same 1,000 logs ---
heads="$work/heads.jsonl"
# Three logs written by real runs, each appending its own head.
for i in 0 1 2; do
  "$decision" run --quiet --provider heuristic --workdir examples/workspace --log "$logs/host-9/live-$i.jsonl" \
    --heads "$heads" --task 'Which file defines the function `apply_discount`, and what does it return?' > /dev/null
done
# The copied logs get the entries a run would have written for them (their head, session and
# records, as replay reads them), appended to the same manifest.
rm "$logs/host-0/edited.jsonl"
"$decision" replay --format json "$logs" > "$work/replay.json"
"$venv/bin/python" - "$work/replay.json" "$heads" <<'PY'
import json, os, sys
replay, heads = json.load(open(sys.argv[1])), sys.argv[2]
live = {json.loads(line)["log"] for line in open(heads)}
with open(heads, "a") as out:
    for f in replay["files"]:
        path = os.path.realpath(f["path"])
        if path not in live:
            entry = {"schema": "decision-heads/v1", "log": path, "session": f["session"], "head": f["head"], "records": 3, "at": 0}
            out.write(json.dumps(entry) + "\n")
PY
"$decision" replay --heads "$heads" "$logs" > /dev/null
# One cut (its last two lines), one rewritten (its run:end changed, the chain recomputed after it),
# one deleted; none of them fails replay without the manifest.
"$venv/bin/python" - "$logs" <<'PY'
import hashlib, pathlib, sys
root = pathlib.Path(sys.argv[1])
cut = root / "host-1" / "day-0" / "run-0001.jsonl"
cut.write_text("".join(line + "\n" for line in cut.read_text().splitlines()[:-2]))
rewritten = root / "host-9" / "live-1.jsonl"
lines = rewritten.read_text().splitlines()
end = next(i for i, line in enumerate(lines) if '"type":"run:end"' in line)
lines[end] = lines[end].replace('"type":"run:end"', '"type":"run:end","note":"edited"', 1)
for i in range(1, len(lines)):
    at = lines[i].rindex(',"prev":"')
    lines[i] = lines[i][:at] + ',"prev":"' + hashlib.sha256(lines[i - 1].encode()).hexdigest() + '"}'
rewritten.write_text("".join(line + "\n" for line in lines))
(root / "host-2" / "day-0" / "run-0002.jsonl").unlink()
PY
"$decision" replay "$logs" > /dev/null
"$decision" replay --format json --heads "$heads" "$logs" > "$work/heads.json" || [ $? -eq 1 ]
"$venv/bin/python" - "$work/heads.json" <<'PY'
import json, sys
document = json.load(open(sys.argv[1]))
named = sorted(f["path"].rsplit("/", 1)[-1] for f in document["files"] if f.get("missing") or f.get("heads", {}).get("problems"))
assert named == ["live-1.jsonl", "run-0001.jsonl", "run-0002.jsonl"], named
assert len(document["files"]) == 1002, len(document["files"])
print(f"fleet: the heads manifest names exactly the cut, the rewritten and the deleted log of {len(document['files'])}")
PY
echo "fleet: ok"
