// The playground: an editor checked as you type, the explain table, a frame preview and a
// policy panel, all computed in the page by the engine (engine.js). No framework, no server.
import * as engine from './engine.js';
import examples from './pkg/examples.js';
import grammar from './pkg/grammar.js';
import { highlighter } from './highlight.js';

const $ = (id) => document.getElementById(id);
const source = $('source');
const gutter = $('gutter');
const highlight = $('highlight');
const colours = highlighter(grammar);

/** The text drawn behind the editor, coloured by the grammar, scrolled with it. */
function paint() {
  // A final newline keeps the last line's height when the text ends in one.
  highlight.innerHTML = `${colours.html(source.value)}\n`;
  highlight.scrollTop = source.scrollTop;
  highlight.scrollLeft = source.scrollLeft;
}

/** The last contract that parsed, as explain data (the frame and policy panels use it). */
let explained = null;
let current = examples[0];

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'class') node.className = value;
    else if (key.startsWith('data-')) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// ---- editor and diagnostics ---------------------------------------------------------------

function renderGutter(diagnostics) {
  const lines = source.value.split('\n').length;
  const marks = new Map();
  for (const d of diagnostics) {
    if (marks.get(d.line) !== 'error') marks.set(d.line, d.severity);
  }
  gutter.replaceChildren(
    ...Array.from({ length: lines }, (_, i) => {
      const line = i + 1;
      const severity = marks.get(line);
      const title = diagnostics.filter((d) => d.line === line).map((d) => `${d.code} ${d.message}`).join('\n');
      return element('div', { class: severity ?? '', 'data-line': line, title }, line);
    }),
  );
  gutter.scrollTop = source.scrollTop;
}

function goTo(line, column) {
  const lines = source.value.split('\n');
  let offset = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i += 1) offset += lines[i].length + 1;
  offset += Math.max(0, column - 1);
  source.focus();
  source.setSelectionRange(offset, offset);
  source.scrollTop = Math.max(0, (line - 5) * 18);
}

function renderDiagnostics(result) {
  const list = $('diagnostics');
  list.replaceChildren(
    ...result.diagnostics.map((d) => {
      const item = element(
        'li',
        { class: d.severity, 'data-line': d.line, 'data-code': d.code },
        element('span', { class: 'where' }, `line ${d.line}:${d.column} `),
        element('span', { class: 'code' }, d.code),
        ` ${d.severity} (${d.layer} layer${d.block ? `, block ${d.block}` : ''}): ${d.message}`,
        d.help ? element('span', { class: 'help' }, `help: ${d.help}`) : null,
      );
      item.addEventListener('click', () => goTo(d.line, d.column));
      return item;
    }),
  );
  const errors = result.diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = result.diagnostics.length - errors;
  const verdict = $('verdict');
  verdict.textContent = result.ok ? `ok — ${warnings} warnings` : `${errors} errors, ${warnings} warnings`;
  verdict.className = `verdict ${result.ok ? 'ok' : 'failed'}`;
}

// ---- explain ------------------------------------------------------------------------------

function renderExplain(doc) {
  $('headline').textContent = `${doc.title ?? 'DECISION.md'} · schema ${doc.schema ?? '(none)'} · ${doc.headline}`;
  const rows = doc.blocks.map((b) =>
    element(
      'tr',
      { 'data-block': b.id },
      element('td', {}, element('code', {}, b.id), b.gate ? element('div', { class: 'gate' }, 'authorisation gate') : null),
      element('td', {}, b.line),
      element('td', {}, b.kind, element('div', {}, b.decided_by === 'code' ? 'decided by code' : 'decision model')),
      element('td', {}, element('code', {}, b.position), b.dynamic ? element('div', {}, `dynamic: ${b.dynamic.provider}(${b.dynamic.reads.join(', ')})`) : null),
      element('td', {}, element('ul', {}, b.questions.map((q) =>
        element('li', {}, element('code', {}, q.id), ` (${q.type}): ${q.ask} — `, q.options.map((o) => o.name).join(', '))))),
      element('td', {}, element('ul', { class: 'rules' }, b.policy.map((r) => element('li', {}, element('code', {}, r.rule), ` → ${r.action}`)))),
      element('td', {}, b.frame
        ? element('ul', {}, b.frame.fields.map((f) => element('li', {}, `+ ${f.key} ≤ ${f.bound}${f.projection ? ` (${f.projection})` : ''}`)),
          b.frame.excluded.map((e) => element('li', {}, `− ${e.field}`)))
        : '—'),
    ),
  );
  $('explain-table').tBodies[0].replaceChildren(...rows);
}

function fillBlocks(select, blocks, preferred) {
  const previous = select.value;
  select.replaceChildren(...blocks.map((b) => element('option', { value: b.id }, b.id)));
  const ids = blocks.map((b) => b.id);
  select.value = ids.includes(previous) ? previous : ids.includes(preferred) ? preferred : (ids[0] ?? '');
}

// ---- frame preview ------------------------------------------------------------------------

