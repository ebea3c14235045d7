#!/usr/bin/env bash
# Builds the `decision-contract` package (js/pkg/, for Node) and the playground's module
# (web/pkg/, for browsers) from crates/wasm, and the `decision` binary the tests compare with.
# Needs: the wasm32-unknown-unknown target and wasm-bindgen-cli at the crate's exact version
# (`.ci/js.sh` installs both); wasm-opt (Debian's `binaryen`) is used when present.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
cd "$root"

profile="${DECISION_WASM_PROFILE:-wasm}"
cargo build -q -p decision-wasm --target wasm32-unknown-unknown --profile "$profile"
dir="$profile"
[ "$profile" = dev ] && dir=debug
target="${CARGO_TARGET_DIR:-target}"
module="$target/wasm32-unknown-unknown/$dir/decision_wasm.wasm"

want="$(sed -n 's/^wasm-bindgen = "=\(.*\)"$/\1/p' crates/wasm/Cargo.toml)"
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')"
if [ "$have" != "$want" ]; then
  echo "wasm-bindgen-cli $want is needed (found: ${have:-none}): cargo install wasm-bindgen-cli --version $want --locked" >&2
  exit 2
fi

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
