'use strict';
// Refusals are thrown `DecisionError`s carrying a stable code and the location.
const test = require('node:test');
const assert = require('node:assert');
const dc = require('..');
const { cli, read } = require('./helpers');

const BROKEN = 'js/test/fixtures/broken.md';
const TRIAGE = 'examples/support-triage/DECISION.md';
const state = JSON.parse(read('examples/support-triage/state.json'));

function refused(call, check) {
  let caught;
  try {
    call();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof dc.DecisionError, `expected a DecisionError, got ${caught}`);
  assert.ok(caught instanceof Error);
  check(caught);
  return caught;
}

test('frame of a contract that does not parse: the first error diagnostic, located, and the CLI message', () => {
  const e = refused(() => dc.frame(read(BROKEN), { path: BROKEN, block: 'is_urgent', state: { task: 't' } }), (e) => {
    assert.strictEqual(e.code, 'DC0104');
    assert.strictEqual(e.path, BROKEN);
    assert.strictEqual(e.line, 16);
    assert.strictEqual(e.column, 12);
    assert.deepStrictEqual(e.diagnostics.map((d) => d.code), ['DC0104', 'DC0108']);
  });
  const run = cli('frame', BROKEN, '--block', 'is_urgent', '--state', 'examples/support-triage/state.json');
  assert.strictEqual(run.status, 2);
  assert.strictEqual(run.stderr.trim(), `error[${e.code}]: ${e.message}`);
});

test('evaluate of a contract that does not parse is refused the same way', () => {
  refused(() => dc.evaluate(read(BROKEN), { block: 'is_urgent', answers: {} }), (e) => {
    assert.strictEqual(e.code, 'DC0104');
    assert.strictEqual(e.line, 16);
    assert.match(e.message, /^DECISION\.md does not parse/);
  });
});

test('an unknown block is a usage error naming the blocks there are', () => {
  refused(() => dc.frame(read(TRIAGE), { path: TRIAGE, block: 'nope', state }), (e) => {
    assert.strictEqual(e.code, 'E_USAGE');
    assert.match(e.message, /no block `nope` in examples\/support-triage\/DECISION\.md \(blocks: is_actionable, route, refund_risk, reply_ready\)/);
  });
  refused(() => dc.evaluate(read(TRIAGE), { block: 'nope', answers: {} }), (e) => assert.strictEqual(e.code, 'E_USAGE'));
});

test('a frame the host cannot compile is E_FRAME', () => {
  // reply_ready reads `host:ticketFacts`, a projection only the host has.
  refused(() => dc.frame(read(TRIAGE), { block: 'reply_ready', state }), (e) => {
    assert.strictEqual(e.code, 'E_FRAME');
    assert.match(e.message, /reply_ready/);
  });
});

test('missing, mistyped and unknown options are usage errors', () => {
  const text = read(TRIAGE);
  refused(() => dc.frame(text, { state }), (e) => assert.match(e.message, /`block` is required/));
  refused(() => dc.frame(text, { block: 'route' }), (e) => assert.match(e.message, /`state` is required/));
  refused(() => dc.frame(text, { block: 'route', state: [1, 2] }), (e) => assert.match(e.message, /expected a JSON object/));
  refused(() => dc.frame(text, { block: 'route', state: '{not json' }), (e) => assert.match(e.message, /not JSON/));
  refused(() => dc.frame(text, { block: 'route', state, marking: 'loud' }), (e) => assert.match(e.message, /unknown marking `loud`/));
  refused(() => dc.frame(text, { block: 'route', state, blok: 'x' }), (e) => assert.match(e.message, /unknown field `blok`/));
  refused(() => dc.check(text, { profile: 'other' }), (e) => assert.match(e.message, /unknown profile `other`/));
  refused(() => dc.check(text, { profile: 'reference', capabilities: {} }), (e) => assert.match(e.message, /not both/));
  refused(() => dc.check(text, { capabilities: '{"positions": 3}' }), (e) => assert.match(e.message, /^capabilities:/));
  refused(() => dc.check(42), (e) => assert.match(e.message, /must be a string or a Uint8Array/));
  refused(() => dc.check(text, 'path'), (e) => assert.match(e.message, /options must be an object/));
  for (const e of [dc.check, dc.frame]) assert.strictEqual(typeof e, 'function');
  refused(() => dc.verifyLog([1, 2]), (e) => assert.match(e.message, /every line must be a string/));
});

test('a gate that does not apply is refused, all or nothing', () => {
  refused(() => dc.evaluate(read(TRIAGE), { block: 'refund_risk', answers: {}, gates: ['refund_risk.nothing=0.5'] }), (e) => {
    assert.strictEqual(e.code, 'E_USAGE');
  });
});

test('every code is documented in the type declarations', () => {
  const declarations = read('js/index.d.ts');
  for (const code of ['E_USAGE', 'E_FRAME', 'E_RECORD', 'E_CONTRACTS', 'E_OUTCOME']) assert.ok(declarations.includes(code), code);
});
