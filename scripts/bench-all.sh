#!/usr/bin/env bash
# Re-takes every figure of the README's Performance table and prints the table again, each
# figure with the command that measured it:
#
#   scripts/bench-all.sh            # every row
#   scripts/bench-all.sh --list     # the rows and their commands, nothing run
#   scripts/bench-all.sh check replay-memory   # some rows, by name
#
# Release builds (fat LTO, one codegen unit): the first run compiles for several minutes.
# Criterion's middle estimate is printed for its benchmarks. Run it on an idle machine: on a
# shared one, wall-clock figures move with the load (`uptime` is printed with the table).
#
# Environment: BENCH_LOG_MB (default 1024) is the size of the log whose resident memory is
# measured; PYTHON (default python3) runs the Python package's timing script, which needs
# the package installed (`pip install ./python`) — its rows are skipped otherwise. Needs GNU
# time (`/usr/bin/time`) for the memory rows. Scratch files go to a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."

rows=(check generated replay replay-process replay-memory decide step step-marginal step-length what-if export wasm mcp-latency python-overhead python-verify hostile-memory)
declare -A figure=(
  [check]="parse + all check layers, reference file (24 KB)"
  [generated]="parse + all check layers, generated 1.9 MB contract, one thread"
  [replay]="replay of a reference-written log, one thread"
  [replay-process]="\`decision replay --jobs 1\`, the replay benchmark's 100,000 reference-written records, whole process, best of 3"
  [replay-memory]="resident memory verifying a LOG_MB MB log"
  [decide]="answer validation + policy evaluation per decision"
  [step]="host runtime overhead per loop step, chained on-disk log"
  [step-marginal]="host overhead of one more step, 40-file workspace (runs of 10 and 30 steps, the difference)"
  [step-length]="host overhead per step in runs of 50 / 200 / 800 steps over an 800-file workspace"
  [what-if]="\`what-if\` re-evaluation of a coding-host log, one core"
  [export]="\`decision export\` to Parquet, 200 chained logs of 100 decisions, one core; in the same run replay alone and the SHA-256 of every line alone"
  [wasm]="npm package (wasm in Node) against native: \`check\` / \`evaluate\` / \`frame\`; the digests and \`verifyLog\` against their SHA-256 floor in wasm"
  [mcp-latency]="\`decision mcp\`: latency added to a forwarded \`tools/call\` (the tests' Python server), against the server called directly"
  [python-overhead]="Python call overhead over the Rust function, \`frame\` / \`evaluate\` (reference sizes)"
  [python-verify]="Python \`verify_log\` against \`decision replay --jobs 1\`, chained log"
  [hostile-memory]="peak memory checking a hostile 11 MB contract (1,000,000 headings)"
)
declare -A command=(
  [check]='cargo bench -p decision-core --bench check -- reference'
  [generated]='cargo bench -p decision-core --bench check -- generated'
  [replay]='cargo bench -p decision-coding-host --bench replay -- "reference-written mix"'
  [replay-process]='/usr/bin/time -f %e target/release/decision replay --jobs 1 $TMPDIR/decision-bench-100k-reference.jsonl'
  [replay-memory]='/usr/bin/time -v target/release/decision replay --jobs 1 LOG'
  [decide]='cargo bench -p decision-runtime --bench decide -- policy/'
  [step]='cargo bench -p decision-coding-host --bench host -- "step_overhead$"'
  [step-marginal]='cargo bench -p decision-coding-host --bench host -- step_marginal'
  [step-length]='cargo bench -p decision-coding-host --bench host -- step_overhead_at'
  [what-if]='cargo bench -p decision-coding-host --bench what_if'
  [export]='cargo bench -p decision-export --bench export'
  [wasm]='node js/bench/bench.js && cargo bench -p decision-wasm --bench surface'
  [mcp-latency]='cargo bench -p decision-cli --bench mcp_latency'
  [python-overhead]='python python/benchmarks/timing.py'
  [python-verify]='python python/benchmarks/timing.py'
  [hostile-memory]='scripts/bench-hostile.sh'
)

