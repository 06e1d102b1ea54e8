/**
 * A snapshot taken in the loop body, with the reply the body was given: the snapshot holds that reply
 * as the run will once the body is done, so that the resumed run neither asks the model again nor
 * counts the reply's usage twice (`RunnerControls.toJSON`).
 */
import { insertToolResults, keptReply, toolUsesOf } from './history.js';
import type { RunnerSnapshot } from './snapshot.js';
import type { Turn } from './turn-state.js';
import type { CompactionHeld } from './compactions.js';
import type { BetaMessage, BetaMessageParam } from './types.js';

/** The reply the body was given, held after the snapshot's history as the run will hold it: one that asks for tools, the final answer or a paused turn. */
export function holdBodyReply(snapshot: RunnerSnapshot, reply: BetaMessage, how: 'asks' | 'final' | 'paused', response: Turn['response'], dropsRefusals: boolean): BetaMessageParam | undefined {
  if (how === 'asks') return holdReplyThatAsks(snapshot, reply, response);
  return how === 'final' ? holdFinalReply(snapshot, reply, dropsRefusals) : holdPausedReply(snapshot, reply);
}

/**
 * A reply that asks for tools: held, so that the resumed run answers its calls; with the answer
 * `generateToolResponse()` gave the body (none waiting), as the body changed it, as the run would send it.
 */
function holdReplyThatAsks(snapshot: RunnerSnapshot, reply: BetaMessage, response: Turn['response']): BetaMessageParam {
  const kept = holdKept(snapshot, reply);
  const given = response?.given;
  if (given && given.pending.length === 0 && response!.key === toolUsesOf(kept).map((use) => use.id).join('\n')) {
    insertToolResults(snapshot.params.messages, structuredClone(given.message));
    snapshot.calls = { settled: {}, held: [], pending: [], decisions: {} };
  }
  return kept;
}

/**
 * The model's final answer (a reply that asks for no tools, where no output is checked and no limit's
 * answer was asked for): the run ends on it (`'model'`), and the resumed run resolves to it without a
 * request. A reply the run does not keep (refused on a message thread, empty or of blank text only) is
 * not held, as the run does not hold it. Returns the reply as held, if it is.
 */
function holdFinalReply(snapshot: RunnerSnapshot, reply: BetaMessage, dropsRefusals: boolean): BetaMessageParam | undefined {
  snapshot.stoppedBy = 'model';
  if (reply.stop_reason === 'refusal' && dropsRefusals) return undefined;
  return keptReply(reply).kept.content.length > 0 ? holdKept(snapshot, reply) : undefined;
}

/**
 * A paused turn (`pause_turn`): held, so that the resumed run sends it back and the server resumes its work (not
 * started over, its server tools run and paid for again). An empty one is not held, as the run does not hold it.
 */
function holdPausedReply(snapshot: RunnerSnapshot, reply: BetaMessage): BetaMessageParam | undefined {
  return keptReply(reply).kept.content.length > 0 ? holdKept(snapshot, reply) : undefined;
}

/** The reply as the history keeps it, after the snapshot's history; repeated tool_use ids answered as not run. */
function holdKept(snapshot: RunnerSnapshot, reply: BetaMessage): BetaMessageParam {
  const { kept, renamed } = keptReply(reply);
  snapshot.params.messages.push(structuredClone(kept));
  for (const [id, text] of renamed) snapshot.notRun[id] = text;
  return kept;
}

/**
 * A server-side compaction's reply, whose history the snapshot holds as the run adopts it (`Compactions.historyAfter`): the
 * run's last reply then, and, when the compaction was the run's last request (after its final answer), the run's end, as
 * after the run; unless messages appended late wait after the summary (`late`), which the resumed run sends.
 */
export function holdCompactionReply(snapshot: RunnerSnapshot, after: Pick<CompactionHeld, 'lastMessage' | 'ending'>, late: boolean): void {
  if (after.lastMessage) snapshot.lastMessage = structuredClone(after.lastMessage);
  if (after.ending && !late) snapshot.stoppedBy = after.ending;
}
