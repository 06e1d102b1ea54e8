/** What a turn carries while the loop goes on: the request sent, its reply, and what the loop body and the tools did with it (turn.ts sends it). */
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import { answeredIds, toolUsesOf } from './history.js';
import type { HeldCall } from './snapshot.js';
import type { BetaMessage, BetaMessageParam, ToolResultMessage } from './types.js';

/** One iteration: the request sent and what the loop body has done since. */
export interface Turn {
  message: Promise<BetaMessage>;
  stream: BetaMessageStream | undefined;
  /** The loop body has the turn's item (from the yield until the body asks for the next). */
  inBody: boolean;
  /** The loop body called setMessagesParams / pushMessages. */
  tookControl: boolean;
  /** The history when the loop body first changed it (it held the reply the body was given right after). */
  historyBefore: readonly BetaMessageParam[] | undefined;
  /** The loop body is done and the reply is not placed yet (a stream still coming): a change of the history now is a late one (late-change.ts). */
  afterBody: boolean;
  /** The history the request went with, when the caller changed it late. */
  sentHistory: readonly BetaMessageParam[] | undefined;
  /**
   * The answer to the calls of a message, by the ids it answers: mutating it changes what is sent.
   * `given`: the answer `generateToolResponse()` gave the loop body (a snapshot holds it as the body left it);
   * `decisionsWhenGiven`: the decisions made by then, when calls of it waited (a decision since runs them in this pass).
   */
  response: { key: string; answer: Promise<Answer>; given?: Answer; decisionsWhenGiven?: number } | undefined;
  /** What `generateToolResponse()` gives in the loop body: its calls ran, their results answer them in a history the body set. */
  inFlight?: Promise<ToolResultMessage | null> | undefined;
  /** This request was a server-side compaction (compactBeforeNextTurn). */
  compaction: boolean;
  /** The reply, once counted (what `message` resolves to). */
  reply: BetaMessage | undefined;
  /** The reply while its `onMessage` hook runs, not counted yet (a stream's `finalMessage()` has it): a snapshot counts it in. */
  uncounted: BetaMessage | undefined;
  /** The request's number in the events (a request sent again after a context overflow gets a new one). */
  requestId: number;
  /** The index of the `options.fallback` entry the request went to last; `undefined` for the primary. */
  fallback: number | undefined;
  /** The GenAI provider of the client the request went to last (`anthropic`, `gcp.vertex_ai`, `aws.bedrock`). */
  provider: string | undefined;
  /** The `onRequest` hook of the request sent again after an overflow runs: a change of the history goes with it, as before any request. */
  sendingAgain: boolean;
}

/** The user message of results, and the calls still waiting for approval (not in the message). */
export interface Answer {
  message: ToolResultMessage;
  pending: HeldCall[];
}

/**
 * The results of the calls `generateToolResponse()` answered in the loop body of `turn`, once they end (none if it failed:
 * they start again), when the history the body set leaves one of them unanswered; none at once when it does not (a call
 * it left out is nobody's to wait for).
 */
export async function resultsGivenInBody(turn: Turn, history: readonly BetaMessageParam[]): Promise<ToolResultMessage['content']> {
  const reply = await turn.message.catch(() => undefined);
  const calls = new Set(toolUsesOf(reply).map((use) => use.id));
  const answered = new Set(history.flatMap((message) => [...answeredIds(message)]));
  const unanswered = history.some((message) => toolUsesOf(message).some((use) => calls.has(use.id) && !answered.has(use.id)));
  return unanswered && turn.inFlight ? turn.inFlight.then((given) => given?.content ?? [], () => []) : [];
}
