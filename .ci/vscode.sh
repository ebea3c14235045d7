#!/usr/bin/env bash
# The VS Code extension (editors/vscode): its grammar tested with the engine VS Code uses
# (vscode-textmate + Oniguruma) on the bundled contract, its TypeScript compiled, and the
# .vsix packaged with @vscode/vsce — it must hold the compiled client, the grammar and the
# language client it depends on. npm packages at the versions of package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/../editors/vscode"

npm ci --no-audit --no-fund
npm test
npm run package
listing="$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' decision-contract.vsix)"
for needed in extension/out/extension.js extension/syntaxes/decision.tmLanguage.json \
  extension/node_modules/vscode-languageclient/package.json extension/package.json; do
  grep -qx "$needed" <<<"$listing" || { echo "vscode: $needed is not in the package" >&2; exit 1; }
done
cmp -s ../grammar/decision.tmLanguage.json syntaxes/decision.tmLanguage.json \
  || { echo "vscode: the packaged grammar is not editors/grammar's" >&2; exit 1; }
echo "vscode: ok ($(wc -c < decision-contract.vsix) bytes)"
