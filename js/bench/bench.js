'use strict';
// Speed in Node: the package's `check` of the reference-sized contract (reference profile),
// `frame` of one block (parse + frame + both digests), the two digests alone, `evaluate` of the
// support-triage example's `refund_risk` answers and `verifyLog` of its session log — the same
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
const triage = fs.readFileSync(path.join(root, 'examples', 'support-triage', 'DECISION.md'));
const refundAnswers = JSON.parse(fs.readFileSync(path.join(root, 'examples', 'support-triage', 'answers-refund_risk.json'), 'utf8'));
const session = fs.readFileSync(path.join(root, 'examples', 'support-triage', 'session.jsonl'));
measure('evaluate refund_risk', () => dc.evaluate(triage, { block: 'refund_risk', answers: refundAnswers }));
measure('verifyLog support-triage session', () => dc.verifyLog(session));
const digests = measure('digests pick_tool', () => dc.digests.request(dc.digests.frame(node, frameState), questions));

// The floor of the SHA-bound figures: SHA-256 in wasm alone (`digests.bytes`) over the bytes
// they hash — the two digests' pre-images; each line of the log (its chain) and each decision
// record's two pre-images — with no JSON read or written.
const framePreimage = JSON.stringify([node, Object.entries(doc.frame.state)]);
const requestPreimage = JSON.stringify([doc.frame.digest, doc.questions]);
if (dc.digests.bytes(framePreimage) !== doc.frame.digest || dc.digests.bytes(requestPreimage) !== doc.requestDigest) {
  throw new Error('the floor does not hash the digests\' pre-images');
}
const digestsFloor = measure('  floor: SHA-256 of the same bytes', () => {
  dc.digests.bytes(framePreimage);
  dc.digests.bytes(requestPreimage);
});
const logHashed = [];
const require_ = (ok, what) => {
  if (!ok) throw new Error(`the floor does not hash ${what}`);
};
for (const line of session.toString('utf8').split('\n').filter((l) => l.length > 0)) {
  logHashed.push(line);
  const event = JSON.parse(line).e;
  if (event && event.type === 'decision' && event.state && event.sentQuestions) {
    const frameText = JSON.stringify([event.id, Object.entries(event.state)]);
    const requestText = JSON.stringify([event.sentFrameDigest, event.sentQuestions]);
    require_(dc.digests.bytes(frameText) === event.sentFrameDigest, `the frame pre-image of ${event.id}`);
    require_(dc.digests.bytes(requestText) === event.requestDigest, `the request pre-image of ${event.id}`);
    logHashed.push(frameText, requestText);
  }
}
const verify = measure('verifyLog (again, for the floor)', () => dc.verifyLog(session));
const verifyFloor = measure('  floor: SHA-256 of the same bytes', () => {
  for (const text of logHashed) dc.digests.bytes(text);
});
console.log(`digests at ${((digestsFloor / digests) * 100).toFixed(0)}% of their SHA-256 floor, verifyLog at ${((verifyFloor / verify) * 100).toFixed(0)}%`);
