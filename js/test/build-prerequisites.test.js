'use strict';
// js/build.sh checks what it needs before it builds anything: with wasm-bindgen-cli missing
// (or at another version) it names it and the command that installs it, and fails within
// seconds instead of after the wasm build (or silently, as `set -o pipefail` once made it).
const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, scratch } = require('./helpers');

const WANT = /^wasm-bindgen = "=(.*)"$/m.exec(fs.readFileSync(path.join(ROOT, 'crates', 'wasm', 'Cargo.toml'), 'utf8'))[1];
const INSTALL = `cargo install wasm-bindgen-cli --version ${WANT} --locked`;

/** A PATH like this process's, without any wasm-bindgen: each directory holding one is replaced
 *  by a copy of its links without it; `fakeDir` (if given) comes first. */
function pathWithoutWasmBindgen(dir, fakeDir) {
  const entries = [];
  for (const [index, entry] of (process.env.PATH || '').split(path.delimiter).entries()) {
    if (!entry || !fs.existsSync(path.join(entry, 'wasm-bindgen'))) {
      entries.push(entry);
      continue;
    }
    const shadow = path.join(dir, `path-${index}`);
    fs.mkdirSync(shadow);
    for (const name of fs.readdirSync(entry)) {
      if (!name.startsWith('wasm-bindgen')) fs.symlinkSync(path.join(entry, name), path.join(shadow, name));
    }
    entries.push(shadow);
  }
  return [fakeDir, ...entries].filter(Boolean).join(path.delimiter);
}

/** Runs js/build.sh with `PATH`; a build that started would run past the timeout. */
function build(PATH) {
  const started = Date.now();
  const run = spawnSync('bash', [path.join(ROOT, 'js', 'build.sh')], {
    cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, PATH },
  });
  return { ...run, seconds: (Date.now() - started) / 1000 };
}

function assertRefused(run, found) {
  assert.strictEqual(run.signal, null, `build.sh did not stop before building (${run.seconds} s): ${run.stderr}`);
  assert.strictEqual(run.status, 2, run.stderr);
  assert.match(run.stderr, /js\/build\.sh: cannot build the package; missing:/);
  assert.ok(run.stderr.includes(`wasm-bindgen-cli ${WANT} (found: ${found}): ${INSTALL}`), run.stderr);
  assert.ok(!run.stderr.includes('building the wasm module'), run.stderr);
  assert.ok(run.seconds < 30, `${run.seconds} s`);
}

/** A directory holding a `wasm-bindgen` that runs the shell line `body`. */
function fakeWasmBindgen(dir, body) {
  const fake = path.join(dir, 'fake');
  fs.mkdirSync(fake);
  fs.writeFileSync(path.join(fake, 'wasm-bindgen'), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return fake;
}

test('build.sh without wasm-bindgen on the PATH names it and its install command, before building', () => {
  const dir = scratch('build-no-wasm-bindgen');
  assertRefused(build(pathWithoutWasmBindgen(dir)), 'none');
});

test('build.sh with a wasm-bindgen that fails says none was found (no silent exit)', () => {
  const dir = scratch('build-failing-wasm-bindgen');
  assertRefused(build(pathWithoutWasmBindgen(dir, fakeWasmBindgen(dir, 'exit 127'))), 'none');
});

test('build.sh with another wasm-bindgen version names both versions', () => {
  const dir = scratch('build-other-wasm-bindgen');
  assertRefused(build(pathWithoutWasmBindgen(dir, fakeWasmBindgen(dir, 'echo "wasm-bindgen 0.0.1"'))), '0.0.1');
});
