/**
 * The caller's control API used at random moments while a run goes on: a seeded run over the testing kit's server
 * in which the loop body, the stream's listeners, `onEvent`, the hooks, a tool's `run`, timers (while a request or a
 * tool is in flight) and the code after the run call the runner's public methods as the README documents them.
 * After each run: the history and every snapshot are valid, every message the caller pushed is there once, no call
 * ran twice in one runner, a result is its own call's, nothing hangs, no rejection is left unhandled, and every error
 * is one the README names. Each seed's choices are drawn from its own generator; timing may still vary between runs
 * of a seed, so a failure prints the trace of what was called where.
 */
import { APIUserAbortError, AnthropicError } from '@anthropic-ai/sdk';
import { z } from 'zod';
import { type RunnerSnapshot, type ToolRunner, resumeToolRunner, textOf, tool, toolRunner } from '../../../src/index.js';
import { type MockServer, type RecordedRequest, type ScriptedReply, createMockServer, historyProblems, text, toolUse } from '../../../src/testing/index.js';
import { random } from '../history/harness.js';

/** The history fuzzer's seeded generator (mulberry32). */
const generator = random;
type Gen = ReturnType<typeof generator>;

export interface Config {
  stream: boolean;
  eager: boolean;
  thread: boolean;
  approvals: 'none' | 'approver' | 'stop';
  driver: 'loop' | 'await' | 'runUntilDone' | 'concurrent';
  maxIterations: number;
  abortAt: number | null;
  /** How often a site acts (0..1). */
  rate: number;
  resumes: number;
  /** options.concurrency and options.toolTimeoutMs. */
  concurrency: number | undefined;
  toolTimeoutMs: number | undefined;
  /** Replies that pause (pause_turn) or are cut off (max_tokens) now and then. */
  oddStops: boolean;
  /** onToolCall answers some calls itself ({ result }). */
  override: boolean;
  /** The loop body reads the stream (for await over its events), acting as it goes. */
  reads: boolean;
}

export function configOf(seed: number): Config {
  const g = generator(seed * 7919 + 1);
  return {
    stream: g.chance(0.5),
    eager: g.chance(0.5),
    thread: g.chance(0.5),
    approvals: g.pick(['none', 'none', 'approver', 'stop'] as const),
    driver: g.pick(['loop', 'loop', 'loop', 'await', 'runUntilDone', 'concurrent'] as const),
    maxIterations: g.pick([0, 0, 4, 8]),
    abortAt: g.chance(0.15) ? g.int(0, 80) : null,
    rate: g.pick([0.1, 0.25, 0.5]),
    resumes: g.int(0, 2),
    concurrency: g.pick([undefined, undefined, 1, 2]),
    toolTimeoutMs: g.pick([undefined, undefined, undefined, 15]),
    oddStops: g.chance(0.3),
    override: g.chance(0.25),
    reads: g.chance(0.5),
  };
}

