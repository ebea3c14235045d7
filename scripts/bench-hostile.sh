#!/usr/bin/env bash
# `decision check` on generated hostile contracts, each at two sizes, human and JSON output:
# wall and CPU time, peak resident memory and output size. Linear work shows as the time and memory
# doubling with the input; the output stays bounded (at most 1,000 diagnostics per file).
#
#   cargo build --release -p decision-cli && scripts/bench-hostile.sh [path/to/decision]
#
# Needs GNU time (`/usr/bin/time`). The inputs are written to a temporary directory.
set -euo pipefail

bin=${1:-target/release/decision}
[ -x "$bin" ] || { echo "no binary at $bin (cargo build --release -p decision-cli)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time at /usr/bin/time" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

headings() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "## h%d\n", i }'; }
duplicate_headings() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "## a\n" }'; }
unknown_question_rules() {
    printf 'schema: decision-contract/v1\n\n## b\nkind: noul\nwhen: after-tool —— p\nask: q\n- true — a\n- false — b\npolicy:\n'
    awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "  - prob:nope%d >= 0.6 → continue\n", i }'
    printf '  - else → stop\n'
}
invalid_utf8() { head -c "$1" /dev/zero | tr '\000' '\377'; }

printf '%-24s %10s %10s %6s %8s %8s %9s %10s\n' input n bytes format wall_s cpu_s rss_MB output_B
for spec in headings:500000 headings:1000000 duplicate_headings:500000 duplicate_headings:1000000 \
    unknown_question_rules:50000 unknown_question_rules:100000 invalid_utf8:6000000 invalid_utf8:12000000; do
    kind=${spec%%:*} n=${spec##*:}
    file="$dir/$kind-$n.md"
    "$kind" "$n" >"$file"
    for format in human json; do
        /usr/bin/time -f '%e %M %U %S' -o "$dir/time" "$bin" check --format "$format" "$file" >"$dir/out" 2>"$dir/err" || true
        read -r seconds rss_kb user system < <(tail -n 1 "$dir/time")
        printf '%-24s %10d %10d %6s %8s %8s %9d %10d\n' "$kind" "$n" "$(stat -c %s "$file")" "$format" "$seconds" \
            "$(awk -v u="$user" -v s="$system" 'BEGIN { printf "%.2f", u + s }')" \
            $((rss_kb / 1024)) $(($(stat -c %s "$dir/out") + $(stat -c %s "$dir/err")))
    done
done
