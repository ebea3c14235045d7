'use strict';
// One door: every case of tests/front-doors/cases.json given to the `decision` command and to
// this package gives the same document (member for member, in order) or the same refusal
// code. python/tests/test_front_doors.py holds the Python package to the same cases, so all
// three agree.
const test = require('node:test');
const assert = require('node:assert');
const dc = require('..');
const { cli, read } = require('./helpers');

const CASES = JSON.parse(read('tests/front-doors/cases.json')).cases;

/** The command line that asks the CLI what `c` asks. */
function cliArgs(c) {
  const repeat = (flag, values) => (values ?? []).flatMap((value) => [flag, value]);
  const optional = (flag, value) => (value === undefined ? [] : [flag, value]);
  switch (c.command) {
    case 'check':
      return ['check', '--format', 'json', ...optional('--profile', c.profile), ...optional('--capabilities', c.capabilities),
        ...(c.deny_warnings ? ['--deny', 'warnings'] : []), c.contract];
    case 'frame':
      return ['frame', c.contract, '--block', c.block, '--state', c.state, '--format', 'json', ...optional('--profile', c.profile),
        ...optional('--marking', c.marking), ...repeat('--untrusted', c.untrusted)];
    case 'eval':
      return ['eval', c.contract, '--block', c.block, '--answers', c.answers, '--format', 'json', ...repeat('--gate', c.gates),
        ...optional('--candidates', c.candidates)];
    case 'log':
      return ['replay', '--format', 'json', c.log];
    case 'outcomes-check':
      return ['outcomes', 'check', '--format', 'json', c.contracts];
    case 'outcomes-validate':
      return ['outcomes', 'validate', '--format', 'json', c.contracts, '--tool', c.tool, '--method', c.method, '--outcome', c.outcome];
    case 'outcomes-report':
      return ['outcomes', 'report', '--format', 'json', c.log];
    default:
      throw new Error(`unknown command ${c.command}`);
  }
}

/** `['document', JSON text]` or `['error', code]`, from the CLI. */
function fromCli(c) {
  const run = cli(...cliArgs(c));
  // A refusal is the last line; lines before it may list what it is about (lint errors).
  const refused = /^error\[([A-Z0-9_]+)\]: /m.exec(run.stderr);
  if (refused) {
    assert.strictEqual(run.status, 2);
    assert.strictEqual(run.stdout, '');
    return ['error', refused[1]];
  }
  assert.ok(run.status === 0 || run.status === 1, run.stderr);
  const document = JSON.parse(run.stdout);
  return ['document', JSON.stringify(c.command === 'check' ? document.files[0] : document)];
}

/** What this package gives for `c` (throws what it refuses with). Inputs go as their text. */
function library(c) {
  switch (c.command) {
    case 'check':
      return dc.check(read(c.contract), {
        path: c.contract, profile: c.profile, capabilities: c.capabilities && read(c.capabilities), denyWarnings: c.deny_warnings,
      });
    case 'frame':
      return dc.frame(read(c.contract), {
        path: c.contract, block: c.block, state: read(c.state), profile: c.profile, untrusted: c.untrusted, marking: c.marking,
      });
    case 'eval':
      return dc.evaluate(read(c.contract), {
        path: c.contract, block: c.block, answers: read(c.answers), gates: c.gates, candidates: c.candidates && read(c.candidates),
      });
    case 'log':
      return dc.verifyLog(read(c.log), { path: c.log });
    case 'outcomes-check':
      return dc.outcomes.check(read(c.contracts), { path: c.contracts });
    case 'outcomes-validate':
      return dc.outcomes.validate(read(c.contracts), {
        path: c.contracts, tool: c.tool, method: c.method, outcome: read(c.outcome),
      }).outcome;
    case 'outcomes-report':
      return dc.outcomes.report(read(c.log));
    default:
      throw new Error(`unknown command ${c.command}`);
  }
}

function fromLibrary(c) {
  try {
    return ['document', JSON.stringify(library(c))];
  } catch (e) {
    if (!(e instanceof dc.DecisionError)) throw e;
    assert.ok(e.code, e.message);
    return ['error', e.code];
  }
}

test('the cases are many, named once, and cover every refusal the front ends share', () => {
  assert.ok(CASES.length >= 40, `${CASES.length} cases`);
  assert.strictEqual(new Set(CASES.map((c) => c.name)).size, CASES.length);
  const codes = new Set(CASES.map((c) => c.expect));
  for (const code of ['E_USAGE', 'E_FRAME', 'E_OUTCOME', 'E_CONTRACTS', 'E_REPORT', 'DC0104', 'DC0108', 'document']) {
    assert.ok(codes.has(code), code);
  }
});

for (const c of CASES) {
  test(`the CLI and the package give the same: ${c.name}`, () => {
    const fromTheCli = fromCli(c);
    if (c.expect === 'document') assert.strictEqual(fromTheCli[0], 'document', fromTheCli[1]);
    else assert.deepStrictEqual(fromTheCli, ['error', c.expect]);
    assert.deepStrictEqual(fromLibrary(c), fromTheCli);
  });
}
