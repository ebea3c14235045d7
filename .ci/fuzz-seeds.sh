#!/usr/bin/env bash
# Seeds every fuzz target's corpus: the bundled examples and reference fixtures, and inputs
# built to exhaust a recursive reader (values nested 30,000 deep, 60 KB — within the smoke
# run's -max_len). A target that recursed without a limit aborts on its first run.
set -euo pipefail
cd "$(dirname "$0")/.."
reference="${DECISION_REFERENCE_DIR:-$(pwd)/../shared}"

# One corpus file per seed, named after its path (several seeds are called DECISION.md).
seed() {
  local target="$1" file="$2"
  mkdir -p "fuzz/corpus/$target"
  cp -f "$file" "fuzz/corpus/$target/$(printf '%s' "$file" | tr -c 'A-Za-z0-9.' '_')"
}
# `deep TARGET NAME PREFIX OPEN CLOSE SUFFIX`: OPEN and CLOSE 30,000 times between PREFIX and SUFFIX.
deep() {
  mkdir -p "fuzz/corpus/$1"
  { printf '%s' "$3"; head -c 30000 /dev/zero | tr '\0' "$4"; head -c 30000 /dev/zero | tr '\0' "$5"; printf '%s' "$6"; } \
    > "fuzz/corpus/$1/deep-$2"
}

for file in "$reference"/fixtures/jevloop/*.md examples/*/DECISION.md examples/external-host/triage.DECISION.md; do
  [ -f "$file" ] && seed parse_check "$file"
done
for file in examples/outcomes/*.json examples/coding-agent/outcomes.json; do
  seed outcome_contracts "$file"
done
for file in examples/*/session.jsonl examples/broken/session-edited.jsonl examples/outcomes/outcome-log.jsonl; do
  seed record_reader "$file"
done
for file in examples/*/answers*.json; do
  seed answers "$file"
done

deep outcome_contracts arrays '{"tools":' '[' ']' '}'
deep outcome_contracts value-after-nul '{"tools":{}}' '[' ']' ''
sed -i 's/^{"tools":{}}/{"tools":{}}\x00/' fuzz/corpus/outcome_contracts/deep-value-after-nul
deep record_reader line '{"kind":"event","run":0,"e":{"type":"decision","payload":' '[' ']' '}}'
deep answers arrays '' '[' ']' ''
echo "fuzz seeds: $(find fuzz/corpus -type f | wc -l) files"
