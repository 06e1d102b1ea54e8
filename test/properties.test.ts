/**
 * Properties: whatever mix of tool behaviours one message holds, and whatever fails on the primary
 * and its fallbacks, the history stays valid and no call runs twice.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { type ScriptedReply, createMockServer, historyProblems, text, toolUse } from 'tool-runner/testing';

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

describe('random failures on the primary and its fallbacks', () => {
  const faults = ['529', '500', '429', '400', 'connection', 'errorEvent', 'midStream'] as const;
  type Fault = (typeof faults)[number];
  const failure = (fault: Fault): ScriptedReply => {
    switch (fault) {
      case '529':
      case '500':
      case '429':
      case '400':
        return { error: { status: Number(fault), retryAfter: 0.001 } };
      case 'connection':
        // JSON: dropped before the body; a stream: dropped after the headers, before any event.
        return { content: [text('lost')], disconnectAfterEvents: 0 };
      case 'errorEvent':
        // A stream: an SSE error event before any other; JSON: the same error as a status.
        return { content: [text('lost')], error: { status: 529, afterEvents: 0 } };
      case 'midStream':
        // A stream: broken after some events (no fallback); JSON: dropped before the body.
        return { content: [text('a reply that breaks after a few events')], usage: { input_tokens: 50, output_tokens: 9 }, disconnectAfterEvents: 4 };
    }
  };

  it('the history stays valid, no tool runs twice, and runner.usage is the sum of the replies that arrived (a broken stream\'s as far as it went)', async () => {
    // What the runs exercised, so that the property cannot pass by never falling back.
    const seen = { fallbackRequests: 0 };
    const turn = fc.record({ failures: fc.array(fc.constantFrom(...faults), { maxLength: 4 }), calls: fc.integer({ min: 1, max: 3 }), tokens: fc.integer({ min: 1, max: 500 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(turn, { minLength: 1, maxLength: 4 }), fc.boolean(), fc.boolean(), async (turns, stream, thread) => {
        const runs = new Map<string, number>();
        const act = tool({ name: 'act', inputSchema: z.object({ id: z.string() }), run: ({ id }) => (runs.set(id, (runs.get(id) ?? 0) + 1), `ran ${id}`) });
        // One queue of outcomes, taken in the order the requests arrive, whichever server they reach.
        const outcomes: Array<{ reply: ScriptedReply; usage?: { input_tokens: number; output_tokens: number } }> = [];
        let callId = 0;
        for (const { failures, calls, tokens } of turns) {
          // A stream broken mid-reply was paid for as far as it went: its message_start's usage (the first output token).
          for (const fault of failures) outcomes.push(fault === 'midStream' && stream ? { reply: failure(fault), usage: { input_tokens: 50, output_tokens: 1 } } : { reply: failure(fault) });
          const content = Array.from({ length: calls }, () => toolUse('act', { id: `c${callId}` }, `toolu_${callId++}`));
          const usage = { input_tokens: tokens, output_tokens: tokens % 7 + 1 };
          outcomes.push({ reply: { content, usage }, usage });
        }
        for (let i = 0; i < 3; i++) outcomes.push({ reply: { content: [text('the end')], usage: { input_tokens: 1, output_tokens: 1 } }, usage: { input_tokens: 1, output_tokens: 1 } });
        const served = { input_tokens: 0, output_tokens: 0 };
        const model = () => {
          const next = outcomes.shift() ?? { reply: { content: [text('the end')], usage: { input_tokens: 1, output_tokens: 1 } }, usage: { input_tokens: 1, output_tokens: 1 } };
          if (next.usage) {
            served.input_tokens += next.usage.input_tokens;
            served.output_tokens += next.usage.output_tokens;
          }
          return next.reply;
        };
        const servers = await Promise.all([0, 1, 2].map(() => createMockServer({ steps: Array(60).fill(model) })));
        try {
          const [primary, first, second] = servers.map((server) => server.client({ maxRetries: 0, logLevel: 'off' }));
          const runner = toolRunner(
            primary!,
            { model: 'claude-sonnet-5-5', max_tokens: 100, messages: [{ role: 'user', content: 'go' }], tools: [act], stream, ...(thread ? {} : { thread: false as const }) },
            { fallback: [{ client: first!, model: 'claude-haiku-5-5' }, { client: second! }] },
          );
          for (let attempt = 0; attempt < 30; attempt++) {
            try {
              await runner;
              break;
            } catch {
              // A turn that failed everywhere (or mid-stream): the state is as before it; await again.
            }
          }
          expect(historyProblems(runner.params.messages)).toEqual([]);
          for (const [id, count] of runs) expect(count, `tool call ${id}`).toBe(1);
          expect(runs.size).toBe(callId);
          expect({ input_tokens: runner.usage.input_tokens, output_tokens: runner.usage.output_tokens }).toEqual(served);
          seen.fallbackRequests += servers[1]!.requests.length + servers[2]!.requests.length;
        } finally {
          await Promise.all(servers.map((server) => server.close()));
        }
      }),
      { numRuns: 40 },
    );
    expect(seen.fallbackRequests).toBeGreaterThan(10);
  }, 60_000);
});
