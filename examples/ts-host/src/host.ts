// A small TypeScript host for the support-triage contract: it checks the contract against
// what it registers, then runs each ticket through the contract's loop —
// is_actionable → route → refund_risk — compiling each block's frame, asking a
// deterministic provider, and letting the block's policy turn the answers into an action.
//
// The provider is a few transparent rules over the frame's state (what a model would see),
// so every run decides the same way; a real host would send `frame.state` and `questions`
// to a decision model instead. The host does the I/O (reading the contract); the
// `decision-contract` package only computes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as dc from 'decision-contract';
import type { Evaluation, FrameDocument, JsonObject, WireQuestion } from 'decision-contract';
import { surface } from './surface';

const EXAMPLE = join(__dirname, '..', '..', 'support-triage');
const CONTRACT_PATH = 'examples/support-triage/DECISION.md';
const contract = readFileSync(join(EXAMPLE, 'DECISION.md'), 'utf8');
const capabilities = readFileSync(join(EXAMPLE, 'capabilities.json'), 'utf8');

/** The cells that carry the customer's own words: the frame marks them untrusted. */
const UNTRUSTED = ['subject', 'body', 'earlier'];

/** A ticket's state cells. */
interface Ticket extends JsonObject {
  subject: string;
  body: string;
  channel: string;
  customer: string;
  tier: string;
  product: string;
  earlier: string;
  orders: string[];
  amount: string;
  draft: string;
}

/** One decision the loop took. */
interface Step {
  block: string;
  frameDigest: string;
  requestDigest: string;
  evaluation: Evaluation;
}

/** The host's `queuesFor` provider: the teams open to this product and plan. */
function queuesFor(ticket: Ticket): JsonObject {
  const queues: JsonObject = {
    billing: 'invoices, charges, refunds and plan changes',
    technical: 'errors, outages, integrations and data problems',
    account: 'sign-in, access, ownership and deletion of an account',
  };
  if (ticket.tier === 'enterprise') queues.enterprise = 'every request of an enterprise customer';
  return queues;
}

const text = (value: unknown): string => (typeof value === 'string' ? value.toLowerCase() : '');

/** The deterministic provider: answers each question from the frame's state alone. */
function answer(id: string, question: WireQuestion, state: JsonObject): JsonObject {
  const words = `${text(state.subject)} ${text(state.body)}`;
  switch (question.type) {
    case 'noul': {
      const asks = /\?|could you|please|help/.test(words) && !/unsubscribe|out of office/.test(words);
      return { noul: asks ? 0.94 : 0.08 };
    }
    case 'choice': {
      const offered = Object.keys(question.criteria ?? {});
      const pick = /refund|charged|invoice/.test(words) ? 'billing' : /error|crash|sync/.test(words) ? 'technical' : 'account';
      const choice = offered.includes(pick) ? pick : offered[0] ?? pick;
      const rest = offered.length > 1 ? 0.2 / (offered.length - 1) : 0;
      const probabilities = Object.fromEntries(offered.map((o) => [o, o === choice ? 0.8 : rest]));
      return { choice, probabilities, confidence: 0.8 };
    }
    case 'score': {
      const orders = Array.isArray(state.orders) ? state.orders.map(String) : [];
      const duplicate = new Set(orders).size < orders.length;
      const score = duplicate ? 1 : 2;
      const levels = Array.isArray(question.criteria) ? question.criteria.length : 4;
      const probabilities = Object.fromEntries(
        Array.from({ length: levels }, (_, level) => [String(level), level === score ? 0.7 : 0.3 / (levels - 1)]),
      );
      return { score, probabilities, confidence: 0.7 };
    }
    default:
      throw new Error(`question ${id}: unknown type`);
  }
}

/** Compile the block's frame, ask the provider, evaluate the policy. */
function decide(block: string, ticket: Ticket, candidates?: JsonObject): Step {
  const frame: FrameDocument = dc.frame(contract, { path: CONTRACT_PATH, block, state: ticket, untrusted: UNTRUSTED });
  const answers: JsonObject = {};
  for (const [id, question] of Object.entries(frame.questions)) {
    // A dynamic block offers the candidates the host computed, not the file's defaults.
    const offered = candidates && question.type === 'choice' ? { ...question, criteria: candidates as Record<string, string> } : question;
    answers[id] = answer(id, offered, frame.frame.state);
  }
  const options = candidates
    ? { path: CONTRACT_PATH, block, answers, candidates: Object.fromEntries(Object.keys(frame.questions).map((id) => [id, candidates])) }
    : { path: CONTRACT_PATH, block, answers };
  const evaluation = dc.evaluate(contract, options);
  return { block, frameDigest: frame.frame.digest, requestDigest: frame.requestDigest, evaluation };
}

/** The contract's loop for one ticket. */
function triage(ticket: Ticket): Step[] {
  const steps = [decide('is_actionable', ticket)];
  if (steps[0]?.evaluation.action !== 'continue') return steps;
  const route = decide('route', ticket, queuesFor(ticket));
  steps.push(route);
  if (route.evaluation.action === 'use' && /refund/.test(text(ticket.body))) steps.push(decide('refund_risk', ticket));
  return steps;
}

function main(): number {
  const checked = dc.check(contract, { path: CONTRACT_PATH, capabilities });
  for (const d of checked.diagnostics) console.error(`${CONTRACT_PATH}:${d.line}:${d.column}: ${d.code} ${d.message}`);
  if (!checked.ok) return 1;
  console.log(`decision-contract ${dc.version()} · ${CONTRACT_PATH}: ok (${checked.summary.blocks} blocks)`);
  for (const line of surface()) console.log(`  ${line}`);

  const first = JSON.parse(readFileSync(join(EXAMPLE, 'state.json'), 'utf8')) as Ticket;
  const tickets: Array<[string, Ticket]> = [
    ['duplicate charge', first],
    ['out of office', { ...first, subject: 'Out of office', body: 'I am out of office until Monday.', orders: [] }],
    ['sync error', { ...first, subject: 'Sync error', body: 'The bank sync fails with an error since Monday, could you look?', tier: 'enterprise' }],
  ];
  for (const [name, ticket] of tickets) {
    console.log(`\nticket: ${name}`);
    for (const step of triage(ticket)) {
      const e = step.evaluation;
      const margin = e.margin ? ` · margin ${e.margin.margin.toFixed(2)}` : '';
      console.log(`  ${step.block.padEnd(14)} → ${e.action.padEnd(10)} ${e.reason}${margin} · frame ${step.frameDigest} · request ${step.requestDigest}`);
      if (!e.valid) return 1;
    }
  }
  return 0;
}

process.exitCode = main();
