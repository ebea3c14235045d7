// The extension ships the one grammar of editors/grammar (the playground reads the same file):
// copied into the package, never edited here.
const fs = require('node:fs');
const path = require('node:path');

const source = path.join(__dirname, '..', '..', 'grammar', 'decision.tmLanguage.json');
const target = path.join(__dirname, '..', 'syntaxes', 'decision.tmLanguage.json');
fs.mkdirSync(path.dirname(target), { recursive: true });
fs.copyFileSync(source, target);
