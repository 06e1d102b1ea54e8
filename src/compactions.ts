/**
 * Compaction during a run, both kinds: client-side (`compactionControl`: a summary request after a
 * reply past the threshold; what and when live in compaction.ts) and server-side (a request with
 * `compaction` scheduled by `compactBeforeNextTurn()`, whose compaction block replaces the history).
 */
import { AnthropicError } from '@anthropic-ai/sdk';
import {
  type CompactionControl,
  CompactionTrigger,
  canCompact,
  compactedHistory,
  summaryRequestBody,
  summaryText,
  thresholdOf,
} from './compaction.js';
import { ContextOverflowError, type Overflow, contextOverflow, fitForSummary } from './context-overflow.js';
import { answerDanglingCalls, sameMessage, toolUsesOf } from './history.js';
import { appendedTo } from './late-change.js';
import type { RunContext } from './run-context.js';
import { type StoppedBy, unfinishedReply } from './stop-reason.js';
import type { CompactionJSON, ToolChangesJSON } from './snapshot.js';
import { rejectCompactionEdit } from './server-compaction.js';
import type { Requests } from './turn.js';
import type { Turn } from './turn-state.js';
import type { ToolChanges } from './tool-changes.js';
import type { BetaCompactionConfig, BetaMessage, BetaMessageParam } from './types.js';
import { addUsage } from './usage.js';

export class Compactions {
  readonly #run: RunContext;
  readonly #requests: Requests;
  readonly #toolChanges: ToolChanges;
  /** When client-side compaction summarises the history. */
  readonly #trigger: CompactionTrigger;
  /** A server-side compaction scheduled with compactBeforeNextTurn(), or sent and not yet adopted. */
  #server:
    | { status: 'scheduled'; config: BetaCompactionConfig }
    // `ending`: the stop the run ends on once this compaction, its last request, is done.
    | { status: 'in_flight'; config: BetaCompactionConfig; lastMessage: BetaMessage | undefined; ending: StoppedBy | undefined }
    | undefined;
  /** The last reply asked for tools and its compaction check is still to come (its calls not all answered, or its summary failed). */
  #owed: boolean;
  /**
   * The reply owed its check, by its first `tool_use` id (or itself and where it is, when it makes no call: a chat's answer
   * the loop body kept, a question after it): a history set since without that reply owes none.
   */
  #owedFor: OwedMark | undefined;

  /**
   * The stop the run had when its last request, a compaction scheduled before it stopped, failed: iterated again (or
   * resumed), the compaction goes again and the run ends so.
   */
  endingOn: StoppedBy | undefined;

