/**
 * Client-side compaction: when a reply's token total passes the threshold, the runner asks the
 * model for a summary and goes on from it, keeping the last turns verbatim if asked.
 */
import { unknownOption, wrongValue } from './described.js';
import { extendsHistory, sameKeptMessage, toolUsesOf } from './history.js';
import { type FallbackTarget, TOOL_CHOICE_NONE, bodyFor } from './fallback.js';
import type { LeveledLogger } from './log.js';
import { textOf } from './text.js';
import type { BetaMessage, BetaMessageParam, BetaUsage } from './types.js';

/** `compactionControl` in the params (the SDK's name and defaults, plus `keepTurns`). */
export interface CompactionControl {
  enabled: boolean;
  /** Compact after a reply whose input + cache creation + cache read + output tokens pass this. Default 100,000. */
  contextTokenThreshold?: number | undefined;
  /** The model that writes the summary (default: the run's model). */
  model?: string | undefined;
  /** Sent verbatim as the last user message of the summary request. */
  summaryPrompt?: string | undefined;
  /**
   * Turns (an assistant message and the user message that answers it) kept verbatim after the
   * summary. Default 0: everything is summarised — the smallest context, but the model loses the
   * exact wording of the latest tool results. A few turns keep recent detail at the cost of tokens.
   */
  keepTurns?: number | undefined;
}

const COMPACTION_CONTROL_KEYS = ['enabled', 'contextTokenThreshold', 'model', 'summaryPrompt', 'keepTurns'];

export const DEFAULT_CONTEXT_TOKEN_THRESHOLD = 100_000;

export const DEFAULT_SUMMARY_PROMPT = `You have been working on the task above but have not finished it yet. Write a summary that lets you continue the work in a fresh context, where the conversation so far will be replaced by it. Include:
1. The task: what the user asked for, with every requirement and constraint.
2. Progress: what has been done, with the results of tool calls that still matter (exact values, names, ids, paths).
3. Current state: what you were doing when the conversation was interrupted.
4. Next steps: what remains to be done, in order.
Be concise but complete: anything you leave out is lost. Wrap the summary in <summary></summary> tags.`;

/** The reply's token total, as the threshold compares it. */
export function totalTokens(usage: Partial<BetaUsage> | null | undefined): number {
  if (!usage) return 0;
  return (
    (usage.input_tokens ?? 0) +
    (usage.cache_creation_input_tokens ?? 0) +
    (usage.cache_read_input_tokens ?? 0) +
    (usage.output_tokens ?? 0)
  );
}

/** Checks `compactionControl` at construction. */
export function checkCompactionControl(control: CompactionControl | undefined): void {
  if (control === undefined) return;
  if (typeof control !== 'object' || control === null || typeof control.enabled !== 'boolean') {
    throw new TypeError('toolRunner: compactionControl must be an object with `enabled: boolean`');
  }
  // A misspelt key would be left unused in silence (the default threshold applying instead).
  for (const key of Object.keys(control)) if (!COMPACTION_CONTROL_KEYS.includes(key)) throw unknownOption('toolRunner: compactionControl', key, COMPACTION_CONTROL_KEYS);
  const { contextTokenThreshold: threshold, keepTurns } = control;
  if (threshold !== undefined && !(Number.isFinite(threshold) && threshold > 0)) {
    throw wrongValue(threshold, 'toolRunner: compactionControl.contextTokenThreshold must be a positive number');
  }
  if (keepTurns !== undefined && !(Number.isInteger(keepTurns) && keepTurns >= 0)) {
    throw wrongValue(keepTurns, 'toolRunner: compactionControl.keepTurns must be a whole number');
  }
}

/**
 * The history can be compacted when it ends a turn: its last message (before the `system` messages
 * of tool changes for the next request) answers the calls before it, or is the caller's, so no
 * `tool_use` is cut from its `tool_result`.
 */
export function canCompact(messages: readonly BetaMessageParam[]): boolean {
  const end = endOfConversation(messages);
  return end >= 2 && messages[end - 1]!.role === 'user';
}

/** The index after the last message that is not a `system` message (tool changes). */
function endOfConversation(messages: readonly BetaMessageParam[]): number {
  let end = messages.length;
  while (end > 0 && isToolChanges(messages[end - 1]!)) end--;
  return end;
}

/** A `system` message: the tool changes the runner (or the caller) told the model of. */
const isToolChanges = (message: BetaMessageParam) => (message.role as string) === 'system';

/**
 * Where the verbatim tail starts: at the assistant message that begins the `keepTurns`-th last turn. With `thinking`
 * (`enabled`), a kept part must begin with a thinking block (the API refuses a last assistant turn that does not: in a
 * tool loop without interleaved thinking only a turn's first reply has one), so the start moves to a later turn that
 * does, or to the end (all summarised): fewer turns kept, never more.
 */
