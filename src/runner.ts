/**
 * ToolRunner: the agentic loop. Each iteration sends the request, yields the assistant message
 * (or its stream), lets the loop body look at it, then appends the reply and the answers to its
 * tool calls — unless the body took control of the history — and goes on.
 */
import { APIUserAbortError, AnthropicError } from '@anthropic-ai/sdk';
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import { type ClientLike, type RequestOptions, messagesApi } from './client.js';
import { executeToolCall } from './execute.js';
import { answerDanglingCalls, cutOffText, errorResult, insertToolResults, toolUsesOf } from './history.js';
import { type LeveledLogger, type Logger, runnerLogger } from './log.js';
import { type RunnerParams, type RunnerSettings, splitParams, toolMaps } from './params.js';
import { startToolsEagerly } from './stream.js';
import type { RunnableTool } from './tool.js';
import { type Usage, addUsage, emptyUsage } from './usage.js';
import type {
  BetaMessage,
  BetaMessageParam,
  BetaToolResultBlockParam,
  BetaToolUnion,
  BetaToolUseBlock,
  ToolResultMessage,
} from './types.js';

/** The runner's own options (beyond the SDK): the third argument of `toolRunner`. */
export interface ToolRunnerOptions {
  /** Aborts the request in flight and the running tools. */
  signal?: AbortSignal | undefined;
  /** Options for every request: headers, timeout, maxRetries, ... */
  requestOptions?: RequestOptions | undefined;
  /** Where the runner logs (tool failures at `warn`, inputs and results at `debug`). Default: the client's logger. */
  logger?: Logger | undefined;
}

/** What one iteration yields: the message, or its `MessageStream` when `stream: true`. */
export type RunnerItem<Stream extends boolean> = Stream extends true ? BetaMessageStream : BetaMessage;

type NextStep = 'run_tools' | 'resume' | 'stop';

/** What to do after a reply with this stop reason (SPEC §3). */
function nextStepFor(stopReason: string | null): NextStep {
  switch (stopReason) {
    case 'tool_use':
      return 'run_tools';
    case 'pause_turn':
    case 'compaction':
      return 'resume';
    default:
      return 'stop';
  }
}

/** One iteration: the request sent and what the loop body has done since. */
interface Turn {
  message: Promise<BetaMessage>;
  stream: BetaMessageStream | undefined;
  /** The loop body called setMessagesParams / pushMessages. */
  tookControl: boolean;
  /** Tool calls started this turn (eagerly, or by generateToolResponse), by tool_use id. */
  calls: Map<string, Promise<BetaToolResultBlockParam>> | undefined;
  /** generateToolResponse's answer, by the ids it answers: mutating it changes what is sent. */
  response: { key: string; message: Promise<ToolResultMessage | null> } | undefined;
}

export class ToolRunner<Stream extends boolean = false> implements AsyncIterable<RunnerItem<Stream>> {
  readonly #client: ClientLike;
  readonly #loggerOption: Logger | undefined;
  #logger: LeveledLogger | undefined;
  readonly #signal: AbortSignal | undefined;
  #requestOptions: RequestOptions;
  #apiParams: Record<string, unknown>;
  #settings: RunnerSettings;
  #toolEntries: RunnerParams['tools'];
  #runnable: Map<string, RunnableTool>;
  #definitions: BetaToolUnion[] | undefined;
  #messages: BetaMessageParam[];
  /** The caller set the history since the last request: check it before sending. */
  #historySetByCaller = true;
  #turn: Turn | undefined;
  #lastMessage: BetaMessage | undefined;
  /** Ids of tool calls cut off by max_tokens (never run). */
  #cutOff: Set<string> | undefined;
  #consumed = false;
  #iteration = 0;
  #usage: Usage = emptyUsage();
  #completion: Settleable<BetaMessage> | undefined;

