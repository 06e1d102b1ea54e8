/**
 * The SDK runner's own OpenTelemetry spans, when the client traces (its `openTelemetry` option):
 * the same program on the SDK's `client.beta.messages.toolRunner(params, options)` and on
 * `toolRunner(client, params, options)`, each with a client that traces into an in-memory
 * exporter, under an AsyncLocalStorage context manager, must give the same tree of spans (names,
 * kinds, statuses, attributes, parents).
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Tracer } from '@opentelemetry/api';
import type { ClientOptions } from '@anthropic-ai/sdk';
import { mcpTools } from '@anthropic-ai/sdk/helpers/beta/mcp';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toolRunner } from 'tool-runner';
import { type Step, text, toolUse } from 'tool-runner/testing';
import { connectedClient } from './fixtures/mcp-server.js';
import { mockServer } from './helpers.js';

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
});

type Runner = AsyncIterable<any> & { generateToolResponse(): Promise<unknown>; done(): Promise<unknown> };
type Start = (params: any, requestOptions?: Record<string, unknown>) => Runner;
type Program = (start: Start, tracer: Tracer) => Promise<unknown>;

interface Node {
  name: string;
  kind: number;
  status: number;
  attributes: Record<string, unknown>;
  children: Node[];
}

/** What differs between two servers of the same script: their port, and the ids they make up. */
const VOLATILE = ['server.port', 'url.full', 'anthropic.request.id', 'gen_ai.response.id', 'gen_ai.response.time_to_first_chunk'];

/**
 * The spans as trees. Siblings are in the order of their JSON (name first), not of their start:
 * spans start in the same millisecond often enough that an order by time would differ by chance.
 */
function forest(spans: ReadableSpan[]): Node[] {
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  const node = (span: ReadableSpan): Node => ({
    name: span.name,
    kind: span.kind,
    status: span.status.code,
    attributes: Object.fromEntries(Object.entries(span.attributes).filter(([key]) => !VOLATILE.includes(key))),
    children: sorted(spans.filter((child) => child.parentSpanContext?.spanId === span.spanContext().spanId).map(node)),
  });
  return sorted(spans.filter((span) => !span.parentSpanContext || !ids.has(span.parentSpanContext.spanId)).map(node));
}

function sorted(nodes: Node[]): Node[] {
  return nodes.map((node) => [JSON.stringify(node), node] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, node]) => node);
}

/** Runs `program` on each runner, inside a `program` span, and returns the two forests of spans. */
async function spansOfBoth(steps: () => Step[], program: Program, telemetry: ClientOptions['openTelemetry'] = {}) {
  const run = async (side: 'sdk' | 'ours') => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('test');
    const server = await mockServer(steps());
    const client = server.client({ openTelemetry: { ...telemetry, tracerProvider: provider } });
    const start: Start =
      side === 'sdk'
        ? (params, options) => client.beta.messages.toolRunner(params, options) as unknown as Runner
        : (params, options) => toolRunner(client, params, options) as unknown as Runner;
    await tracer.startActiveSpan('program', async (span) => {
      try {
        await program(start, tracer);
      } finally {
        span.end();
      }
    });
    return forest(exporter.getFinishedSpans());
  };
  const sdk = await run('sdk');
  const ours = await run('ours');
  return { sdk, ours };
}

/** The names of a forest, depth first, indented; siblings in the order of their lines. */
function outline(nodes: Node[], depth = 0): string[] {
  const line = (node: Node) => `${'  '.repeat(depth)}${node.name}${node.status ? ` (${node.status === 1 ? 'ok' : 'error'})` : ''}`;
  return [...nodes].sort((a, b) => line(a).localeCompare(line(b))).flatMap((node) => [line(node), ...outline(node.children, depth + 1)]);
}

/** The first span of a forest, depth first, that `test` accepts. */
function find(nodes: Node[], test: (node: Node) => boolean): Node {
  const all = (list: Node[]): Node[] => list.flatMap((node) => [node, ...all(node.children)]);
  const found = all(nodes).find(test);
  if (!found) throw new Error('no such span');
  return found;
}
const called = (id: string) => (node: Node) => node.attributes['gen_ai.tool.call.id'] === id;

const params = (tools: any[], extra: Record<string, unknown> = {}) => ({
  model: 'claude-sonnet-5-5',
  max_tokens: 1024,
  messages: [{ role: 'user' as const, content: 'Weather?' }],
  tools,
  ...extra,
});