export function tailStart(messages: readonly BetaMessageParam[], keepTurns: number, thinking = false): number {
  if (keepTurns === 0) return messages.length;
  const starts: number[] = [];
  for (let i = messages.length - 1; i > 0 && starts.length < keepTurns; i--) {
    // A turn begins at an assistant message that follows a user message (tool changes between them aside).
    let before = i - 1;
    while (before > 0 && isToolChanges(messages[before]!)) before--;
    if (messages[i]!.role === 'assistant' && messages[before]!.role === 'user') starts.push(i);
  }
  if (starts.length < keepTurns) starts.push(1);
  if (!thinking) return starts.at(-1)!;
  return starts.reverse().find((start) => beginsWithThinking(messages[start]!)) ?? messages.length;
}

function beginsWithThinking(message: BetaMessageParam | undefined): boolean {
  const first = Array.isArray(message?.content) ? message.content[0] : undefined;
  return first?.type === 'thinking' || first?.type === 'redacted_thinking';
}

/**
 * The tool changes a message of the summarised part makes: a `system` message of them, or a server-side compaction's
 * `tool_changes` (its block goes with the part), as one: without them a tool it withdrew ran again, and the model lost one it added.
 */
function toolChangesOf(message: BetaMessageParam): BetaMessageParam[] {
  if (isToolChanges(message)) return [message];
  if (message.role !== 'assistant' || !Array.isArray(message.content)) return [];
  const blocks = message.content as ReadonlyArray<{ type?: unknown; tool_changes?: unknown }>;
  const carried = blocks.flatMap((block) => (block.type === 'compaction' && Array.isArray(block.tool_changes) ? (block.tool_changes as unknown[]) : []));
  return carried.length > 0 ? [{ role: 'system', content: carried } as unknown as BetaMessageParam] : [];
}

/** How the first message of a compacted history begins (output.ts tells it from a message of the caller's). */
export const COMPACTED_INTRO_START = 'This session continues from an earlier conversation that was compacted to save context.';

/**
 * The history after compaction: the summary as the first user message, the tool changes of the
 * summarised part (a summary does not carry which tools were added or removed), then the kept turns.
 */
export function compactedHistory(
  messages: readonly BetaMessageParam[],
  summary: string,
  keepTurns: number,
  thinking = false,
  keepUnanswered = false,
): BetaMessageParam[] {
  const turns = tailStart(messages, keepTurns, thinking);
  const start = keepUnanswered ? Math.min(turns, unansweredStart(messages)) : turns;
  const tail = messages.slice(start);
  const changes = messages.slice(0, start).flatMap(toolChangesOf);
  const intro: BetaMessageParam = {
    role: 'user',
    content: [
      {
        type: 'text',
        text: `${COMPACTED_INTRO_START} Its summary:\n\n${summary}${
          tail.some((message) => message.role === 'assistant') ? '\n\nThe most recent turns follow verbatim.' : '\n\nContinue the work from here.'
        }`,
      },
    ],
  };
  // The tail starts at an assistant message whose calls are answered inside the tail.
  if (tail.length > 0 && toolUsesOf(tail.at(-1)).length > 0) return [intro, ...changes, ...tail.slice(0, -1)];
  return [intro, ...changes, ...tail];
}

/**
 * Where the messages the model has not replied to begin: those after its last reply and the results that answer it (a
 * follow-up the user typed while the reply streamed, a question pushed at a stop), else the end. They are the caller's
 * words, not yet read: a summary would put the model's paraphrase in their place (or leave them out), so they stay verbatim.
 */
export function unansweredStart(messages: readonly BetaMessageParam[]): number {
  const last = messages.findLastIndex((message) => message.role === 'assistant');
  if (last < 1) return messages.length;
  // The results that answer the reply's calls are its turn's (calls not answered yet, cut off by max_tokens say, the
  // summary request answers as not run, before what follows).
  return isResults(messages[last + 1]) ? last + 2 : last + 1;
}

function isResults(message: BetaMessageParam | undefined): boolean {
  return message?.role === 'user' && Array.isArray(message.content) && message.content.some((block) => block.type === 'tool_result');
}

/** The summary text of a reply: inside <summary> tags if it used them, else all its text. */
export function summaryText(content: ReadonlyArray<{ type: string; text?: string }>): string {
  const text = content
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text)
    .join('\n');
  const tagged = /<summary>([\s\S]*?)<\/summary>/.exec(text);
  return (tagged ? tagged[1]! : text).trim();
}

/**
 * When to compact: after a reply past the threshold. If the first reply after a compaction is
 * still past it, warn once and stop compacting for the run instead of compacting in a loop.
 */
export class CompactionTrigger {
  #state: 'armed' | 'just-compacted' | 'off';

  /** `state`: a snapshot's (compactions.ts). */
  constructor(state: 'armed' | 'just-compacted' | 'off' = 'armed') {
    this.#state = state;
  }

  get state(): 'armed' | 'just-compacted' | 'off' {
    return this.#state;
  }

