'use strict';
// outcomes.check / validate / report give the CLI's documents on the repository's examples.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const dc = require('..');
const { ROOT, cli, cliJson, read, sameJson } = require('./helpers');

const CONTRACTS = 'examples/outcomes/contracts.json';
const PAIRS = JSON.parse(read(CONTRACTS)).contracts.map((c) => [c.tool, c.method]);
const OUTCOMES = fs.readdirSync(path.join(ROOT, 'examples/outcomes/outcomes')).map((f) => `examples/outcomes/outcomes/${f}`);

for (const file of [CONTRACTS, 'examples/outcomes/bad-contracts.json', 'examples/coding-agent/outcomes.json']) {
  test(`outcomes.check ${file} equals decision outcomes check --format json`, () => {
    sameJson(assert, dc.outcomes.check(read(file), { path: file }), cliJson('outcomes', 'check', file, '--format', 'json'));
  });
}

for (const outcome of OUTCOMES) {
  for (const [tool, method] of PAIRS) {
    test(`outcomes.validate ${path.basename(outcome)} as ${tool}.${method} agrees with the CLI`, () => {
      const run = cli('outcomes', 'validate', CONTRACTS, '--tool', tool, '--method', method, '--outcome', outcome, '--format', 'json');
      const call = () => dc.outcomes.validate(read(CONTRACTS), { path: CONTRACTS, tool, method, outcome: read(outcome) });
      if (run.status === 2) {
        // The CLI refuses the input: the function throws, with the same message.
        assert.throws(call, (e) => e instanceof dc.DecisionError && e.code === 'E_OUTCOME' && run.stderr.includes(e.message.replace(/^outcome/, '')));
        return;
      }
      const result = call();
      sameJson(assert, result.outcome, JSON.parse(run.stdout));
      assert.strictEqual(result.verdict === 'violated', run.status === 1);
    });
  }
}

test('outcomes.validate: a violation is typed, a hold is unchanged', () => {
  const empty = dc.outcomes.validate(read(CONTRACTS), { tool: 'catalog', method: 'find_movies', outcome: JSON.parse(read('examples/outcomes/outcomes/movies-empty.json')) });
  assert.strictEqual(empty.verdict, 'violated');
  assert.strictEqual(empty.outcome.error_type, 'contract_violation');
  assert.strictEqual(empty.outcome.metadata.mismatch, 'min_items_violation');
  const ok = dc.outcomes.validate(read(CONTRACTS), { tool: 'catalog', method: 'find_movies', outcome: read('examples/outcomes/outcomes/movies-ok.json') });
  assert.strictEqual(ok.verdict, 'held');
  assert.deepStrictEqual(ok.outcome, JSON.parse(read('examples/outcomes/outcomes/movies-ok.json')));
});

test('outcomes.validate refuses a contracts file that does not lint, with the first error located', () => {
  assert.throws(
    () => dc.outcomes.validate(read('examples/outcomes/bad-contracts.json'), { tool: 'catalog', method: 'find_movies', outcome: { status: 'ok', value: {} } }),
    (e) => e.code === 'E_CONTRACTS' && Number.isInteger(e.line) && Number.isInteger(e.column) && e.diagnostics.length > 0,
  );
});

test('outcomes.validate: no contract for the tool is a usage error', () => {
  assert.throws(() => dc.outcomes.validate(read(CONTRACTS), { tool: 'nope', method: 'x', outcome: { status: 'ok', value: 1 } }),
    (e) => e.code === 'E_USAGE' && /no contract for tool `nope`/.test(e.message));
});

test('outcomes.report equals decision outcomes report --format json', () => {
  const log = 'examples/outcomes/outcome-log.jsonl';
  const expected = cliJson('outcomes', 'report', log, '--format', 'json');
  sameJson(assert, dc.outcomes.report(read(log)), expected);
  sameJson(assert, dc.outcomes.report(read(log).split('\n').filter(Boolean)), expected);
});
