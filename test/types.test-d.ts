import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import type { BetaMessage } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import Anthropic from '@anthropic-ai/sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { type CallOf, type ContextOverflowError, type RunnerSnapshot, type ToolContext, type ToolEntry, type ToolResultContent, ToolRunner, type ToolRunnerOptions, type ToolSource, agentTool, resumeToolRunner, tool, toolRunner } from 'tool-runner';
import { type Step, createMockServer, text, thinking, toolUse } from 'tool-runner/testing';
import { inspectRecording, inspector } from 'tool-runner/inspect';
import { openTelemetry } from 'tool-runner/otel';
import { mcpToolset } from 'tool-runner/mcp';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

describe('types guide the user', () => {
  it("a tool source's tools() may take the run's signal, or nothing (a source written before it was given)", () => {
    const heeds: ToolSource = { kind: 'tool-source', tools: ({ signal } = {}) => (signal?.throwIfAborted(), []) };
    const ignores: ToolSource = { kind: 'tool-source', tools: () => Promise.resolve([]) };
    expectTypeOf(heeds.tools).parameter(0).toEqualTypeOf<{ signal?: AbortSignal } | undefined>();
    toolRunner(new Anthropic(), { model: 'm', max_tokens: 1, messages: [], tools: [heeds, ignores] });
  });

  it('a setMessagesParams function may change the params it is given in place and return them, as for the SDK runner', () => {
    const runner = toolRunner(new Anthropic(), { model: 'm', max_tokens: 1, messages: [] });
    runner.setMessagesParams((params) => {
      params.max_tokens = 10;
      params.messages.push({ role: 'user', content: 'Go on.' });
      return params;
    });
  });

  it('optional fields of tool() take a value that may be undefined, under exactOptionalPropertyTypes', () => {
    const description: string | undefined = process.env['TOOL_DESCRIPTION'];
    const timeoutMs: number | undefined = process.env['TOOL_TIMEOUT'] ? Number(process.env['TOOL_TIMEOUT']) : undefined;
    tool({ name: 'w', description, timeoutMs, needsApproval: undefined, inputSchema: z.object({}), run: () => 'ok' });
  });

  it('new ToolRunner(client, { ...params, stream: true }) is typed as a streaming runner, as toolRunner() is', () => {
    const params = { model: 'm', max_tokens: 1, messages: [] };
    expectTypeOf(new ToolRunner(new Anthropic(), { ...params, stream: true })).toEqualTypeOf<ToolRunner<true>>();
    expectTypeOf(new ToolRunner(new Anthropic(), params)).toEqualTypeOf<ToolRunner<false>>();
    expectTypeOf(new ToolRunner(new Anthropic(), { ...params, stream: Math.random() > 0.5 })).toEqualTypeOf<ToolRunner<boolean>>();
  });

  it('so do the optional fields of agentTool(), of the hooks and of resumeToolRunner()\'s third argument', () => {
    const maxDepth: number | undefined = process.env['DEPTH'] ? Number(process.env['DEPTH']) : undefined;
    const onCall: ((call: { name: string }) => void) | undefined = process.env['TRACE'] ? (call) => console.log(call.name) : undefined;
    const options: ToolRunnerOptions | undefined = undefined;
    agentTool({ name: 'helper', description: 'd', maxDepth, timeoutMs: maxDepth, client: undefined, options, needsApproval: undefined, params: ({ task }) => ({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: task }] }) });
    toolRunner(new Anthropic(), { model: 'm', max_tokens: 1, messages: [] }, { hooks: { onToolCall: onCall, onRequest: undefined } });
    const tools: ToolEntry[] | undefined = undefined;
    resumeToolRunner(new Anthropic(), {} as RunnerSnapshot, { tools, options });
  });

  it("resumeToolRunner's options are typed by the tools supplied, as toolRunner's are by its params' tools", () => {
    const client = new Anthropic();
    const deploy = tool({ name: 'deploy', inputSchema: z.object({ service: z.string() }), needsApproval: true, run: ({ service }) => service });
    const tools = [deploy];
    const options: ToolRunnerOptions<CallOf<typeof tools>> = { approve: (call) => (call.input.service === 'billing' ? { decision: 'deny' } : { decision: 'allow' }) };
    const snapshot = toolRunner(client, { model: 'm', max_tokens: 1, messages: [], tools }, options).toJSON();
    resumeToolRunner(client, snapshot, { tools, options });
    resumeToolRunner(client, snapshot, { tools, options: { approve: (call) => (expectTypeOf(call.input).toEqualTypeOf<{ service: string }>(), { decision: 'allow' }) } });
    // Without tools, the options take any call.
    resumeToolRunner(client, snapshot, { options: { approve: (call) => (expectTypeOf(call.input).toEqualTypeOf<unknown>(), { decision: 'allow' }) } });
  });

  it("and so do the options of the subpaths, the testing kit's steps and an onToolCall override", () => {
    const maybe = <T>(value: T): T | undefined => (process.env['UNSET'] ? undefined : value);
    agentTool({ name: 'helper', description: 'd', inputSchema: maybe(z.object({ task: z.string() })), params: ({ task }) => ({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: task }] }) });
    void createMockServer({ steps: [{ content: maybe([]), delayMs: maybe(5), usage: maybe({ input_tokens: 1 }), error: maybe({ status: 529, type: maybe('overloaded_error') }), stop_reason: maybe('end_turn') }], contextWindow: maybe(100), chunkSize: maybe(4), threads: maybe('hold' as const) });
    void inspector({ port: maybe(0), host: maybe('127.0.0.1'), record: maybe('runs.jsonl'), captureContent: maybe(true), maxRuns: maybe(10) });
    void inspectRecording('runs.jsonl', { port: maybe(0), host: maybe('127.0.0.1'), pollMs: maybe(100) });
    openTelemetry({ tracer: maybe(undefined), captureContent: maybe(true), agentName: maybe('a') });
    void mcpToolset({} as Client, { prefix: maybe('fs_'), timeoutMs: maybe(10), needsApproval: maybe(true), tools: maybe(['read_file']) });
    toolRunner(new Anthropic(), { model: 'm', max_tokens: 1, messages: [] }, { hooks: { onToolCall: () => ({ result: 'cached', isError: maybe(false) }) } });
    toolRunner(new Anthropic(), { model: 'm', max_tokens: 1, messages: [] }, { hooks: { onToolCall: () => ({ input: { city: 'Paris' } }) } });
    // Both a result and an input (the run refuses it: one of the two would be dropped): the type takes one of them.
    // @ts-expect-error
    toolRunner(new Anthropic(), { model: 'm', max_tokens: 1, messages: [] }, { hooks: { onToolCall: () => ({ result: 'cached', input: { city: 'Paris' } }) } });
  });

  it("the testing kit's block helpers give their kind of block, so a step adds a field by spreading one (a toolset member's call)", () => {
    const member: Step = { content: [{ ...toolUse('key', { text: 'Return' }), toolset_name: 'computer' }] };
    const cited: Step = { content: [thinking('Plan.'), { ...text('Paris.'), citations: [] }] };
    expectTypeOf(toolUse('key').input).toEqualTypeOf<unknown>();
    void createMockServer({ steps: [member, cited] });
  });

  it("an MCP toolset's tools: MCP names (a readonly list too), or a rule given each listed tool as the server lists it", () => {
    const names = ['search', 'read_file'] as const;
    void mcpToolset({} as Client, { tools: names });
    void mcpToolset({} as Client, {
      tools: (tool) => {
        expectTypeOf(tool.name).toEqualTypeOf<string>();
        expectTypeOf(tool.description).toEqualTypeOf<string | undefined>();
        return tool.annotations?.readOnlyHint === true;
      },
    });
    // One name given alone, or a rule that answers a promise (it decides as the tools are listed): refused as types too.
    // @ts-expect-error
    void mcpToolset({} as Client, { tools: 'search' });
    // @ts-expect-error
    void mcpToolset({} as Client, { tools: async () => true });
  });

  it('onRequest gets the params typed (messages, model), and a hook typed with a record is still taken', () => {
    const client = new Anthropic({ apiKey: 'x' });
    const params = { model: 'm', max_tokens: 10, messages: [] };
    toolRunner(client, params, {
      hooks: {
        onRequest: (request) => {
          expectTypeOf(request.messages.length).toEqualTypeOf<number>();
          expectTypeOf(request.model).toMatchTypeOf<string>();
        },
      },
    });
    const loose = (_request: Record<string, unknown>) => undefined;
    toolRunner(client, params, { hooks: { onRequest: loose } });
  });

  it('a tool may return nothing (an empty result, as the README says), sync or async; not a number', () => {
    const logged = tool({ name: 'log_event', inputSchema: z.object({ event: z.string() }), run: async ({ event }) => void event });
    tool({ name: 'noop', inputSchema: z.object({}), run: () => {} });
    toolRunner(new Anthropic({ apiKey: 'x' }), { model: 'm', max_tokens: 10, messages: [], tools: [logged] });
    // @ts-expect-error a number is no result
    tool({ name: 'n', inputSchema: z.object({}), run: () => 42 });
    // The tool made is typed as the SDK's tools are: its run gives a result (a program that calls it reads one).
    const named = tool({ name: 'w', inputSchema: z.object({}), run: () => new Promise((resolve) => resolve('x')) });
    expectTypeOf(named.run).returns.resolves.toEqualTypeOf<ToolResultContent>();
  });

  it('infers the input of run from a zod schema (output type, defaults applied)', () => {
    tool({
      name: 'w',
      inputSchema: z.object({ location: z.string(), unit: z.enum(['c', 'f']).default('c'), days: z.number().optional() }),
      run: (input, context) => {
        expectTypeOf(input).toEqualTypeOf<{ location: string; unit: 'c' | 'f'; days?: number | undefined }>();
        expectTypeOf(context).toEqualTypeOf<ToolContext>();
        return '';
      },
    });
  });

  it('infers the input of run from an `as const` JSON Schema', () => {
    tool({
      name: 'j',
      inputSchema: {
        type: 'object',
        properties: { q: { type: 'string' }, n: { type: 'integer' } },
        required: ['q'],
        additionalProperties: false,
      },
      run: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ q: string; n?: number }>();
        return '';
      },
    });
  });

  it('infers a record from a JSON Schema of additionalProperties alone, with run annotated or not (it was "excessively deep")', () => {
    const tags = { type: 'object', additionalProperties: { type: 'string' } } as const;
    tool({
      name: 'tags',
      inputSchema: tags,
      run: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ [key: string]: string }>();
        return Object.keys(input).join(',');
      },
    });
    tool({ name: 'tags', inputSchema: { type: 'object', additionalProperties: { type: 'string' } }, run: (input: Record<string, string>) => Object.values(input).join(','), needsApproval: (input) => 'admin' in input });
    tool({
      name: 'tags',
      inputSchema: tags,
      // @ts-expect-error the schema's values are strings
      run: (input: Record<string, number>) => String(input['a']),
    });
  });

  it('rejects a run that returns something other than a string or content blocks', () => {
    tool({
      name: 'bad',
      inputSchema: z.object({}),
      // @ts-expect-error a number is not a tool result
      run: () => 42,
    });
  });

  it('stream: true changes what the runner yields', async () => {
    const server = await createMockServer({ steps: [] });
    const base = { model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user' as const, content: 'x' }] };
    expectTypeOf(toolRunner(server.client(), base)).toEqualTypeOf<ToolRunner<false>>();
    expectTypeOf(toolRunner(server.client(), { ...base, stream: true })).toEqualTypeOf<ToolRunner<true>>();
    for await (const item of toolRunner(server.client(), { ...base, stream: true })) {
      expectTypeOf(item).toEqualTypeOf<BetaMessageStream>();
    }
    for await (const item of toolRunner(server.client(), base)) {
      expectTypeOf(item).toEqualTypeOf<BetaMessage>();
    }
    expectTypeOf(await toolRunner(server.client(), base)).toEqualTypeOf<BetaMessage>();
    await server.close();
  });

  it('a fallback entry takes a client of any platform and the Messages params, not the ones the runner sets', () => {
    const client = new Anthropic({ apiKey: 'x' });
    const vertex = new AnthropicVertex({ region: 'us-east5', projectId: 'p', accessToken: 'x' });
    const params = { model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user' as const, content: 'x' }] };
    toolRunner(client, params, { fallback: [{ client: vertex, model: 'claude-sonnet-5-5@20260101' }, { model: 'claude-haiku-5-5', max_tokens: 5, stop_sequences: ['x'] }] });
    // @ts-expect-error the whole history goes to every entry
    toolRunner(client, params, { fallback: [{ messages: [] }] });
    // @ts-expect-error a misspelled param is caught
    toolRunner(client, params, { fallback: [{ modle: 'claude-haiku-5-5' }] });
    expectTypeOf<ContextOverflowError['tokens']>().toEqualTypeOf<number | undefined>();
  });

  it('a schema annotated as z.ZodType<T> (input typed unknown), and a transform: their values typed; a generic helper over schemas compiles', () => {
    const counted = tool({ name: 'count', inputSchema: z.object({ n: z.number() }).transform(({ n }) => n), run: (n) => String(n + 1) });
    expectTypeOf(counted.run).parameter(0).toEqualTypeOf<number>();
    const wrap = <S extends z.ZodObject>(schema: S) => tool({ name: 'wrapped', inputSchema: schema, run: () => 'x' });
    wrap(z.object({ a: z.string() }));
    const typed = <O extends z.ZodObject>(output: O) => toolRunner(new Anthropic({ apiKey: 'x' }), { model: 'm', max_tokens: 10, messages: [] }, { output });
    typed(z.object({ a: z.string() }));
    // A schema annotated as z.ZodType<T> (a recursive one, say) has an input typed unknown: taken, its value typed.
    interface Node {
      name: string;
      children: Node[];
    }
    const NodeSchema: z.ZodType<Node> = z.object({ name: z.string(), children: z.lazy(() => z.array(NodeSchema)) });
    const walk = tool({ name: 'walk', inputSchema: NodeSchema, run: (node) => node.name });
    expectTypeOf(walk.run).parameter(0).toEqualTypeOf<Node>();
    const runner = toolRunner(new Anthropic({ apiKey: 'x' }), { model: 'm', max_tokens: 10, messages: [] }, { output: NodeSchema });
    expectTypeOf(runner.output).toEqualTypeOf<Node | undefined>();
  });

  it('`compaction` is no param of a runner (as the SDK types it; compactBeforeNextTurn asks for one)', () => {
    const client = new Anthropic({ apiKey: 'x' });
    // @ts-expect-error the runner refuses it
    toolRunner(client, { model: 'm', max_tokens: 10, messages: [], compaction: { type: 'summarize' } });
  });
});
