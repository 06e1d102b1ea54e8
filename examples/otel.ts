/** OpenTelemetry: spans for the run, each request and each tool call (GenAI semantic conventions). */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { openTelemetry } from 'tool-runner/otel';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

// Any tracer: here an in-memory exporter so the example can print the spans; in production the global provider.
const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('example');

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  run: ({ city }) => `sunny in ${city}`,
});
const { client, model, close } = await exampleClient([
  { content: [toolUse('get_weather', { city: 'Lisbon' })] },
  { content: [text('Sunny in Lisbon.')] },
]);
await toolRunner(
  client,
  { model, max_tokens: 1024, messages: [{ role: 'user', content: 'Weather in Lisbon?' }], tools: [getWeather] },
  { onEvent: openTelemetry({ tracer, agentName: 'weather-bot', captureContent: false }) },
);
for (const span of exporter.getFinishedSpans()) {
  const { attributes: a } = span;
  const detail = a['gen_ai.tool.name'] ?? (a['gen_ai.usage.input_tokens'] !== undefined ? `${a['gen_ai.usage.input_tokens']} in / ${a['gen_ai.usage.output_tokens']} out` : '');
  console.log(`span ${span.name} [${a['gen_ai.operation.name']}] ${detail}`);
}
await close();
