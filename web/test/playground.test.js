'use strict';
// The playground in a real browser (Debian's chromium through playwright-core), served from a
// loopback static server: a broken contract shows its diagnostics at the right lines as it
// is typed; fixed, it gets the explain table and a policy result; a frame preview shows the
// digest, the untrusted marks and the truncation. Screenshots go to web/test-output/.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { serve } = require('../serve');

const OUTPUT = path.join(__dirname, '..', 'test-output');
const CHROMIUM = process.env.CHROMIUM || ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));

const BROKEN = `# Ticket urgency

schema: decision-contract/v1

## is_urgent

kind: noul
when: step-start —— before anything else is done with a ticket

ask: The ticket needs an answer within the hour

- true — the customer cannot work until it is answered
- false — it can wait for the normal queue

frame:
  + task   0x10   —— the ticket text decides its urgency

policy:
  - prob:is_urgent >= 0.7 → escalat
  - else → answer
`;

const FIXED = BROKEN.replace('0x10', '400').replace('→ escalat', '→ escalate');

let browser;
let server;
let page;

test.before(async () => {
  fs.mkdirSync(OUTPUT, { recursive: true });
  const started = await serve(0);
  server = started.server;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const failures = [];
  page.on('pageerror', (e) => failures.push(e));
  page.on('requestfailed', (r) => failures.push(new Error(`request failed: ${r.url()}`)));
  // No request may leave the loopback server.
  await page.route('**/*', (route) => (route.request().url().startsWith(started.url) ? route.continue() : route.abort()));
  await page.goto(started.url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  assert.deepStrictEqual(failures, []);
});

test.after(async () => {
  await browser?.close();
  server?.close();
});

/** Waits until the page has checked the editor's text at least once more than `before`. */
async function checkedAfter(before) {
  await page.waitForFunction((n) => Number(document.body.dataset.checked) > n, before, { timeout: 10000 });
}

const checkedCount = () => page.evaluate(() => Number(document.body.dataset.checked));

test('the bundled examples load, and the first is checked clean', async () => {
  const titles = await page.$$eval('#example option', (options) => options.map((o) => o.textContent));
  assert.ok(titles.length >= 3, titles.join(' | '));
  assert.match(await page.textContent('#verdict'), /^ok/);
  assert.ok((await page.$$('#explain-table tbody tr')).length >= 4);
});

test('the editor is coloured by the grammar the VS Code extension ships, and follows edits', async () => {
  // The text drawn behind the editor is the editor's text, exactly.
  const same = await page.evaluate(() => document.getElementById('highlight').textContent === `${document.getElementById('source').value}\n`);
  assert.ok(same, 'the highlight shows the editor text');
  const actions = await page.$$eval('#highlight .tm-keyword-control', (spans) => spans.map((s) => s.textContent));
  assert.ok(actions.length >= 2, actions.join(' | '));
  assert.ok(await page.$('#highlight .tm-entity-name'), 'block headings are coloured');
  await page.fill('#source', 'schema: decision-contract/v1\n## gate\npolicy:\n  - prob:gate >= 0.5 → stop\n');
  const coloured = await page.$$eval('#highlight span', (spans) => spans.map((s) => [s.className, s.textContent]));
  assert.deepStrictEqual(coloured.find(([, text]) => text === 'stop'), ['tm-keyword-control', 'stop']);
  assert.deepStrictEqual(coloured.find(([, text]) => text === 'gate' ), ['tm-entity-name', 'gate']);
  assert.ok(coloured.some(([cls, text]) => cls === 'tm-variable-other' && text === 'gate'), JSON.stringify(coloured));
});

test('typing a broken contract shows each diagnostic at its line', async () => {
  const before = await checkedCount();
  await page.fill('#source', '');
  // Typed, not pasted: the diagnostics follow the keystrokes.
  await page.type('#source', BROKEN.slice(0, 200), { delay: 0 });
  await page.fill('#source', BROKEN);
  await checkedAfter(before);
  await page.waitForSelector('#diagnostics li[data-code="DC0104"]');
  const items = await page.$$eval('#diagnostics li', (lis) => lis.map((li) => ({ line: Number(li.dataset.line), code: li.dataset.code })));
  assert.deepStrictEqual(items.find((d) => d.code === 'DC0104'), { line: 16, code: 'DC0104' });
  assert.deepStrictEqual(items.find((d) => d.code === 'DC0108'), { line: 19, code: 'DC0108' });
  assert.ok(await page.$('#gutter div[data-line="16"].error'), 'line 16 is marked in the gutter');
  assert.ok(await page.$('#gutter div[data-line="19"].error'), 'line 19 is marked in the gutter');
  assert.strictEqual(await page.$('#gutter div[data-line="15"].error'), null);
  assert.match(await page.textContent('#diagnostics li[data-code="DC0108"]'), /did you mean `escalate`\?/);
  assert.match(await page.textContent('#verdict'), /errors/);
  await page.screenshot({ path: path.join(OUTPUT, 'broken.png') });
});

test('fixed, the contract gets the explain table and a policy result', async () => {
  const before = await checkedCount();
  await page.fill('#source', FIXED);
  await checkedAfter(before);
  assert.match(await page.textContent('#verdict'), /^ok/);
  assert.strictEqual(await page.$$eval('#diagnostics li', (l) => l.length), 0);
  const row = await page.textContent('#explain-table tbody tr[data-block="is_urgent"]');
  assert.match(row, /is_urgent/);
  assert.match(row, /prob:is_urgent >= 0\.7/);

  await page.click('.tabs button[data-tab="policy"]');
  await page.fill('#q-is_urgent-p', '0.9');
  await page.dispatchEvent('#q-is_urgent-p', 'input');
  assert.strictEqual(await page.textContent('#policy-action'), 'escalate');
  assert.match(await page.textContent('#policy-rule'), /rule 1: prob:is_urgent >= 0\.7 → escalate/);
  assert.match(await page.textContent('#policy-margin'), /margin 0\.2000 \(is_urgent = 0\.9 against threshold 0\.7\)/);

  await page.fill('#q-is_urgent-p', '0.3');
  await page.dispatchEvent('#q-is_urgent-p', 'input');
  assert.strictEqual(await page.textContent('#policy-action'), 'answer');
  assert.match(await page.textContent('#policy-rule'), /rule 2: else → answer/);
});

test('the example picker says when the text was edited, and loading an example clears it', async () => {
  // The earlier tests replaced the first example's text.
  const label = () => page.$eval('#example', (select) => select.options[select.selectedIndex].textContent);
  assert.match(await label(), / \(edited\)$/);
  await page.selectOption('#example', { index: 1 });
  assert.doesNotMatch(await label(), /edited/);
  assert.strictEqual(await page.$$eval('#example option', (options) => options.filter((o) => o.textContent.includes('edited')).length), 0);
  await page.type('#source', ' ');
  assert.match(await label(), / \(edited\)$/);
});

test('the explain table stays inside its pane at 1,400 px for every example', async () => {
  const count = await page.$$eval('#example option', (options) => options.length);
  for (let index = 0; index < count; index += 1) {
    await page.selectOption('#example', { index });
    await page.click('.tabs button[data-tab="explain"]');
    const sizes = await page.$eval('#explain-table', (table) => ({
      table: table.scrollWidth, pane: table.parentElement.clientWidth, page: document.documentElement.scrollWidth,
      viewport: document.documentElement.clientWidth,
    }));
    assert.ok(sizes.table <= sizes.pane && sizes.page <= sizes.viewport, `example ${index}: ${JSON.stringify(sizes)}`);
  }
  await page.screenshot({ path: path.join(OUTPUT, 'explain.png') });
});

test('the frame preview shows the digest, untrusted marks and truncation', async () => {
  await page.selectOption('#example', { label: 'Coding agent (the reference host profile)' });
  await page.waitForFunction(() => document.querySelector('#frame-block').value === 'step_ok');
  await page.click('.tabs button[data-tab="frame"]');
  assert.match(await page.textContent('#frame-digest'), /^[0-9a-f]{16}$/);
  assert.match(await page.textContent('#request-digest'), /^[0-9a-f]{16}$/);
  assert.match(await page.textContent('#frame-truncated'), /output \(573 → 500\)/);
  assert.match(await page.textContent('#frame-untrusted-list'), /output/);
  assert.match(await page.textContent('#frame-state-view .untrusted-mark[data-key="output"]'), /untrusted tool output/);
  await page.screenshot({ path: path.join(OUTPUT, 'frame.png') });
});

test('the policy panel on a score gate and a choice', async () => {
  await page.selectOption('#example', { label: 'Support-ticket triage (host positions, a dynamic block, a score gate)' });
  await page.click('.tabs button[data-tab="policy"]');
  await page.selectOption('#policy-block', 'refund_risk');
  await page.selectOption('#q-refund_risk-pick', '2');
  assert.strictEqual(await page.textContent('#policy-action'), 'ask_human');
  await page.selectOption('#q-refund_risk-pick', '0');
  assert.strictEqual(await page.textContent('#policy-action'), 'auto');
  await page.selectOption('#policy-block', 'route');
  await page.selectOption('#q-queue-pick', 'billing');
  await page.fill('#q-queue-p', '0.5');
  await page.dispatchEvent('#q-queue-p', 'input');
  assert.strictEqual(await page.textContent('#policy-action'), 'escalate');
  await page.fill('#q-queue-p', '0.85');
  await page.dispatchEvent('#q-queue-p', 'input');
  assert.strictEqual(await page.textContent('#policy-action'), 'use');
  assert.strictEqual(await page.$('#policy-result .invalid'), null);
  assert.doesNotMatch(await page.textContent('#policy-result'), /null|undefined/);
  await page.screenshot({ path: path.join(OUTPUT, 'playground.png') });
  if (process.env.PLAYGROUND_SCREENSHOT) fs.copyFileSync(path.join(OUTPUT, 'playground.png'), process.env.PLAYGROUND_SCREENSHOT);
});
