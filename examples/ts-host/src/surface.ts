// Every function of decision-contract with its declared result types, so that `tsc --noEmit`
// checks the whole of js/index.d.ts against code that uses it (host.ts uses only part).
// `surface()` runs each call once on the bundled examples; `npm start` calls it first.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as dc from 'decision-contract';
import type {
  CheckResult,
  ContractsCheck,
  DecisionError,
  Diagnostic,
  EngineInfo,
  Evaluation,
  Explanation,
  FrameDocument,
  OutcomeValidation,
  RecordVerdict,
  ReplayDocument,
} from 'decision-contract';

const examples = join(__dirname, '..', '..');
const read = (path: string): string => readFileSync(join(examples, path), 'utf8');

/** One call of each function; returns a line per call. */
export function surface(): string[] {
  const contract = read('support-triage/DECISION.md');
  const checked: CheckResult = dc.check(new TextEncoder().encode(contract), { profile: 'reference', denyWarnings: false });
  const adapter: Diagnostic[] = checked.diagnostics.filter((d) => d.layer === 'adapter');
  const explained: Explanation = dc.explain(contract, { path: 'DECISION.md' });
  const frame: FrameDocument = dc.frame(contract, { block: 'route', state: read('support-triage/state.json'), marking: 'reference' });
  const evaluation: Evaluation = dc.evaluate(contract, {
    block: 'route',
    answers: read('support-triage/answers.json'),
    candidates: read('support-triage/candidates.json'),
    gates: [],
  });
  const log = read('support-triage/session.jsonl');
  const replay: ReplayDocument = dc.verifyLog(log.split('\n').filter((line) => line.length > 0), { verbose: true, maxLine: 1 << 20 });
  const decisionLine = log.split('\n').find((line) => line.includes('"type":"decision"')) ?? '';
  const verdict: RecordVerdict = dc.verifyRecord(decisionLine);
  const contracts = read('outcomes/contracts.json');
  const lint: ContractsCheck = dc.outcomes.check(contracts);
  const validation: OutcomeValidation = dc.outcomes.validate(contracts, {
    tool: 'catalog',
    method: 'find_movies',
    outcome: { status: 'ok', value: { status: 'success', movies: [] } },
  });
  const report = dc.outcomes.report(read('outcomes/outcome-log.jsonl'));
  const digest: string = dc.digests.request(dc.digests.frame(frame.frame.node, frame.frame.state), frame.questions);
  const info: EngineInfo = dc.engineInfo();
  let refusal = '';
  try {
    dc.frame(contract, { block: 'nope', state: {} });
  } catch (e) {
    const error = e as DecisionError;
    refusal = `${error.code} ${error.line ?? '-'}`;
  }
  return [
    `check: ok=${checked.ok}, ${adapter.length} adapter diagnostics against the reference profile`,
    `explain: ${explained.blocks.length} blocks`,
    `frame: ${frame.frame.digest} (${digest === frame.requestDigest ? 'request digest reproduced' : 'REQUEST DIGEST DIFFERS'})`,
    `evaluate: ${evaluation.action}`,
    `verifyLog: ${replay.verified} verified, chain ${replay.chain}; verifyRecord: ${verdict.status}`,
    `outcomes: ${lint.contracts} contracts, an empty list is ${validation.verdict}; report over ${Object.keys(report).length} keys`,
    `engine ${info.version} (${info.record_schema}); an unknown block is refused with ${refusal}`,
  ];
}
