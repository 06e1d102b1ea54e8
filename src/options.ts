/** The runner's own options (the third argument of `toolRunner`), checked at construction. */
import { checkAgentOptions } from './agent-link.js';
import type { Approver } from './approval.js';
import type { RequestOptions } from './client.js';
import { described, droppedPromise, meantSaid, misspeltName, nearLongName, oneEditApart, oneSwapApart, sameStem, wrongType, wrongValue } from './described.js';
import { checkTimeoutMs } from './guards.js';
import { DEFAULT_MAX_TOOL_RESULT_CHARS } from './truncate.js';
import type { Hooks } from './hooks.js';
import type { RunnerListener } from './events.js';
import type { FallbackEntry } from './fallback.js';
import { checkFallback } from './fallback-check.js';
import type { Logger } from './log.js';
import type { OutputSchema } from './output.js';
import { RUN_CONTROL_KEYS, type RunControlOptions } from './run-control-options.js';
import { SETTING_NAMES } from './settings.js';
import type { AnyCall } from './types.js';
import { REQUEST_OPTION_KEYS, type RunRequestOptions, checkRequestOptionKey, checkRequestOptionValues } from './request-options.js';

/**
 * The third argument of `toolRunner`: the SDK's request options for every request (`headers`,
 * `signal`, `timeout`, `maxRetries`, `fallbackState`, `openTelemetry`, ..., as
 * `client.beta.messages.toolRunner(params, options)` takes them) and the runner's own keys.
 */
export interface ToolRunnerOptions<Call extends AnyCall = AnyCall, Output extends OutputSchema | undefined = OutputSchema | undefined>
  extends RunRequestOptions,
    RunControlOptions<Output> {
  /** Aborts the request in flight and the running tools (`setRequestOptions({ signal })` replaces it). */
  signal?: AbortSignal | null | undefined;
  /** Options for every request, under the request options given beside it at the top level. */
  requestOptions?: RequestOptions | undefined;
  /** Where the runner logs (tool failures at `warn`, inputs and results at `debug`). Default: the client's logger. */
  logger?: Logger | undefined;
  /** The most tools running at once (default: no limit). */
  concurrency?: number | undefined;
  /** Abort a tool (its `context.signal`) and answer with a timeout error after this many ms; a tool's own `timeoutMs` wins. */
  toolTimeoutMs?: number | undefined;
  /** Cut longer tool results to this many characters, with a note to the model. Default 100,000. */
  maxToolResultChars?: number | undefined;
  /** Lifecycle hooks: onRequest, onMessage, onToolCall, onToolResult, onToolError. */
  hooks?: Hooks<Call> | undefined;
  /** Decides the calls of tools with `needsApproval`; without it the run stops with `runner.pendingApprovals`. */
  approve?: Approver<Call> | undefined;
  /** Typed lifecycle events (run, request, tool call) for observers such as `tool-runner/otel`. */
  onEvent?: RunnerListener | RunnerListener[] | undefined;
  /** Where a request goes when it still fails after the client's retries (429, 5xx, 529, connection): each entry in order. */
  fallback?: FallbackEntry[] | undefined;
}

/** The runner's own keys (the SDK's request options are the others it takes). */
export const OWN_OPTION_KEYS: ReadonlySet<string> = new Set([
  'requestOptions',
  'logger',
  'concurrency',
  'toolTimeoutMs',
  'maxToolResultChars',
  'hooks',
  'approve',
  'onEvent',
  ...RUN_CONTROL_KEYS,
  'fallback',
]);

/**
 * Params of the request a program may put among the options, where other libraries take them (`{ tools }`, `{ model }`):
 * said to be params. With middleware about, such a key would pass as a request option of the caller's own, and the run go
 * without it (no tools). Names too generic to refuse as an option of one's own (`metadata`, `container`) are left out.
 */
const REQUEST_PARAMS: ReadonlySet<string> = new Set([
  'model', 'messages', 'tools', 'max_tokens', 'system', 'tool_choice', 'thinking', 'temperature', 'top_k', 'top_p',
  'stop_sequences', 'output_config', 'output_format', 'mcp_servers', 'context_management', 'betas',
]);

/** Every key the third argument takes: the runner's own and the SDK's request options. */
export const OPTION_KEYS: ReadonlySet<string> = new Set([...OWN_OPTION_KEYS, ...REQUEST_OPTION_KEYS]);

/**
 * Throws a clear error for an unknown option or a value out of range (run control's: run-control-options.ts); returns the limits to use.
 * A key of neither kind is a request option of the caller's own (the SDK's `RequestOptions` extended by declaration merging),
 * passed to the SDK as it does, when middleware can read it (in these options, or the `client`'s) and it is no near miss of
 * a known key; otherwise it can only be a mistake.
 */
