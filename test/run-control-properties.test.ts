/**
 * Property: whatever the budget, loop guard, onLimit, max_iterations and output of a run, and
 * whatever the model calls, the history stays valid at every stop, no call runs twice, no call
 * runs past a limit, and `stoppedBy` tells the truth about how the run ended.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OutputError, type StoppedBy, tool, toolRunner } from 'tool-runner';
import { type ScriptedReply, createMockServer, historyProblems, text, toolUse } from 'tool-runner/testing';

const call = fc.record({ name: fc.constantFrom('look', 'find'), q: fc.constantFrom('a', 'b', 'c') });
const reply = fc.record({ calls: fc.array(call, { maxLength: 4 }), tokens: fc.integer({ min: 20, max: 600 }), valid: fc.boolean() });
const plan = fc.record({
  replies: fc.array(reply, { minLength: 1, maxLength: 7 }),
  maxTokens: fc.option(fc.integer({ min: 100, max: 2500 }), { nil: undefined }),
  maxToolCalls: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
  maxCallsPerTool: fc.option(fc.oneof(fc.integer({ min: 0, max: 3 }), fc.record({ look: fc.integer({ min: 0, max: 3 }) })), { nil: undefined }),
  maxRepeats: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  onLimit: fc.constantFrom('stop' as const, 'answer' as const),
  output: fc.boolean(),
  outputRepairs: fc.integer({ min: 0, max: 2 }),
  maxIterations: fc.integer({ min: 0, max: 6 }),
  stream: fc.boolean(),
  eager: fc.boolean(),
  thread: fc.boolean(),
});

const LIMITS: ReadonlySet<StoppedBy> = new Set(['max_iterations', 'budget', 'loop_guard']);

describe('run control: the history at every stop', () => {
  it('stays valid; no call runs twice or past a limit; no request after the budget but the answer at the limit; stoppedBy is true', async () => {
    await fc.assert(
      fc.asyncProperty(plan, async (p) => {
        const ran = new Map<string, number>();
        const byTool = new Map<string, number>();
        const byInput = new Map<string, number>();
        const tools = ['look', 'find'].map((name) =>
          tool({
            name,
            inputSchema: z.object({ q: z.string() }),
            run: ({ q }, { toolUse: use }) => {
              ran.set(use.id, (ran.get(use.id) ?? 0) + 1);
              byTool.set(name, (byTool.get(name) ?? 0) + 1);
              byInput.set(`${name} ${q}`, (byInput.get(`${name} ${q}`) ?? 0) + 1);
              return `${name} ${q}`;
            },
          }),
        );
        const finalText = (valid: boolean) => (p.output ? (valid ? '{"ok":true}' : 'not json') : 'done');
        let id = 0;
        const steps: ScriptedReply[] = p.replies.map((r) => ({
          content: r.calls.length > 0 ? r.calls.map((c) => toolUse(c.name, { q: c.q }, `toolu_${id++}`)) : [text(finalText(r.valid))],
          usage: { input_tokens: r.tokens, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        }));
        // The model ends (validly) whatever the run asks next.
        for (let i = 0; i < 8; i++) steps.push({ content: [text(finalText(true))], usage: { input_tokens: 20, output_tokens: 10 } });
        const server = await createMockServer({ steps });
        try {
          const budget = p.maxTokens === undefined && p.maxToolCalls === undefined && p.maxCallsPerTool === undefined
            ? undefined
            : { maxTokens: p.maxTokens, maxToolCalls: p.maxToolCalls, maxCallsPerTool: p.maxCallsPerTool };
          const runner = toolRunner(
            server.client(),
            {
              model: 'claude-sonnet-5-5',
              max_tokens: 100,
              messages: [{ role: 'user', content: 'go' }],
              tools,
              max_iterations: p.maxIterations,
              stream: p.stream,
              runToolsEagerly: p.eager,
              ...(p.thread ? {} : { thread: false as const }),
            },
            {
              budget,
              loopGuard: p.maxRepeats === undefined ? undefined : { maxRepeats: p.maxRepeats },
              onLimit: p.onLimit,
              output: p.output ? z.object({ ok: z.boolean() }) : undefined,
              outputRepairs: p.outputRepairs,
            },
          );
          const failure = await runner.then(
            () => undefined,
            (error: unknown) => error,
          );
          const stoppedBy = runner.stoppedBy!;

          // The history is valid at the stop, every call was answered once, and none ran twice.
          expect(historyProblems(runner.params.messages)).toEqual([]);
          for (const [callId, count] of ran) expect(count, callId).toBe(1);

          // No call ran past a limit.
          const total = [...byTool.values()].reduce((sum, count) => sum + count, 0);
          if (p.maxToolCalls !== undefined) expect(total).toBeLessThanOrEqual(p.maxToolCalls);
          for (const [name, count] of byTool) {
            const max = typeof p.maxCallsPerTool === 'object' ? (p.maxCallsPerTool as Record<string, number>)[name] : p.maxCallsPerTool;
            if (max !== undefined) expect(count).toBeLessThanOrEqual(max);
          }
          if (p.maxRepeats !== undefined) for (const count of byInput.values()) expect(count).toBeLessThanOrEqual(p.maxRepeats);

          // stoppedBy: 'error' exactly when the run rejected (an OutputError: there are no faults here).
          expect(['model', 'max_iterations', 'budget', 'loop_guard', 'error']).toContain(stoppedBy);
          expect(failure === undefined).toBe(stoppedBy !== 'error');
          if (failure !== undefined) expect(failure).toBeInstanceOf(OutputError);

          // Requests: the answer at a limit is the last request, and only with onLimit 'answer' at a limit stop.
          const bodies = server.requests.map((request) => request.body);
          const answers = bodies.filter((body) => body.tool_choice?.type === 'none');
          expect(answers.length).toBeLessThanOrEqual(1);
          if (answers.length === 1) {
            expect(p.onLimit).toBe('answer');
            expect(bodies.at(-1)!.tool_choice).toEqual({ type: 'none' });
            expect(['max_iterations', 'budget', 'error']).toContain(stoppedBy);
          }
          const extra = answers.length;
          if (p.maxIterations > 0) expect(bodies.length).toBeLessThanOrEqual(p.maxIterations + extra);
          // No request once the tokens reached maxTokens (but the one answer at the limit).
          if (p.maxTokens !== undefined) {
            let used = 0;
            server.requests.forEach((_request, i) => {
              if (i < server.requests.length - extra) expect(used).toBeLessThan(p.maxTokens!);
              const step = steps[i]!;
              used += (step.usage?.input_tokens ?? 0) + (step.usage?.output_tokens ?? 0);
            });
          }
          if (LIMITS.has(stoppedBy) && p.onLimit === 'stop') expect(answers).toEqual([]);
          // The output: once the run ended on the model's answer (at a limit too, with onLimit 'answer').
          const endedOnAnswer = stoppedBy === 'model' || (answers.length === 1 && stoppedBy !== 'error' && runner.params.messages.at(-1)!.role === 'assistant');
          expect(runner.output).toEqual(p.output && endedOnAnswer ? { ok: true } : undefined);
          if (stoppedBy === 'loop_guard') expect(p.maxRepeats).toBeDefined();
          if (stoppedBy === 'budget') expect(budget).toBeDefined();
        } finally {
          await server.close();
        }
      }),
      { numRuns: Number(process.env["RUNS"] ?? 120) },
    );
  }, 90_000);
});
