// Types of the `decision-contract` package. Every result is the JSON document the `decision`
// command prints for the same input (`--format json`); the field names are the CLI's.
// Hand-written against crates/runtime/src/api/ and checked by the package's tests and by
// `tsc --noEmit` over examples/ts-host/.

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object (host state cells, answers, candidates). */
export type JsonObject = { [key: string]: Json };

/** A contract's text: a string, or its bytes (invalid UTF-8 is then reported as `DC0100`). */
export type ContractText = string | Uint8Array;

/**
 * A refusal. `code` is a diagnostic code (`DC0108`) when the contract does not parse, or:
 * `E_USAGE` (the call is wrong: unknown block, bad option, state not an object),
 * `E_POLICY` (a policy rule does not compile), `E_FRAME` (the frame cannot be compiled for this
 * host), `E_RECORD` (not a decision record), `E_CONTRACTS` (a tool-outcome contracts file that
 * does not lint), `E_OUTCOME` (not an outcome), `E_REPORT` (a log whose outcomes cannot be
 * read). The CLI prints the same code as `error[CODE]` and Python raises it (docs/errors.md).
 */
export class DecisionError extends Error {
  readonly name: 'DecisionError';
  readonly code: string;
  /** The name the caller gave the input, if any. */
  readonly path: string | null;
  /** 1-based line of the first problem, when known. */
  readonly line: number | null;
  /** 1-based column (in characters) of the first problem, when known. */
  readonly column: number | null;
  /** Every error diagnostic of a contract that does not parse (or each lint error of a contracts file). */
  readonly diagnostics: Array<Diagnostic | LintError>;
}

// ---- check ----------------------------------------------------------------------------

export interface CheckOptions {
  /** Names the contract in the result (never opened); `null` in the result when absent. */
  path?: string;
  /** `"reference"`: check against the reference host profile. */
  profile?: 'reference';
  /** A host capability report (as `decision check --capabilities` reads), as an object or its JSON text. */
  capabilities?: JsonObject | string;
  /** Every warning becomes an error (`--deny warnings`). */
  denyWarnings?: boolean;
}

export type Severity = 'error' | 'warning';
export type Layer = 'parse' | 'schema' | 'policy' | 'adapter';

export interface Diagnostic {
  /** Stable code: `DC01xx` parse, `DC02xx` schema, `DC03xx` policy, `DC04xx` adapter, `DC05xx` lints. */
  code: string;
  severity: Severity;
  layer: Layer;
  message: string;
  /** 1-based line. */
  line: number;
  /** 1-based column, in characters. */
  column: number;
  /** Byte range of the span in the UTF-8 text. */
  start: number;
  end: number;
  block: string | null;
  help: string | null;
}

export interface Summary {
  blocks: number;
  questions: number;
  model_decisions: number;
  code_decisions: number;
  gates: number;
  options: number;
}

/** One file of `decision check --format json`. */
export interface CheckResult {
  path: string | null;
  ok: boolean;
  schema: string | null;
  summary: Summary;
  /** The first 1,000 diagnostics (at most 4 MiB of them); the rest are only counted. */
  diagnostics: Diagnostic[];
  /** How many diagnostics were left out of `diagnostics`; absent when none was. */
  omitted?: number;
  /** How many of each code were left out; absent when none was. */
  omitted_by_code?: Record<string, number>;
}

// ---- explain --------------------------------------------------------------------------

export interface ExplainOptions {
  /** Names the contract in `text` (default `DECISION.md`). */
  path?: string;
}

export type QuestionType = 'choice' | 'noul' | 'score';

export interface ExplainedBlock {
  id: string;
  line: number;
  kind: string;
  decided_by: 'model' | 'code';
  gate: boolean;
  position: string;
  purpose: string;
  dynamic: { provider: string; reads: string[]; output: string; why: string } | null;
  questions: Array<{ id: string; type: QuestionType; ask: string; options: Array<{ name: string; criterion: string }> }>;
  policy: Array<{ rule: string; action: string }>;
  frame: {
    fields: Array<{ key: string; bound: number; projection: string | null; why: string }>;
    excluded: Array<{ field: string; why: string }>;
  } | null;
}

