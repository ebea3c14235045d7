'use strict';
// decision-contract: the DECISION.md engine (Rust, compiled to WebAssembly) for JavaScript
// and TypeScript hosts. Every function returns the JSON document the `decision` command
// prints for the same input, as a plain object; a refusal is thrown as a `DecisionError`
// carrying a stable `code` and, where known, the location. Nothing here reads a file, the
// network or the clock: callers pass text in, and a `path` only names it in documents.

const wasm = require('./pkg/decision_wasm.js');

/** A refusal: `code` is a diagnostic code (`DC0108`) or one of the `E_*` codes. */
class DecisionError extends Error {
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

function usage(message) {
  return new DecisionError({ code: 'E_USAGE', message });
}

function unwrap(text) {
  const result = JSON.parse(text);
  if (result.error) throw new DecisionError(result.error);
  return result.value;
}

const encoder = new TextEncoder();
/** Texts up to this many UTF-16 units are encoded into a reused buffer (at most 3 bytes each). */
const SCRATCH_UNITS = 1 << 20;
/** Two reused buffers: a call's text and its options are both read before the call copies them. */
const scratch = [new Uint8Array(0), new Uint8Array(0)];
const NO_OPTIONS = new Uint8Array(0);

/**
 * A text's UTF-8 bytes, in reused buffer `slot` (0 or 1). Every text goes to the module as
 * bytes: `encodeInto` a reused buffer is the fastest way Node has, where a string argument
 * is copied in one UTF-16 unit at a time.
 */
function bytes(what, text, slot = 0) {
  if (text instanceof Uint8Array) return text;
  if (typeof text !== 'string') throw usage(`${what} must be a string or a Uint8Array`);
  if (text.length > SCRATCH_UNITS) return encoder.encode(text);
  if (scratch[slot].length < text.length * 3) scratch[slot] = new Uint8Array(Math.max(text.length * 3, 4096));
  const { written } = encoder.encodeInto(text, scratch[slot]);
  return scratch[slot].subarray(0, written);
}

function options(what, given) {
  if (given === undefined || given === null) return NO_OPTIONS;
  if (typeof given !== 'object' || Array.isArray(given)) throw usage(`${what}: options must be an object`);
  return bytes(what, JSON.stringify(given), 1);
}

function jsonText(what, value) {
  if (typeof value === 'string') return value;
  if (value === undefined) throw usage(`${what} is required`);
  return JSON.stringify(value);
}

/** Parse and check a contract: `{path, ok, schema, summary, diagnostics}`. */
function check(text, opts) {
  return unwrap(wasm.check(bytes('check: the contract', text), options('check', opts)));
}

/** The contract as a table: its blocks as data, and `text` as `decision explain` prints it. */
function explain(text, opts) {
  return unwrap(wasm.explain(bytes('explain: the contract', text), options('explain', opts)));
}

/** What the model would see for one block: the frame artifact, questions and digests. */
function frame(text, opts) {
  return unwrap(wasm.frame(bytes('frame: the contract', text), options('frame', opts)));
}

/** Validate answers and evaluate the block's policy: action, reason, rule, margin. */
function evaluate(text, opts) {
  return unwrap(wasm.evaluate(bytes('evaluate: the contract', text), options('evaluate', opts)));
}

/** Verify one decision event (or a whole session-log line) on its own. */
function verifyRecord(record) {
  const given = record instanceof Uint8Array ? record : jsonText('verifyRecord: the record', record);
  return unwrap(wasm.verifyRecord(bytes('verifyRecord: the record', given)));
}

/** Verify a whole session log (JSONL text, its bytes, or its lines) and its hash chain. */
function verifyLog(log, opts) {
  let text = log;
  if (Array.isArray(log)) {
    if (!log.every((line) => typeof line === 'string')) throw usage('verifyLog: every line must be a string');
    text = log.map((line) => `${line}\n`).join('');
  }
  return unwrap(wasm.verifyLog(bytes('verifyLog: the log', text), options('verifyLog', opts)));
}

/** Tool outcome contracts: lint a contracts file, validate one outcome, report on a log. */
const outcomes = {
  check(contracts, opts) {
    const text = bytes('outcomes.check', jsonText('outcomes.check: the contracts', contracts));
    return unwrap(wasm.outcomesCheck(text, options('outcomes.check', opts)));
  },
  validate(contracts, opts) {
    const text = bytes('outcomes.validate', jsonText('outcomes.validate: the contracts', contracts));
    return unwrap(wasm.outcomesValidate(text, options('outcomes.validate', opts)));
  },
  report(log) {
    const text = Array.isArray(log) ? log.map((line) => `${line}\n`).join('') : log;
    if (typeof text !== 'string') throw usage('outcomes.report: the log must be a string or lines');
    return unwrap(wasm.outcomesReport(bytes('outcomes.report: the log', text)));
  },
};

/** The reference digests. Give JSON text to keep its key order exactly. */
const digests = {
  frame(node, state) {
    const text = bytes('digests.frame', jsonText('digests.frame: the state', state));
    return unwrap(wasm.digestFrame(String(node), text));
  },
  request(frameDigest, questions) {
    const text = bytes('digests.request', jsonText('digests.request: the questions', questions));
    return unwrap(wasm.digestRequest(String(frameDigest), text));
  },
  stringify(value) {
    return unwrap(wasm.digestStringify(bytes('digests.stringify', jsonText('digests.stringify: the value', value))));
  },
  bytes(data) {
    return unwrap(wasm.digestBytes(bytes('digests.bytes: the data', data)));
  },
};

/** `{version, contract_schemas, record_schema}` of the engine inside. */
function engineInfo() {
  return unwrap(wasm.engineInfo());
}

/** The engine's version. */
function version() {
  return engineInfo().version;
}

module.exports = {
  DecisionError,
  check,
  explain,
  frame,
  evaluate,
  verifyRecord,
  verifyLog,
  outcomes,
  digests,
  engineInfo,
  version,
};