if [ "${1:-}" = "--list" ]; then
  for row in "${rows[@]}"; do
    text=${figure[$row]}
    printf '%-16s %s\n    %s\n' "$row" "${text//LOG_MB/${BENCH_LOG_MB:-1024}}" "${command[$row]}"
  done
  exit 0
fi
wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=("${rows[@]}")
for row in "${wanted[@]}"; do
  [ -n "${command[$row]:-}" ] || { echo "unknown row \`$row\` (rows: ${rows[*]})" >&2; exit 2; }
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export CARGO_TERM_COLOR=never

# Criterion's middle estimate of `field` (time or thrpt) for the first benchmark whose name
# contains `name`, from the output in file $1.
criterion() {
  awk -v name="$2" -v field="$3:" '
    index($0, name) { found = 1 }
    found && index($0, field) {
      sub(/.*\[/, ""); sub(/\].*/, ""); split($0, v, " "); print v[3], v[4]; exit
    }' "$1"
}

release_binary() {
  [ -x target/release/decision ] || cargo build -q --release -p decision-cli >&2
  echo target/release/decision
}

# A log of about BENCH_LOG_MB megabytes: the lines of one deterministic run of the coding
# host, repeated (its chain is reported broken after the first copy; memory is what is read).
big_log() {
  local bin=$1 out=$2 run="$scratch/run.jsonl"
  "$bin" run --provider heuristic --workdir examples/workspace --log "$run" \
    --task 'Which file defines the function `apply_discount`, and what does it return?' >/dev/null
  local target=$(( ${BENCH_LOG_MB:-1024} * 1024 * 1024 )) size
  tail -n +2 "$run" >"$scratch/body"
  size=$(stat -c %s "$scratch/body")
  while [ "$size" -lt "$target" ]; do
    cat "$scratch/body" "$scratch/body" >"$scratch/twice" && mv "$scratch/twice" "$scratch/body"
    size=$((size * 2))
  done
  { head -n 1 "$run"; cat "$scratch/body"; } >"$out"
  rm -f "$scratch/body"
}

python_timing() {
  [ -s "$scratch/python" ] && return 0
  "${PYTHON:-python3}" python/benchmarks/timing.py --decision "$(release_binary)" >"$scratch/python" 2>&1 || true
}

