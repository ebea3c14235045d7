'use strict';
// Speed in Node: the package's `check` of the reference-sized contract (reference profile),
// `frame` of one block (parse + frame + both digests) and the two digests alone — the same
// inputs as `cargo bench -p decision-wasm --bench surface`, so the ratio is wasm to native for
// the same work. Usage: node js/bench/bench.js [seconds per figure, default 2]
const fs = require('node:fs');
const path = require('node:path');
const dc = require('..');

const root = path.resolve(__dirname, '..', '..');
const shared = process.env.DECISION_REFERENCE_DIR || path.join(root, '..', 'shared');
const reference = fs.readFileSync(path.join(shared, 'fixtures', 'jevloop', 'DECISION.md'), 'utf8');
const referenceBytes = new TextEncoder().encode(reference);
const state = fs.readFileSync(path.join(root, 'js', 'test', 'fixtures', 'coding-state.json'), 'utf8');
const stateObject = JSON.parse(state);
const seconds = Number(process.argv[2] ?? 2);

/** Median time per call over rounds of `seconds / 10`, after a warm-up. */
function measure(name, fn) {
  const end = Date.now() + 300;
  while (Date.now() < end) fn();
  const rounds = [];
  for (let r = 0; r < 10; r += 1) {
    const stop = process.hrtime.bigint() + BigInt(Math.round((seconds / 10) * 1e9));
    let n = 0;
    const start = process.hrtime.bigint();
    let now = start;
    while (now < stop) {
      for (let i = 0; i < 16; i += 1) fn();
      n += 16;
      now = process.hrtime.bigint();
    }
    rounds.push(Number(now - start) / n / 1000);
  }
  rounds.sort((a, b) => a - b);
  const median = rounds[5];
  console.log(`${name.padEnd(32)} ${median.toFixed(2).padStart(9)} µs  (min ${rounds[0].toFixed(2)}, max ${rounds[9].toFixed(2)})`);
  return median;
}

const doc = dc.frame(reference, { block: 'pick_tool', profile: 'reference', state });
const node = doc.frame.node;
const frameState = JSON.stringify(doc.frame.state);
const questions = JSON.stringify(doc.questions);

console.log(`decision-contract ${dc.version()} · node ${process.version} · reference file ${referenceBytes.length} bytes`);
measure('check reference (string)', () => dc.check(reference, { profile: 'reference' }));
measure('check reference (bytes)', () => dc.check(referenceBytes, { profile: 'reference' }));
measure('frame pick_tool', () => dc.frame(referenceBytes, { block: 'pick_tool', profile: 'reference', state: stateObject }));
measure('digests pick_tool', () => dc.digests.request(dc.digests.frame(node, frameState), questions));
