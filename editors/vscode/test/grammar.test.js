// The grammar against the bundled contract, tokenized by the engine VS Code uses
// (vscode-textmate with Oniguruma): headings, keys, frame fields and exclusions, options and
// policy rules get their scopes. And every pattern is a JavaScript RegExp too, so the
// playground can read the same file.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const textmate = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const root = path.join(__dirname, '..', '..', '..');
const grammarPath = path.join(root, 'editors', 'grammar', 'decision.tmLanguage.json');

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async () => textmate.parseRawGrammar(fs.readFileSync(grammarPath, 'utf8'), grammarPath),
  });
  return registry.loadGrammar('source.decision');
}

/** The innermost scope of each non-blank token of `line`, as `text → scope`. */
function scopes(grammar, line) {
  const { tokens } = grammar.tokenizeLine(line, textmate.INITIAL);
  return tokens
    .map((t) => [line.slice(t.startIndex, t.endIndex), t.scopes[t.scopes.length - 1]])
    .filter(([text]) => text.trim() !== '');
}

function scopeOf(grammar, line, text) {
  const found = scopes(grammar, line).find(([t]) => t === text);
  return found && found[1];
}

test('the bundled contract is coloured by what each part is', async () => {
  const grammar = await loadGrammar();
  const contract = fs.readFileSync(path.join(root, 'examples', 'coding-agent', 'DECISION.md'), 'utf8');
  const lines = contract.split('\n');
  const line = (start) => lines.find((l) => l.startsWith(start));
  assert.equal(scopeOf(grammar, line('schema:'), 'decision-contract/v1'), 'string.unquoted.schema.decision');
  assert.equal(scopeOf(grammar, line('## needs_tool'), 'needs_tool'), 'entity.name.section.decision');
  assert.equal(scopeOf(grammar, line('kind: noul'), 'kind'), 'keyword.other.key.decision');
  assert.equal(scopeOf(grammar, line('kind: noul'), 'noul'), 'constant.other.value.decision');
  const field = line('  + earlier');
  assert.equal(scopeOf(grammar, field, 'earlier'), 'variable.other.cell.decision');
  assert.equal(scopeOf(grammar, field, '200'), 'constant.numeric.bound.decision');
  assert.equal(scopeOf(grammar, field, 'earlierMaybe'), 'support.function.projection.decision');
  assert.equal(scopeOf(grammar, field, '——'), 'punctuation.separator.reason.decision');
  assert.equal(scopeOf(grammar, line('  - cwd'), 'cwd'), 'variable.other.cell.excluded.decision');
  const rule = line('  - prob:needs_tool');
  assert.equal(scopeOf(grammar, rule, 'prob'), 'support.function.probe.decision');
  assert.equal(scopeOf(grammar, rule, 'needs_tool'), 'variable.other.question.decision');
  assert.equal(scopeOf(grammar, rule, '>='), 'keyword.operator.comparison.decision');
  assert.equal(scopeOf(grammar, rule, '0.5'), 'constant.numeric.threshold.decision');
  assert.equal(scopeOf(grammar, rule, '→'), 'keyword.operator.arrow.decision');
  assert.equal(scopeOf(grammar, rule, 'use_tool'), 'keyword.control.action.decision');
  assert.equal(scopeOf(grammar, line('- true —'), 'true'), 'constant.other.option.decision');
  // Prose is left alone.
  const prose = line('The question is whether');
  assert.ok(scopes(grammar, prose).every(([, scope]) => scope === 'source.decision'), JSON.stringify(scopes(grammar, prose)));
});

test('every pattern of the grammar is a JavaScript regular expression too', () => {
  const grammar = JSON.parse(fs.readFileSync(grammarPath, 'utf8'));
  const patterns = [];
  const walk = (node) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      if (typeof node.match === 'string') patterns.push(node.match);
      Object.values(node).forEach(walk);
    }
  };
  walk(grammar);
  assert.ok(patterns.length >= 8, `${patterns.length} patterns`);
  for (const pattern of patterns) assert.doesNotThrow(() => new RegExp(pattern, 'u'), pattern);
});