function weatherTool(tracer: () => Tracer | undefined) {
  return betaZodTool({
    name: 'get_weather',
    description: 'Current weather',
    inputSchema: z.object({ location: z.string() }),
    run: async ({ location }) => {
      // A span of the tool's own: a child of the tool call's span.
      tracer()?.startSpan('weather.lookup').end();
      if (location === 'Atlantis') throw new Error('no such city');
      return `21°C in ${location}`;
    },
  });
}

let current: Tracer | undefined;
const weather = weatherTool(() => current);
const withTracer = (program: Program): Program => (start, tracer) => {
  current = tracer;
  return program(start, tracer);
};

const threeCalls = (): Step[] => [
  {
    content: [
      toolUse('get_weather', { location: 'Paris' }, 'toolu_1'),
      toolUse('get_weather', { location: 'Atlantis' }, 'toolu_2'),
      toolUse('unknown_tool', {}, 'toolu_3'),
    ],
  },
  { content: [text('Sunny in Paris.')] },
];

async function runAll(runner: Runner): Promise<void> {
  for await (const _ of runner) {
    // Each iteration's work happens in the runner.
  }
}

describe("the SDK runner's own spans, when the client traces: the same as the SDK's runner makes", () => {
  it('one loop span; the requests and a span per call of a known tool under it; the conversation id on each', async () => {
    const { sdk, ours } = await spansOfBoth(
      threeCalls,
      withTracer((start) => runAll(start(params([weather]), { openTelemetry: { conversationId: 'conv-42' } }))),
    );
    expect(ours).toEqual(sdk);
    expect(outline(sdk)).toEqual([
      'program',
      '  anthropic.messages.tool_runner (ok)',
      '    anthropic.custom_tool_use get_weather (error)',
      '      weather.lookup',
      '    anthropic.custom_tool_use get_weather (ok)',
      '      weather.lookup',
      '    anthropic.messages.create (ok)',
      '    anthropic.messages.create (ok)',
    ]);
    const loop = find(sdk, (node) => node.name === 'anthropic.messages.tool_runner');
    expect(loop.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-sonnet-5-5',
      'gen_ai.conversation.id': 'conv-42',
    });
    expect(find(sdk, called('toolu_2')).attributes).toMatchObject({ 'error.type': 'tool_error', 'gen_ai.conversation.id': 'conv-42' });
    for (const create of loop.children.filter((node) => node.name === 'anthropic.messages.create')) {
      expect(create.attributes['gen_ai.conversation.id']).toBe('conv-42');
    }
  });

  it("a toolset's calls: a span each, with the toolset's name", async () => {
    const computer = {
      type: 'computer_toolset_20260801' as const,
      display_width_px: 800,
      display_height_px: 600,
      run: async (_context: unknown, call: { name: string }) => {
        if (call.name === 'key') throw new Error('no keyboard');
        return [{ type: 'text' as const, text: `${call.name} done` }];
      },
    };
    const member = (name: string, id: string) => ({ type: 'tool_use', id, name, input: {}, toolset_name: 'computer' }) as never;
    const { sdk, ours } = await spansOfBoth(
      () => [{ content: [member('left_click', 'toolu_c1'), member('key', 'toolu_c2'), member('zoom', 'toolu_c3')] }, { content: [text('done')] }],
      withTracer((start) => runAll(start(params([computer]), { openTelemetry: { conversationId: 'conv-7' } }))),
    );
    expect(ours).toEqual(sdk);
    expect(find(sdk, called('toolu_c1')).attributes).toMatchObject({ 'anthropic.toolset.name': 'computer', 'gen_ai.conversation.id': 'conv-7' });
  });

  it('streamed turns, and a stop at max_iterations', async () => {
    const { sdk, ours } = await spansOfBoth(threeCalls, withTracer((start) => runAll(start(params([weather], { stream: true })))));
    expect(ours).toEqual(sdk);
    expect(outline(sdk).filter((line) => line.includes('anthropic.'))).toHaveLength(5);
    // Without a thread, with the content of each turn (over a thread, see the README's differences).
    const whole = await spansOfBoth(threeCalls, withTracer((start) => runAll(start(params([weather], { stream: true, thread: false })))), {
      traces: { contentMode: 'content' },
    });
    expect(whole.ours).toEqual(whole.sdk);
    expect(find(whole.sdk, (node) => node.name === 'anthropic.messages.create').attributes['gen_ai.output.messages']).toBeDefined();
    const limited = await spansOfBoth(threeCalls, withTracer((start) => runAll(start(params([weather], { max_iterations: 1 })))));
    expect(limited.ours).toEqual(limited.sdk);
    expect(outline(limited.sdk)[1]).toBe('  anthropic.messages.tool_runner (ok)');
  });

  it('a failed request fails the loop span with the error type of the API', async () => {
    const { sdk, ours } = await spansOfBoth(
      () => [{ error: { status: 400, message: 'bad request' } }],
      (start) => runAll(start(params([weather]))).catch(() => {}),
    );
    expect(ours).toEqual(sdk);
    expect(outline(sdk)).toEqual(['program', '  anthropic.messages.tool_runner (error)', '    anthropic.messages.create (error)']);
    expect(sdk[0]!.children[0]!.attributes['error.type']).toBe('invalid_request_error');
  });

  it('a loop body that breaks ends the loop span with no status', async () => {
    const { sdk, ours } = await spansOfBoth(threeCalls, async (start) => {
      for await (const _ of start(params([weather]))) break;
    });
    expect(ours).toEqual(sdk);
    expect(outline(sdk)).toEqual(['program', '  anthropic.messages.tool_runner', '    anthropic.messages.create (ok)']);
  });

  it('a streamed request that fails while the loop body reads it: the loop span ends with no status, as when the body breaks (the request span has the error)', async () => {
    const faults: Array<[string, () => Step[]]> = [
      ['a 400 (not retried)', () => [{ error: { status: 400, message: 'bad request' } }]],
      ['an SSE error event', () => [{ content: [text('Looking it up, one moment.')], error: { status: 529, type: 'overloaded_error', afterEvents: 3 } }]],
      ['a dropped connection', () => [{ content: [text('Looking it up, one moment.')], disconnectAfterEvents: 3 }]],
    ];
    for (const [fault, steps] of faults) {
      const { sdk, ours } = await spansOfBoth(steps, async (start) => {
        const failed = await (async () => {
          for await (const stream of start(params([weather], { stream: true })) as AsyncIterable<AsyncIterable<unknown>>) for await (const _ of stream);
        })().then(() => undefined, (error: unknown) => error);
        expect(failed, fault).toBeInstanceOf(Error);
      });
      expect(ours, fault).toEqual(sdk);
      expect(outline(sdk)[1], fault).toBe('  anthropic.messages.tool_runner');
    }
  });

  it("a tool that failed before the run aborted, while its onToolError hook ran: its span is an error, as its tool.end says (not a cancellation)", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const server = await mockServer([{ content: [toolUse('get_weather', { city: 'Paris' }, 'toolu_w')] }, { content: [text('ok')] }]);
    const failing = betaZodTool({ name: 'get_weather', description: 'Weather', inputSchema: z.object({ city: z.string() }), run: async () => { throw new Error('down'); } });
    const controller = new AbortController();
    const ends: unknown[] = [];
    const runner = toolRunner(server.client({ openTelemetry: { tracerProvider: provider } }), params([failing]), {
      signal: controller.signal,
      hooks: { onToolError: async () => { controller.abort(); await new Promise((resolve) => setTimeout(resolve, 20)); } },
      onEvent: (event) => void (event.type === 'tool.end' && ends.push(event.cancelled)),
    });
    await runner.runUntilDone().catch(() => {});
    const span = exporter.getFinishedSpans().find((finished) => finished.name === 'anthropic.custom_tool_use get_weather')!;
    expect(ends).toEqual([undefined]);
    expect(span.status.code).toBe(2);
    expect(span.attributes['error.type']).toBe('tool_error');
  });

  it("calls run by generateToolResponse() in the loop body are children of the caller's span", async () => {
    const { sdk, ours } = await spansOfBoth(
      threeCalls,
      withTracer(async (start, tracer) => {
        const runner = start(params([weather]));
        for await (const _ of runner) {
          await tracer.startActiveSpan('loop body', async (span) => {
            await runner.generateToolResponse();
            span.end();
          });
        }
      }),
    );
    expect(ours).toEqual(sdk);
    expect(outline(sdk)).toEqual([
      'program',
      '  anthropic.messages.tool_runner (ok)',
      '    anthropic.messages.create (ok)',
      '    anthropic.messages.create (ok)',
      '  loop body',
      '  loop body',
      '    anthropic.custom_tool_use get_weather (error)',
      '      weather.lookup',
      '    anthropic.custom_tool_use get_weather (ok)',
      '      weather.lookup',
    ]);
  });

  it("with the client's content mode: the arguments and the result, within maxContentBytes", async () => {
    const program = withTracer((start) => runAll(start(params([weather]))));
    const whole = await spansOfBoth(threeCalls, program, { traces: { contentMode: 'content' } });
    expect(whole.ours).toEqual(whole.sdk);
    expect(find(whole.sdk, called('toolu_1')).attributes).toMatchObject({
      'gen_ai.tool.call.arguments': '{"location":"Paris"}',
      'anthropic.tool_result.content': '[{"type":"text","text":"21°C in Paris"}]',
    });
    const cut = await spansOfBoth(threeCalls, program, { traces: { contentMode: 'content', maxContentBytes: 30 } });
    expect(cut.ours).toEqual(cut.sdk);
    expect(find(cut.sdk, called('toolu_1')).attributes).toMatchObject({ 'anthropic.content.truncated': true, 'anthropic.tool_result.content': '[]' });
  });

  it("the SDK's mcpTool() calls are anthropic.mcp_tool_use spans", async () => {
    const mcp = await connectedClient();
    try {
      const { tools } = await mcp.listTools();
      const add = mcpTools(tools.filter((tool) => tool.name === 'add' || tool.name === 'fails'), mcp as never);
      const { sdk, ours } = await spansOfBoth(
        () => [{ content: [toolUse('add', { a: 2, b: 3 }, 'toolu_add'), toolUse('fails', {}, 'toolu_fails')] }, { content: [text('5')] }],
        (start) => runAll(start(params(add))),
      );
      expect(ours).toEqual(sdk);
      expect(outline(sdk)).toContain('    anthropic.mcp_tool_use add (ok)');
      expect(outline(sdk)).toContain('    anthropic.mcp_tool_use fails (error)');
    } finally {
      await mcp.close();
    }
  });

  it('a tracer that throws never fails the run', async () => {
    const throwing = {
      startSpan: () => {
        throw new Error('tracer down');
      },
      startActiveSpan: () => {
        throw new Error('tracer down');
      },
    };
    const server = await mockServer(threeCalls());
    const client = server.client({ openTelemetry: { tracerProvider: { getTracer: () => throwing } as never } });
    const final = await toolRunner(client, params([weather]));
    expect(final.content).toMatchObject([{ type: 'text', text: 'Sunny in Paris.' }]);
  });

  it('no spans of the runner when the client does not trace', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const server = await mockServer(threeCalls());
    await toolRunner(server.client({ openTelemetry: { tracerProvider: provider, traces: false } }), params([weather]));
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

describe("the onToolResult hook with the SDK runner's spans", () => {
  it.each([false, true])("of a call answered without running (an unknown tool, a call past the budget) runs in the run's trace, as a call's that ran (a listener: %s)", async (listening) => {
    // Without a budget the third call is of an unknown tool; with one of 1 call, the second and third are past it.
    for (const budget of [undefined, { maxToolCalls: 1 }]) {
      const exporter = new InMemorySpanExporter();
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
      const tracer = provider.getTracer('test');
      const server = await mockServer(threeCalls());
      await toolRunner(server.client({ openTelemetry: { tracerProvider: provider } }), params([weatherTool(() => undefined)]), {
        budget,
        // An audit log of every result: its span goes with the run, not into a trace of its own.
        hooks: { onToolResult: (_result, call) => tracer.startSpan(`audit ${call.id}`).end() },
        ...(listening && { onEvent: () => {} }),
      });
      const spans = exporter.getFinishedSpans();
      const runs = spans.filter((span) => span.name === 'anthropic.messages.tool_runner');
      const traces = new Set(runs.map((span) => span.spanContext().traceId));
      expect(traces.size).toBe(1);
      const audits = ['toolu_1', 'toolu_2', 'toolu_3'].map((id) => [id, spans.find((span) => span.name === `audit ${id}`)?.spanContext().traceId]);
      expect(audits).toEqual(['toolu_1', 'toolu_2', 'toolu_3'].map((id) => [id, [...traces][0]]));
      // No span of a call for one that did not run, as the SDK's runner.
      expect(spans.filter((span) => span.name.startsWith('anthropic.custom_tool_use'))).toHaveLength(budget ? 1 : 2);
    }
  });
});
