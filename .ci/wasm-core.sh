#!/usr/bin/env bash
# The pure crates build for wasm32-unknown-unknown (docs/architecture.md, "Invariants"):
# decision-core, decision-protocol and decision-outcomes, and decision-runtime without its
# default features (no HTTP providers).
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-unknown-unknown
cargo build --locked -p decision-core -p decision-protocol -p decision-outcomes --target wasm32-unknown-unknown
if grep -q '^http = ' crates/runtime/Cargo.toml; then
  cargo build --locked -p decision-runtime --no-default-features --target wasm32-unknown-unknown
fi
