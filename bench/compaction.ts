/**
 * Compaction tokens: a long scripted run whose every tool result is about 2,000 tokens, with and
 * without client-side compaction. The local server derives usage from each request (about 4
 * characters a token), so the figures are the tokens each run would send.
 */
import { z } from 'zod';
import { tool, toolRunner } from '../src/index.js';
import { type RecordedRequest, createMockServer, text, toolUse } from '../src/testing/index.js';

const SUMMARY_PROMPT = 'Summarise the work so far in <summary> tags.';

export async function compactionTokens(turns: number, threshold: number, compact: boolean) {
  const fetchRecord = tool({
    name: 'fetch_record',
    inputSchema: z.object({ n: z.number() }),
    // About 2,000 tokens of text.
    run: ({ n }) => `record ${n}: ${'lorem ipsum dolor sit amet '.repeat(296)}`,
  });
  let modelTurns = 0;
  const step = (request: RecordedRequest) => {
    if (request.messages.at(-1)?.content === SUMMARY_PROMPT) {
      return { content: [text(`<summary>Fetched records 1 to ${modelTurns}; the task goes on.</summary>`)] };
    }
    modelTurns++;
    return { content: modelTurns < turns ? [toolUse('fetch_record', { n: modelTurns })] : [text('All records fetched.')] };
  };
  const server = await createMockServer({ steps: Array.from({ length: turns * 2 }, () => step) });
  try {
    const runner = toolRunner(server.client(), {
      model: 'bench-model',
      max_tokens: 1024,
      max_iterations: turns + 10,
      messages: [{ role: 'user', content: `Fetch records 1 to ${turns}.` }],
      tools: [fetchRecord],
      ...(compact && { compactionControl: { enabled: true, contextTokenThreshold: threshold, summaryPrompt: SUMMARY_PROMPT } }),
    });
    const final = await runner;
    const sizes = server.requests.map((request) => Math.ceil(JSON.stringify([request.body.system ?? '', request.body.tools ?? [], request.messages]).length / 4));
    return {
      completed: final.content[0]?.type === 'text' && final.content[0].text === 'All records fetched.',
      modelTurns,
      requests: server.requests.length,
      summaries: server.requests.filter((request) => request.messages.at(-1)?.content === SUMMARY_PROMPT).length,
      inputTokens: runner.usage.input_tokens,
      largestRequestTokens: Math.max(...sizes),
    };
  } finally {
    await server.close();
  }
}
