#!/usr/bin/env bash
# Builds the `decision-contract` package (js/pkg/, for Node) and the playground's module
# (web/pkg/, for browsers) from crates/wasm, and the `decision` binary the tests compare with.
# Needs: the wasm32-unknown-unknown target, wasm-bindgen-cli at the crate's exact version and
# node (checked first; `.ci/js.sh` installs them); wasm-opt (Debian's `binaryen`) is used
# when present.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
cd "$root"

# Everything the build needs, checked before the minutes it takes: each missing piece is
# named with the one command that installs it.
want="$(sed -n 's/^wasm-bindgen = "=\(.*\)"$/\1/p' crates/wasm/Cargo.toml)"
missing=()
if ! command -v cargo >/dev/null 2>&1; then
  missing+=("cargo (Rust): https://rustup.rs")
elif ! [ -d "$(rustc --print sysroot 2>/dev/null)/lib/rustlib/wasm32-unknown-unknown" ]; then
  missing+=("the wasm32-unknown-unknown target: rustup target add wasm32-unknown-unknown")
fi
# `|| true`: under `set -e` and `pipefail` a missing wasm-bindgen would otherwise end the
# script here, silently.
have="$( { wasm-bindgen --version 2>/dev/null || true; } | awk '{print $2}')"
if [ "$have" != "$want" ]; then
  missing+=("wasm-bindgen-cli $want (found: ${have:-none}): cargo install wasm-bindgen-cli --version $want --locked  (about 8 minutes on a cold machine)")
fi
command -v node >/dev/null 2>&1 || missing+=("node (18 or later): apt-get install nodejs")
if [ "${#missing[@]}" -gt 0 ]; then
  echo "js/build.sh: cannot build the package; missing:" >&2
  for item in "${missing[@]}"; do
    echo "  - $item" >&2
  done
  echo "(.ci/js.sh installs all of them)" >&2
  exit 2
fi

profile="${DECISION_WASM_PROFILE:-wasm}"
echo "building the wasm module (a few minutes on a cold build)" >&2
cargo build -p decision-wasm --target wasm32-unknown-unknown --profile "$profile"
dir="$profile"
[ "$profile" = dev ] && dir=debug
target="${CARGO_TARGET_DIR:-target}"
module="$target/wasm32-unknown-unknown/$dir/decision_wasm.wasm"

if command -v wasm-opt >/dev/null 2>&1; then
  # Optimised before wasm-bindgen adds its externref table: wasm-opt 108 (Debian 12) exports
  # the wrong table of a module that has two. The features are rustc's defaults for the target.
  features=(--enable-bulk-memory --enable-sign-ext --enable-nontrapping-float-to-int
            --enable-mutable-globals --enable-reference-types --enable-multivalue --enable-simd)
  optimised="$target/wasm32-unknown-unknown/$dir/decision_wasm.opt.wasm"
  wasm-opt -O3 "${features[@]}" "$module" -o "$optimised"
  module="$optimised"
else
  echo "wasm-opt not found: the module is left as built" >&2
fi

rm -rf js/pkg web/pkg
wasm-bindgen --target nodejs --out-dir js/pkg --out-name decision_wasm "$module"
wasm-bindgen --target web --out-dir web/pkg --out-name decision_wasm "$module"
node -e "require('./js').version()"
echo "decision_wasm_bg.wasm: $(wc -c < js/pkg/decision_wasm_bg.wasm) bytes"

# The CLI the tests compare every document with.
cargo build -q -p decision-cli --bin decision

# The examples the playground offers.
node js/scripts/bundle-examples.js
# The playground colours its editor with the grammar the VS Code extension ships.
node -e "const fs=require('fs');fs.writeFileSync('web/pkg/grammar.js','export default '+fs.readFileSync('editors/grammar/decision.tmLanguage.json','utf8').trim()+';\n')"
