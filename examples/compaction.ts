/**
 * Client-side compaction: when a reply's tokens pass the threshold, the runner asks for a summary
 * and goes on from it (keeping the last turns verbatim if you ask), so a long task fits the context.
 */
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { type RecordedRequest, text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const readChapter = tool({
  name: 'read_chapter',
  description: 'Returns the text of a chapter of the book',
  inputSchema: z.object({ chapter: z.number() }),
  run: ({ chapter }) => `Chapter ${chapter}. ${'It was a dark and stormy night. '.repeat(400)}`,
});

// Offline, a scripted model reads six chapters and writes a summary when asked for one.
let chapter = 0;
const model = (request: RecordedRequest) => {
  const last = request.messages.at(-1);
  if (typeof last?.content === 'string' && last.content.startsWith('You have been working')) {
    return { content: [text(`<summary>Read chapters 1 to ${chapter}: a storm, every night.</summary>`)] };
  }
  chapter++;
  return { content: chapter <= 6 ? [toolUse('read_chapter', { chapter })] : [text('The book is about a storm.')] };
};
const { client, model: modelName, close } = await exampleClient(Array.from({ length: 12 }, () => model));

const runner = toolRunner(
  client,
  {
    model: modelName,
    max_tokens: 1024,
    messages: [{ role: 'user', content: 'Read the book chapter by chapter, then tell me what it is about.' }],
    tools: [readChapter],
    compactionControl: { enabled: true, contextTokenThreshold: 10_000, keepTurns: 1 },
  },
  { hooks: { onRequest: (params) => console.log(`request with ${params.messages.length} messages`) } },
);
const final = await runner;
console.log(`answer: ${textOf(final)}`);
console.log(`input tokens in all: ${runner.usage.input_tokens}`);
await close();
