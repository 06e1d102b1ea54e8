/**
 * Random runs for the reliability properties: scripted model turns, tool behaviours, API faults
 * and aborts, with the checks that must hold after any run.
 */
import { AnthropicError } from '@anthropic-ai/sdk';
import fc from 'fast-check';
import { z } from 'zod';
import { HookError, tool, toolRunner } from '../../src/index.js';
import { type MockServer, type ScriptedReply, createMockServer, historyProblems, serverToolUse, text, toolUse, webSearchResult } from '../../src/testing/index.js';
import type { BetaContentBlock } from '../../src/types.js';

const behaviours = ['return', 'throw', 'hang', 'huge', 'invalidResult', 'invalidInput', 'unknownTool', 'caseTool'] as const;
// 'auto' (tool_use when the turn calls tools) weighs most, so that runs go on for several turns.
const stops = ['auto', 'auto', 'auto', 'auto', 'end_turn', 'max_tokens', 'pause_turn', 'refusal', 'stop_sequence'] as const;
const faults = ['none', 'none', 'none', '429', '500', '529', 'dropStream', 'dropJson', 'malformed'] as const;

export type Fault = (typeof faults)[number];
export interface Turn {
  text: boolean;
  calls: Array<{ behaviour: (typeof behaviours)[number] | 'repeat'; thrown: unknown }>;
  serverTool: boolean;
  stop: (typeof stops)[number];
  fault: Fault;
}
export interface Scenario {
  turns: Turn[];
  stream: boolean;
  eager: boolean;
  abortAfterMs: number | null;
  /** Run control (`scenarios({ withRunControl: true })`): a budget, a loop guard, onLimit. */
  control?: Control | null | undefined;
}
/** The run-control options of a scenario, and calls that repeat one input (for the loop guard). */
export interface Control {
  maxToolCalls: number | null;
  maxTokens: number | null;
  maxRepeats: number | null;
  onLimit: 'stop' | 'answer';
}
const control: fc.Arbitrary<Control> = fc.record({
  maxToolCalls: fc.option(fc.integer({ min: 0, max: 8 })),
  maxTokens: fc.option(fc.integer({ min: 50, max: 3000 })),
  maxRepeats: fc.option(fc.integer({ min: 1, max: 2 })),
  onLimit: fc.constantFrom('stop' as const, 'answer' as const),
});

const thrown = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.constant(undefined),
  fc.constant(null),
  fc.constant({ code: 42 }),
  fc.string({ maxLength: 20 }).map((message) => new Error(message)),
  fc.string({ maxLength: 20 }).map((message) => new TypeError(message)),
);

/**
 * Random scenarios. `withConnectionDrops: false` leaves out connections dropped before a JSON
 * reply, which the SDK retries after its own back-off of about a second (the soak's pace).
 * `withRunControl`: runs with a budget, a loop guard and onLimit, and calls that repeat one input.
 */
