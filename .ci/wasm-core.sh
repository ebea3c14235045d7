#!/usr/bin/env bash
# The pure crates build for wasm32-unknown-unknown (docs/architecture.md, "Invariants"):
# decision-core always, and decision-runtime without default features once it has the `http`
# feature that keeps its HTTP providers out of that build.
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-unknown-unknown
cargo build --locked -p decision-core --target wasm32-unknown-unknown
if grep -q '^http = ' crates/runtime/Cargo.toml; then
  cargo build --locked -p decision-runtime --no-default-features --target wasm32-unknown-unknown
fi