export interface Outcome {
  seed: number;
  config: Config;
  trace: string[];
  violations: string[];
  errors: string[];
  requests: number;
  stoppedBy: string;
  compared: number;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => (clearTimeout(timer), reject(signal!.reason));
    const timer = setTimeout(() => (signal?.removeEventListener('abort', onAbort), resolve()), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

const DOCUMENTED_ERRORS = [
  /Cannot iterate over a consumed stream/,
  /The tool runner ended without a message from the model/,
  /Request was aborted|aborted/i,
  /is not waiting for approval|unknown|already decided|no call .* waits|not waiting/i,
  // The SDK's error, word for word: the compaction's reply is about to replace the history.
  /Message params can't be changed while the conversation is being compacted/,
];

class Timeout extends Error {}
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Timeout(`hang: ${what} did not settle in ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

const describeError = (error: unknown) => (error instanceof Error ? `${error.constructor.name}: ${error.message.slice(0, 300)}` : `non-error ${String(error)}`);

/** One fuzzed run (and the runs resumed from its snapshots). */
export async function fuzzRun(seed: number, shared?: MockServer): Promise<Outcome> {
  const config = configOf(seed);
  const g = generator(seed);
  const replies = generator(seed * 31 + 7);
  const trace: string[] = [];
  const violations: string[] = [];
  const errors: string[] = [];
  let clock = 0;
  const log = (line: string) => trace.push(`${clock} ${line}`);

  // The model: random replies, a compaction when one is asked, the end after 20 requests of a run.
  let requestCount = 0;
  const compactionsAt: number[] = [];
  /** The conversation the server held for each reply it gave (the run's view of it is compared at request.end). */
  const served = new Map<number, string>();
  /** When each reply was served (its calls' ids name it). */
  const servedAt = new Map<number, number>();
  /** The times the history was set to a new conversation (reset), by run. */
  const resets = new Map<ToolRunner<boolean>, number[]>();
  const resetIn = (runner: ToolRunner<boolean>, after: number, until: number) => (resets.get(runner) ?? []).some((t) => t > after && t <= until);
  const step = (request: RecordedRequest): ScriptedReply => {
    requestCount++;
    const body = request.body as Record<string, unknown>;
    const delayMs = replies.int(0, 6);
    const eventDelayMs = replies.int(0, 3);
    if (body['compaction']) {
      compactionsAt.push(++clock);
      log(`server: compaction reply`);
      served.set(requestCount, normal(request.messages as never));
      return { content: [{ type: 'compaction', content: `Summary ${clock}, reply ${requestCount}.`, encrypted_content: null } as never], delayMs, eventDelayMs };
    }
    const calls = requestCount > 20 || replies.chance(0.3) ? 0 : replies.int(1, 3);
    const names = ['quick', 'slow', 'slow', ...(config.approvals !== 'none' ? ['guarded'] : []), 'extra'];
    served.set(requestCount, normal(request.messages as never));
    const content = [];
    content.push(text(`reply ${requestCount}`));
    servedAt.set(requestCount, ++clock);
    for (let i = 0; i < calls; i++) content.push(toolUse(replies.pick(names), { n: replies.int(0, 3) }, `toolu_01fuzz${seed}x${requestCount}x${i}`));
    const odd = config.oddStops && requestCount <= 20 ? replies.pick([undefined, undefined, undefined, 'pause_turn', 'max_tokens'] as const) : undefined;
    log(`server: request ${requestCount} -> ${calls} call(s)${odd ? ` (${odd})` : ''}`);
    return { content, delayMs, eventDelayMs, ...(odd && { stop_reason: odd }) };
  };
  const steps = Array.from({ length: 200 }, () => step);
  const server = shared ?? (await createMockServer({ steps }));
  if (shared) {
    shared.requests.length = 0;
    shared.forgetThreads();
    shared.setSteps(steps);
  }

  /** Each runner's runs of each call id. */
  const ran = new Map<string, Map<string, number>>();
  /** Calls that ran to their end (returned), by runner. */
  const finished = new Map<string, Set<string>>();
  const markers = new Map<string, { at: number; runner: ToolRunner<boolean> }>();
  /** Calls the loop body answered itself, by the run it answered them in. */
  const selfAnswered = new Map<string, { runner: ToolRunner<boolean>; at: number }>();
  /** Tools removed (removeTools), by run: name and when. */
  const removed = new Map<ToolRunner<boolean>, Map<string, number>>();
  /** Calls approved with an edited input ({ n: 9 }). */
  const edited = new Set<string>();
  /** Calls onToolCall answered itself (never run). */
  const hooked = new Set<string>();
  /** The replies a loop body placed back in the history (once each). */
  const placed = new WeakSet<object>();
  const requestControllers = new Map<ToolRunner<boolean>, AbortController>();
  const decide = (runner: ToolRunner<boolean>, id: string, where: string) => {
    const choice = g.pick(['approve', 'approve', 'edit', 'deny'] as const);
    log(`${where}: ${choice} ${id}`);
    if (choice === 'approve') runner.approve(id);
    else if (choice === 'edit') {
      // (Before: a call approved while the run goes on may start at once.)
      const already = edited.has(id);
      edited.add(id);
      try {
        runner.approve(id, { input: { n: 9 } });
      } catch (error) {
        if (!already) edited.delete(id);
        throw error;
      }
    } else runner.deny(id, 'not now');
  };
  const snapshots: Array<{ at: number; where: string; snapshot: RunnerSnapshot; runner: ToolRunner<boolean> }> = [];
  const dones: Array<{ where: string; settled: boolean; label: string; attempt: number }> = [];
  const timers = new Set<NodeJS.Timeout>();
  let attemptActive = false;
  let attempt = 0;

  const makeTools = (label: string) => {
    const runs = new Map<string, number>();
    const ends = new Set<string>();
    ran.set(label, runs);
    finished.set(label, ends);
    const body = (name: string, slow: boolean) => async ({ n }: { n: number }, context: { toolUse: { id: string }; signal: AbortSignal; runner: unknown }) => {
      const id = context.toolUse.id;
      runs.set(id, (runs.get(id) ?? 0) + 1);
      log(`${label}: tool ${name} ${id} starts (n ${n})`);
      // (An approval without an edit may win over one with: two clicks; the first decides.)
      if (n === 9 && !edited.has(id)) violations.push(`${label}: ${id} runs with n ${n}, ${edited.has(id) ? 'approved with n 9' : 'not edited'}`);
      const removedAt = removed.get(context.runner as ToolRunner<boolean>)?.get(name);
      const served = servedAt.get(Number(/x(\d+)x/.exec(id)?.[1]));
      if (hooked.has(`${label} ${id}`)) violations.push(`${label}: ${id} runs, answered by onToolCall`);
      if (removedAt !== undefined && served !== undefined && served > removedAt) violations.push(`${label}: ${name} ${id} runs after removeTools('${name}') at ${removedAt}`);
      if (slow) await sleep(5 + n * 7, context.signal);
      await act(`tool ${name}`, context.runner as ToolRunner<boolean>, 'tool');
      ends.add(id);
      return `ran ${name} ${id}`;
    };
    const input = z.object({ n: z.number() });
    return {
      quick: tool({ name: 'quick', inputSchema: input, run: body('quick', false) }),
      slow: tool({ name: 'slow', inputSchema: input, run: body('slow', true) }),
      guarded: tool({ name: 'guarded', inputSchema: input, needsApproval: true, run: body('guarded', false) }),
      extra: tool({ name: 'extra', inputSchema: input, run: body('extra', false) }),
    };
  };

  const controllers = new Map<unknown, AbortController>();
  const runners = new Map<string, ToolRunner<boolean>>();
  /** What each run's onRequest saw, in order, to compare with what the server got. */
  const seen = new Map<string, Array<{ at: number; messages: string }>>();
  /** The view of each request by its runner and request id (request.start takes the last onRequest's view). */
  const viewOf = new Map<unknown, Map<number, { at: number; messages: string }>>();
  let compared = 0;
  const current: { runner?: ToolRunner<boolean>; label: string } = { label: 'main' };

  const push = (runner: ToolRunner<boolean>, where: string, form: 'push' | 'setFn' | 'setObj') => {
    const marker = `PUSH-${seed}-${markers.size}`;
    markers.set(marker, { at: ++clock, runner });
    const message = { role: 'user' as const, content: marker };
    log(`${where}: ${form} ${marker}`);
    try {
      if (form === 'push') runner.pushMessages(message);
      else if (form === 'setFn') runner.setMessagesParams((p) => ({ ...p, messages: [...p.messages, message] }));
      else runner.setMessagesParams({ ...(runner.params as object), messages: [...runner.params.messages, message] } as never);
    } catch (error) {
      markers.delete(marker);
      throw error;
    }
  };

  /** A random call of the control API at `site` (what may be called there: README). */
  async function act(where: string, runner: ToolRunner<boolean> | undefined, site: 'body' | 'listener' | 'hook' | 'tool' | 'timer' | 'after', message?: unknown): Promise<void> {
    if (!runner || !g.chance(config.rate)) return;
    const options = ['push', 'setFn', 'setObj', 'raise', 'requestOptions', 'requestOptionsFn', 'snapshot', 'snapshot', 'addTools', 'removeTools', 'decide', 'compact', 'done', 'reset', 'system', 'requestSignal'];
    if (site === 'body') options.push('generate', 'pushKeep', 'retry', 'break', 'break', 'answerSelf', 'answerSelf');
    if (site === 'timer' || site === 'after') options.push('runUntilDone');
    if (site === 'after') options.push('generate', 'iterate');
    const choice = site !== 'body' && site !== 'after' && g.chance(0.02) ? 'abort' : g.pick(options);
    try {
      switch (choice) {
        case 'push':
        case 'setFn':
        case 'setObj':
          push(runner, where, choice);
          break;
        case 'pushKeep': {
          // A program places the reply back once (twice, it is the program's own invalid history: the API's 400).
          if (placed.has(message as object)) break;
          placed.add(message as object);
          const reply = runner.params.stream ? await (message as { finalMessage(): Promise<{ content: unknown }> }).finalMessage() : (message as { content: unknown });
          const marker = `PUSH-${seed}-${markers.size}`;
          markers.set(marker, { at: ++clock, runner });
          log(`${where}: pushKeep ${marker}`);
          try {
            runner.pushMessages({ role: 'assistant', content: reply.content as never }, { role: 'user', content: marker });
          } catch (error) {
            markers.delete(marker);
            throw error;
          }
          break;
        }
        case 'retry':
          log(`${where}: retry (setMessagesParams(p => p))`);
          runner.setMessagesParams((p) => p);
          break;
        case 'raise':
          log(`${where}: raise max_iterations`);
          runner.setMessagesParams((p) => ({ ...p, max_iterations: p.max_iterations ? p.max_iterations + 2 : p.max_iterations }));
          break;
        case 'requestOptions':
          log(`${where}: setRequestOptions`);
          runner.setRequestOptions({ headers: { 'x-fuzz': String(clock) } });
          break;
        case 'requestOptionsFn':
          log(`${where}: setRequestOptions(fn)`);
          runner.setRequestOptions((previous) => ({ ...previous, maxRetries: 1 }));
          break;
        case 'snapshot': {
          const snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
          snapshots.push({ at: ++clock, where, snapshot, runner });
          log(`${where}: snapshot #${snapshots.length - 1} (${snapshot.params.messages.length} messages)`);
          break;
        }
        case 'addTools':
          log(`${where}: addTools(extra)`);
          runner.addTools(makeToolsFor(current.label).extra);
          removed.get(runner)?.delete('extra');
          break;
        case 'removeTools': {
          const name = g.pick(['extra', 'quick']);
          log(`${where}: removeTools(${name})`);
          runner.removeTools(name);
          (removed.get(runner) ?? removed.set(runner, new Map()).get(runner)!).set(name, ++clock);
          break;
        }
        case 'decide':
          for (const call of runner.pendingApprovals) decide(runner, call.id, where);
          break;
        case 'reset': {
          // A chat's new conversation: what was pushed before is gone (the caller's own doing).
          const marker = `PUSH-${seed}-${markers.size}`;
          const now = ++clock;
          log(`${where}: reset to ${marker}`);
          runner.setMessagesParams((p) => ({ ...p, messages: [{ role: 'user', content: marker }] }));
          (resets.get(runner) ?? resets.set(runner, []).get(runner)!).push(now);
          markers.set(marker, { at: now, runner });
          break;
        }
        case 'system':
          log(`${where}: a new system prompt`);
          runner.setMessagesParams((p) => ({ ...p, system: `system ${clock}` }));
          break;
        case 'requestSignal': {
          const controller = new AbortController();
          log(`${where}: setRequestOptions({ signal })`);
          runner.setRequestOptions({ signal: controller.signal });
          requestControllers.set(runner, controller);
          break;
        }
        case 'answerSelf': {
          if (placed.has(message as object)) break;
          placed.add(message as object);
          const reply = (runner.params.stream ? await (message as { finalMessage(): Promise<{ content: unknown }> }).finalMessage() : message) as { content: Array<{ type: string; id: string }> };
          const uses = reply.content.filter((block) => block.type === 'tool_use');
          if (uses.length === 0) break;
          log(`${where}: answer ${uses.length} call(s) itself`);
          const now = ++clock;
          for (const use of uses) selfAnswered.set(use.id, { runner, at: now });
          runner.pushMessages(
            { role: 'assistant', content: reply.content as never },
            { role: 'user', content: uses.map((use) => ({ type: 'tool_result' as const, tool_use_id: use.id, content: `self ${use.id}` })) },
          );
          break;
        }
        case 'compact':
          log(`${where}: compactBeforeNextTurn`);
          runner.compactBeforeNextTurn();
          break;
        case 'done': {
          const entry = { where, settled: false, label: current.label, attempt };
          if (!attemptActive) break;
          dones.push(entry);
          log(`${where}: done() taken`);
          runner.done().then(
            () => (entry.settled = true),
            () => (entry.settled = true),
          );
          break;
        }
        case 'generate': {
          const own = g.chance(0.3) ? AbortSignal.timeout(g.int(0, 10)) : undefined;
          log(`${where}: generateToolResponse${own ? '(signal)' : ''}`);
          const response = await within(runner.generateToolResponse(own), 5000, `${where}: generateToolResponse`);
          log(`${where}: generateToolResponse -> ${response ? response.content.length : 'null'}`);
          break;
        }
        case 'break':
          throw BREAK;
        case 'runUntilDone':
          log(`${where}: runUntilDone() concurrently`);
          void runner.runUntilDone().then(
            () => log(`${where}: runUntilDone resolved`),
            (error: unknown) => (errors.push(`runUntilDone: ${describeError(error)}`), log(`${where}: runUntilDone rejected ${describeError(error)}`)),
          );
          break;
        case 'iterate': {
          log(`${where}: iterate again`);
          for await (const _ of runner) {
            // A run that ended throws; one stopped at a limit or for approval goes on.
          }
          break;
        }
        case 'abort':
          if (requestControllers.has(runner) && g.chance(0.5)) {
            log(`${where}: abort the signal of setRequestOptions`);
            requestControllers.get(runner)!.abort();
            break;
          }
          log(`${where}: abort`);
          controllers.get(runner)?.abort();
          break;
      }
    } catch (error) {
      if (error === BREAK) throw error;
      if (error instanceof Timeout) throw error;
      log(`${where}: ${choice} threw ${describeError(error)}`);
      errors.push(`${choice}: ${describeError(error)}`);
      if (!DOCUMENTED_ERRORS.some((pattern) => pattern.test(String((error as Error)?.message ?? error)))) {
        violations.push(`${where}: ${choice} threw an undocumented error: ${describeError(error)}`);
      }
    }
  }
  const toolsByLabel = new Map<string, ReturnType<typeof makeTools>>();
  const makeToolsFor = (label: string) => {
    let tools = toolsByLabel.get(label);
    if (!tools) toolsByLabel.set(label, (tools = makeTools(label)));
    return tools;
  };

  const options = (label: string, controller: AbortController) => ({
    signal: controller.signal,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    ...(config.concurrency !== undefined && { concurrency: config.concurrency }),
    ...(config.toolTimeoutMs !== undefined && { toolTimeoutMs: config.toolTimeoutMs }),
    ...(config.approvals === 'approver' && {
      approve: async ({ toolUse: { id } }: { toolUse: { id: string } }) => {
        await sleep(replies.int(0, 5));
        await act(`approve ${id}`, current.runner, 'hook');
        const choice = g.pick(['allow', 'allow', 'edit', 'deny'] as const);
        if (choice === 'edit') edited.add(id);
        return choice === 'deny' ? { decision: 'deny' as const, reason: 'no' } : choice === 'edit' ? { decision: 'allow' as const, input: { n: 9 } } : { decision: 'allow' as const };
      },
    }),
    onEvent: (event: { type: string; runner?: unknown; requestId?: number; message?: { content: Array<{ type: string; text?: unknown; content?: unknown }> } }) => {
      if (event.type === 'tool.end') {
        const end = event as unknown as { call: { id: string }; result?: { content?: unknown }; pending?: boolean; cancelled?: boolean };
        log(`${label}: tool.end ${end.call.id}${end.pending ? ' pending' : ''}${end.cancelled ? ' cancelled' : ''} ${JSON.stringify(end.result?.content ?? '').slice(0, 60)}`);
      }
      if (event.type === 'request.start') {
        // The history as the run holds it when the request leaves (a message pushed after onRequest, before it left, goes too).
        const view = { at: clock, messages: normal((event.runner as ToolRunner<boolean>).params.messages) };
        if (view) (viewOf.get(event.runner) ?? viewOf.set(event.runner, new Map()).get(event.runner)!).set(event.requestId!, view);
      }
      if (event.type === 'request.end' && event.message) {
        const said = event.message.content.map((block) => String(block.text ?? block.content ?? '')).join(' ');
        const k = Number(/reply (\d+)/.exec(said)?.[1]);
        const view = viewOf.get(event.runner)?.get(event.requestId!);
        const conversation = served.get(k);
        if (view && conversation !== undefined) {
          compared++;
          if (view.messages !== conversation) violations.push(`${label}: request ${event.requestId} (reply ${k}, at ${view.at}): the server's conversation differs from the run's\n      run:    ${view.messages.slice(0, 3000)}\n      server: ${conversation.slice(0, 3000)}`);
        }
      }
      if (event.type === 'request.start' || event.type === 'tool.start' || event.type === 'tool.end' || event.type === 'request.end') {
        void act(`onEvent ${event.type} (${label})`, event.runner as ToolRunner<boolean>, 'listener').catch(onStray);
      }
      if (event.type === 'request.start' || event.type === 'tool.start') {
        const timer = setTimeout(() => {
          timers.delete(timer);
          void act(`timer after ${event.type} (${label})`, event.runner as ToolRunner<boolean>, 'timer').catch(onStray);
        }, g.int(0, 12));
        timers.add(timer);
      }
    },
    hooks: {
      onRequest: async (request: { messages: unknown[]; compaction?: unknown }) => {
        const view = { at: clock, messages: normal(request.messages) };
        (seen.get(label) ?? seen.set(label, []).get(label)!).push(view);
        // Every message pushed to this run before this request goes with it (a compaction's request aside, and a compaction since).
        if (!request.compaction) {
          const sent = JSON.stringify(request.messages);
          const runner = runners.get(label);
          for (const [marker, { at, runner: to }] of markers) {
            if (to !== runner || resetIn(runner, at, Infinity) || compactionsAt.some((c) => c > at)) continue;
            if (!sent.includes(`"${marker}"`)) violations.push(`${label}: request at ${clock} goes without ${marker} (pushed at ${at})`);
          }
        }
        const before = clock;
        await act(`onRequest (${label})`, current.runner, 'hook').catch(onHookStray);
        // A message pushed here goes with this request (README): the run's history as it is now.
        if (clock !== before) view.messages = normal(runners.get(label)!.params.messages);
      },
      onMessage: () => act(`onMessage (${label})`, current.runner, 'hook').catch(onHookStray),
      onToolResult: () => act(`onToolResult (${label})`, current.runner, 'hook').catch(onHookStray),
      ...(config.override && {
        onToolCall: async (call: { id: string }) => {
          await act(`onToolCall (${label})`, current.runner, 'hook').catch(onHookStray);
          if (!g.chance(0.3)) return undefined;
          hooked.add(`${label} ${call.id}`);
          log(`onToolCall (${label}): answers ${call.id}`);
          return { result: `hooked ${call.id}` };
        },
      }),
    },
  });
  // A `break` drawn outside the loop body is never drawn (not among its options); a Timeout is a hang.
  const onStray = (error: unknown) => (error instanceof Timeout ? violations.push(error.message) : violations.push(`listener action failed: ${describeError(error)}`));
  const onHookStray = (error: unknown) => void onStray(error);

  const params = (label: string) => ({
    model: 'claude-sonnet-5-5',
    max_tokens: 256,
    messages: [{ role: 'user' as const, content: 'go' }],
    tools: Object.values(makeToolsFor(label)).filter((t) => t.name !== 'extra' && (config.approvals !== 'none' || t.name !== 'guarded')),
    betas: ['inline-tools-2026-09-15'],
    stream: config.stream,
    runToolsEagerly: config.eager,
    max_iterations: config.maxIterations,
    ...(config.thread ? {} : { thread: false as const }),
  });

  /** Drives a runner to its end as the config says: approvals decided, failures retried a few times. */
  async function drive(runner: ToolRunner<boolean>, label: string, controller: AbortController): Promise<void> {
    current.runner = runner;
    current.label = label;
    for (attempt = 0; attempt < 8; attempt++) {
      attemptActive = true;
      try {
        const driver = label === 'main' ? config.driver : 'await';
        if (driver === 'loop') {
          try {
            for await (const item of runner) {
              log(`${label}: body (iteration ${runner.iteration})`);
              if (config.stream) {
                const stream = item as { on(event: string, listener: (value: any) => void): unknown };
                stream.on('contentBlock', (block: { type: string; id?: string }) => {
                  if (block.type === 'tool_use' && g.chance(config.rate)) {
                    log(`${label}: deferToolCall ${block.id}`);
                    runner.deferToolCall(block as never);
                  }
                  void act(`contentBlock (${label})`, runner, 'listener').catch(onStray);
                });
              }
              if (config.stream && config.reads && g.chance(0.7)) {
                try {
                  for await (const event of item as AsyncIterable<{ type: string }>) {
                    if (event.type === 'content_block_stop' || event.type === 'message_delta') await act(`body reading ${event.type} (${label})`, runner, 'body', item);
                    if (g.chance(0.01)) {
                      log(`${label}: break out of the stream`);
                      break;
                    }
                  }
                } catch (error) {
                  if (error === BREAK) throw error;
                  log(`${label}: reading the stream failed: ${describeError(error)}`);
                  throw error;
                }
              }
              await act(`body (${label})`, runner, 'body', item);
              if (g.chance(config.rate / 2)) await act(`body again (${label})`, runner, 'body', item);
            }
          } catch (error) {
            if (error !== BREAK) throw error;
            log(`${label}: break`);
          }
        } else if (driver === 'await') {
          await within(Promise.resolve(runner), 8000, `${label}: await runner`);
        } else if (driver === 'runUntilDone') {
          await within(runner.runUntilDone(), 8000, `${label}: runUntilDone`);
        } else {
          const all = await within(Promise.allSettled([runner.runUntilDone(), runner.done(), Promise.resolve(runner)]), 8000, `${label}: concurrent`);
          const failed = all.find((result) => result.status === 'rejected');
          if (failed) throw (failed as PromiseRejectedResult).reason;
        }
        attemptActive = false;
        await sleep(1);
        log(`${label}: attempt ended, stoppedBy ${runner.stoppedBy}, pending ${runner.pendingApprovals.length}`);
        checkDones(label);
        if (runner.stoppedBy === 'approval' || runner.pendingApprovals.length > 0) {
          for (const call of runner.pendingApprovals) {
            try {
              decide(runner, call.id, `${label} driver`);
            } catch (error) {
              // Decided meanwhile (from a timer): documented.
              errors.push(`decide: ${describeError(error)}`);
            }
          }
          continue;
        }
        if (runner.stoppedBy === 'max_iterations') {
          if (g.chance(0.5)) runner.setMessagesParams((p) => ({ ...p, max_iterations: (p.max_iterations ?? 0) + 3 }));
          else return;
          continue;
        }
        return;
      } catch (error) {
        attemptActive = false;
        if (error instanceof Timeout) throw error;
        // Another loop (a concurrent runUntilDone) iterates: its end, taken now (a done() taken after a failure waits for the next attempt).
        const otherLoop = error instanceof AnthropicError && /consumed stream/.test(error.message) ? runner.done().catch(() => undefined) : undefined;
        await sleep(1);
        checkDones(label);
        errors.push(`${label} attempt ${attempt}: ${describeError(error)}`);
        log(`${label}: attempt failed: ${describeError(error)}`);
        const aborted = controller.signal.aborted;
        if (aborted) {
          if (!(error instanceof APIUserAbortError)) violations.push(`${label}: the run was aborted but failed with ${describeError(error)}`);
          return;
        }
        if (error instanceof APIUserAbortError) continue; // A stream left by its own reader (break out of the stream) aborts: documented.
        if (otherLoop) {
          await within(otherLoop, 8000, `${label}: done() after a consumed stream`);
          continue;
        }
        if (!(error instanceof AnthropicError)) violations.push(`${label}: untyped failure ${describeError(error)}`);
        else violations.push(`${label}: unexpected failure ${describeError(error)}`);
      }
    }
  }

  function checkDones(label: string): void {
    for (const entry of dones) {
      if (entry.label === label && entry.attempt === attempt && !entry.settled) violations.push(`${label}: a done() taken in ${entry.where} during attempt ${entry.attempt} was not settled when the attempt ended`);
    }
  }

  function checkHistory(label: string, messages: readonly unknown[], what: string, of: ToolRunner<boolean>, until: number, from?: ToolRunner<boolean>): void {
    if (historyProblems(messages as never).length > 0) trace.push(`${what}: ${shape(messages)}`);
    for (const problem of historyProblems(messages as never)) {
      // A snapshot taken after a message was pushed past calls that wait (for approval, or still running) holds them
      // unanswered: the resumed run answers them (README: a history set with calls unanswered in its middle). Resumed, checked.
      // So does a history the caller set so (the reply pushed back with a question after it) when the run stops before
      // its next request (break, a limit): the run's snapshot holds the answers (checked at the end).
      // Either way the message after the calls is one the caller pushed.
      const after = / has no tool_result in message (\d+)/.exec(problem);
      const next = after ? (messages as Array<{ content: unknown }>)[Number(after[1])] : undefined;
      if (typeof next?.content === 'string' && next.content.startsWith('PUSH-')) continue;
      violations.push(`${what}: ${problem}`);
    }
    const runs = ran.get(label) ?? new Map<string, number>();
    const uses = new Map<string, string>();
    for (const message of messages as Array<{ role: string; content: unknown }>) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content as Array<Record<string, unknown>>) {
        if (block['type'] === 'tool_use') uses.set(String(block['id']), String(block['name']));
        if (block['type'] !== 'tool_result') continue;
        const id = String(block['tool_use_id']);
        const content = typeof block['content'] === 'string' ? block['content'] : textOf({ content: (block['content'] ?? []) as never } as never);
        const own = /^ran (\w+) (\S+)$/.exec(content);
        const self = selfAnswered.get(id);
        if (self && ((self.runner === of && self.at <= until) || self.runner === from) && content !== `self ${id}`) violations.push(`${what}: ${id}, answered by the loop body, has the result "${content.slice(0, 100)}"`);
        if (own && own[2] !== id) violations.push(`${what}: the result of ${id} is another call's: ${content}`);
        if (/not run|aborted before it started/.test(content) && (runs.get(id) ?? 0) > 0 && what.startsWith(label)) {
          violations.push(`${what}: ${id} is answered "${content.slice(0, 120)}" but ran ${runs.get(id)} time(s) in ${label}`);
        }
      }
    }
    const all = JSON.stringify(messages);
    for (const [marker, { at, runner }] of markers) {
      let expected: boolean;
      if (from === undefined) {
        if (runner !== of || at > until) continue;
        expected = !resetIn(of, at, until);
      } else if (runner === from) expected = !resetIn(from, at, Infinity);
      else if (runner === of && at <= until) expected = !resetIn(of, at, until) && !resetIn(from, -1, Infinity);
      else continue;
      const count = all.split(`"${marker}"`).length - 1;
      if (!expected) {
        if (count > 0) violations.push(`${what}: ${marker} (pushed at ${at}) is there ${count} times after the history was set without it`);
        continue;
      }
      const compactedAfter = compactionsAt.some((c) => c > at);
      if (count > 1 || (count === 0 && !compactedAfter)) violations.push(`${what}: ${marker} (pushed at ${at}) is there ${count} times`);
    }
  }

  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  const mainController = new AbortController();
  let stoppedBy = 'none';
  const abortTimer = config.abortAt === null ? undefined : setTimeout(() => (log('abort (options.signal)'), mainController.abort()), config.abortAt);
  try {
    const runner = toolRunner(server.client({ maxRetries: 0, logLevel: 'off', defaultHeaders: { 'x-fuzz-run': 'main' } }), params('main') as never, options('main', mainController) as never) as unknown as ToolRunner<boolean>;
    controllers.set(runner, mainController);
    runners.set('main', runner);
    await within(drive(runner, 'main', mainController), 15000, 'main run');
    clearTimeout(abortTimer);
    stoppedBy = String(runner.stoppedBy);
    // After the end: the control API again, then `await runner` resolves (or rejects) as it did.
    await act('after end', runner, 'after');
    await act('after end', runner, 'after');
    const settled = await within(
      Promise.resolve(runner).then(
        () => 'resolved',
        (error: unknown) => describeError(error),
      ),
      8000,
      'await runner after the end',
    );
    log(`main: await after the end: ${settled}`);
    if (runner.stoppedBy !== 'abort' && runner.stoppedBy !== 'error' && settled !== 'resolved' && !/consumed|without a message/.test(settled)) {
      violations.push(`main: await runner after the end (stoppedBy ${runner.stoppedBy}) gave ${settled}`);
    }
    for (const timer of timers) clearTimeout(timer);
    await sleep(15);
    checkHistory('main', runner.params.messages, 'main history', runner, Infinity);
    if (runner.pendingApprovals.length === 0) checkHistory('main', runner.toJSON().params.messages, 'main final snapshot', runner, Infinity);
    for (const [id, count] of ran.get('main')!) if (count > 1) violations.push(`main: call ${id} ran ${count} times`);
    for (const [i, { at, where, snapshot, runner: of }] of snapshots.entries()) checkHistory('snapshot', snapshot.params.messages, `snapshot #${i} (${where})`, of, at);

    // Resume from some of the snapshots.
    const chosen = snapshots.length === 0 ? [] : Array.from({ length: config.resumes }, () => g.int(0, snapshots.length - 1));
    for (const [k, index] of [...new Set(chosen)].entries()) {
      const { snapshot, at, runner: of } = snapshots[index]!;
      const label = `resumed${k}`;
      const tools = makeToolsFor(label);
      const controller = new AbortController();
      log(`${label}: from snapshot #${index}`);
      const resumed = resumeToolRunner(server.client({ maxRetries: 0, logLevel: 'off', defaultHeaders: { 'x-fuzz-run': label } }), snapshot as never, {
        tools: Object.values(tools).filter((t) => usedBy(snapshot).has(t.name)),
        options: options(label, controller) as never,
      }) as unknown as ToolRunner<boolean>;
      controllers.set(resumed, controller);
      runners.set(label, resumed);
      await within(drive(resumed, label, controller), 15000, `${label} run`);
      for (const timer of timers) clearTimeout(timer);
      await sleep(15);
      // What the snapshot held, and what was pushed to the resumed run.
      checkHistory(label, resumed.params.messages, `${label} history`, of, at, resumed);
      if (resumed.pendingApprovals.length === 0) checkHistory(label, resumed.toJSON().params.messages, `${label} final snapshot`, of, at, resumed);
      for (const [id, count] of ran.get(label)!) if (count > 1) violations.push(`${label}: call ${id} ran ${count} times`);
      // A call whose result the snapshot holds is not run again.
      const held = new Set<string>();
      for (const message of snapshot.params.messages as Array<{ content: unknown }>) {
        if (Array.isArray(message.content)) for (const block of message.content as Array<Record<string, unknown>>) if (block['type'] === 'tool_result') held.add(String(block['tool_use_id']));
      }
      for (const id of ran.get(label)!.keys()) if (held.has(id)) violations.push(`${label}: call ${id}, answered in the snapshot, ran again`);
    }
  } catch (error) {
    violations.push(error instanceof Timeout ? error.message : `harness: ${describeError(error)}`);
  } finally {
    clearTimeout(abortTimer);
    for (const timer of timers) clearTimeout(timer);
    for (const controller of controllers.values()) controller.abort();
    await sleep(20);
    process.off('unhandledRejection', onUnhandled);
    if (!shared) await server.close();
  }
  for (const reason of unhandled) violations.push(`unhandled rejection: ${describeError(reason)}`);
  return { seed, config, trace, violations, errors, requests: requestCount, stoppedBy, compared };
}

