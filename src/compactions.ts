/**
 * Compaction during a run, both kinds: client-side (`compactionControl`: a summary request after a
 * reply past the threshold; what and when live in compaction.ts) and server-side (a request with
 * `compaction` scheduled by `compactBeforeNextTurn()`, whose compaction block replaces the history).
 */
import {
  type CompactionControl,
  CompactionTrigger,
  canCompact,
  compactedHistory,
  summaryRequestBody,
  summaryText,
  thresholdOf,
} from './compaction.js';
import type { RunContext } from './run-context.js';
import type { Requests } from './turn.js';
import type { BetaCompactionConfig, BetaMessage } from './types.js';
import { addUsage } from './usage.js';

export class Compactions {
  readonly #run: RunContext;
  readonly #requests: Requests;
  /** When client-side compaction summarises the history. */
  readonly #trigger = new CompactionTrigger();
  /** A server-side compaction scheduled with compactBeforeNextTurn(). */
  #scheduled: BetaCompactionConfig | undefined;

  constructor(run: RunContext, requests: Requests) {
    this.#run = run;
    this.#requests = requests;
  }

  schedule(config: BetaCompactionConfig): void {
    this.#scheduled = config;
  }

  /**
   * The server-side compaction to send as this iteration's request, if one is scheduled; never in
   * the middle of a paused turn (a history that ends with the assistant's reply).
   */
  takeScheduled(): BetaCompactionConfig | undefined {
    const scheduled = this.#scheduled;
    this.#scheduled = undefined;
    return this.#run.state.messages.at(-1)?.role === 'assistant' ? undefined : scheduled;
  }

  /**
   * Client-side compaction after a turn whose reply passed the threshold: ask for a summary (same
   * client, request options and hooks), go on from it.
   */
  async afterTurn(control: CompactionControl, reply: BetaMessage): Promise<void> {
    const { state, logger } = this.#run;
    const total = this.#trigger.check(control, reply.usage, logger);
    if (total === undefined || !canCompact(state.messages)) return;
    const body = summaryRequestBody(state.apiParams, state.messages, control, state.tools.definitions);
    logger.info(`Compaction: ${total} tokens > ${thresholdOf(control)}; summarising ${state.messages.length} messages`);
    const summaryReply = await this.#requests.summary(body);
    state.usage = addUsage(state.usage, summaryReply.usage);
    const summary = summaryText(summaryReply.content);
    if (!summary) {
      logger.warn('Compaction: the summary request returned no text; the conversation is kept as it is');
      return;
    }
    state.replaceHistory(compactedHistory(state.messages, summary, control.keepTurns ?? 0));
    this.#trigger.compacted();
  }

  /** After a server-side compaction request: the compaction block replaces the history. */
  adoptServerCompaction(reply: BetaMessage): 'continue' {
    const compacted = reply.content.some((block) => block.type === 'compaction' && block.content);
    if (compacted) this.#run.state.replaceHistory([{ role: 'assistant', content: reply.content }]);
    else this.#run.logger.warn('Compaction produced no summary; keeping the conversation as it is.');
    return 'continue';
  }
}