export interface Explanation {
  title: string | null;
  schema: string | null;
  headline: string;
  summary: Summary;
  /** How many error diagnostics the contract has. */
  errors: number;
  blocks: ExplainedBlock[];
  generator_chars: number | null;
  /** Exactly what `decision explain` prints. */
  text: string;
}

// ---- frame ----------------------------------------------------------------------------

export interface FrameOptions {
  /** The block whose frame to compile. */
  block: string;
  /** Host state, cell name → value; JSON text keeps its key order exactly. */
  state: JsonObject | string;
  path?: string;
  /** `"reference"`: the reference host's cells, projections and node ids. */
  profile?: 'reference';
  /** Cells that carry tool output (without `profile`). */
  untrusted?: string[];
  /** How untrusted values are marked (default `provenance`). */
  marking?: 'provenance' | 'reference';
}

/** A question as sent to the decision model. */
export interface WireQuestion {
  type: QuestionType;
  instructions: string;
  /** choice: option → criterion; noul: `{true, false}`; score: the levels' criteria. */
  criteria?: { [option: string]: string } | string[];
}

export interface FrameArtifact {
  node: string;
  /** What the model sees: bounded, with untrusted strings wrapped in markers. */
  state: JsonObject;
  /** frameDigest(node, state): 16 hex characters. */
  digest: string;
  fields: Array<{ key: string; from: string }>;
  /** Keys whose value came from an untrusted cell. */
  untrusted: string[];
  /** Clipped values: lengths in UTF-16 code units (strings) or items (lists). */
  truncated: Array<{ key: string; from: number; to: number }>;
  unfilled: Array<{ key: string; from: string; why: string }>;
  absent: Array<{ key: string; why: string }>;
  /** `[cell, reason]` pairs. */
  excluded: Array<[string, string]>;
  /** Present with `marking: "provenance"`. */
  provenance?: Array<{ key: string; from: string; trust: string; marked: string }>;
}

/** The questions of a request, by id. */
export type Questions = { [id: string]: WireQuestion };

/** `decision frame --format json`. */
export interface FrameDocument {
  block: string;
  frame: FrameArtifact;
  questions: Questions;
  requestDigest: string;
  dynamic?: { provider: string; reads: string[]; note: string };
}

// ---- evaluate -------------------------------------------------------------------------

export interface EvaluateOptions {
  block: string;
  /** Question id → answer (the `answers` object of a System One response). */
  answers: JsonObject | string;
  path?: string;
  /** Threshold overrides, all or nothing: `block.question=value` (or `block.question[i]=value`)
   * strings, or an object of `block.question` → value. */
  gates?: string[] | Record<string, number | string>;
  /** What a `dynamic:` block offered: `{question: {id: criterion}}` or `{question: [id, …]}`. */
  candidates?: JsonObject | string;
}

/** Why an answer was refused: `{question, problem, …details}`. */
export interface AnswerProblem {
  question: string;
  problem: string;
  [detail: string]: Json;
}

export interface Margin {
  question: string;
  threshold: number;
  value: number;
  margin: number;
}

/** `decision eval --format json`. */
export interface Evaluation {
  block: string;
  /** `false` when any answer is invalid: then the action is `escalate`. */
  valid: boolean;
  problems: AnswerProblem[];
  action: string;
  reason: string;
  /** The 0-based index of the policy rule that fired; `null` when none did (the reason says why). */
  rule: number | null;
  margin: Margin | null;
}

// ---- records and logs -----------------------------------------------------------------

export type Outcome = 'verified' | 'partial' | 'unverifiable' | 'mismatch';
export interface Check {
  name: 'frame-solo' | 'questions-solo' | 'sent-frame' | 'request';
  status: 'pass' | 'fail' | 'skip';
  detail: string;
}

export interface RecordVerdict {
  schema: string;
  node: string;
  step: number;
  status: Outcome;
  checks: Check[];
}

