/**
 * The work one loop does per turn of the long scenario over a thread, counted rather than timed (a busy machine moves CPU
 * time by ±20%, not these): `JSON.stringify` calls and the characters they made, promises made (`async_hooks`), timers,
 * writes to the inspector's page and their bytes, and the bytes allocated per turn (a sampling heap profile that keeps
 * what minor and major collections took), by area and, with `top`, by function. In this process, after three warm-up runs.
 * Usage: node --expose-gc --import tsx bench/work-per-turn.ts [loop=tool-runner] [turns=300] [top=0] [filter]
 *   e.g. 'tool-runner + inspector' (its page open in Chromium, as bench/inspected.ts opens it), 0 20 src/inspect
 */
import { createHook } from 'node:async_hooks';
import { ServerResponse } from 'node:http';
import { Session } from 'node:inspector/promises';
import Anthropic from '@anthropic-ai/sdk';
import { startServer } from './server-process.js';
import { targetByName } from './target-by-name.js';
import type { Job } from './targets.js';

const [name = 'tool-runner', turnsArg = '300', topArg = '0', filter] = process.argv.slice(2);
const turns = Number(turnsArg);
const top = Number(topArg);
const { url, child } = await startServer(false);
const target = await targetByName(name);
const params = { model: 'bench-model', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'Go.' }] };
function job(): Job {
  const headers = { 'x-bench': JSON.stringify({ kind: 'long', turns }) };
  const client = new Anthropic({ apiKey: 'bench', baseURL: url, maxRetries: 0, timeout: 120_000, defaultHeaders: headers });
  return { client, connection: { baseURL: url, headers, fetch }, params, stream: false, eager: false, tool: { name: 'step', run: ({ n }) => `ok ${n}` }, thread: true };
}

try {
  for (let i = 0; i < 3; i++) await target.run(job());
  // Counted: one run.
  const counts = { stringify: 0, stringifyChars: 0, promises: 0, timers: 0, pageWrites: 0, pageBytes: 0 };
  let counting = false;
  const { stringify } = JSON;
  JSON.stringify = function (this: unknown, ...args: Parameters<typeof stringify>) {
    const json = stringify.apply(this, args);
    if (counting) {
      counts.stringify++;
      counts.stringifyChars += json?.length ?? 0;
    }
    return json;
  } as typeof stringify;
  const { setTimeout: timeout } = globalThis;
  globalThis.setTimeout = ((...args: Parameters<typeof timeout>) => (counting && counts.timers++, timeout(...args))) as typeof timeout;
  const { write } = ServerResponse.prototype;
  ServerResponse.prototype.write = function (this: ServerResponse, chunk: string | Uint8Array, ...rest: unknown[]) {
    if (counting) {
      counts.pageWrites++;
      counts.pageBytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    }
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof write;
  const hook = createHook({ init: (_id, type) => void (counting && type === 'PROMISE' && counts.promises++) }).enable();
  counting = true;
  await target.run(job());
  // The page's batch of the run's last records (they wait up to 50 ms).
  await new Promise((resolve) => timeout(resolve, 150));
  counting = false;
  hook.disable();
  // Put back: what they make is allocated by their callers.
  JSON.stringify = stringify;
  globalThis.setTimeout = timeout;
  ServerResponse.prototype.write = write;
  console.log(`${name}, per turn of ${turns}: ${Object.entries(counts).map(([key, value]) => `${key} ${(value / turns).toFixed(2)}`).join(', ')}`);

  // Allocated: three runs.
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  const runs = 3;
  for (let i = 0; i < runs; i++) await target.run(job());
  const { profile } = await session.post('HeapProfiler.stopSampling');
  type Node = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: Node[] };
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let total = 0;
  const root = new URL('..', import.meta.url).href;
  const walk = (node: Node) => {
    const where = node.callFrame.url.replace(root, '').replace(/^(file:\/\/)?.*node_modules\//, '');
    const area = where.startsWith('src/inspect/') ? 'inspector' : where.startsWith('src/') ? 'runner' : where.startsWith('@anthropic-ai/') ? 'SDK' : where.startsWith('node:') ? 'Node' : where.startsWith('bench/') ? 'bench' : 'other';
    const key = `${node.callFrame.functionName || '(anonymous)'} ${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize);
    byArea.set(area, (byArea.get(area) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head as Node);
  const perTurn = (bytes: number) => bytes / (turns * runs);
  const areas = [...byArea].sort((a, b) => b[1] - a[1]).map(([area, bytes]) => `${area} ${(perTurn(bytes) / 1024).toFixed(2)}`);
  console.log(`allocated per turn: ${(perTurn(total) / 1024).toFixed(2)} KB (${areas.join(', ')})`);
  const rows = [...byFunction].filter(([key]) => !filter || key.includes(filter)).sort((a, b) => b[1] - a[1]);
  for (const [key, bytes] of rows.slice(0, top)) console.log(`${perTurn(bytes).toFixed(0).padStart(7)} B  ${key}`);
} finally {
  child.kill();
}
process.exit(0);
