/** A run's snapshot (`runner.toJSON()`): what `resumeToolRunner` needs to go on from where the run is, wherever it is taken. */
import { holdBodyReply, holdCompactionReply } from './body-snapshot.js';
import type { CallAnswers } from './call-answers.js';
import { bodyHeldReply } from './compaction.js';
import type { Compactions } from './compactions.js';
import { inContainerOfItsOwn } from './fallback.js';
import { asMessageParams, toolUsesOf } from './history.js';
import { holdInSnapshot } from './late-change.js';
import type { RunContext } from './run-context.js';
import type { RunControl } from './run-control.js';
import type { RunState } from './run-state.js';
import { lendableClient } from './sdk-thread.js';
import type { RunnerSnapshot } from './snapshot.js';
import { nextStepFor } from './stop-reason.js';
import type { Turn } from './turn-state.js';

/** The parts of a run its snapshot is read from; `turn`: the turn whose reply the loop body is looking at. */
export interface SnapshotSources {
  run: RunContext;
  state: RunState;
  turn: Turn | undefined;
  answers: CallAnswers;
  control: RunControl;
  compactions: Compactions;
  /** Requests sent so far. */
  requestsSent: number;
}

/** The run's JSON snapshot, taken between turns, in the loop body, in a hook or a listener. */
export function runSnapshot({ run, state, turn, answers, control, compactions, requestsSent }: SnapshotSources): RunnerSnapshot {
  // A reply paid for while its onMessage hook runs (before the body, or a stream's in it): counted into the snapshot.
  const streamed = turn?.uncounted ? undefined : messageBeforeEnd(turn);
  const uncounted = turn?.uncounted ?? streamed;
  // Taken in the loop body, after a reply that asks for tools arrived (the runner appends it once the body goes on): the
  // snapshot holds it, so the resumed run answers its calls instead of asking the model again.
  const reply = turn?.inBody && !turn.tookControl && !turn.compaction ? (turn.reply ?? uncounted) : undefined;
  const step = reply && nextStepFor(reply.stop_reason);
  /** The snapshot holds the body's reply that asks for tools: owed its compaction check, answered here or not. */
  const replyAdded = step === 'run_tools';
  // Or the model's final answer, when the run ends on it at once (body-snapshot.ts): with no compaction to send first.
  const final = step === 'stop' && control.endsOnReplyAtOnce() && !compactions.scheduled;
  const after = compactions.heldInBody(turn, uncounted); // (or a server-side compaction's reply, held as the run adopts it)
  // The history as the run holds it once the body is done (replies as their role and content; one the body set, with the reply
  // it was given once), with the messages appended late after the final answer, which its compaction request leaves out
  // meanwhile. (Taken in the body of a reply it does not hold as asking, streaming or paused: its eager calls are not counted.)
  const history = after ? after.messages : turn?.inBody && turn.tookControl ? state.bodyHistory(turn.historyBefore ?? [], turn.reply) : state.messages;
  const messages = asMessageParams(state.heldLate ? [...history, ...state.heldLate] : history);
  const started = state.settings.runToolsEagerly ? (id: string) => answers.started(id) : undefined;
  const replyHeld = replyAdded || final || !turn?.inBody || after !== undefined;
  const snapshot = state.toJSON(answers.toJSON(), undefined, after ? after.toolChanges : answers.changes.toJSON(), control.toJSON(replyHeld), uncounted, messages, started, inContainerOfItsOwn(run.options.fallback, turn?.fallback, lendableClient(run.client)), replyHeld);
  if (after) holdCompactionReply(snapshot, after, state.heldLate !== undefined);
  if (requestsSent > 0) snapshot.requests = requestsSent;
  const hold = replyAdded ? 'asks' : final ? 'final' : step === 'resume' ? 'paused' : undefined; // (after the run's own messages)
  const added = reply && hold && holdBodyReply(snapshot, reply, hold, turn!.response, state.dropsRefusals);
  // (It goes on from the reply the snapshot's history holds: the body's; a streamed one's as once it is received.)
  const thread = run.thread.toJSON(state.threadView(messages), added, streamed && { reply: streamed, elsewhere: turn!.fallback !== undefined });
  if (thread) snapshot.thread = structuredClone(thread);
  // Taken while the calls of a message run, messages appended after it (over an SDK thread, whose history the run does not
  // reorder): they wait before it in the snapshot, as off one the run's history holds them (late-change.ts).
  const held = state.answering && !snapshot.late ? holdInSnapshot(snapshot.params.messages, history, state.answering) : undefined;
  if (held) snapshot.late = { at: held.at, count: held.count };
  // Taken before a reply's calls are answered (or with the body's answer): the resumed run checks the reply for compaction once they are.
  // So too one taken after the body set a history that goes on with the reply (a question pushed after it), as the run checks it.
  const bodyHeld = turn?.inBody === true && turn.tookControl && !turn.compaction && bodyHeldReply(history, turn.historyBefore ?? [], turn.reply ?? uncounted) !== undefined;
  const compaction = compactions.toJSON(replyAdded || bodyHeld || toolUsesOf(snapshot.params.messages.at(-1)).length > 0, after !== undefined);
  if (compaction) snapshot.compaction = structuredClone(compaction);
  return snapshot;
}

/**
 * A streamed reply whose `message` event came in the loop body, its stream not ended yet (the run counts it at the end): a
 * snapshot taken in that event's listener (the body pushed the reply and a question) counts it too, as paid for. It lacked
 * its usage and owed it no compaction check. (One whose `onMessage` hook failed has ended: the reply failed.)
 */
function messageBeforeEnd(turn: Turn | undefined): Turn['uncounted'] {
  const stream = turn?.inBody && turn.reply === undefined ? turn.stream : undefined;
  return stream && !stream.ended && !stream.errored && !stream.aborted ? stream.receivedMessages[0] : undefined;
}
