/** Property: whatever mix of tool behaviours one message holds, the history stays valid and no call runs twice. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { createMockServer, historyProblems, text, toolUse } from 'tool-runner/testing';

const behaviours = ['ok', 'throw', 'timeout', 'deny', 'skip', 'invalid', 'unknown'] as const;
type Behaviour = (typeof behaviours)[number];
const thrownValues = fc.oneof(fc.string(), fc.integer(), fc.constant(undefined), fc.constant(null), fc.string().map((m) => new Error(m)));

describe('one message, any mix of calls', () => {
  it('every tool_use gets exactly one tool_result, in order, in the next user message; no call runs twice', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...behaviours), thrownValues), { minLength: 1, maxLength: 8 }), async (plan) => {
        const runs = new Map<string, number>();
        const act = tool({
          name: 'act',
          inputSchema: z.object({ id: z.string(), behaviour: z.enum(behaviours), thrownAt: z.number() }),
          needsApproval: (input) => input.behaviour === 'deny',
          timeoutMs: 15,
          run: async ({ id, behaviour, thrownAt }) => {
            runs.set(id, (runs.get(id) ?? 0) + 1);
            if (behaviour === 'throw') throw plan[thrownAt]![1];
            if (behaviour === 'timeout') await new Promise(() => {});
            return `ran ${id}`;
          },
        });
        const calls = plan.map(([behaviour], i) => {
          const id = `toolu_${i}`;
          if (behaviour === 'unknown') return toolUse('nope', {}, id);
          return toolUse('act', behaviour === 'invalid' ? { id } : { id, behaviour, thrownAt: i }, id);
        });
        const server = await createMockServer({ steps: [{ content: calls }, { content: [text('done')] }] });
        try {
          const runner = toolRunner(server.client(), {
            model: 'claude-sonnet-5-5',
            max_tokens: 100,
            messages: [{ role: 'user', content: 'go' }],
            tools: [act],
          }, {
            approve: () => ({ decision: 'deny', reason: 'no' }),
            hooks: { onToolCall: (call) => ((call.input as { behaviour: Behaviour }).behaviour === 'skip' ? { result: 'skipped' } : undefined) },
          });
          await runner;
          const history = runner.params.messages;
          expect(historyProblems(history)).toEqual([]);
          const answers = history[2]!.content as Array<{ tool_use_id: string; is_error?: boolean }>;
          expect(answers.map((answer) => answer.tool_use_id)).toEqual(calls.map((call) => (call as { id: string }).id));
          plan.forEach(([behaviour], i) => {
            const expectError = !['ok', 'skip'].includes(behaviour);
            expect(answers[i]!.is_error ?? false).toBe(expectError);
            expect(runs.get(`toolu_${i}`) ?? 0).toBe(['ok', 'throw', 'timeout'].includes(behaviour) ? 1 : 0);
          });
          server.assertComplete();
        } finally {
          await server.close();
        }
      }),
      { numRuns: 60 },
    );
  }, 60_000);
});