measure() {
  local row=$1 out="$scratch/$1.out"
  case $row in
    check) cargo bench -q -p decision-core --bench check -- reference >"$out" 2>&1
           echo "$(criterion "$out" reference_file_all_layers time)" ;;
    generated) cargo bench -q -p decision-core --bench check -- generated >"$out" 2>&1
           echo "$(criterion "$out" generated_2000_blocks time) = $(criterion "$out" generated_2000_blocks thrpt)" ;;
    replay) cargo bench -q -p decision-coding-host --bench replay -- "reference-written mix" >"$out" 2>&1
           echo "$(criterion "$out" "1 thread(s)" thrpt)" ;;
    replay-process)
      local bin log="${TMPDIR:-/tmp}/decision-bench-100k-reference.jsonl" best=""
      bin=$(release_binary)
      # The replay benchmark writes the log; run it first when it is missing.
      [ -s "$log" ] || cargo bench -q -p decision-coding-host --bench replay -- "reference-written mix" >/dev/null 2>&1
      for _ in 1 2 3; do
        /usr/bin/time -f %e "$bin" replay --jobs 1 "$log" >/dev/null 2>"$out" || true
        best=$(printf '%s\n%s\n' "$best" "$(tail -n 1 "$out")" | grep . | sort -n | head -n 1)
      done
      echo "$best s = $(awk -v s="$best" 'BEGIN { printf "%.0f", 100000 / s }') records/s" ;;
    replay-memory)
      local bin log="$scratch/big.jsonl"
      bin=$(release_binary)
      big_log "$bin" "$log"
      /usr/bin/time -v "$bin" replay --jobs 1 "$log" >/dev/null 2>"$out" || true
      echo "$(awk '/Maximum resident set size/ { printf "%.0f MB", $NF / 1024 }' "$out") ($(( $(stat -c %s "$log") / 1048576 )) MB log)" ;;
    decide) cargo bench -q -p decision-runtime --bench decide -- policy/ >"$out" 2>&1
           echo "$(criterion "$out" "pick_tool" time) (pick_tool), $(criterion "$out" "grade_risk" time) (grade_risk)" ;;
    step) cargo bench -q -p decision-coding-host --bench host -- 'step_overhead$' >"$out" 2>&1
           echo "$(criterion "$out" step_overhead time)" ;;
    step-marginal) cargo bench -q -p decision-coding-host --bench host -- step_marginal >"$out" 2>&1
           echo "$(criterion "$out" step_marginal time)" ;;
    step-length) cargo bench -q -p decision-coding-host --bench host -- step_overhead_at >"$out" 2>&1
           echo "$(criterion "$out" step_overhead_at/50 time) / $(criterion "$out" step_overhead_at/200 time) / $(criterion "$out" step_overhead_at/800 time)" ;;
    what-if) cargo bench -q -p decision-coding-host --bench what_if >"$out" 2>&1
           echo "$(criterion "$out" "coding-host log" thrpt)" ;;
    export) cargo bench -q -p decision-export --bench export >"$out" 2>&1
           echo "$(criterion "$out" "parquet/200 logs" thrpt); replay alone $(criterion "$out" "floor/replay alone" thrpt), SHA-256 alone $(criterion "$out" "floor/SHA-256" thrpt)" ;;
    wasm)
      if [ ! -f js/pkg/decision_wasm_bg.wasm ]; then echo "skipped: build the package first (bash js/build.sh)"; return 0; fi
      node js/bench/bench.js >"$out.node" 2>&1 || { echo "failed: $(tail -n 1 "$out.node")"; return 0; }
      cargo bench -q -p decision-wasm --bench surface >"$out" 2>&1
      local node_of native_of
      node_of() { awk -v name="$1" 'index($0, name) == 1 { print $(NF - 5); exit }' "$out.node"; }
      native_of() { criterion "$out" "$1" time | awk '{ print $1 }'; }
      awk -v c="$(node_of 'check reference (bytes)')" -v cn="$(native_of 'check reference')" \
          -v e="$(node_of 'evaluate refund_risk')" -v en="$(native_of 'evaluate refund_risk')" \
          -v f="$(node_of 'frame pick_tool')" -v fn="$(native_of 'frame pick_tool')" \
          'BEGIN { printf "%.1f× / %.1f× / %.1f×; ", c / cn, e / en, f / fn }'
      grep '^digests at' "$out.node" ;;
    mcp-latency) cargo bench -q -p decision-cli --bench mcp_latency >"$out" 2>&1
           awk '/added, call by call/ { printf "median +%s µs, p99 +%s µs", $6, $9 }' "$out" ;;
    python-overhead)
      python_timing
      if grep -q '^frame ' "$scratch/python"; then
        awk '$1 == "frame" || $1 == "evaluate" { printf "%s +%s µs  ", $1, $(NF - 3) }' "$scratch/python"
      else echo "skipped: $(head -c 200 "$scratch/python" | tr '\n' ' ')"; fi ;;
    python-verify)
      python_timing
      grep -m1 '^replay' "$scratch/python" | sed 's/^replay *//' || echo "skipped" ;;
    hostile-memory)
      scripts/bench-hostile.sh "$(release_binary)" >"$out" 2>&1
      awk '$1 == "headings" && $2 == 1000000 && $4 == "human" { print $7 " MB (" $3 " bytes in)" }' "$out" ;;
  esac
}

echo "load: $(uptime | sed 's/.*load average: //')   $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "| figure | result | command |"
echo "|---|---|---|"
for row in "${wanted[@]}"; do
  result=$(measure "$row" || echo "failed (see \`${command[$row]}\`)")
  text=${figure[$row]}
  printf '| %s | %s | `%s` |\n' "${text//LOG_MB/${BENCH_LOG_MB:-1024}}" "$result" "${command[$row]}"
done
