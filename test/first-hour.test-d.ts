/** Types that carry through what a new user writes in the first hour. */
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import type { BetaMessage, BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { type RunnableTool, type RunnerParams, type RunnerSnapshot, type ToolInput, type ToolResultContentBlock, type ToolRunner, type ToolSource, resumeToolRunner, textOf, tool, toolRunner } from 'tool-runner';
import { type RecordedRequest, createMockServer } from 'tool-runner/testing';

const getWeather = tool({
  name: 'get_weather',
  inputSchema: z.object({ city: z.string() }),
  run: ({ city }) => `21°C in ${city}`,
});
const sendEmail = tool({
  name: 'send_email',
  inputSchema: z.object({ to: z.string(), body: z.string() }),
  needsApproval: true,
  run: ({ to }) => `sent to ${to}`,
});

describe('types that catch a schema the runner cannot send', () => {
  it("a Standard Schema that cannot export JSON Schema (zod 3's types, zod 4.0–4.1) does not compile in tool() or options.output", () => {
    // What zod 3.25 declares: validation only, no `jsonSchema` in its `~standard`.
    const zod3Like = {} as StandardSchemaV1<{ city: string }>;
    // @ts-expect-error a schema without Standard JSON Schema is refused at compile time, as tool() refuses it at run time
    tool({ name: 'old', inputSchema: zod3Like, run: () => '' });
    // @ts-expect-error the same for the run's output schema
    toolRunner({} as never, { model: 'm', max_tokens: 1, messages: [] }, { output: zod3Like });
    // A zod 4 schema, and a plain JSON Schema, compile.
    tool({ name: 'new', inputSchema: z.object({ city: z.string() }), run: ({ city }) => city });
    tool({ name: 'plain', inputSchema: { type: 'object', properties: { city: { type: 'string' } } }, run: () => '' });
  });
});

describe('types that carry through', () => {
  it('ToolInput<typeof tool> is the input run receives', () => {
    expectTypeOf<ToolInput<typeof getWeather>>().toEqualTypeOf<{ city: string }>();
    expectTypeOf<ToolInput<typeof sendEmail>>().toEqualTypeOf<{ to: string; body: string }>();
  });

  it('approve and the hooks get the call typed by tool: a union by name', async () => {
    const server = await createMockServer({ steps: [] });
    toolRunner(
      server.client(),
      { model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }], tools: [getWeather, sendEmail] },
      {
        approve: (call) => {
          expectTypeOf(call.name).toEqualTypeOf<'get_weather' | 'send_email'>();
          if (call.name === 'send_email') expectTypeOf(call.input).toEqualTypeOf<{ to: string; body: string }>();
          else expectTypeOf(call.input).toEqualTypeOf<{ city: string }>();
          return { decision: 'allow' };
        },
        hooks: {
          onToolCall: (call) => {
            if (call.name === 'get_weather') expectTypeOf(call.input.city).toEqualTypeOf<string>();
          },
          onToolResult: (_result, call) => {
            expectTypeOf(call.id).toEqualTypeOf<string>();
          },
        },
      },
    );
    // The params keep their checks: a misspelled key is an error.
    // @ts-expect-error max_iteration is not a param
    toolRunner(server.client(), { model: 'claude-sonnet-5-5', max_tokens: 10, messages: [], tools: [getWeather], max_iteration: 5 });
    await server.close();
  });

  it("a tool source's calls (known at run time) and a tool typed RunnableTool (input any) give calls of any name and unknown input, never a name union they escape", async () => {
    const server = await createMockServer({ steps: [] });
    const source: ToolSource = { kind: 'tool-source', tools: () => [] };
    toolRunner(server.client(), { model: 'claude-sonnet-5-5', max_tokens: 10, messages: [], tools: [getWeather, source] }, {
      approve: (call) => {
        expectTypeOf(call.name).toEqualTypeOf<string>();
        if (call.name !== 'get_weather') expectTypeOf(call.input).toEqualTypeOf<unknown>();
        return { decision: 'allow' };
      },
    });
    const params: RunnerParams = { model: 'claude-sonnet-5-5', max_tokens: 10, messages: [], tools: [getWeather as RunnableTool] };
    toolRunner(server.client(), params, {
      approve: (call) => {
        expectTypeOf(call.input).toEqualTypeOf<unknown>();
        return { decision: 'allow' };
      },
    });
    await server.close();
  });

  it('resumeToolRunner keeps the stream flag: what the resumed runner yields', async () => {
    const server = await createMockServer({ steps: [] });
    const streaming = toolRunner(server.client(), { model: 'claude-sonnet-5-5', max_tokens: 10, messages: [], stream: true });
    const snapshot = streaming.toJSON();
    expectTypeOf(snapshot).toEqualTypeOf<RunnerSnapshot<true>>();
    expectTypeOf(resumeToolRunner(server.client(), snapshot)).toEqualTypeOf<ToolRunner<true>>();
    for await (const item of resumeToolRunner(server.client(), snapshot)) expectTypeOf(item).toEqualTypeOf<BetaMessageStream>();
    const whole = toolRunner(server.client(), { model: 'claude-sonnet-5-5', max_tokens: 10, messages: [] });
    for await (const item of resumeToolRunner(server.client(), whole.toJSON())) expectTypeOf(item).toEqualTypeOf<BetaMessage>();
    await server.close();
  });

  it('a result of content blocks: text and an image are ToolResultContentBlock; a made-up block is not', () => {
    tool({
      name: 'chart',
      inputSchema: z.object({}),
      run: async (): Promise<ToolResultContentBlock[]> => [
        { type: 'text', text: 'A chart:' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
    });
    // @ts-expect-error a block the API does not take
    const bad: ToolResultContentBlock = { type: 'video', url: 'x' };
    expectTypeOf(bad).toEqualTypeOf<ToolResultContentBlock>();
  });

  it('a JSON Schema kept in a variable `as const` types the input', () => {
    const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false } as const;
    tool({
      name: 'search',
      inputSchema: schema,
      run: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ q: string }>();
        return input.q;
      },
    });
  });

  it('textOf takes a message param and a tool result written in place, as the README says; a runner, a promise or a string do not compile', () => {
    // They were TS2353, "Object literal may only specify known properties, and 'role' does not exist".
    expectTypeOf(textOf({ role: 'user', content: 'What is the weather?' })).toEqualTypeOf<string>();
    expectTypeOf(textOf({ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '21°C' }] })).toEqualTypeOf<string>();
    expectTypeOf(textOf(undefined)).toEqualTypeOf<string>();
    // @ts-expect-error a runner not awaited has no content
    textOf(toolRunner({} as never, { model: 'm', max_tokens: 1, messages: [] }));
    // @ts-expect-error a promise of a message
    textOf(Promise.resolve({ content: 'x' }));
    // @ts-expect-error content that is no string nor blocks
    textOf({ content: 42 });
  });

  it("the testing kit's recorded requests are typed", async () => {
    const server = await createMockServer({
      steps: [
        (request) => {
          expectTypeOf(request).toEqualTypeOf<RecordedRequest>();
          expectTypeOf(request.messages).toEqualTypeOf<BetaMessageParam[]>();
          expectTypeOf(request.body.model).toEqualTypeOf<string | undefined>();
          return { content: [] };
        },
      ],
    });
    expectTypeOf(server.requests).toEqualTypeOf<RecordedRequest[]>();
    await server.close();
  });
});