  /** After a reply: its token total if a summary should follow now, else `undefined`. */
  check(control: CompactionControl, usage: Partial<BetaUsage> | null | undefined, logger: LeveledLogger): number | undefined {
    if (this.#state === 'off') return undefined;
    const total = totalTokens(usage);
    const threshold = thresholdOf(control);
    if (total <= threshold) {
      this.#state = 'armed';
      return undefined;
    }
    if (this.#state === 'just-compacted') {
      this.#state = 'off';
      logger.warn(
        `Compaction: the context is still ${total} tokens after compacting (threshold ${threshold}); compaction is off for the rest of this run to avoid a loop. Raise contextTokenThreshold or shorten the system prompt and tools.`,
      );
      return undefined;
    }
    return total;
  }

  /**
   * A reply that asks for no tool (no summary follows it): under the threshold, it says the last
   * summary helped, and a later reply past it is compacted again.
   */
  answered(control: CompactionControl, usage: Partial<BetaUsage> | null | undefined): void {
    if (this.#state === 'just-compacted' && totalTokens(usage) <= thresholdOf(control)) this.#state = 'armed';
  }

  /** The history was replaced by a summary (an overflow's too): the next reply tells whether that helped. Off stays off. */
  compacted(): void {
    if (this.#state !== 'off') this.#state = 'just-compacted';
  }

  /** A summary came back unusable (cut off, or no text): no more summaries for this run, rather than one a turn. */
  giveUp(): void {
    this.#state = 'off';
  }
}

export const thresholdOf = (control: CompactionControl): number => control.contextTokenThreshold ?? DEFAULT_CONTEXT_TOKEN_THRESHOLD;

/**
 * The summary request: the run's params (less what would shape, cut or edit the answer), the history
 * and the summary prompt; the tools stay defined (the history refers to them) but cannot be called.
 */
export function summaryRequestBody(
  apiParams: Record<string, unknown>,
  messages: readonly BetaMessageParam[],
  control: CompactionControl,
  toolDefinitions: readonly unknown[] | undefined,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    ...withoutAnswerShaping(apiParams),
    model: control.model ?? apiParams['model'],
    messages: [...messages, { role: 'user', content: control.summaryPrompt ?? DEFAULT_SUMMARY_PROMPT }],
    stream: false,
  };
  if (toolDefinitions) {
    body['tools'] = toolDefinitions;
    body['tool_choice'] = TOOL_CHOICE_NONE;
  }
  return body;
}

/**
 * The params less what would shape, cut or edit an answer, which a summary goes without. The run's stop sequences shape
 * its turns' answers, not the summary: one the summary wrote would cut it there, and the part before it would be adopted
 * (a stop sequence is a finished reply), the rest lost (the SDK's compaction drops them too).
 */
function withoutAnswerShaping(params: Record<string, unknown>): Record<string, unknown> {
  const { output_format: _format, tool_choice: _choice, context_management: _edits, stop_sequences: _stops, ...fields } = params;
  // A summary is text: no structured output format (the caller's other output_config keys stay).
  const config = fields['output_config'];
  if (typeof config === 'object' && config !== null && 'format' in config) {
    const { format: _outputFormat, ...rest } = config as Record<string, unknown>;
    fields['output_config'] = rest;
  }
  return fields;
}

/** A summary request as fallback entry `target` sends it: its params over the body, less what a summary goes without, as the run's are. */
export function summaryBodyFor(target: FallbackTarget, body: Record<string, unknown>): Record<string, unknown> {
  const sent = withoutAnswerShaping(bodyFor(target, body));
  if (body['tool_choice'] !== undefined) sent['tool_choice'] = body['tool_choice'];
  return sent;
}

/**
 * The reply as a history the loop body set holds it, when that history is owed the reply's compaction check (after the
 * body, and in a snapshot taken in it): it goes on from `before`, the history the reply answered, and holds the reply
 * (results the body built, a question pushed after an answer: a chat), so the reply's tokens tell the context's, as for
 * a turn the runner appended. (Never checked, the history grew past the threshold turn after turn until the API refused
 * it as too long.) Not one the body cut to a window of its own: the reply's tokens counted what the body took out, and a
 * summary of the few messages left replaced them.
 */
export function bodyHeldReply(messages: readonly BetaMessageParam[], before: readonly BetaMessageParam[], reply: BetaMessage | undefined): BetaMessageParam | undefined {
  if (!reply || !extendsHistory(messages, before)) return undefined;
  const held = { role: reply.role, content: reply.content } as BetaMessageParam;
  // An answer (a reply of no call) a chat keeps as its text (`content: textOf(message)`): the reply held all the same.
  const answer = toolUsesOf(held).length === 0 ? textOf(reply) : '';
  // Past `before` only: an earlier answer of the same words ('Done.') is not the reply, which the body dropped.
  return messages
    .slice(before.length)
    .findLast((message) => message.role === 'assistant' && (message.content === reply.content || sameKeptMessage(message, held) || (answer !== '' && keptAsText(message, answer))));
}

/** Whether an assistant message is `answer` as text alone: a string, or one text block. */
function keptAsText(message: BetaMessageParam, answer: string): boolean {
  const { content } = message;
  if (typeof content === 'string') return content === answer;
  const only = Array.isArray(content) && content.length === 1 ? content[0] : undefined;
  return only?.type === 'text' && only.text === answer;
}
