#!/usr/bin/env bash
# Bench smoke: two speed targets checked by instruction counts (valgrind's callgrind), which do
# not move with the machine's load as wall-clock time does on a shared 2-core runner.
#
# - replay: instructions per record replaying a reference-written log on one thread, as
#   `decision replay` reads it (records, chain, seals and approvals in one pass). Fails past
#   REPLAY_BUDGET + 10%; the budget is the count measured when replay ran at ≥ 250,000
#   records/s (docs/performance.md).
# - step: the coding host's instructions per step between 100 and 200 steps and between 200
#   and 400 steps of one run over an 800-file workspace (a file read per step). Fails when the
#   later steps cost more than 10% over the earlier ones (a step's cost must not grow with
#   the run), or past STEP_BUDGET + 10%.
#
# Counts are differences between two runs of one benchmark binary (so its start and the
# generated inputs cancel out). Needs the reference files (DECISION_REFERENCE_DIR) for the
# replay's records. Under valgrind SHA-256 runs in software: the counts are for this measure
# only, not instructions on the real machine.
set -euo pipefail
cd "$(dirname "$0")/.."

REPLAY_BUDGET=79830
STEP_BUDGET=3480000
RECORDS=2000

if ! command -v valgrind >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq valgrind >/dev/null
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo bench --no-run -p decision-coding-host --bench replay --bench host 2>"$work/build.log" \
  || { cat "$work/build.log" >&2; exit 1; }
executable() { sed -n "s|.*Executable benches/$1.rs (\(.*\))$|\1|p" "$work/build.log" | tail -1; }
replay_bin="$(executable replay)"
host_bin="$(executable host)"

# Instructions of one run of the command given, as callgrind counts them.
instructions() {
  valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$@" >/dev/null 2>"$work/valgrind.log" \
    || { cat "$work/valgrind.log" >&2; exit 1; }
  sed -n 's/^summary: //p' "$work/callgrind.out"
}

failed=0
over() { # over VALUE BUDGET: VALUE is more than BUDGET + 10%
  [ "$(( $1 * 10 ))" -gt "$(( $2 * 11 ))" ]
}

generated=$(DECISION_BENCH_RECORDS=$RECORDS BENCH_PROFILE_REPLAY=0 instructions "$replay_bin" --bench)
replayed=$(DECISION_BENCH_RECORDS=$RECORDS BENCH_PROFILE_REPLAY=1 instructions "$replay_bin" --bench)
per_record=$(( (replayed - generated) / RECORDS ))
echo "replay: $per_record instructions per record (budget $REPLAY_BUDGET + 10%)"
if over "$per_record" "$REPLAY_BUDGET"; then
  echo "error: replay costs more than 10% over its budget" >&2
  failed=1
fi

declare -A at
for steps in 100 200 400; do
  at[$steps]=$(BENCH_PROFILE_STEPS=$steps instructions "$host_bin" --bench)
done
early=$(( (at[200] - at[100]) / 100 ))
late=$(( (at[400] - at[200]) / 200 ))
echo "host step: $early instructions per step at 100-200 steps, $late at 200-400 (budget $STEP_BUDGET + 10%)"
if over "$late" "$early"; then
  echo "error: a host step costs more as the run grows ($early → $late instructions)" >&2
  failed=1
fi
if over "$late" "$STEP_BUDGET"; then
  echo "error: a host step costs more than 10% over its budget" >&2
  failed=1
fi
exit "$failed"
