/**
 * What the run does after the loop body, each turn: keeps the reply in the history (or the history the body set),
 * takes in what was changed late (while the reply came) or appended to an SDK thread, and answers the reply's calls;
 * a reply that ends the run goes through its output check. The loop itself, which calls `finishTurn`, is runner.ts.
 */
import { bodyHeldReply } from './compaction.js';
import { keptReply, toolUsesOf } from './history.js';
import { appendedTo } from './late-change.js';
import { RunnerControls } from './runner-controls.js';
import { runSignal } from './run-context.js';
import { type RunExit, handBackHistory } from './sdk-thread.js';
import { nextStepFor } from './stop-reason.js';
import { type Turn, resultsGivenInBody } from './turn-state.js';
import type { BetaMessage, BetaMessageParam } from './types.js';

export abstract class RunnerAfterBody extends RunnerControls {
  /** Over an SDK thread, the calls started by the reply the run failed on, with their answers (the thread may keep it). */
  protected startedBeforeBreak: ReadonlyMap<string, string> | undefined;

  /** After the loop body: append the reply and its tool results (unless the body took control). */
  protected async finishTurn(turn: Turn): Promise<'continue' | 'resume' | 'stop' | 'pending'> {
    if (turn.compaction) {
      // What the program appended to an SDK thread meanwhile goes after the summary, as in the SDK's runner.
      const added = this.takeThreadChanges(true);
      this.compactions.adoptServerCompaction(await turn.message);
      if (added.length > 0 && this.state.messages.at(-1) !== added.at(-1)) this.state.messages.push(...added);
      return 'continue';
    }
    if (!turn.tookControl) {
      const reply = turn.reply ?? (await turn.message);
      turn.afterBody = false;
      // Changed late (after the body, while the reply came): appended messages go after the reply, or the reply goes.
      const late = turn.sentHistory && this.#takeLateChange(turn, turn.sentHistory, reply);
      if (late) return late;
    }
    if (!turn.tookControl) {
      const reply = turn.reply ?? (await turn.message);
      // On a message thread a refused turn is not kept: the next request replays without it (the SDK's rule).
      if (reply.stop_reason === 'refusal' && this.state.dropsRefusals) {
        // The calls it started while streaming stop with it, as for any reply not kept.
        const abandoned = this.answers.abandonEager();
        if (abandoned) await abandoned;
        return this.#ends(reply, undefined);
      }
      const { kept, renamed } = keptReply(reply);
      // An empty reply (or one of blank text only) is not kept either: the API takes empty content only
      // in the last message, and a paused one goes back as the history was.
      if (kept.content.length === 0) {
        // The server's thread holds the reply the history does not: only a request that adds nothing goes on from it.
        this.run.thread.notKept(reply);
        return nextStepFor(reply.stop_reason) === 'resume' ? 'resume' : this.#ends(reply, undefined);
      }
      for (const [id, text] of renamed) this.state.markNotRun(id, text);
      // The server's thread holds the reply with its repeated ids: the next request replays the history as kept.
      if (renamed.size > 0) this.run.thread.restart();
      this.state.messages.push(kept);
      if (this.state.late) this.state.late.reply = kept;
      this.state.recordReply(reply, kept);
      const step = nextStepFor(reply.stop_reason);
      if (step === 'stop') return this.#ends(reply, kept);
      if (step !== 'run_tools') return step;
      // (Off an SDK thread, not even the call: an async step costs every turn.)
      const answered = this.overSdkThread ? await this.#answeredOnThread(reply, kept) : undefined;
      if (answered) return answered;
    }
    if (turn.tookControl) {
      this.state.takeBodyHistory(turn.historyBefore ?? [], turn.reply);
      // Over an SDK thread, the thread takes the history the body set once the body is done, as in the SDK's runner.
      this.handBackHistory('ended', false);
      // The calls the reply started while it streamed, if the history no longer makes them, stop (and count no more) first.
      const dropped = this.answers.abandonEagerIfDropped(this.state.messages.at(-1));
      if (dropped) await dropped;
      if (turn.inFlight) this.state.keepRanResults(await resultsGivenInBody(turn, this.state.messages));
    }
    const compaction = this.state.settings.compactionControl;
    // A history the loop body set that goes on from the one the reply answered, and holds the reply (compaction.ts). The
    // reply once counted: a stream's `finalMessage()` has it while an `onMessage` hook still runs (the body pushed it then,
    // and the check was skipped); and never the run's reply before it, which a reply that failed leaves as the last. A
    // stream is waited for once it ended, or when its message came and the body added an assistant message (its reply, from
    // the `message` event): one the body dropped mid-way (a question in its place, or the part read so far kept as an answer
    // of its own) was streamed to its end before the next request, and a stall hung the run, where its stream is aborted at once.
    const stream = turn.stream;
    const mayHold = stream === undefined || stream.ended || (stream.receivedMessages.length > 0 && addsAssistant(this.state.messages, turn.historyBefore ?? []));
    const counted = compaction?.enabled && turn.tookControl ? (turn.reply ?? (mayHold ? await turn.message.catch(() => undefined) : undefined)) : undefined;
    const held = counted && bodyHeldReply(this.state.messages, turn.historyBefore ?? [], counted);
    // The reply is owed its compaction check once its calls are answered (now, or when a stop for approval or a failure is over).
    if (!turn.tookControl && compaction?.enabled && toolUsesOf(this.state.messages.at(-1)).length > 0) this.compactions.owe();
    else if (held) this.compactions.owe(held);
    else if (compaction?.enabled) this.compactions.answered(compaction, this.state.lastMessage);
    const answered = await this.answers.answerLastMessage(turn);
    if (answered === 'none') {
      if (!turn.tookControl) return this.#ends(turn.reply ?? (await turn.message), this.state.messages.at(-1));
      this.control.bodyWentOn();
    }
    if (answered === 'pending') return 'pending';
    if (this.compactions.owed) {
      // Over an SDK thread, what the program appended to it in the loop body joins the history now, after the results:
      // taken in after a summary, it followed a history the compacted one no longer began with, and was lost.
      this.takeThreadChanges(true);
      await this.compactions.afterAnswers(compaction, this.control.maySummarise());
    }
    return 'continue';
  }

