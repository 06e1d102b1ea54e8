/** Lifecycle hooks: typed, awaited, and a hook that throws surfaces as a HookError (never swallowed). */
import { APIUserAbortError } from '@anthropic-ai/sdk';
import { brandClass } from './brand.js';
import { cutSaying } from './cut.js';
import { isThenable } from './completion.js';
import { STOPPED_GRACE_MS, untilAborted, untilLate } from './guards.js';
import type { AnyCall, BetaMessage, BetaToolResultBlockParam, BetaToolUseBlock, MessageCreateParamsBase, Promisable, ToolResultContent } from './types.js';
import { quotingTypeError, readableThrown, thrownText } from './described.js';
import { invalidResultKind } from './result-kind.js';

/** A tool call as hooks see it (its input typed by tool, a union by name, when `toolRunner` sees the tools). */
export type ToolCall<Call extends AnyCall = AnyCall> = Call & { id: string; toolUse: BetaToolUseBlock };

/** What `onToolCall` may return: skip the call with a given result, or replace its input (validated again). */
export type ToolCallOverride = { result: ToolResultContent; isError?: boolean | undefined; input?: never } | { input: unknown; result?: never; isError?: never };

/**
 * What `onRequest` is given: the request's params as the run holds them (the whole history, the tools' definitions,
 * the model). Over a message thread the wire body is smaller (only the new messages, no `tools`, with `thread`): the
 * params are what the model sees. Any other field a request carries is there too.
 */
export type RequestParams = MessageCreateParamsBase & Record<string, unknown>;

export interface Hooks<Call extends AnyCall = AnyCall> {
  /** Before each request (a compaction's summary request too), with its params: see {@link RequestParams}. */
  onRequest?: ((params: RequestParams) => Promisable<void>) | undefined;
  /** For each reply, when it has fully arrived. */
  onMessage?: ((message: BetaMessage) => Promisable<void>) | undefined;
  /** Before each tool call runs (after its input is validated); may skip or replace it. */
  onToolCall?: ((call: ToolCall<Call>) => Promisable<ToolCallOverride | void>) | undefined;
  /** For each tool result, before it is sent. */
  onToolResult?: ((result: BetaToolResultBlockParam, call: ToolCall<Call>) => Promisable<void>) | undefined;
  /** For each tool that throws (or rejects). */
  onToolError?: ((error: unknown, call: ToolCall<Call>) => Promisable<void>) | undefined;
}

/** A hook threw: the run stops with this error; `cause` is what the hook threw. */
export class HookError extends Error {
  /** Which callback threw: a hook name, `approve`, or a tool's `needsApproval`. */
  readonly hook: string;

  constructor(hook: string, thrown: unknown) {
    // A value that cannot be read (a revoked Proxy) as an Error saying so: each check of the cause would throw again.
    const cause = readableThrown(thrown);
    // Cut short: an error quoting a whole response body (megabytes) went whole into every log line and report of it.
    super(`${hook in HOOK_NAMES ? `hooks.${hook}` : hook} threw: ${cutSaying(thrownText(cause), MAX_SAID, 'see the cause')}`, { cause });
    this.name = 'HookError';
    this.hook = hook;
  }
}

/** How much of what a hook threw its HookError's message says (the `cause` keeps it whole). */
const MAX_SAID = 1000;

const HOOK_NAMES: Record<keyof Hooks, true> = {
  onRequest: true,
  onMessage: true,
  onToolCall: true,
  onToolResult: true,
  onToolError: true,
};

/**
 * Calls a hook (if set) and turns anything it throws into a HookError. The run's `signal`, aborted
 * while the hook runs, ends the wait for it (an `APIUserAbortError`, as for any abort of the run).
 */
