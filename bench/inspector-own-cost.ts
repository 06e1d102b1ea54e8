/**
 * The inspector's own CPU per turn, in the watched process: a run's four events a turn (request.start,
 * request.end, tool.start, tool.end) given to `inspector().onEvent` as a runner gives them, without HTTP
 * or a model, with the page's feed read by `curl` (`page`) or no page. The event loop turns every four
 * turns, so that batches go out every 50 ms as in a run; its cost is in both figures.
 * Usage: node --import tsx bench/inspector-own-cost.ts [turns=20000] [page]
 */
import { spawn } from 'node:child_process';
import { inspector } from '../src/inspect/index.js';
const inspect = await inspector();
const u = new URL(inspect.url);
const events = `${u.origin}/api/events${u.search}`;
const page = process.argv.includes('page') ? spawn('curl', ['-sN', events], { stdio: ['ignore', 'ignore', 'ignore'] }) : undefined;
await new Promise((r) => setTimeout(r, 500));
const turns = Number(process.argv[2] ?? 20000);
async function run(r: number) {
  const runner = { params: { messages: [{ role: 'user', content: 'go' }] }, usage: { input_tokens: 1, output_tokens: 1 }, pendingApprovals: [] } as any;
  inspect.onEvent({ type: 'run.start', runner, model: 'claude-sonnet-5-5' } as any);
  const messages: unknown[] = [];
  for (let t = 0; t < turns; t++) {
    const id = `toolu_01${r}x${t}abcdefghijklmnop`;
    inspect.onEvent({ type: 'request.start', runner, requestId: t, purpose: 'turn', body: { model: 'claude-sonnet-5-5', max_tokens: 1024, messages } } as any);
    inspect.onEvent({ type: 'request.end', runner, requestId: t, message: { id: 'msg_1', stop_reason: 'tool_use', model: 'claude-sonnet-5-5', usage: { input_tokens: 100 + t, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, content: [{ type: 'tool_use', id, name: 'step', input: { n: t } }] } } as any);
    inspect.onEvent({ type: 'tool.start', runner, call: { id, name: 'step', input: { n: t } } } as any);
    inspect.onEvent({ type: 'tool.end', runner, call: { id, name: 'step', input: { n: t } }, result: { type: 'tool_result', tool_use_id: id, content: `ok ${t}` } } as any);
    if (t % 4 === 0) await new Promise((r) => setImmediate(r));
  }
  inspect.onEvent({ type: 'run.end', runner, message: undefined } as any);
}
for (let r = 0; r < 3; r++) await run(r);
const rounds: number[] = [];
for (let r = 3; r < 13; r++) {
  const a = process.cpuUsage();
  await run(r);
  const b = process.cpuUsage(a);
  rounds.push(((b.user + b.system) / turns));
}
rounds.sort((x, y) => x - y);
console.log(`µs per turn (4 events), median of 10: ${rounds[5]!.toFixed(2)} (min ${rounds[0]!.toFixed(2)})${page ? ' with a page' : ''}`);
page?.kill();
await inspect.close();
