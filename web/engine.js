// The engine in the browser: the same functions and errors as the `decision-contract`
// package (js/index.js), over the module built with `wasm-bindgen --target web`.
import init, * as wasm from './pkg/decision_wasm.js';

const encoder = new TextEncoder();

export class DecisionError extends Error {
  constructor(error) {
    super(error.message);
    this.name = 'DecisionError';
    this.code = error.code;
    this.path = error.path ?? null;
    this.line = error.line ?? null;
    this.column = error.column ?? null;
    this.diagnostics = error.diagnostics ?? [];
  }
}

function unwrap(text) {
  const result = JSON.parse(text);
  if (result.error) throw new DecisionError(result.error);
  return result.value;
}

// Every text goes to the module as its UTF-8 bytes (the module's exports take bytes).
const options = (given) => encoder.encode(given ? JSON.stringify(given) : '');

/** Loads the module; every other function needs it loaded. */
export async function load() {
  await init({ module_or_path: new URL('./pkg/decision_wasm_bg.wasm', import.meta.url) });
}

export const check = (text, opts) => unwrap(wasm.check(encoder.encode(text), options(opts)));
export const explain = (text, opts) => unwrap(wasm.explain(encoder.encode(text), options(opts)));
export const frame = (text, opts) => unwrap(wasm.frame(encoder.encode(text), options(opts)));
export const evaluate = (text, opts) => unwrap(wasm.evaluate(encoder.encode(text), options(opts)));
export const version = () => unwrap(wasm.engineInfo()).version;
