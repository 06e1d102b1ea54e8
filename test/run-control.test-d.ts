import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { type Budget, type RunnerSnapshot, type StoppedBy, type ToolRunner, resumeToolRunner, toolRunner } from 'tool-runner';
import { createMockServer } from 'tool-runner/testing';

const params = { model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user' as const, content: 'x' }] };

describe('run control types', () => {
  it('runner.output is typed from options.output (zod, JSON Schema), unknown without it', async () => {
    const server = await createMockServer({ steps: [] });
    const client = server.client();
    const typed = toolRunner(client, params, { output: z.object({ city: z.string(), days: z.number().default(1) }) });
    expectTypeOf(typed.output).toEqualTypeOf<{ city: string; days: number } | undefined>();
    expectTypeOf(typed).toEqualTypeOf<ToolRunner<false, { city: string; days: number }>>();
    // A JSON Schema written inline is typed without `as const`.
    const fromJson = toolRunner(client, { ...params, stream: true }, {
      output: { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false },
    });
    expectTypeOf(fromJson.output).toEqualTypeOf<{ answer: number } | undefined>();
    expectTypeOf(fromJson).toMatchTypeOf<ToolRunner<true, unknown>>();
    const plain = toolRunner(client, params, { budget: { maxTokens: 1000 } });
    expectTypeOf(plain).toEqualTypeOf<ToolRunner<false>>();
    expectTypeOf(plain.output).toEqualTypeOf<unknown>();
    // A runner with an output is still a ToolRunner (functions that take one take it).
    const drive = (_runner: ToolRunner) => undefined;
    drive(typed);
    // A JSON Schema of another type is refused by the types (a zod one when the runner is made).
    // @ts-expect-error a JSON Schema of another type
    void (() => toolRunner(client, params, { output: { type: 'array', items: { type: 'string' } } }));
    // A schema annotated with an interface, a record, and an object transformed to another value are taken.
    expectTypeOf(toolRunner(client, params, { output: z.object({ city: z.string() }).transform((value) => value.city) }).output).toEqualTypeOf<string | undefined>();
    interface Report {
      city: string;
    }
    const report: z.ZodType<Report> = z.object({ city: z.string() });
    expectTypeOf(toolRunner(client, params, { output: report }).output).toEqualTypeOf<Report | undefined>();
    expectTypeOf(toolRunner(client, params, { output: z.record(z.string(), z.number()) }).output).toEqualTypeOf<Record<string, number> | undefined>();
    await server.close();
  });

  it('stoppedBy, the budget and resume', async () => {
    const server = await createMockServer({ steps: [] });
    const runner = toolRunner(server.client(), params);
    expectTypeOf(runner.stoppedBy).toEqualTypeOf<StoppedBy | undefined>();
    expectTypeOf<'budget'>().toMatchTypeOf<StoppedBy>();
    expectTypeOf<{ maxCallsPerTool: { search: 3 } }>().toMatchTypeOf<Budget>();
    const resumed = resumeToolRunner(server.client(), {} as RunnerSnapshot<false>, { options: { output: z.object({ ok: z.boolean() }) } });
    expectTypeOf(resumed.output).toEqualTypeOf<{ ok: boolean } | undefined>();
    // @ts-expect-error onLimit is 'stop' or 'answer'
    toolRunner(server.client(), params, { onLimit: 'retry' });
    // @ts-expect-error loopGuard needs maxRepeats
    toolRunner(server.client(), params, { loopGuard: {} });
    await server.close();
  });
});
