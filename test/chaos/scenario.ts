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
  calls: Array<{ behaviour: (typeof behaviours)[number]; thrown: unknown }>;
  serverTool: boolean;
  stop: (typeof stops)[number];
  fault: Fault;
}
export interface Scenario {
  turns: Turn[];
  stream: boolean;
  eager: boolean;
  abortAfterMs: number | null;
}

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
 */
export function scenarios({ withConnectionDrops = true } = {}): fc.Arbitrary<Scenario> {
  const kinds = withConnectionDrops ? faults : faults.filter((fault) => fault !== 'dropJson');
  return fc.record({
  turns: fc.array(
    fc.record({
      text: fc.boolean(),
      calls: fc.array(fc.record({ behaviour: fc.constantFrom(...behaviours), thrown }), { maxLength: 8 }),
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
  const violations: string[] = [];
  const errors: string[] = [];
  const act = tool({
    name: 'act',
    inputSchema: z.object({ id: z.string(), behaviour: z.enum(behaviours) }),
    timeoutMs: 10,
    run: async ({ id, behaviour }) => {
      runs.set(id, (runs.get(id) ?? 0) + 1);
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
    { signal: controller.signal },
  );
  try {
    for (let attempt = 0; attempt < 4; attempt++) {
      try {
        await runner;
        break;
      } catch (error) {
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
  return { iterations: runner.iteration, faults: scenario.turns.map((turn) => turn.fault), errors, violations };
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.constructor.name}: ${error.message.slice(0, 80)}` : String(error);
}
