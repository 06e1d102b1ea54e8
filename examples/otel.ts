/** OpenTelemetry: spans for the run, each request and each tool call (GenAI semantic conventions). */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { openTelemetry } from 'tool-runner/otel';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

// Any tracer provider: here an in-memory exporter so the example can print the spans. In production,
// NodeSDK registers the provider and an AsyncLocalStorage context manager, as this does by hand.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('example');

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  // A span the tool starts is a child of its execute_tool span.
  run: ({ city }) => tracer.startActiveSpan('weather-api', (span) => (span.end(), `sunny in ${city}`)),
});
const { client, model, close } = await exampleClient([
  { content: [toolUse('get_weather', { city: 'Lisbon' })] },
  { content: [text('Sunny in Lisbon.')] },
]);
// The client traces into the same provider: its own request spans go under `chat`.
const tracedClient = client.withOptions({ openTelemetry: { tracerProvider: provider } });
await toolRunner(
  tracedClient,
  { model, max_tokens: 1024, messages: [{ role: 'user', content: 'Weather in Lisbon?' }], tools: [getWeather] },
  { onEvent: openTelemetry({ tracer, agentName: 'weather-bot', captureContent: false }) },
);

// The spans as a tree: each under its parent, in the order they ended.
const spans = exporter.getFinishedSpans();
const print = (parent: ReadableSpan | undefined, depth: number): void => {
  for (const span of spans.filter((child) => child.parentSpanContext?.spanId === parent?.spanContext().spanId)) {
    const { attributes: a } = span;
    const detail = a['gen_ai.tool.name'] ?? (a['gen_ai.usage.input_tokens'] !== undefined ? `${a['gen_ai.usage.input_tokens']} in / ${a['gen_ai.usage.output_tokens']} out` : '');
    console.log(`${'  '.repeat(depth)}span ${span.name} [${a['gen_ai.operation.name'] ?? 'app'}] ${detail}`);
    print(span, depth + 1);
  }
};
print(undefined, 0);
await close();