export function scenarios({ withConnectionDrops = true, withRunControl = false } = {}): fc.Arbitrary<Scenario> {
  const kinds = withConnectionDrops ? faults : faults.filter((fault) => fault !== 'dropJson');
  const callKinds = withRunControl ? [...behaviours, 'repeat' as const] : behaviours;
  return fc.record({
  control: withRunControl ? fc.option(control, { freq: 4 }) : fc.constant(null),
  turns: fc.array(
    fc.record({
      text: fc.boolean(),
      calls: fc.array(fc.record({ behaviour: fc.constantFrom(...callKinds), thrown }), { maxLength: 8 }),
      serverTool: fc.boolean(),
      stop: fc.constantFrom(...stops),
      fault: fc.constantFrom(...kinds),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  stream: fc.boolean(),
  eager: fc.boolean(),
  abortAfterMs: fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: fc.integer({ min: 0, max: 60 }), weight: 1 }),
  });
}

export interface Outcome {
  iterations: number;
  faults: Fault[];
  errors: string[];
  violations: string[];
}

/** Runs one scenario over HTTP and returns what was seen, with every broken invariant as a violation. */
export async function runScenario(scenario: Scenario, shared?: MockServer): Promise<Outcome> {
  const runs = new Map<string, number>();
  let repeated = 0;
  const violations: string[] = [];
  const errors: string[] = [];
  const act = tool({
    name: 'act',
    inputSchema: z.object({ id: z.string(), behaviour: z.enum(behaviours) }),
    timeoutMs: 10,
    run: async ({ id, behaviour }, { toolUse: use }) => {
      runs.set(use.id, (runs.get(use.id) ?? 0) + 1);
      if (id === 'repeat') repeated++;
      const call = scenario.turns.flatMap((turn) => turn.calls)[Number(id.split('_')[2])];
      if (behaviour === 'throw') throw call?.thrown;
      if (behaviour === 'hang') await new Promise(() => {});
      if (behaviour === 'huge') return 'x'.repeat(250_000);
      if (behaviour === 'invalidResult') return { not: 'a string' } as never;
      return `done ${id}`;
    },
  });

  const steps: ScriptedReply[] = [];
  let callIndex = 0;
  for (const [t, turn] of scenario.turns.entries()) {
    if (turn.fault === '429' || turn.fault === '500' || turn.fault === '529') {
      steps.push({ error: { status: Number(turn.fault), retryAfter: 0.001 } });
    }
    if (turn.fault === 'dropJson') steps.push({ disconnectAfterEvents: 0 });
    const content: BetaContentBlock[] = [];
    if (turn.text) content.push(text(`turn ${t}`));
    if (turn.serverTool) {
      const id = `srvtoolu_${t}`;
      content.push(serverToolUse('web_search', { query: 'q' }, id), webSearchResult(id, [{ url: 'https://example.com', title: 'x' }]));
    }
    for (const call of turn.calls) {
      const id = `toolu_t_${callIndex++}`;
      if (call.behaviour === 'unknownTool') content.push(toolUse('missing_tool', {}, id));
      else if (call.behaviour === 'caseTool') content.push(toolUse('ACT', { id, behaviour: 'return' }, id));
      else if (call.behaviour === 'invalidInput') content.push(toolUse('act', { id, behaviour: 42 }, id));
      else if (call.behaviour === 'repeat') content.push(toolUse('act', { id: 'repeat', behaviour: 'return' }, id));
      else content.push(toolUse('act', { id, behaviour: call.behaviour }, id));
    }
    if (content.length === 0) content.push(text('…'));
    const reply: ScriptedReply = { content, ...(turn.stop !== 'auto' && { stop_reason: turn.stop }) };
    if (turn.fault === 'dropStream') reply.disconnectAfterEvents = 3;
    if (turn.fault === 'malformed') reply.malformed = true;
    steps.push(reply);
    // A dropped or malformed reply escapes the client's retries (or is retried): either way the same turn comes again.
    if (turn.fault === 'dropStream' || turn.fault === 'malformed') steps.push({ content, ...(turn.stop !== 'auto' && { stop_reason: turn.stop }) });
  }
  // The model always ends, whatever the run asks next.
  for (let i = 0; i < 4; i++) steps.push({ content: [text('the end')] });

  // A shared server (the soak) is re-scripted; its request log and the threads of earlier runs
  // (never continued again) are dropped so that the server does not grow.
  const server = shared ?? (await createMockServer({ steps }));
  if (shared) {
    shared.requests.length = 0;
    shared.forgetThreads();
    shared.setSteps(steps);
  }
  const controller = new AbortController();
  const timer = scenario.abortAfterMs === null ? undefined : setTimeout(() => controller.abort(), scenario.abortAfterMs);
  const runner = toolRunner(
    server.client({ maxRetries: 2, logLevel: 'off' }),
    {
      model: 'claude-sonnet-5-5',
      max_tokens: 256,
      max_iterations: 12,
      messages: [{ role: 'user', content: 'go' }],
      tools: [act, { type: 'web_search_20250305', name: 'web_search' }],
      stream: scenario.stream,
      runToolsEagerly: scenario.eager,
    },
    { signal: controller.signal, ...runControl(scenario.control) },
  );
  let failed = false;
  try {
    for (let attempt = 0; attempt < 4; attempt++) {
      try {
        failed = false;
        await runner;
        break;
      } catch (error) {
        failed = true;
        errors.push(describe(error));
        if (!(error instanceof AnthropicError || error instanceof HookError)) violations.push(`untyped error: ${describe(error)}`);
        if (controller.signal.aborted) break;
      }
    }
  } finally {
    clearTimeout(timer);
    if (!shared) await server.close();
  }

  const history = runner.params.messages;
  for (const problem of historyProblems(history)) violations.push(problem);
  if (history[0]?.role !== 'user') violations.push('history does not start with the user message');
  for (const [id, count] of runs) if (count > 1) violations.push(`tool call ${id} ran ${count} times`);
  for (const message of history) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_result' && typeof block.content === 'string' && block.content.length > 100_200) {
        violations.push(`tool result of ${block.content.length} characters was not truncated`);
      }
    }
  }
  const stoppedBy = runner.stoppedBy;
  // A limit reached before any reply was kept (a broken reply's usage used the budget up) rejects: there is no reply to resolve to.
  const limitBeforeAnyReply = failed && (stoppedBy === 'budget' || stoppedBy === 'max_iterations') && /ended without a message from the model/.test(errors.at(-1) ?? '');
  if (failed !== (stoppedBy === 'error' || stoppedBy === 'abort') && !limitBeforeAnyReply) violations.push(`the run ${failed ? 'failed' : 'ended'} with stoppedBy ${stoppedBy}`);
  const { control: limits } = scenario;
  if (limits) {
    const ran = [...runs.values()].reduce((sum, count) => sum + count, 0);
    if (limits.maxToolCalls !== null && ran > limits.maxToolCalls) violations.push(`${ran} calls ran past maxToolCalls ${limits.maxToolCalls}`);
    if (limits.maxRepeats !== null && repeated > limits.maxRepeats) violations.push(`a repeated call ran ${repeated} times past maxRepeats ${limits.maxRepeats}`);
    if (stoppedBy === 'loop_guard' && limits.maxRepeats === null) violations.push('stopped by a loop guard that was off');
  }
  return { iterations: runner.iteration, faults: scenario.turns.map((turn) => turn.fault), errors, violations };
}

function runControl(control: Control | null | undefined) {
  if (!control) return {};
  const { maxToolCalls, maxTokens, maxRepeats, onLimit } = control;
  return {
    onLimit,
    ...((maxToolCalls !== null || maxTokens !== null) && { budget: { ...(maxToolCalls !== null && { maxToolCalls }), ...(maxTokens !== null && { maxTokens }) } }),
    ...(maxRepeats !== null && { loopGuard: { maxRepeats } }),
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.constructor.name}: ${error.message.slice(0, 80)}` : String(error);
}