export function callHook<K extends keyof Hooks>(
  hooks: Hooks | undefined,
  name: K,
  signal: AbortSignal | null | undefined,
  ...args: Parameters<NonNullable<Hooks[K]>>
): Promise<Awaited<ReturnType<NonNullable<Hooks[K]>>> | undefined> | undefined {
  const hook = hooks?.[name] as ((...a: unknown[]) => unknown) | undefined;
  // No hook: nothing to wait for (the hot path of a run without hooks).
  if (!hook) return undefined;
  const run = async (): Promise<Awaited<ReturnType<NonNullable<Hooks[K]>>> | undefined> => {
    let settled: unknown;
    // A hook called after the abort (about a call it stopped) is waited for, as an observer of the stop (a while); one that
    // aborts the run itself (before its first await) is not: its wait ends there.
    const calledAfterAbort = signal?.aborted === true;
    try {
      // Called on the hooks object: a class's methods (`hooks: new Audit(db)`) read their own fields through `this`.
      settled = hook.apply(hooks, args);
      // Any thenable (a query builder's, a promise library's, another realm's Promise), as `await` takes it.
      if (signal && isThenable(settled)) {
        // Called after the abort: waited for a while (`STOPPED_GRACE_MS`), not forever, or one that hangs (a log store
        // offline) would keep the aborted run from ever settling: an abort is how a program bounds a run.
        const pending = Promise.resolve(settled);
        const waited = await (calledAfterAbort ? untilLate(pending, STOPPED_GRACE_MS) : untilAborted(pending, signal));
        if (waited.aborted) throw ABORTED;
        settled = waited.value;
      } else settled = await settled;
    } catch (error) {
      if (error === ABORTED) throw new APIUserAbortError();
      throw new HookError(name, error);
    }
    return settled as Awaited<ReturnType<NonNullable<Hooks[K]>>>;
  };
  return run();
}

/** The run aborted while a hook ran: not the hook's error. */
const ABORTED = Symbol('aborted');

/** The fields of what `onToolCall` may return. */
const OVERRIDE_FIELDS: ReadonlySet<string> = new Set(['result', 'isError', 'input']);

/** What `onToolCall` returned, checked: nothing, `{ result }` (a string or content blocks) or `{ input }`; else a HookError saying so. */
export function checkOverride(value: unknown): ToolCallOverride | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'object') {
    // A field of no override (`is_error`, the API's name of `isError`) was taken in silence: its result went as no error.
    const unknown = Object.keys(value).find((key) => !OVERRIDE_FIELDS.has(key));
    if (unknown !== undefined) {
      const meant = unknown === 'is_error' || unknown === 'isErr' ? ' (did you mean isError?)' : '';
      throw new HookError('onToolCall', new TypeError(`onToolCall returned an object with the field '${unknown}'${meant}; return nothing, { result } (a string or content blocks, with isError if it is one) or { input }`));
    }
    const { result, input, isError } = value as { result?: unknown; input?: unknown; isError?: unknown };
    // Both: the result was taken and the input dropped in silence, one of the two not what was meant.
    if (result !== undefined && input !== undefined) {
      throw new HookError('onToolCall', new TypeError('onToolCall returned both { result } and { input }; return one: { result } answers the call without running it, { input } runs it with that input'));
    }
    // An input with isError: the tool ran with it, the isError dropped in silence.
    if (result === undefined && input !== undefined && isError !== undefined) {
      throw new HookError('onToolCall', new TypeError('onToolCall returned { input } with isError, which goes with { result } only: { input } runs the tool, and its own outcome says whether it failed'));
    }
    if ('result' in value) {
      if (typeof result === 'string') return value as ToolCallOverride;
      if (Array.isArray(result)) {
        // Checked as a tool's own result is: blocks the API refuses would stay in the history and fail every later request.
        const kind = invalidResultKind(result);
        if (kind === undefined) return value as ToolCallOverride;
        throw new HookError('onToolCall', new TypeError(`onToolCall returned { result } whose content is ${kind}; a result is a string or content blocks a tool result holds`));
      }
    } else if ('input' in value) return value as ToolCallOverride;
  }
  const said = (shown: string) => `onToolCall returned ${shown}; return nothing, { result } (a string or content blocks, with isError if it is one) or { input }`;
  // The value may hold an input or a result (contents): spans and the inspector show it only when they capture contents.
  throw new HookError('onToolCall', quotingTypeError(said, value));
}

brandClass(HookError, 'HookError');
