/**
 * A seeded fuzzer of whole runs over the testing kit's server: random scripts of replies (0–3 calls
 * to known, unknown and guarded tools, invalid input; tools that throw, hang past their timeout,
 * return 150 kB), streamed or not, threads on or off, API errors with the client's retries off or on,
 * dropped, malformed and stalled replies, aborts at random moments, messages pushed in the loop body,
 * snapshots taken and resumed at random turns, approvals allowed and denied, `max_iterations`. After
 * each run (finished, failed, aborted) it checks the README's promise "the history stays valid whatever
 * fails": `historyProblems` of `runner.params.messages` and of every snapshot, nothing the caller pushed
 * lost, no finished call run twice, every error of a documented class, no run that hangs, and that the
 * run (resumed from its snapshot, a question pushed) sends a request the API takes. The server refuses what
 * the API refuses, so a request the runner should never have sent is a `BadRequestError` here.
 *
 * Every choice comes from the seed (`plan(seed)`): a failing seed is run again as it failed, save the
 * moments of aborts and timers, which are the test's own clock's.
 */
import { APIUserAbortError, AnthropicError, BadRequestError } from '@anthropic-ai/sdk';
import { z } from 'zod';
import { HookError, type RunnerSnapshot, ToolError, resumeToolRunner, tool, toolRunner } from '../../../src/index.js';
import { type MockServer, type ScriptedReply, createMockServer, historyProblems, text, toolUse } from '../../../src/testing/index.js';
import type { BetaContentBlock, BetaMessage, BetaMessageParam } from '../../../src/types.js';

/** A small deterministic generator (mulberry32). */
export function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}

const behaviours = ['ok', 'ok', 'throw', 'hang', 'huge', 'slow', 'guarded', 'unknown', 'invalid', 'badResult', 'surrogate', 'emptyError', 'abortRun', 'guardedSlow'] as const;
type Behaviour = (typeof behaviours)[number];
const faults = ['none', 'none', 'none', 'none', '429', '500', '529', 'dropStream', 'dropJson', 'malformed', 'errorEvent', 'stall'] as const;
type Fault = (typeof faults)[number];
const stops = ['auto', 'auto', 'auto', 'auto', 'end_turn', 'max_tokens', 'pause_turn'] as const;
/** What the loop body does with an item: first a change (or none), then how it leaves (or goes on). */
const changes = ['none', 'none', 'none', 'push', 'pushQuestion', 'generate', 'pushLate', 'setLate', 'retry', 'system', 'onRequest', 'forgetThreads', 'partial', 'generatePush', 'takeBack'] as const;
const exits = ['none', 'none', 'none', 'none', 'none', 'none', 'none', 'none', 'snapshot', 'snapshot', 'abort', 'break'] as const;
export interface Action {
  change: (typeof changes)[number];
  exit: (typeof exits)[number];
  /** For the late changes: ms after the body. */
  lateMs: number;
}

export interface ReplyPlan {
  text: boolean;
  calls: Behaviour[];
  stop: (typeof stops)[number];
  fault: Fault;
}
export interface Plan {
  seed: number;
  stream: boolean;
  thread: boolean;
  eager: boolean;
  maxRetries: 0 | 2;
  maxIterations: number;
  /** 'none': the run stops for approval, and the driver decides; else the approver's answers. */
  approver: 'none' | 'allow' | 'deny' | 'mixed' | 'slow' | 'throws';
  /** What the driver does in the loop body of each item, in turn (past the end: nothing). */
  actions: Action[];
  replies: ReplyPlan[];
  /** An abort at this many ms after the run starts, or none. */
  abortAtMs: number | null;
  /** A snapshot taken in `onToolResult` at this result (its count), kept to resume at the end. */
  snapshotAtResult: number | null;
  /** Replaces `approver` when set (drawn last, so that older seeds keep their plans but this). */
  approverMore: 'slow' | 'throws' | null;
  /** Run control: a budget, a loop guard, what a limit does. */
  control: { maxToolCalls?: number; maxTokens?: number; maxRepeats?: number; onLimit: 'stop' | 'answer' } | null;
}

