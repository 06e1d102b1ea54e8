/**
 * The reliability property with sub-agents: random parent runs whose calls run sub-agents (several
 * at once), random tool behaviours and API faults at both levels, aborts. After every run the
 * history of every agent is valid and no tool call (a sub-agent's included) ran twice.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { type RunnerEvent, agentTool, tool, toolRunner } from 'tool-runner';
import { type RecordedRequest, type ScriptedReply, createMockServer, historyProblems, text, toolUse } from 'tool-runner/testing';
import { agentRouter } from './fixtures/agent-tools.js';

const behaviours = ['return', 'throw', 'hang'] as const;
const faults = ['none', 'none', 'none', '500', 'fatal', 'drop'] as const;
type Call = { kind: (typeof behaviours)[number] } | { kind: 'agent'; turns: Turn[] };
interface Turn {
  calls: Call[];
  fault: (typeof faults)[number];
}

const leafTurn: fc.Arbitrary<Turn> = fc.record({
  calls: fc.array(fc.record({ kind: fc.constantFrom(...behaviours) }), { maxLength: 3 }),
  fault: fc.constantFrom(...faults),
});
const subTurns = fc.array(leafTurn, { minLength: 1, maxLength: 3 });
const parentTurn: fc.Arbitrary<Turn> = fc.record({
  calls: fc.array(fc.oneof(fc.record({ kind: fc.constantFrom(...behaviours) }), fc.record({ kind: fc.constant('agent' as const), turns: subTurns })), { maxLength: 3 }),
  fault: fc.constantFrom(...faults),
});
const scenario = fc.record({
  turns: fc.array(parentTurn, { minLength: 1, maxLength: 4 }),
  stream: fc.boolean(),
  abortAfterMs: fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: fc.integer({ min: 0, max: 40 }), weight: 1 }),
});

/** Each agent's script (by its key: `parent`, or the sub-agent's task), its faults in place. */
function scripts(turns: Turn[], key: string, into: Record<string, ScriptedReply[]>): void {
  const steps: ScriptedReply[] = (into[key] = []);
  let n = 0;
  for (const turn of turns) {
    if (turn.fault === '500') steps.push({ error: { status: 500, retryAfter: 0.001 } });
    if (turn.fault === 'fatal') steps.push({ error: { status: 400, message: 'bad request' } });
    const content = turn.calls.map((call) => {
      const id = `toolu_${key}_${n++}`;
      if (call.kind !== 'agent') return toolUse('act', { behaviour: call.kind }, id);
      scripts(call.turns, id, into);
      return toolUse('agent', { task: id }, id);
    });
    const reply: ScriptedReply = { content: content.length > 0 ? content : [text('…')] };
    if (turn.fault === 'drop') steps.push({ ...reply, disconnectAfterEvents: 3 });
    steps.push(reply);
  }
  for (let i = 0; i < 3; i++) steps.push({ content: [text(`${key} ends`)] });
}

it('random runs with sub-agents and faults at both levels: every history valid, no call ran twice', async () => {
  await fc.assert(
    fc.asyncProperty(scenario, async ({ turns, stream, abortAfterMs }) => {
      const script: Record<string, ScriptedReply[]> = {};
      scripts(turns, 'parent', script);
      const total = Object.values(script).reduce((sum, steps) => sum + steps.length, 0);
      const agentOf = agentRouter();
      const step = (request: RecordedRequest): ScriptedReply => script[agentOf(request)]?.shift() ?? { content: [text('extra')] };
      const server = await createMockServer({ steps: Array.from({ length: total * 2 }, () => step) });
      const runs = new Map<string, number>();
      const count = (id: string) => runs.set(id, (runs.get(id) ?? 0) + 1);
      const act = tool({
        name: 'act',
        inputSchema: z.object({ behaviour: z.enum(behaviours) }),
        timeoutMs: 10,
        run: async ({ behaviour }, { toolUse: use }) => {
          count(use.id);
          if (behaviour === 'throw') throw new Error('boom');
          if (behaviour === 'hang') await new Promise(() => {});
          return 'done';
        },
      });
      const agent = agentTool({
        name: 'agent',
        description: 'A sub-agent',
        params: ({ task }, { toolUse: use }) => {
          count(use.id);
          return { model: 'claude-sonnet-5-5', max_tokens: 64, max_iterations: 6, system: task, messages: [{ role: 'user', content: task }], tools: [act] };
        },
      });
      const subHistories: unknown[][] = [];
      const controller = new AbortController();
      const timer = abortAfterMs === null ? undefined : setTimeout(() => controller.abort(), abortAfterMs);
      const runner = toolRunner(
        server.client({ maxRetries: 1, logLevel: 'off' }),
        { model: 'claude-sonnet-5-5', max_tokens: 64, max_iterations: 8, messages: [{ role: 'user', content: 'go' }], tools: [act, agent], stream },
        {
          signal: controller.signal,
          onEvent: (event: RunnerEvent) => {
            if (event.path && event.type === 'run.end') subHistories.push(event.runner.params.messages);
          },
        },
      );
      try {
        for (let attempt = 0; attempt < 3; attempt++) {
          try {
            await runner;
            break;
          } catch {
            if (controller.signal.aborted) break;
          }
        }
      } finally {
        clearTimeout(timer);
        await server.close();
      }
      expect(historyProblems(runner.params.messages)).toEqual([]);
      for (const history of subHistories) expect(historyProblems(history as never)).toEqual([]);
      for (const [id, times] of runs) expect(times, `call ${id}`).toBe(1);
    }),
    { numRuns: 40 },
  );
}, 60_000);
