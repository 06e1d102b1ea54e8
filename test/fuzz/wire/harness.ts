/**
 * A seeded fuzzer of faults on the wire: the real runner, the real SDK client over real HTTP, against a server that
 * answers with damaged responses (server.ts). Streamed and whole replies, tool calls, approvals (an approver, or
 * the run stopped for them and the driver deciding), aborts at random moments, a fallback or none, a loop body that reads the stream's
 * events, awaits its message, leaves it, or does nothing; the client's retries off or on, its timeout short.
 *
 * After each seed it checks what the README promises of a broken reply: the run ends (a deadline per seed); every
 * error is an Error of the SDK's or the runner's classes whose message says what happened (no "Cannot read
 * properties of undefined", no bare JSON `SyntaxError`); the history is valid (`historyProblems`) and every request
 * sent was valid; a reply the consumer saw break is never kept; the events the consumer read agree with the final
 * message; no request ends twice, nor a reply is handed to `onMessage` twice; no unhandled rejection; no response
 * left open on a socket once the run is over.
 *
 * Every choice comes from the seed (`plan(seed)`), save the moments, which are the clock's.
 */
import { APIUserAbortError, AnthropicError, BadRequestError, NotFoundError } from '@anthropic-ai/sdk';
import Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { HookError, type RunnerEvent, resumeToolRunner, tool, toolRunner } from '../../../src/index.js';
import { historyProblems, text, toolUse } from '../../../src/testing/index.js';
import type { BetaRawMessageStreamEvent } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { BetaContentBlock, BetaMessage, BetaMessageParam } from '../../../src/types.js';
import { random } from '../history/harness.js';
import { type Answer, type Fault, damagingServer, faults, wholeFaults } from './server.js';

const behaviours = ['ok', 'ok', 'slow', 'throw', 'guarded'] as const;
type Behaviour = (typeof behaviours)[number];
/** What the loop body does with a streamed item. */
const readings = ['events', 'events', 'final', 'final', 'nothing', 'on', 'leave', 'abort'] as const;
type Reading = (typeof readings)[number];

export interface WirePlan {
  seed: number;
  stream: boolean;
  eager: boolean;
  maxRetries: 0 | 1 | 2;
  /** The client's timeout (ms): short, so that a stall before the headers ends. */
  timeout: number;
  approver: 'none' | 'allow' | 'deny';
  replies: Array<{ text: boolean; calls: Behaviour[]; cutOff: boolean; fault: Fault; at: number; status: 429 | 500 | 529; retryAfter: boolean; stallMs: number }>;
  readings: Array<{ reading: Reading; after: number }>;
  /** An abort at this many ms after the run starts, or none. */
  abortAtMs: number | null;
  /** Over a message thread (the default on an Anthropic client), or the whole history each turn. */
  thread: boolean;
  /** `options.fallback`: one entry, another model on the run's client (a streamed turn then waits for its first event). */
  fallback: boolean;
}

export function plan(seed: number): WirePlan {
  const r = random(seed);
  const fault = () => (r.chance(0.3) ? 'none' : r.pick(faults));
  return {
    seed,
    stream: r.chance(0.6),
    eager: r.chance(0.3),
    maxRetries: r.pick([0, 0, 1, 2] as const),
    timeout: r.int(150, 400),
    approver: r.pick(['none', 'allow', 'deny'] as const),
    replies: Array.from({ length: r.int(1, 5) }, () => ({
      text: r.chance(0.6),
      calls: Array.from({ length: r.int(0, 2) }, () => r.pick(behaviours)),
      cutOff: r.chance(0.1),
      fault: fault(),
      at: r.next(),
      status: r.pick([429, 500, 529] as const),
      retryAfter: r.chance(0.5),
      stallMs: r.chance(0.2) ? 6_000 : r.int(300, 1_500),
    })),
    readings: Array.from({ length: 10 }, () => ({ reading: r.pick(readings), after: r.int(0, 8) })),
    abortAtMs: r.chance(0.15) ? r.int(0, 300) : null,
    fallback: r.chance(0.3),
    thread: r.chance(0.5),
  };
}