  constructor(run: RunContext, requests: Requests, toolChanges: ToolChanges, snapshot?: CompactionJSON) {
    this.#run = run;
    this.#requests = requests;
    this.#toolChanges = toolChanges;
    this.#trigger = new CompactionTrigger(snapshot?.trigger);
    if (snapshot?.scheduled) this.#server = { status: 'scheduled', config: snapshot.scheduled };
    if (snapshot?.scheduled) this.endingOn = snapshot.ending;
    this.#owed = snapshot?.owed === true;
    // A snapshot's owed reply is its history's last (its calls then answered, or not yet).
    if (this.#owed) this.#owedFor = owedMark(run.state.messages, run.state.messages.findLast((message) => message.role === 'assistant'));
  }

  /**
   * What a snapshot keeps: a trigger not armed, a server-side compaction not adopted (sent again on
   * resume), a reply owed its compaction check; none at the start's state. `midTurn`: the snapshot's
   * history ends with calls not yet answered, whose reply is owed the check once they are.
   */
  toJSON(midTurn: boolean, replyHeld = false): CompactionJSON | undefined {
    const trigger = this.#trigger.state;
    // `replyHeld`: taken in the loop body of the server-side compaction's reply, which the snapshot holds (`historyAfter`).
    const server = replyHeld && this.#server?.status === 'in_flight' ? undefined : this.#server;
    const owed = this.#owed || (midTurn && this.#run.state.settings.compactionControl?.enabled === true && trigger !== 'off');
    if (trigger === 'armed' && !server && !owed) return undefined;
    const ending = server?.status === 'scheduled' ? this.endingOn : undefined;
    return { ...(trigger !== 'armed' && { trigger }), ...(server && { scheduled: server.config }), ...(ending && { ending }), ...(owed && { owed: true }) };
  }

  /** A server-side compaction waits to go out with the next request (or as the run's last, before it stops). */
  get scheduled(): boolean {
    return this.#server?.status === 'scheduled';
  }

  /** `compactBeforeNextTurn()`: ignored while a compaction is in flight, as in the SDK. */
  schedule(config: BetaCompactionConfig): void {
    if (this.#server?.status === 'in_flight') return;
    rejectCompactionEdit(this.#run.state.apiParams);
    this.#server = { status: 'scheduled', config };
  }

  /**
   * New params from the caller: no compaction edit while a compaction is pending, and no other
   * history while one is in flight, since its reply is about to replace it (the SDK's errors).
   */
  checkNewParams(apiParams: Record<string, unknown>, messages: readonly BetaMessageParam[]): void {
    if (!this.#server) return;
    rejectCompactionEdit(apiParams);
    if (this.#server.status === 'in_flight' && !sameMessages(messages, this.#run.state.messages)) {
      throw new AnthropicError(
        "Message params can't be changed while the conversation is being compacted, because the compaction response is about to replace them. Change them after this iteration instead.",
      );
    }
  }

  /**
   * This iteration's request: the scheduled compaction, if one goes, or the turn. A compaction whose
   * request never went (a tool source or its `onRequest` failed) is forgotten as a failed one is (`abandon`), or, when it
   * was the run's last request (`ending`: the stop the run ends on), asked for again, the run ending so.
   */
  send(resuming: boolean, ending: StoppedBy | undefined): Turn | Promise<Turn> {
    const compaction = this.#takeScheduled(resuming, ending);
    if (!compaction) return this.#requests.send();
    const notSent = (error: unknown): never => {
      this.abandon(ending !== undefined);
      this.endingOn = ending;
      throw error;
    };
    try {
      const sent = this.#requests.send(compaction);
      return sent instanceof Promise ? sent.catch(notSent) : sent;
    } catch (error) {
      return notSent(error);
    }
  }

  /**
   * The server-side compaction to send as this iteration's request, if one is scheduled; never to
   * resume a paused turn (the API can't compact a conversation that ends mid-turn).
   */
  #takeScheduled(resuming: boolean, ending: StoppedBy | undefined): BetaCompactionConfig | undefined {
    const server = this.#server;
    if (server?.status !== 'scheduled' || resuming) return undefined;
    rejectCompactionEdit(this.#run.state.apiParams);
    this.#server = { status: 'in_flight', config: server.config, lastMessage: this.#run.state.lastMessage, ending };
    return server.config;
  }

  /**
   * The run is about to stop: whether a scheduled compaction goes out first, as its last request.
   * A history that ends with calls never run can't be compacted: the compaction is dropped, with a warning.
   */
  beforeStop(): boolean {
    if (this.#server?.status !== 'scheduled') return false;
    if (toolUsesOf(this.#run.state.messages.at(-1)).length === 0) return true;
    this.#run.logger.warn(
      'The pending compaction was skipped because the last turn ended with tool calls that were not run. Call `compactBeforeNextTurn()` again if you continue the conversation.',
    );
    this.#server = undefined;
    return false;
  }

  /**
   * Client-side compaction after a turn whose reply passed the threshold: ask for a summary (same
   * client, request options and hooks), go on from it.
   */
  async afterTurn(control: CompactionControl, reply: BetaMessage): Promise<void> {
    const { state, logger } = this.#run;
    const total = this.#trigger.check(control, reply.usage, logger);
    if (total === undefined || !canCompact(state.messages)) return;
    logger.info(`Compaction: ${total} tokens > ${thresholdOf(control)}; summarising ${state.messages.length} messages`);
    try {
      // The messages after the turn (a follow-up typed while its reply streamed) stay verbatim after the summary.
      await this.#compact(control, state.messages, control.keepTurns ?? 0, undefined, true);
    } catch (error) {
      // The summary request carries the tool results the reply's usage did not count: it may be too long itself.
      const overflow = contextOverflow(error);
      const fitted = overflow && fitForSummary(state.messages, overflow, this.#otherChars());
      // Without the API's numbers nothing can be cut to fit: the same request would fail the same way.
      if (!fitted || fitted === state.messages) throw ContextOverflowError.from(error);
      logger.warn(`Compaction: the summary request was too long too; summarising ${state.messages.length} messages cut to fit, no turn kept verbatim`);
      // The messages the model has not replied to yet still stay after the summary, whole (only the summary request's copy is cut).
      await this.#compact(control, fitted, 0, undefined, true).catch((again: unknown) => Promise.reject(ContextOverflowError.from(again)));
    }
  }

  /** The last reply (`reply`, the history's last message by default) asks for tools: its compaction check comes once its calls are answered. */
  owe(reply: BetaMessageParam | undefined = this.#run.state.messages.at(-1)): void {
    if (this.#trigger.state === 'off') return;
    this.#owed = true;
    this.#owedFor = owedMark(this.#run.state.messages, reply);
  }

  /** The last reply asks for no tool: no summary follows, but its tokens say whether the last one helped. */
  answered(control: CompactionControl, reply: BetaMessage | undefined): void {
    this.#trigger.answered(control, reply?.usage);
  }

  /** Whether the last reply's compaction check is still to come (its calls not answered yet, or its summary failed). */
  get owed(): boolean {
    return this.#owed;
  }

  /**
   * The calls of the last reply are answered: compaction as after any turn (`allowed`: run control lets
   * a summary go). A summary request that fails leaves the check owed: iterating again makes it.
   */
  async afterAnswers(control: CompactionControl | undefined, allowed: boolean): Promise<void> {
    const { state } = this.#run;
    const reply = state.lastMessage;
    // The caller set a history without the reply (after a failed summary, or a stop): its check goes with it.
    const owedFor = this.#owedFor;
    if (owedFor !== undefined && !holdsOwed(state.messages, owedFor)) {
      this.#owed = false;
      return;
    }
    // Run control lets no summary go now (a limit stops the run): the check stays owed, for a run that goes on.
    if (!allowed) return;
    // A server-side compaction asked for (compactBeforeNextTurn) goes next and replaces the history: a client summary
    // first was paid for, then compacted again by the server (a summary of a summary).
    if (control?.enabled && reply && !this.scheduled) await this.afterTurn(control, reply);
    this.#owed = false;
  }

  /**
   * A request was rejected because the prompt is too long: with `compactionControl` enabled, compact
   * at once — the summary request over the history with its longest texts cut to fit the limit the
   * API gave, no turn kept verbatim — and resolve to true, so that the request goes again.
   */
  async afterOverflow(overflow: Overflow, signal?: AbortSignal | null): Promise<boolean> {
    const { state, logger } = this.#run;
    const control = state.settings.compactionControl;
    if (!control?.enabled || !canCompact(state.messages)) return false;
    const reached = this.#run.control.tokensReached();
    if (reached) {
      logger.warn(`Context overflow (the prompt is too long), not compacted: ${reached}`);
      return false;
    }
    const numbers = overflow.tokens === undefined ? '' : `: ${overflow.tokens} tokens > ${overflow.limit}`;
    logger.warn(`Context overflow (the prompt is too long${numbers}); compacting ${state.messages.length} messages at once and sending the request again`);
    return this.#compact(control, fitForSummary(state.messages, overflow, this.#otherChars()), 0, signal);
  }

  /** The characters a summary request sends besides the history: the system prompt and the tools. */
  #otherChars(): number {
    const { state } = this.#run;
    return JSON.stringify([state.apiParams['system'] ?? '', state.tools.definitions ?? []]).length;
  }

  /** Asks for a summary of `messages` (the history, or a copy cut to fit) and goes on from it; false when it has no text. */
  async #compact(control: CompactionControl, messages: readonly BetaMessageParam[], keepTurns: number, signal?: AbortSignal | null, keepUnanswered = false): Promise<boolean> {
    const { state } = this.#run;
    // A history with calls never answered (the caller went on from a stop for approval): answered as not run, as a turn's request does.
    const body = summaryRequestBody(state.apiParams, answerDanglingCalls(messages as BetaMessageParam[], state.notRun, state.ranResults), control, state.tools.definitions);
    const asked = state.messages;
    // Its usage counted (`summary`), taken in before its `onMessage` hook runs.
    return this.#requests.summary(body, signal, (summaryReply) => this.#adopt(summaryReply, asked, keepTurns, keepUnanswered));
  }

  /** Goes on from the summary `summaryReply` gave of `asked`, the history it was asked for; false when it has no text. */
  #adopt(summaryReply: BetaMessage, asked: BetaMessageParam[], keepTurns: number, keepUnanswered: boolean): boolean {
    const { state, logger } = this.#run;
    const unfinished = unfinishedReply(summaryReply.stop_reason);
    const summary = unfinished ? undefined : summaryText(summaryReply.content);
    if (!summary) {
      // A summary cut off mid-way (or refused) would lose what it had not written.
      // The reply's own figures: a fallback entry may have answered, with a model and `max_tokens` of its own.
      const why = summaryReply.stop_reason === 'max_tokens' ? `${unfinished} (${summaryReply.usage.output_tokens} tokens from ${summaryReply.model})` : (unfinished ?? 'returned no text');
      logger.warn(`Compaction: the summary request ${why}; the conversation is kept as it is, and compacting past the threshold is off for the rest of this run`);
      this.#trigger.giveUp();
      return false;
    }
    // Messages appended meanwhile (in the summary request's `onRequest`) go after the summary, not into it; a history
    // the caller set in their place is theirs: the summary of the one before is not adopted.
    const added = asked === state.messages ? [] : appendedTo(asked, state.messages);
    if (!added) {
      logger.info('Compaction: the history was set while its summary was asked for; it is kept, and the summary is not adopted');
      return true;
    }
    // With thinking `enabled` the turns kept begin with a thinking block, as the API requires (adaptive thinking may skip one).
    const thinking = (state.apiParams['thinking'] as { type?: unknown } | undefined)?.type === 'enabled';
    state.replaceHistory([...compactedHistory(asked, summary, keepTurns, thinking, keepUnanswered), ...added]);
    this.#summarisedAway(asked, state.messages);
    this.#trigger.compacted();
    // The history is compacted: no check is owed it (a snapshot taken in the summary's `onMessage` owed one, and the
    // resumed run summarised the summary).
    this.#owed = false;
    return true;
  }

  /**
   * The calls a summary took the place of: the model has their results no more, so the loop guard counts them no more (a
   * model that calls one again to read its result again is not told to use the result it has). The budget still does: they ran.
   */
  #summarisedAway(before: readonly BetaMessageParam[], after: readonly BetaMessageParam[]): void {
    if (!this.#run.options.loopGuard) return;
    const left = after.flatMap((message) => toolUsesOf(message));
    const kept = new Set(left.map((use) => use.id));
    const gone = before.flatMap((message) => toolUsesOf(message)).filter((use) => !kept.has(use.id));
    this.#run.control.summarisedAway(gone, left);
  }

  /**
   * Taken in the loop body of a server-side compaction's reply, a snapshot holds what the run holds once the body is done
   * (so that the resumed run neither asks for the compaction again nor, after the final answer, the model for another
   * turn): the compaction block alone, or without a summary the history as it is; the tools the history removed, still
   * removed (`keepRemovals`); the run's last reply then; the stop the run ends on, when it was its last request.
   * `arrived`: the reply not counted yet (its `onMessage` hook runs, or its stream's `message` came before its end).
   */
  heldInBody(turn: Turn | undefined, arrived: BetaMessage | undefined): CompactionHeld | undefined {
    const reply = turn?.inBody && turn.compaction ? (turn.reply ?? arrived) : undefined;
    if (!reply) return undefined;
    const server = this.#server?.status === 'in_flight' ? this.#server : undefined;
    const { messages } = this.#run.state;
    if (!hasSummary(reply)) return { messages, toolChanges: this.#toolChanges.toJSON(), lastMessage: server ? server.lastMessage : reply, ending: server?.ending };
    return { messages: [{ role: 'assistant', content: reply.content }], toolChanges: this.#toolChanges.toJSONKeepingRemovals(messages), lastMessage: reply, ending: server?.ending };
  }

  /**
   * After a server-side compaction request: the compaction block replaces the history. Without one
   * the conversation stays, and the run's last message is the last real reply again.
   */
  adoptServerCompaction(reply: BetaMessage): void {
    const server = this.#server;
    this.#server = undefined;
    const { state, logger } = this.#run;
    if (hasSummary(reply)) {
      // The history's tool removals go on withdrawing their tools once it is replaced (as the SDK records them).
      this.#toolChanges.keepRemovals(state.messages);
      const replaced = state.messages;
      const before = replaced.at(-1);
      state.replaceHistory([{ role: 'assistant', content: reply.content }]);
      this.#summarisedAway(replaced, state.messages);
      // A run that had ended on its answer (at a limit) ends on its compacted history in the same way.
      this.#run.control.historyReplaced(before);
      return;
    }
    logger.warn('Compaction produced no summary; keeping the conversation as it is.');
    if (server?.status === 'in_flight') state.lastMessage = server.lastMessage;
  }

  /**
   * The compaction turn ended without its reply adopted (it failed, or the loop body broke out): forget it, as the SDK does;
   * `again`: it was the run's last request, after the final reply, and failed: it goes again when the run is iterated again.
   */
  abandon(again = false): void {
    const server = this.#server;
    if (server?.status === 'in_flight') this.#server = again ? { status: 'scheduled', config: server.config } : undefined;
  }
}

/** What a snapshot taken in the loop body of a server-side compaction's reply holds (`heldInBody`). */
export interface CompactionHeld {
  messages: BetaMessageParam[];
  toolChanges: ToolChangesJSON | undefined;
  lastMessage: BetaMessage | undefined;
  ending: StoppedBy | undefined;
}

function sameMessages(a: readonly BetaMessageParam[], b: readonly BetaMessageParam[]): boolean {
  return a.length === b.length && a.every((message, i) => sameMessage(message, b[i]!));
}

/** A server-side compaction's reply holds a summary: a compaction block with content. */
function hasSummary(reply: BetaMessage): boolean {
  return reply.content.some((block) => block.type === 'compaction' && block.content);
}

/** How the reply owed its check is told in a history set since (`owedMark`). */
type OwedMark = string | { message: BetaMessageParam; at: number };

/**
 * How the reply owed its check is told in a history set since: its first call's id, or (a reply of no call) the message,
 * compared by value, where it was (a chat's answer has no id of its own: without it, a history set in its place after a
 * summary that failed was summarised all the same, on the tokens of the reply it no longer held; and not found anywhere
 * else: an earlier answer of the same words, 'Done.', in a history the caller set without the reply is not the reply).
 */
function owedMark(messages: readonly BetaMessageParam[], message: BetaMessageParam | undefined): OwedMark | undefined {
  return firstCallId(message) ?? (message?.role === 'assistant' ? { message, at: messages.lastIndexOf(message) } : undefined);
}

function holdsOwed(messages: readonly BetaMessageParam[], owedFor: OwedMark): boolean {
  if (typeof owedFor === 'string') return messages.some((message) => message.role === 'assistant' && firstCallId(message) === owedFor);
  // The same object, unless the caller set a copy (a history saved as JSON and read back): the same then by value. (A
  // history set with messages taken out before the reply owes it no check either: its tokens counted those messages.)
  const held = messages[owedFor.at];
  return held?.role === 'assistant' && (held.content === owedFor.message.content || sameMessage(held, owedFor.message));
}

/** The id of a message's first `tool_use` block, if it makes calls. */
function firstCallId(message: BetaMessageParam | undefined): string | undefined {
  return toolUsesOf(message)[0]?.id;
}
