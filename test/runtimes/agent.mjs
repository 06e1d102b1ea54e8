/**
 * One agent program, the same in every runtime (Node, Bun, Deno, workerd, a browser page): a zod tool
 * and a plain JSON Schema tool, an invalid call answered as an is_error result, two turns, then a
 * streamed run; and the clear errors of bad input. Plain JavaScript, so each runtime loads it as it is.
 * `runAgent(baseURL)` resolves to a report the test compares with what the server saw.
 */
import Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';

const add = tool({
  name: 'add',
  description: 'Adds two numbers',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  run: ({ a, b }) => String(a + b),
});

const lookup = tool({
  name: 'lookup',
  description: 'Looks up a colour',
  inputSchema: {
    type: 'object',
    properties: { key: { type: 'string', enum: ['sky', 'grass'] }, shade: { type: 'string', default: 'plain' } },
    required: ['key'],
    additionalProperties: false,
  },
  run: ({ key, shade }) => `${shade} ${key === 'sky' ? 'blue' : 'green'}`,
});

const params = { model: 'claude-sonnet-5-5', max_tokens: 256, messages: [{ role: 'user', content: 'Go' }], tools: [add, lookup] };

export async function runAgent(baseURL) {
  const client = new Anthropic({ apiKey: 'test-key', baseURL, maxRetries: 0, dangerouslyAllowBrowser: true });
  const report = { runtime: runtimeName(), codeFromStrings: codeFromStrings() };

  // Two turns: the model calls both tools (one call invalid), then answers.
  const runner = toolRunner(client, params);
  const final = await runner;
  const results = runner.params.messages[2].content;
  report.turns = runner.iteration;
  report.results = results.map((block) => ({ id: block.tool_use_id, content: block.content, is_error: block.is_error === true }));
  report.final = final.content[0].text;

  // A streamed run: events arrive as they come, the tool runs, two turns again.
  const streamed = toolRunner(client, { ...params, stream: true });
  const deltas = [];
  for await (const stream of streamed) {
    for await (const event of stream) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') deltas.push(event.delta.text);
  }
  report.streamed = { turns: streamed.iteration, text: deltas.join(''), result: streamed.params.messages[2].content[0].content };

  // Bad input keeps its clear errors: an invalid schema when the tool is defined.
  report.badSchema = errorMessage(() => tool({ name: 'bad', inputSchema: { type: 'object', properties: { n: { type: 'numbr' } } }, run: () => '' }));
  report.badPattern = errorMessage(() => tool({ name: 'bad', inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '(' } } }, run: () => '' }));
  return report;
}

function errorMessage(make) {
  try {
    make();
    return 'no error';
  } catch (error) {
    return `${error.name}: ${error.message}`;
  }
}

/** Whether this runtime lets code be made from strings (workerd refuses; the core never asks). */
function codeFromStrings() {
  try {
    new Function('return 1');
    return 'allowed';
  } catch (error) {
    return `refused (${error.name})`;
  }
}

function runtimeName() {
  if (typeof globalThis.Bun !== 'undefined') return 'bun';
  if (typeof globalThis.Deno !== 'undefined') return 'deno';
  if (typeof navigator !== 'undefined' && navigator.userAgent === 'Cloudflare-Workers') return 'workerd';
  if (typeof window !== 'undefined') return 'browser';
  if (typeof process !== 'undefined' && process.release?.name === 'node') return 'node';
  return 'unknown';
}
