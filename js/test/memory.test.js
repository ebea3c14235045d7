'use strict';
// A first large call in a fresh module grows memory once, up front: it costs about what the
// same call costs once memory has grown. Before, the allocator grew memory a page at a time
// and the engine copied it on each growth: the first call with 300,000 answers took 26 times
// as long as the second (15.7 s against 0.6 s), and a million answers did not finish in 120 s.
// What is compared is the growth pattern (a ratio in one process), not a speed target.
const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const CHILD = path.join(__dirname, 'fixtures', 'first-large-call.js');

test('a first large call in a fresh module costs about what a later one does', () => {
  const child = spawnSync(process.execPath, [CHILD], { encoding: 'utf8', timeout: 120000 });
  assert.strictEqual(child.status, 0, child.stderr);
  const { first, second, action } = JSON.parse(child.stdout);
  assert.strictEqual(action, 'use_tool');
  assert.ok(first <= 5 * second + 250, `first call ${first.toFixed(0)} ms, second ${second.toFixed(0)} ms`);
});
