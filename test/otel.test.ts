import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { openTelemetry } from 'tool-runner/otel';
import { text, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer } from './helpers.js';

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer('test') };
}

const weather = tool({ name: 'get_weather', inputSchema: z.object({ city: z.string() }), run: ({ city }) => `sunny in ${city}` });
const broken = tool({
  name: 'broken',
  inputSchema: z.object({}),
  run: () => {
    throw new Error('offline');
  },
});

describe('OpenTelemetry spans (GenAI semantic conventions)', () => {
  it('a span for the run, each request and each tool call, linked as parent and children', async () => {
    const { exporter, tracer } = tracing();
    const server = await mockServer([
      { content: [toolUse('get_weather', { city: 'Paris' }, 'toolu_w'), toolUse('broken', {}, 'toolu_b')], usage: { input_tokens: 12, output_tokens: 7 } },
      { content: [text('Sunny.')], usage: { input_tokens: 30, output_tokens: 3 } },
    ]);
    await toolRunner(server.client(), { ...baseParams, tools: [weather, broken] }, { onEvent: openTelemetry({ tracer, agentName: 'weather-bot' }) });
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name).sort()).toEqual(
      ['chat claude-sonnet-5-5', 'chat claude-sonnet-5-5', 'execute_tool broken', 'execute_tool get_weather', 'invoke_agent weather-bot'].sort(),
    );
    const run = spans.find((span) => span.name.startsWith('invoke_agent'))!;
    for (const span of spans.filter((s) => s !== run)) {
      expect(span.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(run.spanContext().traceId);
    }
    const [first] = spans.filter((span) => span.name.startsWith('chat'));
    expect(first!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'claude-sonnet-5-5',
      'gen_ai.request.max_tokens': 1024,
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.response.finish_reasons': ['tool_use'],
    });
    expect(first!.attributes['gen_ai.input.messages']).toBeUndefined();
    const ok = spans.find((span) => span.name === 'execute_tool get_weather')!;
    expect(ok.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather', 'gen_ai.tool.call.id': 'toolu_w' });
    expect(ok.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(ok.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    const failing = spans.find((span) => span.name === 'execute_tool broken')!;
    expect(failing.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'Error: offline' });
    expect(failing.attributes['error.type']).toBe('tool_error');
    expect(run.status.code).toBe(SpanStatusCode.OK);
  });

  it('captures message content, tool arguments and results only when asked', async () => {
    const { exporter, tracer } = tracing();
    const server = await mockServer([{ content: [toolUse('get_weather', { city: 'Rome' })] }, { content: [text('Sunny.')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [weather] }, { onEvent: openTelemetry({ tracer, captureContent: true }) });
    const spans = exporter.getFinishedSpans();
    const chat = spans.find((span) => span.name.startsWith('chat'))!;
    expect(JSON.parse(String(chat.attributes['gen_ai.input.messages']))).toEqual(baseParams.messages);
    expect(String(chat.attributes['gen_ai.output.messages'])).toContain('get_weather');
    const toolSpan = spans.find((span) => span.name.startsWith('execute_tool'))!;
    expect(toolSpan.attributes['gen_ai.tool.call.arguments']).toBe('{"city":"Rome"}');
    expect(toolSpan.attributes['gen_ai.tool.call.result']).toBe('"sunny in Rome"');
  });

  it('a failed request marks its span and the run span with the error', async () => {
    const { exporter, tracer } = tracing();
    const server = await mockServer([{ error: { status: 400, message: 'bad' } }]);
    await expect(toolRunner(server.client(), baseParams, { onEvent: openTelemetry({ tracer }) }).runUntilDone()).rejects.toThrow();
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => [span.name, span.status.code, span.attributes['error.type']])).toEqual([
      ['chat claude-sonnet-5-5', SpanStatusCode.ERROR, 'BadRequestError'],
      ['invoke_agent tool-runner', SpanStatusCode.ERROR, 'BadRequestError'],
    ]);
  });
});