  constructor(client: ClientLike, params: RunnerParams, options: ToolRunnerOptions = {}) {
    this.#client = client;
    this.#loggerOption = options.logger;
    this.#signal = options.signal;
    this.#requestOptions = { ...options.requestOptions };
    const { api, settings, messages, tools } = splitParams(params);
    this.#apiParams = api;
    this.#settings = settings;
    this.#toolEntries = tools;
    ({ runnable: this.#runnable, definitions: this.#definitions } = toolMaps(tools));
    // A copy, so later edits of the caller's objects never change what the runner sends.
    this.#messages = structuredClone(messages);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RunnerItem<Stream>> {
    if (this.#consumed) throw new AnthropicError('Cannot iterate over a consumed tool runner');
    this.#consumed = true;
    let failed = false;
    try {
      while (!this.#reachedMaxIterations()) {
        const turn = this.#send();
        this.#turn = turn;
        try {
          yield (this.#settings.stream ? turn.stream : await turn.message) as RunnerItem<Stream>;
          if ((await this.#finishTurn(turn)) === 'stop') break;
        } finally {
          turn.stream?.abort();
          this.#turn = undefined;
        }
      }
    } catch (error) {
      failed = true;
      // The state is what it was before the failed request: iterating again retries it.
      this.#consumed = false;
      this.#settle().reject(error);
      this.#completion = undefined;
      throw error;
    } finally {
      // A `break` in the loop body ends the run too: it resolves to the last reply.
      if (!failed) this.#finish();
    }
  }

  #finish(): void {
    if (this.#lastMessage) this.#settle().resolve(this.#lastMessage);
    else this.#settle().reject(new AnthropicError('The tool runner ended without a message from the model'));
  }

  /** The completion of the current attempt, made when first needed. */
  #settle(): Settleable<BetaMessage> {
    return (this.#completion ??= settleable());
  }

  #log(): LeveledLogger {
    return (this.#logger ??= runnerLogger(this.#client, this.#loggerOption));
  }

  #reachedMaxIterations(): boolean {
    const max = this.#settings.max_iterations;
    return max !== undefined && this.#iteration >= max;
  }

  /** Sends the current state; the reply is counted once it has fully arrived. */
  #send(): Turn {
    if (this.#historySetByCaller) {
      // The runner's own appends keep the history valid; what the caller set is checked once.
      this.#messages = answerDanglingCalls(this.#messages, this.#cutOff ?? EMPTY);
      this.#historySetByCaller = false;
    }
    // Eager starts need the stream; without `stream: true` the caller still gets whole messages.
    const streaming = this.#settings.stream || this.#settings.runToolsEagerly;
    const body: Record<string, unknown> = { ...this.#apiParams, messages: this.#messages };
    if (this.#definitions) body['tools'] = this.#definitions;
    if (!streaming) body['stream'] = false;
    const options = this.#signal ? { ...this.#requestOptions, signal: this.#signal } : this.#requestOptions;
    const api = messagesApi(this.#client);
    const turn: Turn = { message: undefined!, stream: undefined, tookControl: false, calls: undefined, response: undefined };
    let message: PromiseLike<BetaMessage>;
    if (streaming) {
      const stream = api.stream(body, options) as BetaMessageStream;
      if (this.#settings.runToolsEagerly) startToolsEagerly(stream, (toolUse) => this.#startCall(turn, toolUse));
      turn.stream = stream;
      message = stream.finalMessage();
    } else {
      message = api.create(body, options) as PromiseLike<BetaMessage>;
    }
    turn.message = Promise.resolve(message.then((reply) => this.#received(reply)));
    // The error reaches the caller through the iteration; never as an unhandled rejection.
    turn.message.catch(() => {});
    return turn;
  }

  #received(reply: BetaMessage): BetaMessage {
    this.#iteration++;
    this.#usage = addUsage(this.#usage, reply.usage);
    this.#lastMessage = reply;
    if (reply.stop_reason === 'max_tokens') for (const use of toolUsesOf(reply)) (this.#cutOff ??= new Set()).add(use.id);
    const containerId = reply.container?.id;
    if (containerId) this.#adoptContainer(containerId);
    return reply;
  }

  /** Later requests run in the container the server chose, unless the caller named one. */
  #adoptContainer(id: string): void {
    const container = this.#apiParams['container'];
    if (container == null) this.#apiParams['container'] = id;
    else if (typeof container === 'object' && (container as { id?: unknown }).id == null) {
      this.#apiParams['container'] = { ...container, id };
    }
  }

  /** After the loop body: append the reply and its tool results (unless the body took control). */
  async #finishTurn(turn: Turn): Promise<'continue' | 'stop'> {
    if (!turn.tookControl) {
      const reply = await turn.message;
      this.#messages.push({ role: reply.role, content: reply.content });
      const step = nextStepFor(reply.stop_reason);
      if (step === 'stop') return 'stop';
      if (step === 'resume') return 'continue';
    }
    const response = await this.#respond(turn, this.#messages.at(-1), this.#signal);
    if (response) insertToolResults(this.#messages, response);
    else if (!turn.tookControl) return 'stop';
    // The results are in the history, so an aborted run stays valid and resumable.
    if (this.#signal?.aborted) throw new APIUserAbortError();
    return 'continue';
  }

  /** The user message answering the calls of `message` (cached for the turn), or null if it makes none. */
  #respond(
    turn: Turn | undefined,
    message: BetaMessage | BetaMessageParam | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ToolResultMessage | null> {
    const uses = toolUsesOf(message);
    if (uses.length === 0) return Promise.resolve(null);
    const key = uses.map((use) => use.id).join('\n');
    if (turn?.response?.key === key) return turn.response.message;
    const results = uses.map((use) => this.#startCall(turn, use, signal));
    const response = Promise.all(results).then((content): ToolResultMessage => ({ role: 'user', content }));
    if (turn) turn.response = { key, message: response };
    return response;
  }

  /** Starts a call once per turn; a call cut off by max_tokens is answered without running. */
  #startCall(
    turn: Turn | undefined,
    toolUse: BetaToolUseBlock,
    signal: AbortSignal | undefined = this.#signal,
  ): Promise<BetaToolResultBlockParam> {
    const calls = turn ? (turn.calls ??= new Map()) : new Map<string, Promise<BetaToolResultBlockParam>>();
    let call = calls.get(toolUse.id);
    if (!call) {
      call = this.#cutOff?.has(toolUse.id)
        ? Promise.resolve(errorResult(toolUse.id, cutOffText(toolUse.name)))
        : executeToolCall(toolUse, {
            tools: this.#runnable,
            logger: this.#log(),
            signal,
            iteration: this.#iteration,
            runner: this as ToolRunner<boolean>,
          });
      calls.set(toolUse.id, call);
    }
    return call;
  }

  /**
   * Runs the tools of the current message (at most once per iteration) and returns the user
   * message of `tool_result` blocks, or null when there is nothing to run. Mutate the returned
   * message to change what is sent.
   *
   * @example
   * ```ts
   * for await (const message of runner) {
   *   const response = await runner.generateToolResponse();
   *   if (response?.content.some((result) => result.is_error)) break;
   * }
   * ```
   */
  async generateToolResponse(signal: AbortSignal | undefined = this.#signal): Promise<ToolResultMessage | null> {
    const turn = this.#turn;
    const message = turn ? await turn.message : this.#messages.at(-1);
    return this.#respond(turn, message, signal);
  }

  /**
   * Replaces the params for the next request. Called in the loop body, it takes control of the
   * history: the runner does not append this iteration's reply nor its tool results.
   *
   * @example
   * ```ts
   * runner.setMessagesParams((params) => ({ ...params, max_tokens: 2048 }));
   * ```
   */
  setMessagesParams(params: RunnerParams | ((previous: RunnerParams) => RunnerParams)): void {
    const next = typeof params === 'function' ? params(this.params) : params;
    const { api, settings, messages, tools } = splitParams(next);
    this.#apiParams = api;
    this.#settings = settings;
    if (tools !== this.#toolEntries) {
      this.#toolEntries = tools;
      ({ runnable: this.#runnable, definitions: this.#definitions } = toolMaps(tools));
    }
    this.#messages = [...messages];
    this.#historySetByCaller = true;
    if (this.#turn) {
      this.#turn.tookControl = true;
      this.#turn.response = undefined;
    }
  }

  /**
   * Appends messages to the history. Called in the loop body, it takes control of the history
   * (see {@link setMessagesParams}).
   *
   * @example
   * ```ts
   * runner.pushMessages({ role: 'user', content: 'Also check Berlin.' });
   * ```
   */
  pushMessages(...messages: BetaMessageParam[]): void {
    this.setMessagesParams((params) => ({ ...params, messages: [...params.messages, ...messages] }));
  }

  /** Changes the request options (headers, timeout, ...) of the next requests. */
  setRequestOptions(options: RequestOptions | ((previous: RequestOptions) => RequestOptions)): void {
    this.#requestOptions =
      typeof options === 'function' ? options(this.#requestOptions) : { ...this.#requestOptions, ...options };
  }

  /** A read-only copy of the current params. In the loop body it does not yet hold the message just yielded. */
  get params(): RunnerParams {
    return {
      ...this.#apiParams,
      ...this.#settings,
      ...(this.#toolEntries && { tools: this.#toolEntries }),
      messages: [...this.#messages],
    } as RunnerParams;
  }

  /** The number of requests that returned a reply. */
  get iteration(): number {
    return this.#iteration;
  }

  /** The summed usage of every reply. */
  get usage(): Usage {
    return structuredClone(this.#usage);
  }

  /** Resolves to the last message when the loop ends; does not drive it. */
  done(): Promise<BetaMessage> {
    return this.#settle().promise;
  }

  /** Drives the loop to its end and resolves to the last message. */
  async runUntilDone(): Promise<BetaMessage> {
    if (!this.#consumed) {
      for await (const _ of this) {
        // Each iteration's work happens in the runner.
      }
    }
    return this.done();
  }

  /** `await runner` is `runner.runUntilDone()`. */
  then<Result1 = BetaMessage, Result2 = never>(
    onfulfilled?: ((value: BetaMessage) => Result1 | PromiseLike<Result1>) | null,
    onrejected?: ((reason: unknown) => Result2 | PromiseLike<Result2>) | null,
  ): Promise<Result1 | Result2> {
    return this.runUntilDone().then(onfulfilled, onrejected);
  }
}

const EMPTY: ReadonlySet<string> = new Set();

interface Settleable<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

function settleable<T>(): Settleable<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {});
  return { promise, resolve, reject };
}
