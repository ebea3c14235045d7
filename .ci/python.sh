#!/usr/bin/env bash
# The Python package: build and install it from the repository into a fresh virtual
# environment (maturin comes from PyPI), with the agent frameworks its integrations are
# tested against (pinned), then run its test suite (which also runs and type-checks
# examples/python-host, and runs the three framework examples and replays their logs),
# and `mypy --strict` on the integrations and the examples.
# Needs only Rust and python3 (3.9 or later).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

venv="$(mktemp -d)/venv"
trap 'rm -rf "$(dirname "$venv")"' EXIT
if ! python3 -m venv "$venv" 2>/dev/null; then
  # Debian's python3 comes without ensurepip: that is the python3-venv package.
  rm -rf "$venv"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "./python[fleet]" pytest mypy==2.4.1
# The versions the integrations are tested against (docs/python-frameworks.md names them).
"$venv/bin/python" -m pip install --quiet langgraph==1.2.24 langchain-core==1.8.3 \
  langgraph-checkpoint-sqlite==3.1.2 openai-agents==0.24.0 pydantic-ai-slim==2.68.0
# Fleet verification (the [fleet] extra) is tested against this Dask.
"$venv/bin/python" -m pip install --quiet dask==2026.8.0 distributed==2026.8.0

# The tests compare every function with the CLI's JSON: they run the debug `decision`.
cargo build -q --bin decision
export DECISION_BIN="$PWD/target/debug/decision"
export PATH="$venv/bin:$PATH"

# Run from the repository root so that `python/decision_contract` (sources without the
# compiled module) does not shadow the installed package.
"$venv/bin/pytest" -q -rs python/tests
# mypy --strict, once more (with its traceback shown) when mypy itself crashed — an
# INTERNAL ERROR is no verdict on the code, and mypy 2.4.1 has crashed on a fresh cache here
# once; a type error, or a second crash, fails.
typecheck() {
  local out status=0
  out="$("$venv/bin/mypy" --strict "$@" 2>&1)" || status=$?
  if [ "$status" -eq 2 ] && grep -q "INTERNAL ERROR" <<<"$out"; then
    echo "$out"
    echo "mypy crashed (not a type error): once more, with its traceback"
    "$venv/bin/mypy" --strict --show-traceback "$@"
    return
  fi
  echo "$out"
  return "$status"
}
typecheck examples/python-host/host.py
(cd python && typecheck decision_contract/integrations decision_contract/fleet.py)
for example in agents-langgraph agents-openai agents-pydantic-ai fleet; do
  typecheck "examples/$example/main.py"
done
echo "python: ok"
