/**
 * A turn of the loop: the request that sends the run's state, and the reply it waits for. Also
 * the one other request a run makes, a compaction summary, so that every request a run sends goes
 * through the same hooks, events and request options.
 */
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import type { HeldCall } from './snapshot.js';
import { type RequestOptions, messagesApi } from './client.js';
import { ignore } from './completion.js';
import { withFields } from './copy.js';
import { ReplyError } from './errors.js';
import { withHelperHeader } from './helper-header.js';
import { callHook } from './hooks.js';
import type { RunContext } from './run-context.js';
import { compactionRequestParams } from './server-compaction.js';
import { type EagerCalls, startToolsEagerly } from './stream.js';
import { type ThreadRequest, createMessage, streamMessage } from './thread-requests.js';
import type { BetaCompactionConfig, BetaMessage, BetaToolUseBlock, ToolResultMessage } from './types.js';

/** One iteration: the request sent and what the loop body has done since. */
export interface Turn {
  message: Promise<BetaMessage>;
  stream: BetaMessageStream | undefined;
  /** The loop body called setMessagesParams / pushMessages. */
  tookControl: boolean;
  /** The answer to the calls of a message, by the ids it answers: mutating it changes what is sent. */
  response: { key: string; answer: Promise<Answer> } | undefined;
  /** This request was a server-side compaction (compactBeforeNextTurn). */
  compaction: boolean;
  /** The reply, once counted (what `message` resolves to). */
  reply: BetaMessage | undefined;
}

/** How a streamed reply's calls start before it ends (`runToolsEagerly`): call-answers.ts. */
export interface EagerStarts extends EagerCalls {
  /** The reply's `tool_use` blocks that finished streaming, in order: the yielded stream's `toolCalls`. */
  readonly toolCalls: BetaToolUseBlock[];
}

/** The user message of results, and the calls still waiting for approval (not in the message). */
export interface Answer {
  message: ToolResultMessage;
  pending: HeldCall[];
}

