#!/usr/bin/env bash
# CI for the JavaScript side: the `decision-contract` npm package (js/), the TypeScript host
# example (examples/ts-host/) and the playground page (web/) in a real browser.
# Installs what it needs itself: the wasm32 target, wasm-bindgen-cli at the crate's exact
# version, Debian's chromium and binaryen, and the npm packages of each package.json.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
want="$(sed -n 's/^wasm-bindgen = "=\(.*\)"$/\1/p' crates/wasm/Cargo.toml)"
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$want" ]; then
  cargo install wasm-bindgen-cli --version "$want" --locked
fi
missing=()
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v wasm-opt >/dev/null 2>&1 || missing+=(binaryen)
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# The package: build (wasm, bindings, wasm-opt, the CLI) and the node tests against the CLI.
(cd js && npm test)
echo "js/pkg/decision_wasm_bg.wasm: $(wc -c < js/pkg/decision_wasm_bg.wasm) bytes"

# The TypeScript host: type-checked, then run (its decisions are deterministic).
(cd examples/ts-host && npm ci --no-audit --no-fund && npm run check)
out="$(cd examples/ts-host && npm start --silent)"
printf '%s\n' "$out"
grep -q 'refund_risk    → auto_audit' <<<"$out"
grep -q 'is_actionable  → stop' <<<"$out"

# The playground in chromium, served on 127.0.0.1.
(cd web && npm ci --no-audit --no-fund && npm test)
echo "js: ok"