export function checkOptions(options: ToolRunnerOptions, client?: unknown, tools?: unknown): { maxToolResultChars: number } {
  if (typeof options !== 'object' || options === null) throw new TypeError('toolRunner: options must be an object');
  // A promise (an async function's options, not awaited) has no keys: every option and request option in it was dropped
  // in silence (a tenant's header, a timeout), as setRequestOptions() refuses it.
  if (droppedPromise(options)) throw new TypeError('toolRunner: options is a promise; await it first, and pass the options');
  for (const key of Object.keys(options)) {
    if (OPTION_KEYS.has(key)) continue;
    const exact = SETTING_NAMES.has(key) ? 'run' : REQUEST_PARAMS.has(key) ? 'request' : undefined;
    if (exact) throw new TypeError(`toolRunner: \`${key}\` is a param of the ${exact}, not an option: put it in the second argument, toolRunner(client, { ...params, ${key} })`);
    checkRequestOptionKey(key, 'toolRunner: options');
    const meant = knownKeyNear(key);
    const param = meant === undefined ? paramNear(key) : undefined;
    if (param) throw new TypeError(`toolRunner: unknown option '${key}'. Did you mean \`${param.name}\`? It is a param of the ${param.of}: put it in the second argument, toolRunner(client, { ...params, ${param.name} })`);
    if (meant === undefined && reachesMiddleware(options, client)) continue;
    const why = meant !== undefined ? `. Did you mean '${meant}'?` : ". A request option of your own reaches only middleware, and neither these options nor the client have any";
    throw new TypeError(
      `toolRunner: unknown option '${key}'; the options are ${[...OWN_OPTION_KEYS].join(', ')}, and the SDK's request options ${[...REQUEST_OPTION_KEYS].join(', ')}${why}`,
    );
  }
  checkRequestOptionValues(options as Record<string, unknown>, 'toolRunner: options');
  const { requestOptions, onEvent } = options;
  if (requestOptions !== undefined) {
    if (droppedPromise(requestOptions)) throw new TypeError('toolRunner: options.requestOptions is a promise; await it first, and pass the request options');
    if (typeof requestOptions !== 'object' || requestOptions === null || Array.isArray(requestOptions)) throw wrongType(requestOptions, 'toolRunner: options.requestOptions must be an object of the SDK\'s request options');
    checkRequestOptionNames(requestOptions as Record<string, unknown>, options.middleware ? { middleware: options.middleware } : client, 'toolRunner: options.requestOptions');
  }
  // A listener that is no function would throw at each event (each a warning), and the run would go on unwatched.
  if (onEvent !== undefined && !(typeof onEvent === 'function' || (Array.isArray(onEvent) && onEvent.every((listener) => typeof listener === 'function')))) {
    throw wrongType(onEvent, 'toolRunner: options.onEvent must be a function, or an array of functions');
  }
  positiveInteger('concurrency', options.concurrency);
  if (options.toolTimeoutMs !== undefined) checkTimeoutMs(options.toolTimeoutMs, 'toolRunner: options.toolTimeoutMs');
  positiveInteger('maxToolResultChars', options.maxToolResultChars);
  if (options.approve !== undefined && typeof options.approve !== 'function') {
    throw new TypeError('toolRunner: options.approve must be a function');
  }
  checkLogger(options.logger);
  checkHooks(options.hooks);
  checkFallback(options.fallback, OPTION_KEYS, options.output !== undefined);
  // An agent tool made without a client checks its options against this run's (its sub-agent's) client now.
  checkAgentOptions(tools, client);
  return { maxToolResultChars: options.maxToolResultChars ?? DEFAULT_MAX_TOOL_RESULT_CHARS };
}

function positiveInteger(name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !(value > 0) || !Number.isInteger(value)) throw wrongValue(value, `toolRunner: options.${name} must be a positive integer`);
}

const HOOK_NAMES = new Set(['onRequest', 'onMessage', 'onToolCall', 'onToolResult', 'onToolError']);

/** The hook a misspelt one means (`onToolResults`, `onmessage`, `onToolCal`), as for options: one slip, case or separators. */
function hookMeant(name: string): string {
  return meantSaid(misspeltName(name, HOOK_NAMES, (a, b) => oneEditApart(a, b) || oneSwapApart(a, b)));
}

/** `hooks` is an object of known hooks, each a function (a misspelt one would never be called). */
function checkHooks(hooks: unknown): void {
  if (hooks === undefined) return;
  if (typeof hooks !== 'object' || hooks === null) throw wrongType(hooks, `toolRunner: options.hooks must be an object of hooks (${[...HOOK_NAMES].join(', ')})`);
  // A class's instance (`new Audit(db)`) has fields of its own beside its methods (a TypeScript `private db`): only its
  // hooks are checked. A plain object's other keys are misspelt hooks, which would never be called.
  const plain = [Object.prototype, null].includes(Object.getPrototypeOf(hooks));
  for (const name of plain ? Object.keys(hooks) : HOOK_NAMES) {
    if (!HOOK_NAMES.has(name)) throw new TypeError(`toolRunner: unknown hook '${name}'; the hooks are ${[...HOOK_NAMES].join(', ')}${hookMeant(name)}`);
    const hook = (hooks as Record<string, unknown>)[name];
    if (hook !== undefined && typeof hook !== 'function') throw wrongType(hook, `toolRunner: hooks.${name} must be a function`);
  }
}