  /**
   * The caller changed the history after the loop body, while the reply came (late-change.ts): what it appended waits for
   * the reply and its results; a history that no longer begins with the one sent drops the reply (the body's way), and
   * ends the run when the reply did.
   */
  #takeLateChange(turn: Turn, sent: readonly BetaMessageParam[], reply: BetaMessage): Promise<'stop' | 'continue'> | undefined {
    const added = appendedTo(sent, this.state.messages);
    if (added) {
      // Kept in the history before the reply (last while its calls are unanswered), then moved after its results.
      if (added.length > 0) this.state.late = { at: sent.length, count: added.length };
      return undefined;
    }
    if (nextStepFor(reply.stop_reason) === 'stop') return this.#ends(reply, undefined);
    turn.tookControl = true;
    turn.historyBefore = sent;
    return undefined;
  }

  /**
   * Over an SDK thread, results the program (or another run) appended to the thread past the reply answer its calls:
   * the history takes them in (with what follows them), and none of the calls runs, as in the SDK's runner. Undefined
   * when nothing answers them, or when what was taken in ends with calls of its own, which are answered as usual.
   */
  async #answeredOnThread(reply: BetaMessage, kept: BetaMessageParam): Promise<'continue' | 'stop' | undefined> {
    if (this.takeThreadChanges(true).length === 0) return undefined;
    const last = this.state.messages.at(-1)!;
    const dropped = this.answers.abandonEagerIfDropped(last);
    if (dropped) await dropped;
    // The thread ended on a reply of another run over it: nothing to send, as in the SDK's runner.
    if (last.role === 'assistant' && toolUsesOf(last).length === 0) return this.#ends(reply, kept);
    this.control.bodyWentOn();
    return last.role === 'user' ? 'continue' : undefined;
  }

  /** The run ends on the model's reply, unless its output gets a repair turn (`options.output`). */
  async #ends(reply: BetaMessage, kept: BetaMessageParam | undefined): Promise<'stop' | 'continue'> {
    return (await this.control.settle(reply, kept, runSignal(this.run))) === 'repair' ? 'continue' : 'stop';
  }

  /**
   * A run over an SDK thread (`toolRunner(thread, …)`) leaves its whole history in the thread; `takingChanges`: with what
   * the program changed on the thread first (not for a history the loop body set, which replaces the thread's).
   */
  protected handBackHistory(exit: RunExit, takingChanges = exit !== 'left'): void {
    try {
      if (takingChanges) this.takeThreadChanges();
      const notRun = this.startedBeforeBreak ? new Map([...this.startedBeforeBreak, ...(this.state.notRun ?? [])]) : this.state.notRun;
      handBackHistory(this.run.client, this.state.messages, exit, notRun);
    } catch (error) {
      this.run.logger.warn(`The run's last messages could not be handed back to its thread: ${(error as Error).message}`);
    }
  }
}

/** Whether a history the loop body set holds an assistant message past `before` (the history the reply answered). */
function addsAssistant(messages: readonly BetaMessageParam[], before: readonly BetaMessageParam[]): boolean {
  for (let i = before.length; i < messages.length; i++) if (messages[i]!.role === 'assistant') return true;
  return false;
}