const BREAK = Symbol('break');

/** The runnable tools a snapshot names (its own, and those added or removed since: resumeToolRunner takes only those). */
function usedBy(snapshot: RunnerSnapshot): Set<string> {
  const names = new Set<string>();
  for (const entry of snapshot.tools as Array<Record<string, unknown>>) if (typeof entry['runnable'] === 'string') names.add(entry['runnable']);
  const changes = snapshot.toolChanges as { overrides?: Record<string, unknown>; pending?: Array<Record<string, unknown>> } | undefined;
  for (const name of Object.keys(changes?.overrides ?? {})) names.add(name);
  for (const change of changes?.pending ?? []) if (typeof change['runnable'] === 'string') names.add(change['runnable']);
  return names;
}

/** A history in short: each message's role and blocks (a call's name and id end, a result's id end and first words). */
export function shape(messages: readonly unknown[]): string {
  return (messages as Array<{ role: string; content: unknown }>)
    .map((message) => {
      const blocks = typeof message.content === 'string' ? [message.content] : (message.content as Array<Record<string, unknown>>).map((block) => {
        if (block['type'] === 'tool_use') return `use ${String(block['name'])} ${String(block['id']).slice(-4)}`;
        if (block['type'] === 'tool_result') return `result ${String(block['tool_use_id']).slice(-4)} ${JSON.stringify(block['content']).slice(0, 40)}`;
        if (block['type'] === 'text') return JSON.stringify(block['text']);
        return String(block['type']);
      });
      return `${message.role}[${blocks.join(', ')}]`;
    })
    .join(' ');
}

/** Messages in a form that compares: string content as a text block, blocks by the fields that matter. */
function normal(messages: readonly unknown[]): string {
  const blockOf = (block: Record<string, unknown>): unknown => {
    switch (block['type']) {
      case 'text':
        return ['text', block['text']];
      case 'tool_use':
        return ['use', block['id'], block['name'], block['input']];
      case 'tool_result': {
        const content = block['content'];
        const blocks = typeof content === 'string' ? (content === '' ? [] : [['text', content]]) : ((content ?? []) as Array<Record<string, unknown>>).map(blockOf);
        return ['result', block['tool_use_id'], Boolean(block['is_error']), blocks];
      }
      case 'compaction':
        return ['compaction', block['content']];
      default:
        return [block['type'], JSON.stringify(block).length];
    }
  };
  return JSON.stringify(
    (messages as Array<{ role: string; content: unknown }>).map((message) => [
      message.role,
      typeof message.content === 'string' ? [['text', message.content]] : (message.content as Array<Record<string, unknown>>).map(blockOf),
    ]),
  );
}
