/**
 * The runner's own CPU per turn, without HTTP: an in-memory client answers at once, so what is
 * measured is the loop itself (building the request, the thread, running a tool, appending).
 * With `guards`, the runner has a loop guard and a budget on (limits never reached), as the bench's
 * 'tool-runner, guards on' target.
 * Usage: node --import tsx bench/own-cost.ts [turns=1000] [runs=10] [guards]
 */
import { z } from 'zod';
import { tool, toolRunner } from '../src/index.js';

const turns = Number(process.argv[2] ?? 1000);
const runs = Number(process.argv[3] ?? 10);
const options = process.argv[4] === 'guards' ? { loopGuard: { maxRepeats: 3 }, budget: { maxTokens: 1_000_000_000, maxToolCalls: 1_000_000, maxCallsPerTool: 1_000_000 } } : {};

function inMemoryClient(threads: boolean) {
  let n = 0;
  const create = async () => {
    const turn = n++ % turns;
    const last = turn === turns - 1;
    return {
      id: `msg_${n}`,
      type: 'message',
      role: 'assistant',
      model: 'm',
      stop_reason: last ? 'end_turn' : 'tool_use',
      stop_sequence: null,
      container: null,
      context_management: null,
      usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      content: last ? [{ type: 'text', text: 'done', citations: null }] : [{ type: 'tool_use', id: `toolu_${n}`, name: 'step', input: { n: turn } }],
    };
  };
  return { _supportsMessageThreads: threads, beta: { messages: { create, stream: () => { throw new Error('not streamed'); } } } };
}

const step = tool({ name: 'step', description: 'A step', inputSchema: z.object({ n: z.number() }), run: ({ n }) => `ok ${n}` });
const params = { model: 'm', max_tokens: 10, messages: [{ role: 'user' as const, content: 'go' }], tools: [step] };

for (const threads of [false, true]) {
  const client = inMemoryClient(threads);
  for (let i = 0; i < 3; i++) await toolRunner(client, params, options);
  const start = process.cpuUsage();
  for (let i = 0; i < runs; i++) await toolRunner(client, params, options);
  const used = process.cpuUsage(start);
  console.log(`${threads ? 'over a thread' : 'whole history'}: ${((used.user + used.system) / runs / turns).toFixed(1)} µs of CPU per turn`);
}