export interface VerifyLogOptions {
  /** Names the log in the document (default `session.jsonl`). */
  path?: string;
  /** List every record, not only mismatched and unverifiable ones. */
  verbose?: boolean;
  /** Lines longer than this many bytes are skipped and reported. */
  maxLine?: number;
  /** Accepted, as every entrance takes it; the log is verified on one thread. */
  jobs?: number;
}

export interface RecordResult {
  run: number;
  step: number | null;
  node: string | null;
  status: Outcome;
  checks: Check[];
  file: string;
  line: number;
  problem?: string;
}

/** `decision replay --format json` for one log. */
export interface ReplayDocument {
  records: number;
  other_events: number;
  runs: number;
  skipped_lines: number;
  verified: number;
  partial: number;
  unverifiable: number;
  mismatch: number;
  chain: 'intact' | 'absent' | 'broken';
  results: RecordResult[];
  /** What replay does not verify. */
  notes: string[];
  files: Array<{
    path: string;
    session: string | null;
    chain: 'intact' | 'absent' | 'broken';
    chain_breaks: Array<{ line: number; reason: string }>;
    torn_tail: number | null;
    long_lines: number;
    skipped: Array<{ line: number; reason: string }>;
  }>;
}

// ---- tool outcomes --------------------------------------------------------------------

export interface LintError {
  line: number;
  column: number;
  pointer: string;
  message: string;
}

export interface ContractsCheck {
  path: string;
  ok: boolean;
  contracts: number;
  errors: LintError[];
}

export interface OutcomeValidateOptions {
  tool: string;
  method: string;
  /** `{"status":"ok","value":…}` or `{"status":"error",…}`, as an object or its JSON text. */
  outcome: JsonObject | string;
  /** Names the contracts file in messages (default `contracts.json`). */
  path?: string;
}

export interface OutcomeValidation {
  /** What `decision outcomes validate --format json` prints: the outcome unchanged when it holds, else the typed violation. */
  outcome: JsonObject;
  verdict: 'held' | 'violated' | 'no_deliverable' | 'not_validated';
}

export interface Outcomes {
  /** Lint a contracts file (`decision outcomes check --format json`). */
  check(contracts: string | JsonObject, options?: { path?: string }): ContractsCheck;
  /** Validate one outcome against its tool and method's deliverable contract. */
  validate(contracts: string | JsonObject, options: OutcomeValidateOptions): OutcomeValidation;
  /** The advisory report over outcome events (`decision outcomes report --format json`). */
  report(log: string | string[]): JsonObject;
}

export interface Digests {
  /** frameDigest(node, state); JSON text keeps its key order exactly. */
  frame(node: string, state: JsonObject | string): string;
  /** requestDigest(frameDigest, questions). */
  request(frameDigest: string, questions: Questions | JsonObject | string): string;
  /** `JSON.stringify` as the reference computes digests over it. */
  stringify(value: Json): string;
  /** The digest of any text (its UTF-8) or bytes: the first 16 hex characters of its SHA-256. */
  bytes(data: string | Uint8Array): string;
}

export interface EngineInfo {
  version: string;
  contract_schemas: string[];
  record_schema: string;
}

/** Parse and check a contract: every problem, each with its code, layer and location. */
export function check(text: ContractText, options?: CheckOptions): CheckResult;
/** The contract as a table (blocks, questions, policies, frames), and as `decision explain` prints it. */
export function explain(text: ContractText, options?: ExplainOptions): Explanation;
/** What the model will see for one block: the frame artifact, the questions and both digests. */
export function frame(text: ContractText, options: FrameOptions): FrameDocument;
/** Validate answers and evaluate the block's policy; invalid answers escalate. */
export function evaluate(text: ContractText, options: EvaluateOptions): Evaluation;
/** Verify one decision event (or a whole session-log line). */
export function verifyRecord(record: string | Uint8Array | JsonObject): RecordVerdict;
/** Verify a whole session log, given as its text, its bytes or its lines. */
export function verifyLog(log: string | string[] | Uint8Array, options?: VerifyLogOptions): ReplayDocument;
export const outcomes: Outcomes;
export const digests: Digests;
export function engineInfo(): EngineInfo;
/** The engine's version. */
export function version(): string;