function renderFrame() {
  const out = $('frame-output');
  if (!explained) {
    out.replaceChildren(element('p', { class: 'error-box' }, 'The contract does not parse: fix the errors first.'));
    return;
  }
  const untrusted = $('frame-untrusted').value.split(',').map((s) => s.trim()).filter(Boolean);
  const options = {
    path: current.path,
    block: $('frame-block').value,
    state: $('frame-state').value,
    marking: $('frame-marking').value,
  };
  if ($('frame-reference').checked) options.profile = 'reference';
  else options.untrusted = untrusted;
  try {
    const doc = engine.frame(source.value, options);
    const f = doc.frame;
    const stateText = JSON.stringify(f.state, null, 2);
    const pre = element('pre', { id: 'frame-state-view' });
    // Untrusted values are shown highlighted: the model sees them wrapped in markers.
    for (const [key, value] of Object.entries(f.state)) {
      const line = `${JSON.stringify(key)}: ${JSON.stringify(value, null, 2)}\n`;
      pre.append(f.untrusted.includes(key) ? element('span', { class: 'untrusted-mark', 'data-key': key }, line) : line);
    }
    if (!stateText || stateText === '{}') pre.append('{}');
    const list = (items, show) => (items.length ? items.map(show).join(', ') : '—');
    out.replaceChildren(
      element('dl', {},
        element('dt', {}, 'node'), element('dd', {}, f.node),
        element('dt', {}, 'frame digest'), element('dd', { id: 'frame-digest' }, f.digest),
        element('dt', {}, 'request digest'), element('dd', { id: 'request-digest' }, doc.requestDigest),
        element('dt', {}, 'untrusted'), element('dd', { id: 'frame-untrusted-list' }, list(f.untrusted, (k) => k)),
        element('dt', {}, 'truncated'), element('dd', { id: 'frame-truncated' }, list(f.truncated, (t) => `${t.key} (${t.from} → ${t.to})`)),
        element('dt', {}, 'unfilled'), element('dd', {}, list(f.unfilled, (u) => `${u.key} (cell ${u.from})`)),
        element('dt', {}, 'absent'), element('dd', {}, list(f.absent, (a) => a.key)),
        element('dt', {}, 'excluded'), element('dd', {}, list(f.excluded, ([cell]) => cell)),
      ),
      element('h2', {}, 'What the model sees'),
      pre,
      element('h2', {}, 'Questions'),
      element('pre', {}, JSON.stringify(doc.questions, null, 2)),
    );
  } catch (e) {
    out.replaceChildren(element('p', { class: 'error-box', id: 'frame-error' }, `${e.code ?? 'error'}${e.line ? ` at line ${e.line}` : ''}: ${e.message}`));
  }
}

// ---- policy panel -------------------------------------------------------------------------

function slider(id, label, value) {
  const input = element('input', { type: 'range', min: 0, max: 1, step: 0.01, value, id });
  const shown = element('output', { htmlFor: id }, Number(value).toFixed(2));
  input.addEventListener('input', () => {
    shown.textContent = Number(input.value).toFixed(2);
    renderPolicyResult();
  });
  return element('label', {}, label, input, shown);
}

function picker(id, label, options) {
  const select = element('select', { id }, options.map((o) => element('option', { value: o }, o)));
  select.addEventListener('change', renderPolicyResult);
  return element('label', {}, label, select);
}

function renderPolicyQuestions() {
  const box = $('policy-questions');
  const block = explained?.blocks.find((b) => b.id === $('policy-block').value);
  if (!block) {
    box.replaceChildren();
    renderPolicyResult();
    return;
  }
  box.replaceChildren(
    ...block.questions.map((q) => {
      const id = `q-${q.id}`;
      const options = q.options.map((o) => o.name);
      const controls =
        q.type === 'noul'
          ? [slider(`${id}-p`, 'probability of true', 0.5)]
          : [picker(`${id}-pick`, q.type === 'score' ? 'level' : 'choice', options), slider(`${id}-p`, 'its probability', 0.8)];
      return element('div', { class: 'question', 'data-question': q.id, 'data-type': q.type },
        element('h3', {}, element('code', {}, q.id), ` (${q.type}) ${q.ask}`), controls);
    }),
  );
  renderPolicyResult();
}

/** The answers the controls describe, in the wire format a provider returns. */
function answersFromControls(block) {
  const answers = {};
  for (const q of block.questions) {
    const p = Number($(`q-${q.id}-p`).value);
    if (q.type === 'noul') {
      answers[q.id] = { noul: p };
      continue;
    }
    const options = q.options.map((o) => o.name);
    const picked = $(`q-${q.id}-pick`).value;
    // The picked option gets p; the others share the rest evenly.
    const rest = options.length > 1 ? (1 - p) / (options.length - 1) : 0;
    const probabilities = Object.fromEntries(options.map((o) => [o, o === picked ? p : rest]));
    answers[q.id] = q.type === 'score'
      ? { score: Number(picked), probabilities, confidence: p }
      : { choice: picked, probabilities, confidence: p };
  }
  return answers;
}

