/**
 * The runner against the hand-written loop through the real SDK client, with an in-memory
 * `fetch` (no network, no server): CPU per turn of a run over a message thread (1,000 turns unless given), the
 * median of 8 alternating pairs, each run after an unmeasured run of the same loop. It isolates
 * what driving the SDK costs each loop, which the HTTP bench hides in its noise.
 * Usage: node --expose-gc --import tsx bench/sdk-path.ts [turns=1000]
 */
import Anthropic from '@anthropic-ai/sdk';
import { handWritten, ours } from './targets.js';
import { median } from './scenarios.js';
const turns = Number(process.argv[2] ?? 1000);
function fakeClient() {
  const held = new Map<string, number>(); let id = 0;
  return new Anthropic({ apiKey: 'x', baseURL: 'http://fake', maxRetries: 0, fetch: async (_url: any, init: any) => {
    const body = JSON.parse(String(init.body));
    let turn = body.messages.filter((m: any) => m.role === 'assistant').length;
    if (body.thread?.type === 'continue') { turn += held.get(body.thread.previous_message_id) ?? 0; held.delete(body.thread.previous_message_id); }
    const last = turn >= turns - 1;
    const msg = { id: `msg_${++id}`, type: 'message', role: 'assistant', model: 'm', stop_reason: last ? 'end_turn' : 'tool_use', stop_sequence: null, container: null, context_management: null,
      usage: { input_tokens: 10, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      content: last ? [{ type: 'text', text: 'done' }] : [{ type: 'tool_use', id: `toolu_${id}`, name: 'step', input: { n: turn } }] };
    if (body.thread) held.set(msg.id, turn + 1);
    return new Response(JSON.stringify(msg), { headers: { 'content-type': 'application/json', 'request-id': 'req_1' } });
  } });
}
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
async function once(t: typeof ours) {
  const job: any = { client: fakeClient(), params: { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'go' }] }, stream: false, eager: false, thread: true, tool: { name: 'step', run: ({ n }: any) => `ok ${n}` } };
  await t.run({ ...job, client: fakeClient() });
  globalThis.gc?.();
  const s = cpu(); await t.run(job); return (cpu() - s) / turns * 1000;
}
for (const t of [ours, handWritten]) await once(t);
const a: number[] = [], b: number[] = [];
for (let i = 0; i < 8; i++) { a.push(await once(ours)); b.push(await once(handWritten)); }
console.log('CPU µs per turn over a thread: tool-runner', median(a).toFixed(1), 'hand-written', median(b).toFixed(1), 'ratio', (median(a) / median(b)).toFixed(3));
