/**
 * Durable runs (tool-runner/dbos): a worker dies in the middle of a run; a second worker picks the
 * run up from its last finished step. The tool that finished before the crash is not run again;
 * the one that was cut off runs again with the same idempotency key.
 *
 *   DBOS_SYSTEM_DATABASE_URL=postgres://postgres@127.0.0.1:5432/agents npx tsx examples/durable.ts
 *
 * This file is both the parent (which starts two workers, one after the other) and the worker.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { DBOS } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { z } from 'zod';
import { tool } from 'tool-runner';
import { durableToolRunner } from 'tool-runner/dbos';
import { createMockServer, text, toolUse } from 'tool-runner/testing';

const databaseUrl = process.env['DBOS_SYSTEM_DATABASE_URL'] ?? process.env['TOOL_RUNNER_DATABASE_URL'];
if (!databaseUrl) {
  console.log('Set DBOS_SYSTEM_DATABASE_URL to a PostgreSQL database (see the README: "Durable runs").');
  process.exit(0);
}
const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });

// --- the worker: every worker defines the same agent, then launches DBOS ----------------------

/** One row per idempotency key: a retried call updates its row instead of shipping twice. */
async function once(key: string, what: string): Promise<number> {
  const { rows } = await db.query(
    `INSERT INTO example_effects (key, what, runs) VALUES ($1, $2, 1)
     ON CONFLICT (key) DO UPDATE SET runs = example_effects.runs + 1 RETURNING runs`,
    [key, what],
  );
  return rows[0].runs as number;
}

const shipOrder = tool({
  name: 'ship_order',
  description: 'Ships an order',
  inputSchema: z.object({ order: z.string() }),
  run: async ({ order }, { idempotencyKey }) => {
    await once(idempotencyKey, `ship ${order}`);
    return `order ${order} shipped`;
  },
});

const emailCustomer = tool({
  name: 'email_customer',
  description: 'Emails the customer',
  inputSchema: z.object({ order: z.string(), message: z.string() }),
  run: async ({ order }, { idempotencyKey }) => {
    const runs = await once(idempotencyKey, `email about ${order}`);
    // The first worker dies here, as a machine would: no clean-up, no last words.
    if (process.env['CRASH'] && runs === 1) process.kill(process.pid, 'SIGKILL');
    return `customer emailed about ${order}`;
  },
});

const agent = durableToolRunner({
  name: 'shipping-agent',
  client: () => (process.env['MOCK_URL'] ? new Anthropic({ baseURL: process.env['MOCK_URL'], apiKey: 'offline' }) : new Anthropic()),
  tools: [shipOrder, emailCustomer],
});

if (process.env['WORKER']) {
  DBOS.setConfig({ name: 'tool-runner-example', systemDatabaseUrl: databaseUrl, logLevel: 'error' });
  await DBOS.launch(); // recovers the runs a dead worker left pending
  const runId = process.env['RUN_ID'] ?? '';
  const handle = process.env['CRASH']
    ? await agent.start(runId, {
        model: process.env['EXAMPLE_MODEL'] ?? 'claude-sonnet-5-5',
        max_tokens: 1024,
        messages: [{ role: 'user', content: 'Ship order 42, then email the customer that it is on its way.' }],
      })
    : DBOS.retrieveWorkflow<Awaited<ReturnType<typeof agent.run>>>(runId);
  const result = await handle.getResult();
  const answer = result.message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  console.log(`worker ${process.pid}: run ${runId} finished after ${result.iterations} requests: ${answer}`);
  await DBOS.shutdown();
  await db.end();
  process.exit(0);
}

// --- the parent: the model (offline unless ANTHROPIC_API_KEY is set), then two workers ---------

await db.query('CREATE TABLE IF NOT EXISTS example_effects (key text PRIMARY KEY, what text, runs int)');
const server = process.env['ANTHROPIC_API_KEY']
  ? undefined
  : await createMockServer({
      steps: [
        { content: [toolUse('ship_order', { order: '42' })] },
        { content: [toolUse('email_customer', { order: '42', message: 'Your order is on its way.' })] },
        { content: [text('Order 42 is shipped and the customer knows.')] },
      ],
    });
const runId = `order-42-${Date.now()}`;

function worker(env: Record<string, string>): Promise<number | string | null> {
  // This very file, wherever it was copied and whatever the current folder.
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: { ...process.env, WORKER: '1', RUN_ID: runId, ...(server ? { MOCK_URL: server.url } : {}), ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
}

console.log(`worker 1 starts run ${runId}`);
console.log(`worker 1 exited: ${await worker({ CRASH: '1' })}`);
console.log('worker 2 launches DBOS and recovers the run');
const recovered = await worker({});
if (recovered !== 0) {
  console.error(`worker 2 failed (exit ${recovered}): the run was not recovered`);
  process.exitCode = 1;
}
const { rows } = await db.query('SELECT what, runs FROM example_effects WHERE key LIKE $1 ORDER BY what DESC', [`${runId}:%`]);
for (const row of rows) console.log(`side effect "${row.what}": tool ran ${row.runs} time(s)`);
await server?.close();
await db.end();
