'use strict';
// The playground's static server: requests built to break it are answered, and it keeps
// serving afterwards.
const test = require('node:test');
const assert = require('node:assert');
const { serve } = require('../serve.js');

test('malformed paths get a 404 and the server keeps serving', async () => {
  const { server, url } = await serve(0);
  try {
    for (const bad of ['%', '%ff', '%00', 'a%00b.html', '%E0%A4%A', '..%2f..%2fetc%2fpasswd']) {
      const response = await fetch(url + bad);
      assert.strictEqual(response.status, 404, bad);
      await response.text();
    }
    const page = await fetch(url);
    assert.strictEqual(page.status, 200);
    assert.match(await page.text(), /DECISION\.md playground/);
  } finally {
    server.close();
  }
});

test('the favicon is served, as the page links it and at /favicon.ico', async () => {
  const { server, url } = await serve(0);
  try {
    for (const name of ['favicon.svg', 'favicon.ico']) {
      const response = await fetch(url + name);
      assert.strictEqual(response.status, 200, name);
      assert.strictEqual(response.headers.get('content-type'), 'image/svg+xml');
      assert.match(await response.text(), /<svg/);
    }
  } finally {
    server.close();
  }
});