/** What to do after a reply with this stop reason (SPEC §3). */
export function nextStepFor(stopReason: string | null): 'run_tools' | 'resume' | 'stop' {
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

/** Sends the run's requests and counts their replies into the run's state. */
export class Requests {
  #sent = 0;

  readonly #run: RunContext;
  /** Starts each call of a streamed reply once it is complete (`runToolsEagerly`). */
  readonly #eager: EagerStarts;
  /** The `x-stainless-helper` tags of the run. */
  readonly #tags: string;
  /** The request options last sent, with the helper header, and the caller's they were made from. */
  #sentOptions: RequestOptions | undefined;
  #sentFrom: RequestOptions | undefined;

  constructor(run: RunContext, eager: EagerStarts, tags: string) {
    this.#run = run;
    this.#eager = eager;
    this.#tags = tags;
  }

  /**
   * Sends the current state; the reply is counted once it has fully arrived. A promise only when
   * tool sources refresh or an `onRequest` hook returns one.
   */
  send(compaction?: BetaCompactionConfig): Turn | Promise<Turn> {
    const tools = this.#run.state.tools;
    return tools.hasSources ? tools.refresh().then(() => this.#sendBody(compaction)) : this.#sendBody(compaction);
  }

  #sendBody(compaction: BetaCompactionConfig | undefined): Turn | Promise<Turn> {
    const { state, thread, options, control } = this.#run;
    // Whether the history changed only by the runner's own appends since the last request.
    const appendsOnly = state.prepareHistory();
    const apiParams = compaction ? compactionRequestParams(state.apiParams) : state.apiParams;
    const body: Record<string, unknown> = withFields(apiParams, { messages: state.messages });
    if (state.tools.definitions) body['tools'] = state.tools.definitions;
    // Eager starts need the stream; without `stream: true` the caller still gets whole messages.
    if (!state.settings.stream && !state.settings.runToolsEagerly) body['stream'] = false;
    if (control.shapesRequests) control.shapeRequest(body, compaction !== undefined);
    if (compaction) {
      body['compaction'] = compaction;
      // A compaction request replays the whole conversation under a thread of its own.
      thread.restart();
    }
    const hooked = callHook(options.hooks, 'onRequest', body);
    return hooked ? hooked.then(() => this.#request(body, appendsOnly, compaction)) : this.#request(body, appendsOnly, compaction);
  }

  /** Sends `body` (as the `onRequest` hook left it) and makes the turn that waits for its reply. */
  #request(body: Record<string, unknown>, appendsOnly: boolean, compaction: BetaCompactionConfig | undefined): Turn {
    const run = this.#run;
    const settings = run.state.settings;
    const streaming = settings.stream || settings.runToolsEagerly;
    const turn: Turn = { message: undefined!, stream: undefined, tookControl: false, response: undefined, compaction: compaction !== undefined, reply: undefined };
    let message: PromiseLike<BetaMessage>;
    const request: ThreadRequest = { client: run.client, thread: run.thread, appendsOnly, options: this.#options(), logger: run.logger };
    if (!compaction) run.state.iteration++;
    const requestId = this.#started(body, 'turn');
    // In the context of the request's span, when something traces (the client starts its own span there).
    const scope = run.tracing.scope;
    if (streaming) {
      const stream = scope ? scope.request(run.runner, requestId, () => streamMessage(body, request)) : streamMessage(body, request);
      if (settings.runToolsEagerly) {
        const eager = this.#eager;
        startToolsEagerly(stream, eager);
        // As the SDK's runner stream: the calls that finished streaming, in the model's order.
        Object.assign(stream, { toolCalls: eager.toolCalls });
      }
      turn.stream = stream;
      message = stream.finalMessage();
    } else {
      message = scope ? scope.request(run.runner, requestId, () => createMessage(body, request)) : createMessage(body, request);
    }
    turn.message = Promise.resolve(
      message.then(
        (reply) => {
          run.thread.received(reply);
          run.emit?.({ type: 'request.end', runner: run.runner, requestId, message: reply });
          const counted = this.#received(reply);
          if (!(counted instanceof Promise)) turn.reply = counted;
          return counted;
        },
        (failure: unknown) => {
          run.thread.failed();
          const error = ReplyError.from(failure, streaming === true);
          run.emit?.({ type: 'request.end', runner: run.runner, requestId, error });
          throw error;
        },
      ),
    );
    // The error reaches the caller through the iteration; never as an unhandled rejection.
    turn.message.catch(ignore);
    return turn;
  }

  /**
   * Sends a compaction's summary request (same client, request options and hooks) and returns its
   * reply; its usage counts, but it is not a turn (the iteration does not change).
   */
  async summary(body: Record<string, unknown>): Promise<BetaMessage> {
    const run = this.#run;
    await callHook(run.options.hooks, 'onRequest', body);
    const options = this.#options();
    const requestId = this.#started(body, 'compaction');
    const scope = run.tracing.scope;
    const send = () => messagesApi(run.client).create(body, options) as PromiseLike<BetaMessage>;
    let reply: BetaMessage;
    try {
      reply = await (scope ? scope.request(run.runner, requestId, send) : send());
    } catch (error) {
      run.emit?.({ type: 'request.end', runner: run.runner, requestId, error });
      throw error;
    }
    run.emit?.({ type: 'request.end', runner: run.runner, requestId, message: reply });
    await callHook(run.options.hooks, 'onMessage', reply);
    return reply;
  }

  /** Numbers a request and tells the observers it left. */
  #started(body: Record<string, unknown>, purpose: 'turn' | 'compaction'): number {
    const requestId = ++this.#sent;
    this.#run.emit?.({ type: 'request.start', runner: this.#run.runner, requestId, purpose, body });
    return requestId;
  }

  /** The caller's request options with the helper header, made again only when they changed. */
  #options(): RequestOptions {
    const from = this.#run.requestOptions;
    if (this.#sentFrom !== from || !this.#sentOptions) {
      this.#sentOptions = withHelperHeader(from, this.#tags, this.#run.thread.used);
      this.#sentFrom = from;
    }
    return this.#sentOptions;
  }

  #received(reply: BetaMessage): BetaMessage | Promise<BetaMessage> {
    const hooked = callHook(this.#run.options.hooks, 'onMessage', reply);
    return hooked ? hooked.then(() => this.#count(reply)) : this.#count(reply);
  }

  #count(reply: BetaMessage): BetaMessage {
    this.#run.state.count(reply);
    return reply;
  }
}
