'use strict';
// The reference conformance tests (check, frame and digests against the reference's own files)
// run when DECISION_REFERENCE_DIR (default ../shared beside the repository) holds the files;
// without them they are not registered, and this file prints the one line that says so.
const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { ROOT, SHARED, REFERENCE, REFERENCE_MISSING, scratch } = require('./helpers');

if (!REFERENCE) {
  console.log(`reference conformance tests skipped: ${SHARED} lacks ${REFERENCE_MISSING.join(', ')}; `
    + 'set DECISION_REFERENCE_DIR to the directory holding fixtures/jevloop/ and vectors/digests.json to run them');
}

// (Not inside the run it starts: that run has no reference files by design.)
test('without the reference files the suite skips their tests and says so once', { skip: Boolean(process.env.DECISION_TEST_NESTED) }, () => {
  const empty = scratch('no-reference-files');
  const files = ['check', 'frame', 'digests', 'reference'].map((name) => path.join('test', `${name}.test.js`));
  // Without NODE_TEST_CONTEXT: the inner runner then reports as text, not to this runner.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const run = spawnSync(process.execPath, ['--test', ...files], {
    cwd: path.join(ROOT, 'js'), encoding: 'utf8', timeout: 300_000,
    env: { ...env, DECISION_REFERENCE_DIR: empty, DECISION_TEST_NESTED: '1' },
  });
  assert.strictEqual(run.status, 0, run.stdout + run.stderr);
  assert.doesNotMatch(run.stdout + run.stderr, /ENOENT/);
  const lines = run.stdout.split('\n').filter((line) => line.includes('reference conformance tests skipped'));
  assert.strictEqual(lines.length, 1, run.stdout);
  assert.ok(lines[0].includes(`${empty} lacks fixtures/jevloop/DECISION.md`), lines[0]);
});