export function plan(seed: number): Plan {
  const r = random(seed);
  const replies = Array.from({ length: r.int(1, 6) }, (): ReplyPlan => ({
    text: r.chance(0.5),
    calls: Array.from({ length: r.int(0, 3) }, () => r.pick(behaviours)),
    stop: r.pick(stops),
    fault: r.pick(faults),
  }));
  return {
    seed,
    stream: r.chance(0.5),
    thread: r.chance(0.5),
    eager: r.chance(0.25),
    maxRetries: r.chance(0.5) ? 0 : 2,
    maxIterations: r.chance(0.6) ? 0 : r.int(1, 8),
    approver: r.pick(['none', 'none', 'allow', 'deny', 'mixed'] as const),
    actions: Array.from({ length: 8 }, () => ({ change: r.pick(changes), exit: r.pick(exits), lateMs: r.int(0, 30) })),
    replies,
    abortAtMs: r.chance(0.2) ? r.int(0, 120) : null,
    snapshotAtResult: r.chance(0.3) ? r.int(1, 4) : null,
    approverMore: r.chance(0.2) ? r.pick(['slow', 'throws'] as const) : null,
    control: r.chance(0.3)
      ? {
          ...(r.chance(0.5) && { maxToolCalls: r.int(0, 4) }),
          ...(r.chance(0.4) && { maxTokens: r.int(50, 2000) }),
          ...(r.chance(0.4) && { maxRepeats: r.int(1, 2) }),
          onLimit: r.pick(['stop', 'answer'] as const),
        }
      : null,
  };
}

export interface Outcome {
  plan: Plan;
  violations: string[];
  /** What happened, for a failing seed's report. */
  log: string[];
  /** What the run exercised, for the script's tally. */
  seen: { stoppedBy: string; errors: string[]; requests: number; pushed: number; snapshots: number; ran: number };
}

const HANG_MS = 6_000;
const MARK = 'caller-pushed-';