const LOG_METHODS = ['debug', 'info', 'warn', 'error'] as const;

/** A logger has the four methods the runner calls (a pino or console-like object). */
function checkLogger(logger: unknown): void {
  if (logger === undefined) return;
  const missing = typeof logger === 'object' && logger !== null ? LOG_METHODS.filter((method) => typeof (logger as Record<string, unknown>)[method] !== 'function') : LOG_METHODS;
  if (missing.length > 0) {
    throw new TypeError(`toolRunner: options.logger must be an object with ${LOG_METHODS.join(', ')} methods (console or a pino logger), got ${described(logger)}${missing.length < LOG_METHODS.length ? ` (no ${missing.join(', ')})` : ''}`);
  }
}


/** The setting of the runner that `key` misspells (its case, its separators, or one slip in a long name), if any. */
export function misspeltSetting(key: string): string | undefined {
  return misspeltName(key, SETTING_NAMES, nearLongName);
}

/** The param of the run, or else of the request, that `key` misspells, if any. */
function paramNear(key: string): { name: string; of: 'run' | 'request' } | undefined {
  const setting = misspeltSetting(key);
  if (setting !== undefined) return { name: setting, of: 'run' };
  const param = misspeltName(key, REQUEST_PARAMS, nearLongName);
  return param === undefined ? undefined : { name: param, of: 'request' };
}

/** The known option `key` misspells (its case or separators, one letter, two letters swapped, or its ending: `approval`), if any. */
function knownKeyNear(key: string): string | undefined {
  return misspeltName(key, OPTION_KEYS, (plainKey, plain) => oneEditApart(plainKey, plain) || oneSwapApart(plainKey, plain) || sameStem(plainKey, plain));
}

/**
 * Whether middleware sees the request options: given in these options (or their `requestOptions`), or the client's own.
 * Without a client (a sub-agent's options, which run on the parent's client by default), it may: the run checks again.
 */
function reachesMiddleware(options: Pick<ToolRunnerOptions, 'middleware' | 'requestOptions'>, client: unknown): boolean {
  const some = (list: unknown) => Array.isArray(list) && list.length > 0;
  return client === undefined || some(options.middleware) || some(options.requestOptions?.middleware) || some((client as { middleware?: unknown }).middleware);
}

/**
 * Request options (`options.requestOptions`, or what `setRequestOptions` is given): the SDK's (a key the runner sets
 * itself refused), or one of the caller's own that middleware reads; a runner option or a near miss of a known key is a
 * clear error, not left unused. `where` begins the errors about a key, `valuesWhere` those about a value.
 */
export function checkRequestOptionNames(options: Record<string, unknown>, client: unknown, where: string, valuesWhere = where): void {
  for (const key of Object.keys(options)) {
    if (options[key] === undefined || REQUEST_OPTION_KEYS.has(key)) continue;
    checkRequestOptionKey(key, where);
    if (REQUEST_PARAMS.has(key)) {
      throw new TypeError(`${where}: \`${key}\` is a param of the request, not a request option: give it in the params (the second argument of toolRunner, or runner.setMessagesParams((params) => ({ ...params, ${key} })))`);
    }
    const meant = OWN_OPTION_KEYS.has(key) ? key : knownKeyNear(key);
    if (meant !== undefined && OWN_OPTION_KEYS.has(meant)) {
      throw new TypeError(`${where}: ${meant === key ? '' : `unknown request option '${key}'; `}\`${meant}\` is an option of the runner, not a request option: give it in the runner's options, toolRunner(client, params, { ${meant} })`);
    }
    if (meant === undefined && reachesMiddleware(options, client)) continue;
    const why = meant !== undefined ? `. Did you mean '${meant}'?` : ". A request option of your own reaches only middleware, and neither these options nor the client have any";
    throw new TypeError(`${where}: unknown request option '${key}'; the SDK's request options are ${[...REQUEST_OPTION_KEYS].join(', ')}${why}`);
  }
  checkRequestOptionValues(options, valuesWhere);
}

/**
 * Runs `check` of a run's options for another API that takes them (`agentTool`, `durableToolRunner`): its errors begin
 * with `owner` where they said `toolRunner: `.
 */
export function checkedFor(owner: string, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof Error) error.message = `${owner}${error.message.replace(/^toolRunner: /, '')}`;
    throw error;
  }
}
