/**
 * Runnable toolsets in `tools` (the SDK's browser and computer toolsets, any `BetaRunnableToolset`):
 * one nameless entry declares a family of member tools; each member call is a `tool_use` whose
 * `toolset_name` is the family. Calls are dispatched on `(toolset_name, name)`, never on the name
 * alone (a custom tool may be called `navigate`); the results echo `toolset_name`; a toolset runs
 * its calls of one message one at a time in the model's order, and once one fails, its later calls
 * in that message are answered as not executed. The member call itself, and the toolset contract,
 * follow the SDK's toolset contract (toolset-member.ts), so results and errors read as the SDK's.
 */
import type { BetaRunnableToolset } from '@anthropic-ai/sdk/lib/tools/BetaRunnableToolset';
import { notExecutedText, quotedName, runToolsetMember, toolsetResultBlock } from './toolset-member.js';
import type { BetaToolResultBlockParam, BetaToolUseBlock } from './types.js';
import { abortedUnstartedText, stoppedForLog, stoppedText } from './call-texts.js';
import { ownSignal, runWithGuards, untilAborted } from './guards.js';
import { abortedAsNotKept } from './eager-starts.js';
import { setContentToSend } from './result-sent.js';
import { safeJson } from './described.js';
import type { LeveledLogger } from './log.js';

/** What a member's call is guarded by: the run's signal, `toolTimeoutMs`, `maxToolResultChars`; and the run's logger. */
interface MemberGuards {
  logger: LeveledLogger;
  signal: AbortSignal | undefined;
  toolTimeoutMs: number | undefined;
  maxToolResultChars: number;
}

/** The dated `tools` entry types of the toolsets the SDK defines, and the family their calls name. */
const FAMILIES: Readonly<Record<string, string>> = { browser_toolset_20260801: 'browser', computer_toolset_20260801: 'computer' };

/** Whether a `tools` entry is a toolset the runner runs (a known toolset type with a `run`). */
export function isRunnableToolset(entry: unknown): entry is BetaRunnableToolset {
  if (typeof entry !== 'object' || entry === null) return false;
  const { type, run } = entry as { type?: unknown; run?: unknown };
  return typeof run === 'function' && typeof type === 'string' && Object.prototype.hasOwnProperty.call(FAMILIES, type);
}

/** The family a toolset's calls name in `toolset_name`. */
export function toolsetFamily(toolset: { type: string }): string {
  return FAMILIES[toolset.type]!;
}

/** A member call's family: its `toolset_name`. */
export function familyOf(toolUse: BetaToolUseBlock): string | undefined {
  const family = (toolUse as { toolset_name?: unknown }).toolset_name;
  return typeof family === 'string' ? family : undefined;
}

/** A call named after one of the run's toolsets, without `toolset_name`, and no tool of that name: a toolset call with malformed actions. */
export function isMalformedToolsetCall(use: BetaToolUseBlock, toolsets: ReadonlyMap<string, unknown>, tools: ReadonlyMap<string, unknown>): boolean {
  return familyOf(use) === undefined && toolsets.has(use.name) && !tools.has(use.name);
}

/** Whether a message calls a toolset member (without a closure per turn). */
export function someToolsetCall(uses: readonly BetaToolUseBlock[]): boolean {
  for (const use of uses) if (familyOf(use) !== undefined) return true;
  return false;
}

const NO_TOOLSETS: ReadonlyMap<string, BetaRunnableToolset> = new Map();

/**
 * The name the API knows a toolset entry by (runnable or a plain definition): its family, which no other tool of the
 * request may be named (the API refuses the request); `undefined` for any other entry.
 */
export function toolsetEntryName(entry: object): string | undefined {
  const { type } = entry as { type?: unknown };
  return typeof type === 'string' && Object.prototype.hasOwnProperty.call(FAMILIES, type) ? FAMILIES[type] : undefined;
}

