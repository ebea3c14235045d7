// Syntax colouring for the editor, from the project's one grammar
// (editors/grammar/decision.tmLanguage.json, which the VS Code extension ships too): each
// line is matched against the grammar's top-level patterns in order, and the first that
// matches colours its capture groups (a capture's own patterns colour inside it). The
// grammar's patterns are single-line and written to read the same in JavaScript.

/** The rule a pattern names (`{include: "#name"}` resolved), recursively flattened. */
function resolve(grammar, pattern) {
  if (pattern.include) return resolve(grammar, grammar.repository[pattern.include.slice(1)]);
  if (pattern.patterns && !pattern.match) return pattern.patterns.flatMap((p) => resolve(grammar, p));
  return [pattern];
}

/** A compiled rule: its RegExp (with group indices) and its captures. */
function compile(grammar, rule, flags) {
  return { regex: new RegExp(rule.match, flags), name: rule.name, captures: rule.captures ?? {}, grammar };
}

/** The class of a scope: its first two parts (`keyword.control.action.decision` → `tm-keyword-control`). */
const classOf = (scope) => `tm-${scope.split('.').slice(0, 2).join('-')}`;

/** Spans `[start, end, scope]` of `text` from the first-matching rule (or every match of a
 *  capture's rules). */
function spansOf(rules, text, offset, everyMatch) {
  const spans = [];
  if (everyMatch) {
    let position = 0;
    while (position < text.length) {
      let best = null;
      for (const rule of rules) {
        rule.regex.lastIndex = position;
        const m = rule.regex.exec(text);
        if (m && m[0].length > 0 && (best === null || m.index < best.m.index)) best = { rule, m };
      }
      if (best === null) break;
      spans.push(...spansOfMatch(best.rule, best.m, offset));
      position = best.m.index + best.m[0].length;
    }
    return spans;
  }
  for (const rule of rules) {
    const m = rule.regex.exec(text);
    if (m) return spansOfMatch(rule, m, offset);
  }
  return spans;
}

function spansOfMatch(rule, m, offset) {
  const spans = [];
  if (rule.name) spans.push([offset + m.index, offset + m.index + m[0].length, rule.name]);
  for (const [group, capture] of Object.entries(rule.captures)) {
    const at = m.indices[Number(group)];
    if (!at) continue;
    if (capture.name) spans.push([offset + at[0], offset + at[1], capture.name]);
    if (capture.patterns) {
      const inner = capture.patterns.flatMap((p) => resolve(rule.grammar, p)).map((r) => compile(rule.grammar, r, 'dgu'));
      spans.push(...spansOf(inner, m.input.slice(at[0], at[1]), offset + at[0], true));
    }
  }
  return spans;
}

const escape = (text) => text.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]);

/** A highlighter for `grammar`: `html(text)` is the text as HTML with coloured spans. */
export function highlighter(grammar) {
  const rules = grammar.patterns.flatMap((p) => resolve(grammar, p)).map((r) => compile(grammar, r, 'du'));
  const line = (text) => {
    // The innermost scope wins: spans are applied widest first, narrower ones override.
    const spans = spansOf(rules, text, 0, false).sort((a, b) => (b[1] - b[0]) - (a[1] - a[0]));
    const scopeAt = new Array(text.length).fill(null);
    for (const [start, end, scope] of spans) for (let i = start; i < end; i++) scopeAt[i] = scope;
    let out = '';
    let i = 0;
    while (i < text.length) {
      let j = i;
      while (j < text.length && scopeAt[j] === scopeAt[i]) j++;
      const piece = escape(text.slice(i, j));
      out += scopeAt[i] ? `<span class="${classOf(scopeAt[i])}">${piece}</span>` : piece;
      i = j;
    }
    return out;
  };
  return { html: (text) => text.split('\n').map(line).join('\n') };
}
