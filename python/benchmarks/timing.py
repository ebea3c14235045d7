"""Call overhead of the Python package over the Rust functions behind it, and `verify_log`
against `decision replay --jobs 1`.

    python python/benchmarks/timing.py [--records N] [--decision PATH-TO-RELEASE-decision]

`Contract.frame` and `Contract.evaluate` are timed from Python on the reference-sized inputs
of the Rust benchmarks (the reference contract's `pick_tool` frame with the reference
profile on the benchmarks' full context; `pick_tool`'s answers with five options), and the
same Rust functions are timed in Rust on the same inputs (`_native._rust_timing`); the
difference is what a call from Python adds: reading the arguments into JSON values, finding
the block, and building the returned dicts. `frame*` frames a new state each call (as a host
loop makes them: the same cells, new task, history and last result), so that less of the
returned document is the same as the block's first one. `verify_log` is timed on a generated chained log
against the `decision` binary (build it with `cargo build --release --bin decision`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any, Callable, Dict, List

import decision_contract as dc
from decision_contract import _native

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO.parent / "shared/fixtures/jevloop/DECISION.md"
CONTRACT = REFERENCE if REFERENCE.exists() else REPO / "examples/coding-agent/DECISION.md"

FULL_CONTEXT: Dict[str, Any] = {
    "task": "把 alpha.ts 里的 totalOf 抄到新文件 summary.ts 里",
    "cwd": "/w",
    "files": ["alpha.ts", "beta.ts", "notes.md"],
    "readFiles": ["alpha.ts"],
    "history": [
        {"step": 1, "tool": "list_dir", "input": ".", "result": "alpha.ts\nbeta.ts\nnotes.md"},
        {"step": 2, "tool": "read_file", "input": "alpha.ts", "result": "export function totalOf() {}"},
    ],
    "lastTool": "read_file",
    "lastResult": "export function totalOf() {}",
    "canWrite": True,
    "earlier": "上一轮问的是这些文件各导出了什么",
    "draft": "我把 totalOf 抄过去了。",
}


def best_of(call: Callable[[], Any], number: int, repeat: int = 7) -> float:
    """Microseconds per call, the best of `repeat` runs of `number` calls."""
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6


def answers_for(questions: Dict[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for qid, q in questions.items():
        options = list(q["criteria"])
        rest = 0.2 / (len(options) - 1)
        probabilities = {o: (0.8 if i == 1 else rest) for i, o in enumerate(options)}
        out[qid] = {"type": "choice", "choice": options[1], "confidence": 0.81, "probabilities": probabilities}
    return out


def host_states(first: int, count: int) -> List[Dict[str, Any]]:
    """States as a host loop makes them, one per step: the same cells (the same key objects,
    as a host's literals are) and the same files and tools, with the task, the history's
    results, the last result and the read file new each step (new str objects whose text no
    other step has)."""
    states = []
    for step in range(first, first + count):
        history = [dict(entry, result=f"{entry['result']} ({step})") for entry in FULL_CONTEXT["history"]]
        states.append(dict(FULL_CONTEXT, task=f"{FULL_CONTEXT['task']} #{step}", history=history,
                           lastResult=f"export function totalOf{step}() {{}}", readFiles=[f"alpha{step}.ts"]))
    return states


def overhead(number: int, rounds: int) -> None:
    contract = dc.Contract.parse(CONTRACT.read_bytes(), path=str(CONTRACT))
    frame = contract.frame("pick_tool", FULL_CONTEXT, profile="reference")
    answers = answers_for(frame["questions"])
    assert contract.evaluate("pick_tool", answers)["valid"]
    # The machine is shared: Python and Rust timings are interleaved, and the best of each is kept.
    best: Dict[str, float] = {}

    def keep(name: str, us: float) -> None:
        best[name] = min(best.get(name, us), us)

    for index in range(rounds):
        # frame*: every call of every round frames a state no call framed before.
        states = host_states(index * number, number)
        turn = iter(states)
        cases = [
            ("frame", lambda: contract.frame("pick_tool", FULL_CONTEXT, profile="reference"), "frame", FULL_CONTEXT),
            # Taking the next state (about 0.05 µs) is counted in the Python figure.
            ("frame*", lambda: contract.frame("pick_tool", next(turn), profile="reference"), "frame", states),
            ("evaluate", lambda: contract.evaluate("pick_tool", answers), "evaluate", answers),
        ]
        for name, call, kind, given in cases:
            keep(name + " python", best_of(call, number, repeat=1))
            keep(name + " rust", _native._rust_timing(contract, kind, "pick_tool", given, number) / 1000)
        # The halves of frame's overhead (not of frame*'s: timed apart, over states made in
        # advance, each would be read from memory no cache holds any more).
        for part in ("frame-in", "frame-out"):
            keep(part, _native._rust_timing(contract, part, "pick_tool", FULL_CONTEXT, number) / 1000)
    for name in ("frame", "frame*", "evaluate"):
        python_us, rust_us = best[name + " python"], best[name + " rust"]
        print(f"{name:9} python {python_us:7.2f} µs   rust {rust_us:7.2f} µs   added {python_us - rust_us:6.2f} µs per call")
        if name == "frame":
            print(f"  reading the state {best['frame-in']:.2f} µs, building the returned dicts {best['frame-out']:.2f} µs")
    print("(frame*: a new state each call, as a host loop makes them)")


def write_log(path: Path, records: int) -> None:
    """A chained log of single-node decisions the size of the reference loop's (every
    record's frame compiled by the engine, so every record verifies)."""
    contract = dc.Contract.parse(CONTRACT.read_bytes())
    blocks = [b for b in contract.blocks]
    frames = [contract.frame(b, FULL_CONTEXT, profile="reference") for b in blocks]
    with dc.SessionLog(path, session_id="bench", group_commit=True) as log:
        for i in range(records):
            frame = frames[i % len(frames)]
            artifact = frame["frame"]
            log.append_decision({
                "step": i, "id": artifact["node"], "state": artifact["state"], "frame": artifact,
                "requestDigest": frame["requestDigest"], "sentFrameDigest": artifact["digest"],
                "sentQuestions": frame["questions"], "batchIds": [artifact["node"]],
                "questions": frame["questions"], "answers": {}, "action": "escalate",
                "reason": "bench", "latencyMs": 0, "provider": "bench",
            })
            if i % 1000 == 999:
                log.commit()


def replay(decision: Path, records: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "bench.jsonl"
        write_log(log, records)
        size = log.stat().st_size
        library = []
        cli = []
        for _ in range(rounds):
            started = time.perf_counter()
            document = dc.verify_log(log, jobs=1)
            library.append(time.perf_counter() - started)
            started = time.perf_counter()
            done = subprocess.run([str(decision), "replay", "--format", "json", "--jobs", "1", str(log)],
                                  capture_output=True, check=False)
            cli.append(time.perf_counter() - started)
        assert document["verified"] == records and json.loads(done.stdout)["verified"] == records
        best_library, best_cli = min(library), min(cli)
        print(f"replay   {records} records, {size / 1e6:.0f} MB: verify_log {best_library * 1e3:.0f} ms, "
              f"decision replay --jobs 1 {best_cli * 1e3:.0f} ms ({(best_library / best_cli - 1) * 100:+.1f}%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--number", type=int, default=20000, help="calls per timing run")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved timing rounds (the best is kept)")
    parser.add_argument("--records", type=int, default=50000, help="records in the replayed log")
    parser.add_argument("--decision", type=Path, default=REPO / "target/release/decision")
    args = parser.parse_args()
    print(f"contract {CONTRACT.name}, decision_contract {dc.__version__}")
    overhead(args.number, args.rounds)
    if args.decision.exists():
        replay(args.decision, args.records, args.rounds)
    else:
        print(f"replay: skipped ({args.decision} is missing: cargo build --release --bin decision)")


if __name__ == "__main__":
    main()
