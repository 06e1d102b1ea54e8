/**
 * The cost of durability: the same run (N turns of one tool call each) as a plain `toolRunner`
 * and as a durable run on PostgreSQL (`tool-runner/dbos`), interleaved over several rounds; the
 * extra wall time per step (each model request and each tool call is one step).
 * Usage: node --import tsx bench/durable.ts [turns=100] [rounds=5]
 * Starts a private PostgreSQL with its durable defaults (fsync and synchronous commit on), or
 * uses BENCH_DATABASE_URL. Prints one JSON line.
 */
import { randomUUID } from 'node:crypto';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { createDatabase, startPostgres, stopPostgres } from '../scripts/postgres.js';
import { durableToolRunner } from '../src/dbos/index.js';
import { tool, toolRunner } from '../src/index.js';
import { createMockServer, text, toolUse } from '../src/testing/index.js';
import { median } from './scenarios.js';

const turns = Number(process.argv[2] ?? 100);
const rounds = Number(process.argv[3] ?? 5);

const given = process.env['BENCH_DATABASE_URL'] || undefined;
const started = given ? undefined : await startPostgres({ fast: false });
const serverUrl = given ?? started?.url;
if (!serverUrl) {
  console.log(JSON.stringify({ skipped: 'no PostgreSQL binaries (initdb, pg_ctl) on this machine' }));
  process.exit(0);
}
const database = await createDatabase(serverUrl, 'tool_runner_bench');
const databaseUrl = database.url;

const server = await createMockServer({ steps: [] });
const script = () => {
  const steps = Array.from({ length: turns }, (_, i) => ({ content: [toolUse('lookup', { n: i })] }));
  server.setSteps([...steps, { content: [text('done')] }]);
};
const lookup = tool({
  name: 'lookup',
  description: 'Looks a number up',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } as const,
  run: ({ n }) => `value ${n}`,
});
const client = server.client();
const params = { model: 'claude-sonnet-5-5', max_tokens: 256, messages: [{ role: 'user' as const, content: 'Look up every number.' }] };
const agent = durableToolRunner({ name: 'bench', client, tools: [lookup] });
DBOS.setConfig({ name: 'tool-runner-bench', systemDatabaseUrl: databaseUrl, logLevel: 'error' });
await DBOS.launch();

const plainMs: number[] = [];
const durableMs: number[] = [];
for (let round = 0; round < rounds; round++) {
  script();
  let start = performance.now();
  await toolRunner(client, { ...params, tools: [lookup] });
  plainMs.push(performance.now() - start);
  script();
  start = performance.now();
  await agent.run(`bench-${round}-${randomUUID()}`, params);
  durableMs.push(performance.now() - start);
}
await DBOS.shutdown();
await server.close();
await database.drop();
if (started) stopPostgres(started.dir);

// Each turn is a model request and a tool call; the final reply is one more request.
const steps = 2 * turns + 1;
const perStep = plainMs.map((plain, i) => (durableMs[i]! - plain) / steps);
console.log(
  JSON.stringify({
    turns,
    rounds,
    steps,
    plainMsPerTurn: median(plainMs) / (turns + 1),
    durableMsPerTurn: median(durableMs) / (turns + 1),
    extraMsPerStep: perStep,
  }),
);
