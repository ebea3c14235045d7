'use strict';
// The digests computed in wasm equal the reference's on every shared vector.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const dc = require('..');
const { REFERENCE } = require('./helpers');

// Without the reference files there are no vectors (test/reference.test.js says so).
const vectors = REFERENCE
  ? JSON.parse(fs.readFileSync(path.join(REFERENCE, 'vectors', 'digests.json'), 'utf8'))
  : { frame: [], request: [], stringify: [] };

if (REFERENCE) {
  test('the shared vectors file has every kind of vector', () => {
    assert.ok(vectors.frame.length >= 10 && vectors.request.length >= 5 && vectors.stringify.length >= 5);
  });
}

for (const v of vectors.frame) {
  test(`frame vector ${v.name}`, () => {
    assert.strictEqual(dc.digests.frame(v.node, v.state_json), v.digest);
  });
}

for (const v of vectors.request) {
  test(`request vector ${v.name}`, () => {
    assert.strictEqual(dc.digests.request(v.frame_digest, v.questions_json), v.digest);
  });
}

for (const v of vectors.stringify) {
  test(`stringify vector ${v.name}`, () => {
    const text = dc.digests.stringify(v.input_json);
    assert.strictEqual(text, v.expected);
    assert.strictEqual(crypto.createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16), v.sha256_16);
  });
}

test('digests.bytes is the first 16 hex characters of SHA-256, of a text as of its UTF-8 bytes', () => {
  assert.strictEqual(dc.digests.bytes('abc'), 'ba7816bf8f01cfea');
  assert.strictEqual(dc.digests.bytes(''), 'e3b0c44298fc1c14');
  const text = 'café ⟨untrusted⟩ \u{1F600}';
  const expected = crypto.createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
  assert.strictEqual(dc.digests.bytes(text), expected);
  assert.strictEqual(dc.digests.bytes(new TextEncoder().encode(text)), expected);
  // The frame digest is this digest of its pre-image, `[node, Object.entries(state)]`.
  const state = { task: 'Summarize', files: ['a.py', 'b.py'], step: 2 };
  assert.strictEqual(dc.digests.frame('loop.pickTool', state), dc.digests.bytes(JSON.stringify(['loop.pickTool', Object.entries(state)])));
});

test('digests.bytes refuses what is neither text nor bytes', () => {
  for (const given of [42, null, undefined, { text: 'abc' }]) {
    assert.throws(() => dc.digests.bytes(given), (e) => e.code === 'E_USAGE' && /digests\.bytes: the data must be a string or a Uint8Array/.test(e.message));
  }
});
