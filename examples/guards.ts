/** Time, concurrency and size guards: per-tool timeouts, a bound on tools running at once, result size. */
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const fetchPage = tool({
  name: 'fetch_page',
  description: 'Downloads a page',
  inputSchema: z.object({ url: z.string() }),
  timeoutMs: 200, // this tool's own limit
  run: async ({ url }, { signal }) => {
    // Pass the signal on: it aborts on timeout or when the run is aborted.
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, url.includes('slow') ? 10_000 : 20);
      signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)));
    });
    return `<html>${'lorem ipsum '.repeat(url.includes('huge') ? 50_000 : 10)}</html>`;
  },
});

const { client, model, close } = await exampleClient([
  {
    content: [
      toolUse('fetch_page', { url: 'https://example.com/a' }),
      toolUse('fetch_page', { url: 'https://example.com/slow' }),
      toolUse('fetch_page', { url: 'https://example.com/huge' }),
    ],
  },
  { content: [text('Two pages fetched; one timed out.')] },
]);

const runner = toolRunner(
  client,
  { model, max_tokens: 1024, messages: [{ role: 'user', content: 'Fetch these pages.' }], tools: [fetchPage] },
  { concurrency: 2, toolTimeoutMs: 5_000, maxToolResultChars: 2_000 },
);
for await (const _message of runner) {
  const response = await runner.generateToolResponse();
  for (const result of response?.content ?? []) {
    const body = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
    console.log(`${result.is_error ? 'error ' : 'result'} (${body.length} chars): ${body.slice(-90).replace(/\n/g, ' ')}`);
  }
}
await close();