/** The toolsets among a run's tools, by family. */
export function toolsetsOf(tools: readonly unknown[] | undefined): ReadonlyMap<string, BetaRunnableToolset> {
  let toolsets: Map<string, BetaRunnableToolset> | undefined;
  for (const entry of tools ?? []) if (isRunnableToolset(entry)) (toolsets ??= new Map()).set(toolsetFamily(entry), entry);
  return toolsets ?? NO_TOOLSETS;
}

/**
 * A definition's family as the API computes it for a toolset: its type without the date and without
 * `_toolset` (so `computer_20250124` is the computer family).
 */
export function definitionFamily(tool: unknown): string {
  const type = (tool as { type?: unknown }).type;
  return (typeof type === 'string' ? type : 'custom').replace(/_\d{8}$/, '').replace(/_toolset$/, '');
}

/**
 * A toolset member's call within `toolTimeoutMs` and the run's signal, its result cut to `maxToolResultChars`: a member
 * that ignores its signal is left behind when the run aborts, as a tool is (the run waited for it, for ever for one that
 * hangs). One whose turn in line comes after the run aborted never starts (a click after "stop").
 */
export async function runMemberGuarded(toolset: BetaRunnableToolset | undefined, family: string, toolUse: BetaToolUseBlock, context: MemberGuards): Promise<BetaToolResultBlockParam> {
  if (context.signal?.aborted) return toolsetResultBlock(toolUse, abortedUnstartedText(toolUse.name), true);
  const timeoutMs = context.toolTimeoutMs;
  let result: BetaToolResultBlockParam;
  const { logger } = context;
  if (logger.enabled('debug')) logger.debug(`Running tool '${toolUse.name}' (${toolUse.id}) of the ${family} toolset with input ${safeJson(toolUse.input)}`);
  // Nothing can stop it (no signal, no timeout): the member's own outcome, with no signal, as the SDK's runner gives it.
  if (timeoutMs === undefined && !context.signal) result = await runToolsetCall(toolset, family, toolUse, undefined, logger);
  else {
    let member: Promise<BetaToolResultBlockParam> | undefined;
    const outcome = await runWithGuards((signal) => (member = runToolsetCall(toolset, family, toolUse, ownSignal(signal), logger)), context.signal, timeoutMs);
    if ('thrown' in outcome) throw outcome.thrown;
    if (outcome.ok) result = outcome.value as BetaToolResultBlockParam;
    else {
      // Started by a reply that was not kept (runToolsEagerly), not stopped by the run: the turn may go again at once and call
      // the toolset again, which takes one call at a time (two clicks at once on one screen). Its own outcome, once it ends
      // (with no toolTimeoutMs to bound the wait), unless the run aborts meanwhile: it is left behind then, as any call is.
      const notKept = member && timeoutMs === undefined ? abortedAsNotKept(context.signal) : undefined;
      const own = notKept && member && (notKept.run ? await untilAborted(member, notKept.run) : { aborted: false as const, value: await member });
      if (own && !own.aborted) result = own.value;
      else {
        // Logged as a tool's stopped call is (execute.ts): a member that hangs was not even at warn.
        logger.warn(`Tool '${toolUse.name}' (${toolUse.id}) of the ${family} toolset ${stoppedForLog(outcome)}`);
        result = toolsetResultBlock(toolUse, stoppedText(toolUse.name, outcome), true);
      }
    }
  }
  // As any tool's result.
  setContentToSend(result, context.maxToolResultChars);
  if (logger.enabled('debug')) logger.debug(`Tool '${toolUse.name}' (${toolUse.id}) of the ${family} toolset result: ${safeJson(result)}`);
  return result;
}