export interface WireOutcome {
  plan: WirePlan;
  violations: string[];
  log: string[];
  /** The errors seen (class: message), for the script's tally and for comparing with the SDK's runner. */
  errors: string[];
}

/** A run that has not ended by then hangs (the stalls are at most 1.5 s, and the run's deadline ends them). */
const HANG_MS = 8_000;
/** The run's own deadline (README: the client's timeout does not bound a stream that stalls after its headers). */
const RUN_DEADLINE_MS = 4_000;
/** Words that say the runner (or the SDK) tripped over what it was sent, rather than saying what was wrong. */
const TRIPPED = /Cannot read propert|undefined is not|is not a function|is not iterable|Cannot use 'in' operator/;
/** A message that is a JSON.parse error's words alone. */
const BARE = /^(Unexpected token|Unexpected end of JSON|Unterminated string|Expected .* in JSON)/;

/** Whether the TypeError under `error` was thrown in the SDK's own code (its stack's first frame). */
function trippedInSdk(error: Error): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof TypeError) return /^\s+at .*@anthropic-ai[/\\]sdk/m.test(e.stack?.split('\n').find((line) => /^\s+at /.test(line)) ?? '');
  }
  return false;
}

export async function wireRun(p: WirePlan): Promise<WireOutcome> {
  const violations: string[] = [];
  const log: string[] = [];
  const errors: string[] = [];
  const timersBefore = timers();
  const server = await damagingServer();
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);

  // The replies, each after its damaged answer.
  let callId = 0;
  for (const reply of p.replies) {
    const content: BetaContentBlock[] = [];
    if (reply.text) content.push(text(`a reply with some text in it, ${'é😀'.repeat(3)} and more`));
    for (const behaviour of reply.calls) content.push(toolUse('act', { behaviour }, `toolu_wire${String(callId++).padStart(3, '0')}`));
    if (content.length === 0) content.push(text('…'));
    const stopReason = reply.cutOff ? 'max_tokens' : reply.calls.length > 0 ? 'tool_use' : 'end_turn';
    const whole: Answer = { content, stopReason, fault: 'none', at: 0 };
    if (reply.fault !== 'none') server.queue.push({ ...whole, fault: reply.fault, at: reply.at, status: reply.status, retryAfter: reply.retryAfter, stallMs: reply.stallMs });
    server.queue.push(whole);
  }

  const act = tool({
    name: 'act',
    inputSchema: z.object({ behaviour: z.enum(behaviours) }),
    timeoutMs: 200,
    needsApproval: (input) => input.behaviour === 'guarded',
    run: async ({ behaviour }) => {
      if (behaviour === 'throw') throw new Error('the tool failed');
      if (behaviour === 'slow') await new Promise((resolve) => setTimeout(resolve, 20));
      return `done ${behaviour}`;
    },
  });

  const controller = new AbortController();
  const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(RUN_DEADLINE_MS)]);
  const events: RunnerEvent[] = [];
  const onMessage: string[] = [];
  const client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: p.maxRetries, timeout: p.timeout, logLevel: 'off' });
  const runner = toolRunner(
    client,
    { model: 'claude-sonnet-5-5', max_tokens: 256, messages: [{ role: 'user', content: 'go' }], tools: [act], stream: p.stream, runToolsEagerly: p.eager, ...(!p.thread && { thread: false as const }), max_iterations: 12 },
    {
      signal,
      ...(p.fallback && { fallback: [{ model: 'claude-haiku-5-5' }] }),
      onEvent: (event) => events.push(event),
      hooks: { onMessage: (message: BetaMessage) => void onMessage.push(message.id) },
      ...(p.approver !== 'none' && { approve: () => (p.approver === 'allow' ? { decision: 'allow' as const } : { decision: 'deny' as const, reason: 'no' }) }),
    },
  );

  const judge = (error: unknown, where: string) => {
    const said = describe(error);
    log.push(`${where}: ${said}`);
    errors.push(said);
    if (!(error instanceof Error)) return void violations.push(`${where}: not an Error: ${said}`);
    if (!(error instanceof AnthropicError || error instanceof HookError)) violations.push(`${where}: an error of no documented class: ${said}`);
    // The server refuses only what the API refuses (a thread it cannot continue): the runner never sends such a request, or recovers.
    if (error instanceof BadRequestError || error instanceof NotFoundError) violations.push(`${where}: the server refused a request: ${said}`);
    // The message the caller reads: not the runtime's words alone (a JSON.parse error, a TypeError), and none of the
    // runner's own TypeErrors. The SDK's own TypeError passed on with what it means (the SDK's runner throws it bare) is its.
    if (error.message.trim() === '' || error instanceof SyntaxError || error instanceof TypeError || BARE.test(error.message)) violations.push(`${where}: an unclear message: ${describe(error)}`);
    else if (TRIPPED.test(error.message) && !trippedInSdk(error)) violations.push(`${where}: the runner tripped: ${describe(error)}`);
  };

  /** The consumer's view of one streamed item: the events read, and whether reading failed. */
  const readStream = async (stream: AsyncIterable<BetaRawMessageStreamEvent> & { finalMessage(): Promise<BetaMessage>; on(event: 'text', listener: (t: string) => void): unknown }, reading: Reading, after: number, item: number) => {
    const seen: BetaRawMessageStreamEvent[] = [];
    let streamFailed: unknown;
    if (reading === 'events' || reading === 'leave') {
      try {
        for await (const event of stream) {
          seen.push(event);
          if (event.type === 'message_start') startedIds.push(event.message.id);
          if (reading === 'leave' && seen.length > after) break;
        }
      } catch (error) {
        streamFailed = error;
        for (const id of startedIds.splice(0)) brokenToConsumer.add(id);
      }
      startedIds.length = 0;
    }
    let onText = '';
    if (reading === 'on') stream.on('text', (t) => (onText += t));
    if (reading === 'abort') controller.abort();
    if (reading === 'nothing' || reading === 'abort') return;
    let final: BetaMessage | undefined;
    try {
      final = await stream.finalMessage();
    } catch (error) {
      // (Read to their end without an error, the events of a stream cut short: the SDK's iterator ends quietly when its
      // error comes while no read waits. The iteration fails all the same, with the ReplyError the run checks.)
      return;
    }
    if (streamFailed) violations.push(`item ${item}: reading the events failed (${describe(streamFailed)}), but finalMessage() resolved`);
    if (streamFailed) brokenToConsumer.add(final.id);
    // (A message with a block that is none, which the run refuses as unreadable: the SDK's events and its message disagree.)
    if (reading === 'leave' || final.content.some((b) => typeof (b as { type?: unknown }).type !== 'string' || (b.type === 'tool_use' && typeof b.id !== 'string'))) return;
    const texts = final.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('');
    if (reading === 'on' && onText !== texts) violations.push(`item ${item}: the 'text' events said ${JSON.stringify(onText)}, the final message ${JSON.stringify(texts)}`);
    if (reading === 'events') {
      const deltas = seen.flatMap((e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? [e.delta.text] : [])).join('');
      if (deltas !== texts) violations.push(`item ${item}: the text deltas read said ${JSON.stringify(deltas)}, the final message ${JSON.stringify(texts)}`);
      const started = seen.flatMap((e) => (e.type === 'content_block_start' && e.content_block.type === 'tool_use' ? [e.content_block.id] : []));
      const calls = final.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
      if (started.join() !== calls.join()) violations.push(`item ${item}: the events started calls ${started.join()}, the final message has ${calls.join()}`);
    }
  };

  // A `done()` taken before the run: it settles, with the run's result or the error that ended an iteration (README).
  let doneSettled = false;
  runner.done().then(
    () => (doneSettled = true),
    () => (doneSettled = true),
  );
  const seenReplies = new Set<string>();
  /** The replies whose stream failed under the consumer's `for await`: never kept (README, Streaming). */
  const brokenToConsumer = new Set<string>();
  const startedIds: string[] = [];
  const drive = async () => {
    let item = 0;
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        for await (const got of runner as AsyncIterable<unknown>) {
          const { reading, after } = p.readings[item] ?? { reading: 'final' as const, after: 0 };
          log.push(`item ${item}: ${p.stream ? reading : 'message'}`);
          if (p.stream) await readStream(got as never, reading, after, item);
          else {
            const message = got as BetaMessage;
            if (seenReplies.has(message.id)) violations.push(`item ${item}: the reply ${message.id} was yielded twice`);
            seenReplies.add(message.id);
          }
          item++;
        }
      } catch (error) {
        judge(error, `attempt ${attempt}`);
        if (signal.aborted) return;
        continue;
      }
      if (runner.pendingApprovals.length > 0) {
        for (const [i, call] of runner.pendingApprovals.entries()) {
          if ((p.seed + i) % 2) runner.approve(call.id);
          else runner.deny(call.id, 'no');
        }
        log.push('decided the pending approvals');
        continue;
      }
      return;
    }
  };

  const abortTimer = p.abortAtMs === null ? undefined : setTimeout(() => (log.push(`abort at ${p.abortAtMs} ms`), controller.abort()), p.abortAtMs);
  let hangTimer: ReturnType<typeof setTimeout> | undefined;
  try {
    const ended = await Promise.race([drive().then(() => true), new Promise<boolean>((resolve) => (hangTimer = setTimeout(() => resolve(false), HANG_MS)))]);
    if (!ended) {
      violations.push(`the run hung (${HANG_MS} ms)`);
      controller.abort();
    }
    log.push(`ended: stoppedBy ${runner.stoppedBy}, ${runner.params.messages.length} messages, ${server.served.length} requests`);

    // The history, and every request sent.
    const history = runner.params.messages;
    for (const problem of historyProblems(history)) if (!endedOnCutOff(problem, runner.stoppedBy)) violations.push(`history: ${problem}`);
    server.served.forEach(({ conversation }, i) => {
      for (const problem of historyProblems(conversation as BetaMessageParam[])) violations.push(`request ${i + 1} sent an invalid history: ${problem}`);
    });
    if (server.threadRefusals.length > 0) log.push(`thread refusals: ${server.threadRefusals.join(', ')}`);
    // A reply kept is one the server sent whole.
    const sentWhole = new Set(server.served.filter((s) => wholeFaults.includes(s.answer.fault)).map((s) => s.id));
    const keptDamaged = server.served.filter((s) => !sentWhole.has(s.id) && onMessage.includes(s.id) && !HARMLESS.includes(s.answer.fault) && !(s.answer.fault === 'noStop' && s.body['stream'] !== true));
    for (const s of keptDamaged) violations.push(`the reply ${s.id}, damaged (${s.answer.fault} at ${s.answer.at.toFixed(2)}), was kept`);

    for (const id of brokenToConsumer) if (onMessage.includes(id)) violations.push(`the reply ${id}, whose stream broke under the loop body's for await, was kept`);
    violations.push(...toolEventProblems(events));

    // Nothing told twice.
    const counted = new Map<string, number>();
    for (const id of onMessage) counted.set(id, (counted.get(id) ?? 0) + 1);
    for (const [id, n] of counted) if (n > 1) violations.push(`onMessage had the reply ${id} ${n} times`);
    const ends = new Map<number, number>();
    const starts = new Set<number>();
    for (const event of events) {
      if (event.type === 'request.start') starts.add(event.requestId);
      if (event.type === 'request.end') ends.set(event.requestId, (ends.get(event.requestId) ?? 0) + 1);
    }
    for (const [id, n] of ends) if (n > 1) violations.push(`request ${id} ended ${n} times`);
    for (const id of starts) if (!ends.has(id) && ended) violations.push(`request ${id} never ended`);
    const runStarts = events.filter((e) => e.type === 'run.start').length;
    const runEnds = events.filter((e) => e.type === 'run.end').length;
    if (ended && runStarts !== runEnds) violations.push(`${runStarts} run.start, ${runEnds} run.end`);
    // The text events of a request that ended with a message are that message's text.
    const streamedText = new Map<number, string>();
    for (const event of events) if (event.type === 'request.text') streamedText.set(event.requestId, (streamedText.get(event.requestId) ?? '') + event.text);
    for (const event of events) {
      if (event.type !== 'request.end' || !event.message || !streamedText.has(event.requestId)) continue;
      const texts = event.message.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('');
      if (streamedText.get(event.requestId) !== texts) violations.push(`request ${event.requestId}: request.text said ${JSON.stringify(streamedText.get(event.requestId))}, its message ${JSON.stringify(texts)}`);
    }

    await new Promise((resolve) => setImmediate(resolve));
    if (ended && !doneSettled && runner.pendingApprovals.length === 0) violations.push('a done() taken before the run never settled');

    // The run's snapshot goes on: resumed, a question pushed, it sends a valid history (the server's next answer is whole).
    if (ended) {
      const sentBefore = server.served.length;
      server.queue.splice(0, server.queue.length, { content: [text('fine')], stopReason: 'end_turn', fault: 'none', at: 0 });
      let next: { params: { messages: BetaMessageParam[] } } | undefined;
      try {
        const resumed = resumeToolRunner(client, JSON.parse(JSON.stringify(runner.toJSON())), { tools: [act], options: { approve: () => ({ decision: 'deny' as const, reason: 'later' }), signal: AbortSignal.timeout(3_000) } });
        next = resumed;
        resumed.pushMessages({ role: 'user', content: 'one more thing' });
        await resumed.runUntilDone();
      } catch (error) {
        violations.push(`resumed: ${describe(error)}`);
      }
      for (const { conversation } of server.served.slice(sentBefore)) {
        for (const problem of historyProblems(conversation as BetaMessageParam[])) violations.push(`resumed: sent an invalid history: ${problem}`);
      }
      for (const problem of next ? historyProblems(next.params.messages) : []) violations.push(`resumed: ${problem}`);
    }

    // No response left open once the run is over (the client aborts a stream it no longer reads), and no unhandled rejection.
    clearTimeout(abortTimer);
    clearTimeout(hangTimer);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const timersLeft = timers() - timersBefore - server.timers();
    if (ended && timersLeft > 0) violations.push(`${timersLeft} timer(s) left running after the run`);
    if (ended && server.openResponses() > 0) violations.push(`${server.openResponses()} response(s) still open on their sockets after the run`);
    for (const reason of unhandled) violations.push(`unhandled rejection: ${describe(reason)}`);
  } finally {
    clearTimeout(abortTimer);
    clearTimeout(hangTimer);
    controller.abort();
    process.off('unhandledRejection', onUnhandled);
    await server.close();
  }
  return { plan: p, violations, log, errors };
}

