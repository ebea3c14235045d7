'use strict';
// check and explain give the CLI's documents on every contract the repository has.
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const dc = require('..');
const { REFERENCE, cli, cliJson, read, sameJson, ROOT } = require('./helpers');

const shared = (name) => path.relative(ROOT, path.join(REFERENCE, 'fixtures', 'jevloop', name));
const CONTRACTS = [
  'examples/coding-agent/DECISION.md',
  'examples/support-triage/DECISION.md',
  // The reference's contracts when its files are present (test/reference.test.js says when not).
  ...(REFERENCE ? [shared('DECISION.md'), shared('custom-graph.DECISION.md')] : []),
  'js/test/fixtures/broken.md',
];

for (const file of CONTRACTS) {
  test(`check ${file} equals decision check --format json`, () => {
    const expected = cliJson('check', '--format', 'json', file).files[0];
    sameJson(assert, dc.check(read(file), { path: file }), expected);
  });

  test(`check ${file} --profile reference equals the CLI`, () => {
    const expected = cliJson('check', '--format', 'json', '--profile', 'reference', file).files[0];
    sameJson(assert, dc.check(read(file), { path: file, profile: 'reference' }), expected);
  });

  test(`explain ${file}: text equals decision explain`, () => {
    const explained = dc.explain(read(file), { path: file });
    assert.strictEqual(explained.text, cli('explain', file).stdout);
    assert.strictEqual(explained.blocks.length, dc.check(read(file)).summary.blocks);
  });
}

test('check with a capability report (object and text) equals --capabilities', () => {
  const file = 'examples/support-triage/DECISION.md';
  const report = 'examples/support-triage/capabilities.json';
  const expected = cliJson('check', '--format', 'json', '--capabilities', report, file).files[0];
  sameJson(assert, dc.check(read(file), { path: file, capabilities: read(report) }), expected);
  sameJson(assert, dc.check(read(file), { path: file, capabilities: JSON.parse(read(report)) }), expected);
});

test('check --deny warnings', () => {
  const file = 'js/test/fixtures/broken.md';
  const expected = cliJson('check', '--format', 'json', '--deny', 'warnings', file).files[0];
  sameJson(assert, dc.check(read(file), { path: file, denyWarnings: true }), expected);
});

test('check without a path names none, and bytes check like text', () => {
  const text = read('examples/coding-agent/DECISION.md');
  const result = dc.check(text);
  assert.strictEqual(result.path, null);
  assert.strictEqual(result.ok, true);
  sameJson(assert, dc.check(new TextEncoder().encode(text)), result);
});

test('invalid UTF-8 bytes are reported at their line as DC0100, as the CLI does', () => {
  const bytes = Buffer.concat([Buffer.from(read('examples/coding-agent/DECISION.md').split('\n').slice(0, 3).join('\n')), Buffer.from([0x0a, 0xff, 0x0a])]);
  const result = dc.check(new Uint8Array(bytes));
  const invalid = result.diagnostics.find((d) => d.code === 'DC0100');
  assert.ok(invalid, JSON.stringify(result.diagnostics));
  assert.strictEqual(invalid.line, 4);
});

test('long and short texts in turn check alike as strings and as bytes', () => {
  const base = read('examples/coding-agent/DECISION.md');
  // Longer than the reused encoding buffer holds (2^20 UTF-16 units), then short again.
  const long = `${base}\n\nA long note — ${'é'.repeat(1 << 20)}\n`;
  for (const text of [base, long, 'schema: decision-contract/v1\n', base]) {
    sameJson(assert, dc.check(text), dc.check(new TextEncoder().encode(text)));
  }
  assert.strictEqual(dc.check(long).ok, true);
});
