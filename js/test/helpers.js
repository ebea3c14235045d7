'use strict';
// Shared by the tests: the repository's paths, and the `decision` CLI whose JSON every
// function is compared with.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const SHARED = process.env.DECISION_REFERENCE_DIR
  ? path.resolve(process.env.DECISION_REFERENCE_DIR)
  : path.resolve(ROOT, '..', 'shared');
/** The reference conformance files the suite compares with, when they are present
 *  (DECISION_REFERENCE_DIR, or ../shared beside the repository): else `null`, and the tests
 *  that need them are not registered; test/reference.test.js prints the one line saying so. */
const REFERENCE_FILES = ['fixtures/jevloop/DECISION.md', 'fixtures/jevloop/custom-graph.DECISION.md', 'vectors/digests.json'];
const REFERENCE_MISSING = REFERENCE_FILES.filter((file) => !fs.existsSync(path.join(SHARED, file)));
const REFERENCE = REFERENCE_MISSING.length === 0 ? SHARED : null;
const CLI = process.env.DECISION_BIN
  || path.join(process.env.CARGO_TARGET_DIR ? path.resolve(ROOT, process.env.CARGO_TARGET_DIR) : path.join(ROOT, 'target'), 'debug', 'decision');

/** Runs the CLI from the repository root; returns its exit code and output. */
function cli(...args) {
  const run = spawnSync(CLI, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (run.error) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The CLI's JSON document for `args` (which must include `--format json` where needed). */
function cliJson(...args) {
  const run = cli(...args);
  if (!run.stdout.trim()) throw new Error(`decision ${args.join(' ')} printed nothing: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** A repository file's text (a path relative to the root). */
function read(relative) {
  return fs.readFileSync(path.join(ROOT, relative), 'utf8');
}

/** Deep equality that also holds the key order (JSON.stringify of both). */
function sameJson(assert, actual, expected, message) {
  assert.deepStrictEqual(actual, expected, message);
  assert.strictEqual(JSON.stringify(actual), JSON.stringify(expected), `${message ?? ''} (key order)`);
}

/** A scratch directory under the package's test output. */
function scratch(name) {
  const dir = path.join(ROOT, 'js', 'test-output', name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

module.exports = { ROOT, SHARED, REFERENCE, REFERENCE_MISSING, CLI, cli, cliJson, read, sameJson, scratch };