function renderPolicyResult() {
  const out = $('policy-result');
  const block = explained?.blocks.find((b) => b.id === $('policy-block').value);
  if (!block) {
    out.replaceChildren(element('p', {}, explained ? 'No block.' : 'The contract does not parse: fix the errors first.'));
    return;
  }
  try {
    const result = engine.evaluate(source.value, { path: current.path, block: block.id, answers: answersFromControls(block) });
    const rule = result.rule === null ? null : block.policy[result.rule];
    const margin = result.margin;
    const invalid = result.valid
      ? []
      : [element('ul', { class: 'invalid' }, result.problems.map((p) => element('li', {}, `${p.question}: ${p.problem}`)))];
    out.replaceChildren(
      element('div', { class: 'action', id: 'policy-action' }, result.action),
      element('p', { id: 'policy-rule' }, rule ? `rule ${result.rule + 1}: ${rule.rule} → ${rule.action}` : 'no rule fired'),
      element('p', { id: 'policy-reason' }, `reason: ${result.reason}`),
      element('p', { id: 'policy-margin' }, margin
        ? `margin ${margin.margin.toFixed(4)} (${margin.question} = ${margin.value} against threshold ${margin.threshold})`
        : 'margin: none'),
      ...invalid,
    );
  } catch (e) {
    out.replaceChildren(element('p', { class: 'error-box', id: 'policy-error' }, `${e.code ?? 'error'}: ${e.message}`));
  }
}

// ---- wiring -------------------------------------------------------------------------------

function update() {
  const result = engine.check(source.value, { path: current.path, profile: current.profile ?? undefined });
  renderGutter(result.diagnostics);
  renderDiagnostics(result);
  const parses = !result.diagnostics.some((d) => d.severity === 'error' && d.layer === 'parse');
  explained = parses ? engine.explain(source.value, { path: current.path }) : null;
  if (explained) {
    renderExplain(explained);
    fillBlocks($('frame-block'), explained.blocks.filter((b) => b.frame), current.block);
    const policyBlock = $('policy-block').value;
    fillBlocks($('policy-block'), explained.blocks.filter((b) => b.questions.length > 0), current.block);
    if ($('policy-block').value !== policyBlock || !$('policy-questions').children.length) renderPolicyQuestions();
    else renderPolicyResult();
  } else {
    $('explain-table').tBodies[0].replaceChildren();
    $('headline').textContent = 'The contract does not parse: the table appears once it does.';
    renderPolicyResult();
  }
  renderFrame();
  document.body.dataset.checked = String(Number(document.body.dataset.checked ?? 0) + 1);
}

let pending = 0;
function scheduleUpdate() {
  clearTimeout(pending);
  pending = setTimeout(update, 60);
}

/** The example picker shows which example the editor holds, and `(edited)` once its text
 *  differs from the example's: the label never claims text the editor no longer has. */
function labelExamples() {
  const edited = source.value !== current.text;
  for (const option of $('example').options) {
    const example = examples[Number(option.value)];
    option.textContent = example === current && edited ? `${example.title} (edited)` : example.title;
  }
}

function loadExample(example) {
  current = example;
  source.value = example.text;
  paint();
  labelExamples();
  $('frame-state').value = example.state;
  $('frame-untrusted').value = example.untrusted.join(', ');
  $('frame-reference').checked = example.profile === 'reference';
  $('policy-questions').replaceChildren();
  $('policy-block').replaceChildren();
  $('frame-block').replaceChildren();
  update();
}

async function main() {
  await engine.load();
  $('engine-version').textContent = `engine ${engine.version()}`;
  const picker = $('example');
  picker.replaceChildren(...examples.map((e, i) => element('option', { value: i }, e.title)));
  picker.addEventListener('change', () => loadExample(examples[Number(picker.value)]));
  source.addEventListener('input', () => {
    paint();
    labelExamples();
    scheduleUpdate();
  });
  source.addEventListener('scroll', () => {
    gutter.scrollTop = source.scrollTop;
    highlight.scrollTop = source.scrollTop;
    highlight.scrollLeft = source.scrollLeft;
  });
  for (const id of ['frame-block', 'frame-marking', 'frame-reference']) $(id).addEventListener('change', renderFrame);
  for (const id of ['frame-state', 'frame-untrusted']) $(id).addEventListener('input', renderFrame);
  $('policy-block').addEventListener('change', renderPolicyQuestions);
  for (const tab of document.querySelectorAll('.tabs button')) {
    tab.addEventListener('click', () => {
      for (const other of document.querySelectorAll('.tabs button')) other.classList.toggle('active', other === tab);
      for (const panel of document.querySelectorAll('.tab')) panel.classList.toggle('active', panel.id === `tab-${tab.dataset.tab}`);
    });
  }
  loadExample(examples[0]);
  $('status').textContent = 'ready';
  document.body.dataset.ready = 'true';
}

main().catch((e) => {
  $('status').textContent = `the engine failed to load: ${e.message}`;
});