/** Faults that may leave a reply whole: a stream in another content type, an event dropped, repeated or moved that the SDK makes do without. */
const HARMLESS: readonly string[] = ['contentType', 'dup', 'swap', 'drop'];

/**
 * The tool events, call by call, in the order README gives (events.ts): a `tool.start`, then its `tool.end`; one that is
 * `pending` is followed by a `tool.start` (decided) or a `tool.end` `cancelled` (it will not run). A call may start again
 * once ended (its reply not kept, sent again).
 */
function toolEventProblems(events: readonly RunnerEvent[]): string[] {
  const problems: string[] = [];
  const state = new Map<string, 'running' | 'pending' | 'ended'>();
  for (const event of events) {
    if (event.type !== 'tool.start' && event.type !== 'tool.end') continue;
    const id = event.call.toolUse.id;
    const now = state.get(id);
    if (event.type === 'tool.start') {
      if (now === 'running') problems.push(`tool call ${id} started twice without an end between`);
      state.set(id, 'running');
    } else if (now === 'running') state.set(id, event.pending ? 'pending' : 'ended');
    else if (now === 'pending' && event.cancelled) state.set(id, 'ended');
    else problems.push(`tool call ${id}: a tool.end${event.pending ? ' (pending)' : event.cancelled ? ' (cancelled)' : ''} while ${now ?? 'never started'}`);
  }
  for (const [id, now] of state) if (now === 'running') problems.push(`tool call ${id} started and never ended`);
  return problems;
}

/** The timers running in the process (the fuzzer's own included). */
const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

/** A reply cut off by max_tokens that ended the run: its calls are answered when the run goes on (README). */
function endedOnCutOff(problem: string, stoppedBy: string | undefined): boolean {
  return stoppedBy === 'model' && / has no tool_result in message /.test(problem);
}

export function describe(error: unknown): string {
  if (error instanceof APIUserAbortError) return 'APIUserAbortError';
  return error instanceof Error ? `${error.constructor.name}: ${error.message.slice(0, 200)}` : String(error);
}