/** Runs one plan and checks the promises after it. */
export async function fuzzRun(p: Plan): Promise<Outcome> {
  const violations: string[] = [];
  const log: string[] = [];
  const seen: Outcome['seen'] = { stoppedBy: '', errors: [], requests: 0, pushed: 0, snapshots: 0, ran: 0 };
  const runs = new Map<string, number>();
  const pushed: string[] = [];
  const snapshots: Array<{ where: string; snapshot: RunnerSnapshot }> = [];
  const r = random(p.seed ^ 0x9e3779b9);

  const controller = new AbortController();
  const act = tool({
    name: 'act',
    inputSchema: z.object({ behaviour: z.enum(behaviours) }),
    timeoutMs: 25,
    needsApproval: (input) => input.behaviour === 'guarded' || input.behaviour === 'guardedSlow',
    run: async ({ behaviour }, { toolUse: use }) => {
      runs.set(use.id, (runs.get(use.id) ?? 0) + 1);
      if (behaviour === 'throw') throw new Error(`failed ${use.id}`);
      if (behaviour === 'hang') await new Promise(() => {});
      if (behaviour === 'huge') return 'x'.repeat(150_000);
      if (behaviour === 'slow' || behaviour === 'guardedSlow') await new Promise((resolve) => setTimeout(resolve, 15));
      if (behaviour === 'badResult') return [null, 42, { not: 'text' }][use.id.charCodeAt(use.id.length - 1) % 3] as never;
      if (behaviour === 'surrogate') return `cut ${'😀'.slice(0, 1)}`;
      if (behaviour === 'emptyError') throw new ToolError('  ');
      if (behaviour === 'abortRun') controller.abort();
      return `done ${use.id}`;
    },
  });
  const tools = [act];

  // The model: the plan's replies, each after its fault, then answers that end the run.
  let callId = 0;
  /** The calls of replies that end the run (cut off, or an answer): a message pushed after one leaves them unanswered until the run goes on. */
  const finalCalls = new Set<string>();
  const queue: ScriptedReply[] = [];
  p.replies.forEach((reply, t) => {
    const content: BetaContentBlock[] = [];
    if (reply.text) content.push(text(`turn ${t}`));
    for (const behaviour of reply.calls) {
      const id = `toolu_fz${String(callId++).padStart(3, '0')}`;
      if (behaviour === 'unknown') content.push(toolUse('nope', {}, id));
      else if (behaviour === 'invalid') content.push(toolUse('act', { behaviour: 7 }, id));
      else content.push(toolUse('act', { behaviour }, id));
      if (reply.stop === 'end_turn' || reply.stop === 'max_tokens') finalCalls.add(id);
    }
    if (content.length === 0) content.push(text('…'));
    const whole: ScriptedReply = { content, ...(reply.stop !== 'auto' && { stop_reason: reply.stop }) };
    if (reply.fault === '429' || reply.fault === '500' || reply.fault === '529') queue.push({ error: { status: Number(reply.fault), retryAfter: 0.001 } });
    if (reply.fault === 'dropJson') queue.push({ content, disconnectAfterEvents: 0 });
    if (reply.fault === 'dropStream') queue.push({ ...whole, disconnectAfterEvents: 4 });
    if (reply.fault === 'malformed') queue.push({ ...whole, malformed: true });
    if (reply.fault === 'errorEvent') queue.push({ ...whole, error: { status: 529, afterEvents: 3 } });
    // A stall is ended by the client's timeout (a JSON reply) or by the abort the driver sends past it.
    if (reply.fault === 'stall') queue.push({ ...whole, stallAfterEvents: 2 });
    queue.push(whole);
  });
  const model = (): ScriptedReply => queue.shift() ?? { content: [text('the end')] };
  const server = await createMockServer({ steps: Array(400).fill(model) });
  const client = server.client({ maxRetries: p.maxRetries, logLevel: 'off', timeout: 400 });

  let resultCount = 0;
  let pushOnRequest = false;
  let approvals = 0;
  if (p.approverMore) p = { ...p, approver: p.approverMore };
  const approve = (call: { toolUse: { id: string } }) => {
    approvals++;
    if (p.approver === 'allow') return { decision: 'allow' as const };
    if (p.approver === 'deny') return { decision: 'deny' as const, reason: 'no' };
    // Past the tool's timeout (25 ms): the call is answered as timed out, not run (README, Approval).
    if (p.approver === 'slow') return new Promise<{ decision: 'allow' }>((resolve) => setTimeout(() => resolve({ decision: 'allow' }), 40));
    if (p.approver === 'throws') throw new Error('the approver failed');
    return call.toolUse.id.charCodeAt(call.toolUse.id.length - 1) % 2 ? { decision: 'allow' as const } : { decision: 'deny' as const, reason: 'odd' };
  };
  let current: { toJSON(): RunnerSnapshot } | undefined;
  const options = (signal: AbortSignal) => ({
    signal,
    ...(p.approver !== 'none' && { approve }),
    ...(p.control && {
      onLimit: p.control.onLimit,
      ...(p.control.maxRepeats !== undefined && { loopGuard: { maxRepeats: p.control.maxRepeats } }),
      ...((p.control.maxToolCalls !== undefined || p.control.maxTokens !== undefined) && {
        budget: { ...(p.control.maxToolCalls !== undefined && { maxToolCalls: p.control.maxToolCalls }), ...(p.control.maxTokens !== undefined && { maxTokens: p.control.maxTokens }) },
      }),
    }),
    hooks: {
      onRequest: () => {
        if (!pushOnRequest || !current) return;
        pushOnRequest = false;
        const content = `${MARK}${pushed.length}`;
        pushed.push(content);
        (current as unknown as { pushMessages(message: BetaMessageParam): void }).pushMessages({ role: 'user', content });
      },
      onToolResult: () => {
        resultCount++;
        if (p.snapshotAtResult === resultCount && current) snapshots.push({ where: `onToolResult #${resultCount}`, snapshot: copy(current.toJSON()) });
      },
    },
  });

  const abortTimer = p.abortAtMs === null ? undefined : setTimeout(() => (log.push(`abort at ${p.abortAtMs} ms`), controller.abort()), p.abortAtMs);
  let runner = toolRunner(
    client,
    {
      model: 'claude-sonnet-5-5',
      max_tokens: 256,
      max_iterations: p.maxIterations,
      messages: [{ role: 'user', content: 'go' }],
      tools,
      stream: p.stream,
      runToolsEagerly: p.eager,
      ...(!p.thread && { thread: false as const }),
    },
    options(controller.signal),
  ) as ReturnType<typeof toolRunner>;
  current = runner;

  const timers: Array<ReturnType<typeof setTimeout>> = [];
  let item = 0;
  let resumedFromBody = false;
  const check = (error: unknown, where: string) => {
    log.push(`${where}: ${describe(error)}`);
    seen.errors.push(describe(error).split(':')[0]!);
    if (error instanceof BadRequestError) violations.push(`${where}: the server refused a request: ${error.message}`);
    else if (!(error instanceof AnthropicError || error instanceof HookError)) violations.push(`${where}: undocumented error ${describe(error)}`);
  };

  const drive = async () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      let snapshotTaken: RunnerSnapshot | undefined;
      try {
        for await (const got of runner as AsyncIterable<unknown>) {
          const action = p.actions[item++] ?? { change: 'none', exit: 'none', lateMs: 0 };
          log.push(`item ${item - 1}: ${action.change} ${action.exit}`);
          if (action.change === 'partial' && p.stream) {
            // The body reads the stream's first events and leaves it (a user who stops the answer as it streams).
            let events = 0;
            for await (const _event of got as AsyncIterable<unknown>) if (++events >= 3) break;
            continue;
          }
          const message = p.stream ? await (got as { finalMessage(): Promise<BetaMessage> }).finalMessage() : (got as BetaMessage);
          const mark = () => {
            const text = `${MARK}${pushed.length}`;
            pushed.push(text);
            return text;
          };
          if (action.change === 'push') runner.pushMessages({ role: 'assistant', content: message.content } as BetaMessageParam, { role: 'user', content: mark() });
          else if (action.change === 'pushQuestion') runner.pushMessages({ role: 'user', content: mark() });
          else if (action.change === 'generate') await runner.generateToolResponse();
          // The body answers the calls itself, with what generateToolResponse() gave, and asks on (README, Taking control).
          else if (action.change === 'generatePush') {
            const results = await runner.generateToolResponse();
            runner.pushMessages({ role: 'assistant', content: message.content } as BetaMessageParam, ...(results ? [results] : []), { role: 'user', content: mark() });
          }
          // The last exchange taken back (the reply not kept), and a question in its place.
          else if (action.change === 'takeBack') {
            const content = mark();
            runner.setMessagesParams((params) => {
              const kept = params.messages.slice(0, Math.max(1, params.messages.length - 2));
              // What the caller pushed into the exchange taken back is gone by the caller's own hand.
              const dropped = JSON.stringify(params.messages.slice(kept.length));
              for (let i = pushed.length - 1; i >= 0; i--) if (dropped.includes(JSON.stringify(pushed[i]))) pushed.splice(i, 1);
              return { ...params, messages: [...kept, { role: 'user', content }] };
            });
          }
          // The turn again: the reply dropped, the history resent as it was (SPEC §4).
          else if (action.change === 'retry') runner.setMessagesParams((params) => params);
          // A new system prompt: the thread cannot be continued, and the run replays the history (README, threads).
          else if (action.change === 'system') runner.setMessagesParams((params) => ({ ...params, system: `system ${item}` }));
          // A message that goes with the next request, pushed from its onRequest hook.
          else if (action.change === 'onRequest') pushOnRequest = true;
          // The server loses the run's thread: the next continue is refused, and the run replays the history (docs/threads.md).
          else if (action.change === 'forgetThreads') server.forgetThreads();
          else if (action.change === 'pushLate' || action.change === 'setLate') {
            // After the body, while the reply's calls run (a chat's user typing on): appended, or a history set with it.
            const late = runner;
            const { change } = action;
            timers.push(
              setTimeout(() => {
                // Not once the run stopped: a message pushed on an ended run goes on from it when the run is resumed or iterated
                // again, and its reply's calls are answered then (README), which the check after the run does.
                if (late !== runner || late.stoppedBy !== undefined) return;
                const content = mark();
                log.push(`${change} ${content}`);
                if (change === 'pushLate') late.pushMessages({ role: 'user', content });
                else late.setMessagesParams((params) => ({ ...params, messages: [...params.messages, { role: 'user', content }] }));
              }, action.lateMs),
            );
          }
          if (action.exit === 'snapshot') {
            snapshotTaken = copy(runner.toJSON());
            snapshots.push({ where: `loop body of item ${item - 1}`, snapshot: snapshotTaken });
            break;
          } else if (action.exit === 'abort') controller.abort();
          else if (action.exit === 'break') break;
        }
      } catch (error) {
        check(error, `attempt ${attempt}`);
        if (controller.signal.aborted) return;
        continue;
      }
      if (snapshotTaken) {
        // Resume the checkpoint as another process would, and go on with the resumed run.
        resumedFromBody = true;
        log.push('resumed from the loop body');
        runner = resumeToolRunner(client, snapshotTaken, { tools, options: options(controller.signal) }) as never;
        current = runner;
        continue;
      }
      if (runner.pendingApprovals.length > 0) {
        if (r.chance(0.25)) {
          // A message while calls wait: the run goes on past them (README, Approval).
          const content = `${MARK}${pushed.length}`;
          pushed.push(content);
          runner.pushMessages({ role: 'user', content });
          log.push('pushed past pending approvals');
          continue;
        }
        for (const call of runner.pendingApprovals) {
          if (r.chance(0.5)) runner.approve(call.id);
          else runner.deny(call.id, 'no');
        }
        log.push('decided pending approvals');
        continue;
      }
      if (runner.stoppedBy === 'break') {
        // A break ends this pass; await goes on from the history.
        try {
          await runner;
        } catch (error) {
          check(error, 'await after break');
        }
      }
      return;
    }
  };

  /** Whether `promise` settles within `ms` (its rejection is the caller's to have caught). */
  const settles = (promise: Promise<unknown>, ms: number) =>
    Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => timers.push(setTimeout(() => resolve(false), ms)))]);
  // A stalled stream waits until aborted (the SDK's timeout ends only the wait for headers): the driver aborts it.
  const stallTimer = setTimeout(() => controller.abort(), 2_500);
  try {
    if (!(await settles(drive(), HANG_MS))) {
      violations.push(`the run hung (${HANG_MS} ms)`);
      controller.abort();
    }

    // The late changes of the last items land (the run may have ended: the history holds them all the same).
    await new Promise((resolve) => setTimeout(resolve, 40));
    const history = runner.params.messages;
    seen.stoppedBy = String(runner.stoppedBy);
    seen.requests = server.requests.length;
    seen.pushed = pushed.length;
    seen.snapshots = snapshots.length;
    seen.ran = runs.size;
    log.push(`ended: stoppedBy ${runner.stoppedBy}, ${history.length} messages`);
    // A `break` keeps the history the body set as it set it (README): its calls left unanswered are answered when the
    // run goes on (resumed), which the check below does.
    // A run that ended on a reply with calls (cut off, say), a message pushed after it as it ended: its calls are answered
    // when the run goes on (README: "when you continue after a reply cut off by max_tokens"), as the check below does.
    const endedOn = (problem: string) => runner.stoppedBy === 'model' && dangling(problem) && [...finalCalls].some((id) => problem.includes(`tool_use ${id} `));
    const leftBy = runner.stoppedBy === 'break' ? dangling : endedOn;
    for (const problem of historyProblems(history)) if (!leftBy(problem)) violations.push(`history: ${problem}`);
    violations.push(...shapeProblems(history, 'history'));
    for (const message of history) {
      if (message.role !== 'user' || typeof message.content === 'string') continue;
      for (const block of message.content) {
        if (block.type !== 'tool_result') continue;
        const texts = typeof block.content === 'string' ? block.content : JSON.stringify(block.content ?? '');
        // maxToolResultChars (100,000) and its note; a lone surrogate is sent as U+FFFD (README, Reliability).
        if (texts.length > 101_000) violations.push(`history: the result of ${block.tool_use_id} was not cut (${texts.length} characters)`);
        if (LONE_SURROGATE.test(texts)) violations.push(`history: the result of ${block.tool_use_id} holds a lone surrogate`);
      }
    }
    const all = JSON.stringify(history);
    for (const mark of pushed) if (!all.includes(JSON.stringify(mark))) violations.push(`history: the message the caller pushed, '${mark}', is lost`);
    for (const [id, count] of runs) if (count > 1 && !(p.eager || resumedFromBody || snapshots.length > 0)) violations.push(`tool call ${id} ran ${count} times`);
    for (const { where, snapshot } of snapshots) {
      // A snapshot taken while the body's history waits to be prepared holds its calls unanswered: the resumed run answers them.
      for (const problem of historyProblems(snapshot.params.messages)) if (!dangling(problem)) violations.push(`snapshot (${where}): ${problem}`);
      violations.push(...shapeProblems(snapshot.params.messages, `snapshot (${where})`));
    }
    // What the run would send next: its own snapshot (or the one taken in a hook) resumed, a question pushed.
    const finals = [{ where: 'the run at its end', snapshot: copy(runner.toJSON()) }, ...snapshots.filter((s) => s.where.startsWith('onToolResult'))];
    for (const { where, snapshot } of finals) {
      server.setSteps(Array(20).fill({ content: [text('fine')] }));
      const next = resumeToolRunner(client, snapshot, { tools, options: { approve: () => ({ decision: 'deny' as const, reason: 'later' }) } });
      next.pushMessages({ role: 'user', content: 'one more thing' });
      next.setMessagesParams((params) => ({ ...params, max_iterations: 0 }));
      try {
        if (!(await settles(Promise.resolve(next), 3_000))) violations.push(`resumed (${where}): hung`);
      } catch (error) {
        if (error instanceof BadRequestError) violations.push(`resumed (${where}): the server refused the next request: ${error.message}`);
        else violations.push(`resumed (${where}): ${describe(error)}`);
      }
      for (const problem of historyProblems(next.params.messages)) violations.push(`resumed (${where}): ${problem}`);
    }
  } finally {
    clearTimeout(abortTimer);
    clearTimeout(stallTimer);
    for (const timer of timers) clearTimeout(timer);
    await server.close();
  }
  log.push(`approver asked ${approvals} times`);
  return { plan: p, violations, log, seen };
}

/** What `historyProblems` leaves to the API's other rules: the first message is the user's, results only in user messages. */
function shapeProblems(history: readonly BetaMessageParam[], where: string): string[] {
  const problems: string[] = [];
  if (history[0]?.role !== 'user') problems.push(`${where}: the first message is no user message`);
  if (history[0]?.content !== 'go') problems.push(`${where}: the first message is not the one the run began with`);
  return problems;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A call left unanswered in the middle of a history (which the runner answers before its next request). */
const dangling = (problem: string) => / has no tool_result in message /.test(problem);

function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function describe(error: unknown): string {
  if (error instanceof APIUserAbortError) return 'APIUserAbortError';
  return error instanceof Error ? `${error.constructor.name}: ${error.message.slice(0, 160)}` : String(error);
}
