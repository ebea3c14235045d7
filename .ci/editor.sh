#!/usr/bin/env bash
# A real LSP client against `decision lsp`: Debian's Neovim, headless, with its built-in
# client, opens examples/broken/broken.md, must receive the DC0108 diagnostic at the checker's
# place, applies the fix as an edit and must see the diagnostics clear
# (.ci/editor/diagnostics.lua). Bounded: at most 60 s for the editor. Then the language
# server's didChange → publishDiagnostics benchmark runs each case once.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v nvim >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq neovim >/dev/null
fi

cargo build -q --bin decision
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp examples/broken/broken.md "$work/DECISION.md"

status=0
DECISION_BIN="$(pwd)/target/debug/decision" CONTRACT="$work/DECISION.md" RESULT="$work/result.txt" \
  timeout 60 nvim --headless -u NONE -i NONE -n -c "luafile .ci/editor/diagnostics.lua" </dev/null >/dev/null 2>&1 \
  || status=$?
cat "$work/result.txt" 2>/dev/null || true
if [ "$status" != 0 ]; then
  echo "editor: Neovim failed (status $status)" >&2
  exit 1
fi
# Neovim counts columns in bytes: the server's UTF-16 column 17 (after `→`, 3 bytes) is byte 20.
grep -q '^diagnostic DC0108 12:20 unknown action `cal` | help: did you mean `call`?$' "$work/result.txt"
grep -qx 'cleared' "$work/result.txt"
echo "editor: ok"

# The didChange → publishDiagnostics benchmark, each case run once (criterion's test mode):
# it must still build and its editor session still get its diagnostics.
cargo bench -q -p decision-lsp --bench didchange -- --test
echo "editor bench smoke: ok"