/** Runs a member call with the run's toolset of its family (a family the run has none of: an error result). */
export function runToolsetCall(toolset: BetaRunnableToolset | undefined, family: string, toolUse: BetaToolUseBlock, signal: AbortSignal | undefined, logger: LeveledLogger): Promise<BetaToolResultBlockParam> {
  if (!toolset) {
    logger.warn(`Tool '${toolUse.name}' (${toolUse.id}) of the ${family} toolset not found`);
    return Promise.resolve(toolsetResultBlock(toolUse, `Error: Toolset '${quotedName(family)}' member '${quotedName(toolUse.name)}' not found`, true));
  }
  return runToolsetMember(toolset, family, toolUse, signal, logger);
}

/** The answer to a later call of a toolset whose earlier call in the same message failed. */
function notExecutedResult(family: string, toolUse: BetaToolUseBlock): BetaToolResultBlockParam {
  return toolsetResultBlock(toolUse, notExecutedText(family), true);
}

/**
 * The calls of each toolset in one message: each call of a family starts after the one before it
 * in the model's order; after a failed one the rest are answered as not executed. Once the run is
 * `stopped` (aborted), each is run all the same, to be answered as aborted before it started.
 */
export class ToolsetSequences {
  readonly #families = new Map<string, { tail: Promise<unknown>; failed: boolean }>();

  readonly #stopped: () => boolean;

  constructor(stopped: () => boolean) {
    this.#stopped = stopped;
  }

  /** Queues `run` (or takes a call that started already) after the family's earlier calls. */
  add(family: string, registered: boolean, toolUse: BetaToolUseBlock, started: Promise<BetaToolResultBlockParam> | undefined, run: () => Promise<BetaToolResultBlockParam>): Promise<BetaToolResultBlockParam> {
    const sequence = this.#sequence(family);
    const result = started ?? sequence.tail.then(() => (sequence.failed && !this.#stopped() ? notExecutedResult(family, toolUse) : run()));
    sequence.tail = result.then(
      (block) => {
        if (block.is_error && registered) sequence.failed = true;
      },
      () => {
        sequence.failed = true;
      },
    );
    return result;
  }

  /** A call named after a toolset, without `toolset_name`: a malformed call of it; the toolset's later calls don't run. */
  malformed(family: string, toolUse: BetaToolUseBlock): BetaToolResultBlockParam {
    const sequence = this.#sequence(family);
    sequence.tail = sequence.tail.then(() => {
      sequence.failed = true;
    });
    return {
      type: 'tool_result',
      tool_use_id: toolUse.id,
      content: `Error: the '${quotedName(toolUse.name)}' toolset could not run this call${malformedActions(toolUse.input)}; nothing in the batch was executed`,
      is_error: true,
    };
  }

  #sequence(family: string): { tail: Promise<unknown>; failed: boolean } {
    let sequence = this.#families.get(family);
    if (!sequence) this.#families.set(family, (sequence = { tail: Promise.resolve(), failed: false }));
    return sequence;
  }
}

/** What is wrong with a malformed call's `actions` (action names quoted, nothing else of the input). */
function malformedActions(input: unknown): string {
  const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  if (!('actions' in fields)) {
    const action = fields['action'];
    return typeof action === 'string' ? `: the call has no 'actions' list (action: '${quotedName(action)}')` : ": the call has no 'actions' list";
  }
  const actions = fields['actions'];
  if (typeof actions === 'string') return ": 'actions' is text, not a list of actions";
  if (!Array.isArray(actions)) return ": 'actions' is not a list of actions";
  if (actions.length === 0) return ": the 'actions' list is empty";
  const names: string[] = [];
  for (const [i, entry] of actions.entries()) {
    const action = typeof entry === 'object' && entry !== null ? (entry as { action?: unknown }).action : undefined;
    if (typeof action !== 'string') return `: action ${i} must be an object with a string 'action' field`;
    names.push(`'${quotedName(action)}'`);
  }
  const more = names.length > 10 ? `, and ${names.length - 10} more` : '';
  return `: its actions could not be run as sent (actions: ${names.slice(0, 10).join(', ')}${more})`;
}
