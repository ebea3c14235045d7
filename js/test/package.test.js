'use strict';
// The package loads with `require` and `import`, and reports the engine's version.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { cli, ROOT } = require('./helpers');

const EXPORTS = ['check', 'explain', 'frame', 'evaluate', 'verifyRecord', 'verifyLog', 'version', 'engineInfo'];

test('require("./js") gives every function', () => {
  const dc = require(path.join(ROOT, 'js'));
  for (const name of EXPORTS) assert.strictEqual(typeof dc[name], 'function', name);
  for (const name of ['check', 'validate', 'report']) assert.strictEqual(typeof dc.outcomes[name], 'function', name);
});

test('import gives the same functions', async () => {
  const dc = await import(path.join(ROOT, 'js', 'index.mjs'));
  for (const name of EXPORTS) assert.strictEqual(typeof dc[name], 'function', name);
  assert.strictEqual(typeof dc.default.outcomes.validate, 'function');
});

test('version() is the CLI\'s and the package\'s version', () => {
  const dc = require(path.join(ROOT, 'js'));
  assert.strictEqual(`decision ${dc.version()}`, cli('--version').stdout.trim());
  assert.strictEqual(dc.version(), JSON.parse(fs.readFileSync(path.join(ROOT, 'js', 'package.json'), 'utf8')).version);
  const info = dc.engineInfo();
  assert.ok(info.contract_schemas.includes('decision-contract/v1'));
  assert.strictEqual(info.record_schema, 'decision-record/v1');
});

test('the type declarations name every export', () => {
  const declarations = fs.readFileSync(path.join(ROOT, 'js', 'index.d.ts'), 'utf8');
  for (const name of [...EXPORTS, 'outcomes', 'digests', 'DecisionError']) {
    assert.match(declarations, new RegExp(`export (function|const|class) ${name}\\b`), name);
  }
});
