'use strict';
// verifyLog and verifyRecord give the CLI's replay verdicts, on the repository's session log
// and on a log the coding host writes now, intact and tampered with.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const dc = require('..');
const { cli, cliJson, read, sameJson, scratch } = require('./helpers');

const TRIAGE_LOG = 'examples/support-triage/session.jsonl';

/** A fresh session log of the reference coding host on the bundled workspace (offline). */
function codingLog() {
  const dir = scratch('records');
  const log = path.join(dir, 'session.jsonl');
  const run = cli('run', '--provider', 'heuristic', '--workdir', 'examples/workspace', '--log', log,
    '--task', 'Which file defines the function `apply_discount`, and what does it return?');
  assert.strictEqual(run.status, 0, run.stderr);
  return { dir, log };
}

const coding = codingLog();

/** Compare verifyLog with `decision replay --format json` on the log at `file`. */
function compare(file, shown, verbose) {
  const args = ['replay', '--format', 'json', '--jobs', '1'];
  if (verbose) args.push('--verbose');
  const expected = cliJson(...args, file);
  const text = fs.readFileSync(path.resolve(__dirname, '..', '..', file), 'utf8');
  sameJson(assert, dc.verifyLog(text, { path: shown ?? file, verbose }), expected);
  return expected;
}

for (const verbose of [false, true]) {
  test(`verifyLog ${TRIAGE_LOG}${verbose ? ' --verbose' : ''} equals decision replay --format json`, () => {
    const doc = compare(TRIAGE_LOG, undefined, verbose);
    assert.strictEqual(doc.mismatch, 0);
  });

  test(`verifyLog of a coding-host run${verbose ? ' --verbose' : ''} equals decision replay`, () => {
    const doc = compare(coding.log, coding.log, verbose);
    assert.ok(doc.records >= 7, `records: ${doc.records}`);
    assert.strictEqual(doc.chain, 'intact');
  });
}

test('verifyLog checks approvals as decision replay does', () => {
  const dir = scratch('records-approvals');
  const workdir = path.join(dir, 'ws');
  fs.mkdirSync(workdir);
  fs.writeFileSync(path.join(workdir, 'keep.txt'), 'precious');
  const log = path.join(dir, 'run.jsonl');
  const halted = cli('run', '--task', 'Delete keep.txt', '--workdir', workdir, '--allow-delete',
    '--approvals', 'queue', '--log', log);
  assert.strictEqual(halted.status, 1, halted.stderr);
  const [pending] = cliJson('approvals', log, '--format', 'json');
  assert.strictEqual(cli('approve', log, pending.id).status, 0);
  const resumed = cli('resume', log, '--workdir', workdir, '--allow-delete');
  assert.strictEqual(resumed.status, 0, resumed.stderr);
  const doc = compare(log, log, false);
  assert.deepStrictEqual(doc.files[0].approvals, { requested: 1, answered: 1, used: 1, problems: [] });
});

test('verifyLog takes the log as text, bytes or lines alike', () => {
  const text = read(TRIAGE_LOG);
  const fromText = dc.verifyLog(text);
  sameJson(assert, dc.verifyLog(new TextEncoder().encode(text)), fromText);
  sameJson(assert, dc.verifyLog(text.split('\n').filter((l) => l.length > 0)), fromText);
});

/** Writes a changed copy of the coding log and returns its path. */
function tampered(name, change) {
  const lines = fs.readFileSync(coding.log, 'utf8').split('\n');
  const file = path.join(coding.dir, name);
  fs.writeFileSync(file, change(lines).join('\n'));
  return file;
}

test('a changed sent-frame digest is a mismatch, and the chain is broken, as replay says', () => {
  const file = tampered('digest.jsonl', (lines) => {
    const at = lines.findIndex((l) => l.includes('"sentFrameDigest":"'));
    lines[at] = lines[at].replace(/"sentFrameDigest":"([0-9a-f])/, (m, c) => `"sentFrameDigest":"${c === '0' ? '1' : '0'}`);
    return lines;
  });
  const doc = compare(file, file, false);
  assert.ok(doc.mismatch >= 1);
  assert.strictEqual(doc.chain, 'broken');
});

test('a deleted line breaks the chain, as replay says', () => {
  const file = tampered('deleted.jsonl', (lines) => lines.filter((_, i) => i !== 3));
  assert.strictEqual(compare(file, file, false).chain, 'broken');
});

test('a torn last line is counted and reported, as replay says', () => {
  const file = tampered('torn.jsonl', (lines) => {
    const kept = lines.filter((l) => l.length > 0);
    const last = kept.pop();
    return [...kept, last.slice(0, Math.floor(last.length / 2))];
  });
  const doc = compare(file, file, false);
  assert.ok(doc.files[0].torn_tail !== null);
});

test('verifyRecord verifies every decision of the log on its own', () => {
  const replayed = dc.verifyLog(fs.readFileSync(coding.log, 'utf8'), { verbose: true });
  const lines = fs.readFileSync(coding.log, 'utf8').split('\n');
  let decisions = 0;
  for (const result of replayed.results) {
    const line = lines[result.line - 1];
    const verdict = dc.verifyRecord(line);
    assert.strictEqual(verdict.status, result.status, `line ${result.line}`);
    assert.deepStrictEqual(verdict.checks, result.checks);
    // The event alone (the `e` of the line) gives the same verdict.
    assert.deepStrictEqual(dc.verifyRecord(JSON.stringify(JSON.parse(line).e)).checks, result.checks);
    decisions += 1;
  }
  assert.ok(decisions >= 7);
});

test('verifyRecord finds a changed request digest', () => {
  const line = fs.readFileSync(coding.log, 'utf8').split('\n').find((l) => l.includes('"requestDigest":"'));
  const changed = line.replace(/"requestDigest":"([0-9a-f])/, (m, c) => `"requestDigest":"${c === '0' ? '1' : '0'}`);
  assert.strictEqual(dc.verifyRecord(line).status === 'mismatch', false);
  const verdict = dc.verifyRecord(changed);
  assert.strictEqual(verdict.status, 'mismatch');
  assert.strictEqual(verdict.checks.find((c) => c.name === 'request').status, 'fail');
});

test('verifyRecord refuses what is not a decision record', () => {
  assert.throws(() => dc.verifyRecord('{"type":"phase"}'), (e) => e.code === 'E_RECORD' && /not a decision event/.test(e.message));
  assert.throws(() => dc.verifyRecord('{"type":"decision","id":"x"}'), (e) => e.code === 'E_RECORD' && /not a record/.test(e.message));
  assert.throws(() => dc.verifyRecord('not json'), (e) => e.code === 'E_RECORD');
});
