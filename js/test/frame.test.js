'use strict';
// frame and evaluate give the CLI's documents (digests included) on the repository's examples.
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const dc = require('..');
const { REFERENCE: REFERENCE_DIR, ROOT, cliJson, read, sameJson } = require('./helpers');

const CODING = 'examples/coding-agent/DECISION.md';
const CODING_STATE = 'js/test/fixtures/coding-state.json';
const TRIAGE = 'examples/support-triage/DECISION.md';
const TRIAGE_STATE = 'examples/support-triage/state.json';
// The reference's contract when its files are present (test/reference.test.js says when not).
const REFERENCE = REFERENCE_DIR && path.relative(ROOT, path.join(REFERENCE_DIR, 'fixtures', 'jevloop', 'DECISION.md'));
const CODING_BLOCKS = ['needs_tool', 'pick_tool', 'pick_input', 'grade_risk', 'step_ok', 'is_done', 'can_deliver'];

for (const contract of [CODING, REFERENCE].filter(Boolean)) {
  for (const block of CODING_BLOCKS) {
    for (const marking of ['provenance', 'reference']) {
      test(`frame ${contract} ${block} (reference profile, ${marking} marking) equals decision frame`, () => {
        const expected = cliJson('frame', contract, '--block', block, '--state', CODING_STATE, '--profile', 'reference',
          '--marking', marking, '--format', 'json');
        // The state as its text (key order exactly as written) and as an object give the same frame.
        for (const state of [read(CODING_STATE), JSON.parse(read(CODING_STATE))]) {
          const actual = dc.frame(read(contract), { path: contract, block, state, profile: 'reference', marking });
          sameJson(assert, actual, expected);
        }
      });
    }
  }
}

test('the coding frames carry untrusted marks and truncation', () => {
  const doc = dc.frame(read(CODING), { block: 'step_ok', state: read(CODING_STATE), profile: 'reference' });
  assert.deepStrictEqual(doc.frame.truncated, [{ key: 'output', from: 573, to: 500 }]);
  assert.ok(doc.frame.untrusted.includes('output'));
  assert.match(doc.frame.state.output, /^⟨untrusted tool output/);
  assert.match(doc.frame.digest, /^[0-9a-f]{16}$/);
  assert.match(doc.requestDigest, /^[0-9a-f]{16}$/);
});

const TRIAGE_UNTRUSTED = ['subject', 'body', 'earlier'];
for (const block of ['is_actionable', 'route', 'refund_risk']) {
  test(`frame ${TRIAGE} ${block} with untrusted cells equals decision frame`, () => {
    const flags = TRIAGE_UNTRUSTED.flatMap((cell) => ['--untrusted', cell]);
    const expected = cliJson('frame', TRIAGE, '--block', block, '--state', TRIAGE_STATE, ...flags, '--format', 'json');
    const actual = dc.frame(read(TRIAGE), { path: TRIAGE, block, state: read(TRIAGE_STATE), untrusted: TRIAGE_UNTRUSTED });
    sameJson(assert, actual, expected);
  });
}

const EVALUATIONS = [
  { block: 'is_actionable', answers: 'examples/support-triage/answers-is_actionable.json' },
  { block: 'route', answers: 'examples/support-triage/answers.json', candidates: 'examples/support-triage/candidates.json' },
  { block: 'route', answers: 'examples/support-triage/answers.json' },
  { block: 'refund_risk', answers: 'examples/support-triage/answers-refund_risk.json' },
  { block: 'refund_risk', answers: 'examples/support-triage/answers-refund_risk.json', gates: ['refund_risk.refund_risk[0]=3'] },
  { block: 'reply_ready', answers: 'examples/support-triage/answers-reply_ready.json' },
  { block: 'is_actionable', answers: 'js/test/fixtures/answers-invalid.json' },
];

for (const { block, answers, candidates, gates = [] } of EVALUATIONS) {
  const name = `${block} ${path.basename(answers)}${candidates ? ' with candidates' : ''}${gates.length ? ` ${gates}` : ''}`;
  test(`evaluate ${name} equals decision eval`, () => {
    const args = ['eval', TRIAGE, '--block', block, '--answers', answers, '--format', 'json'];
    if (candidates) args.push('--candidates', candidates);
    for (const gate of gates) args.push('--gate', gate);
    const expected = cliJson(...args);
    const options = { path: TRIAGE, block, answers: JSON.parse(read(answers)), gates };
    if (candidates) options.candidates = JSON.parse(read(candidates));
    sameJson(assert, dc.evaluate(read(TRIAGE), options), expected);
  });
}

test('evaluate: an invalid answer fails closed with escalate and typed problems', () => {
  const result = dc.evaluate(read(TRIAGE), { block: 'is_actionable', answers: { is_actionable: { noul: 1.5 } } });
  assert.strictEqual(result.valid, false);
  assert.strictEqual(result.action, 'escalate');
  assert.strictEqual(result.problems[0].question, 'is_actionable');
});

test('evaluate: the rule that fired and the margin', () => {
  const result = dc.evaluate(read(TRIAGE), { block: 'is_actionable', answers: { is_actionable: { noul: 0.94 } } });
  assert.strictEqual(result.action, 'continue');
  assert.strictEqual(result.rule, 0);
  assert.strictEqual(result.reason, 'prob:is_actionable >= 0.6 → continue');
  assert.ok(Math.abs(result.margin.margin - 0.34) < 1e-9, JSON.stringify(result.margin));
});
