/**
 * Agents as tools (issue 22), client CPU per turn: a parent of `parentTurns` turns that calls a
 * sub-agent each turn, the sub-agent 3 turns (two `lookup` calls and an answer), every request
 * counted (parentTurns × 4 + 1); run by `agentTool` and by a hand-written nested loop on the SDK's
 * client, over HTTP to the bench's server (bench/server.ts, in a process of its own). As the long
 * scenario: each loop in a Node process of its own (bench/long-worker.ts says why), the two at the
 * same time (bench/paired.ts says why); each round, a warm-up run of the same size (the loop's code
 * at its optimised tier), then the measured run.
 * Usage: node --expose-gc --import tsx bench/agents.ts [rounds=9] [parentTurns=100]
 * As a worker (forked by `agentsScenario`): bench/agents.ts worker <loop name>, with an IPC channel.
 */
import { fork } from 'node:child_process';
import Anthropic from '@anthropic-ai/sdk';
import type { BetaContentBlockParam, BetaMessage, BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { z } from 'zod';
import { agentTool, textOf, tool, toolRunner } from '../src/index.js';
import { cpuMs, median } from './scenarios.js';
import type { Scenario } from './server.js';

const SUB_TURNS = 3;
const model = 'bench-model';
export const AGENT_LOOPS = ['agentTool', 'hand-written nested loop'] as const;
type LoopName = (typeof AGENT_LOOPS)[number];
type Loop = (client: Anthropic, lookup: (n: number) => string) => Promise<BetaMessage>;

const lookupSchema = z.object({ n: z.number() });
const helperSchema = z.object({ task: z.string() });

/** This runner: the sub-agent is an `agentTool`, both levels send the whole history (as the hand-written loop). */
const withAgentTool: Loop = (client, lookupRun) => {
  const lookup = tool({ name: 'lookup', description: 'Looks up', inputSchema: lookupSchema, run: ({ n }) => lookupRun(n) });
  const helper = agentTool({
    name: 'helper',
    description: 'A helper agent',
    params: ({ task }) => ({ model, max_tokens: 256, thread: false, system: 'sub', messages: [{ role: 'user', content: task }], tools: [lookup] }),
  });
  return toolRunner(client, { model, max_tokens: 256, thread: false, messages: [{ role: 'user', content: 'Go.' }], tools: [helper] }).runUntilDone();
};

/** The hand-written nested loop: the same requests, the inputs validated with the same zod schemas. */
const lookupDefinition = { name: 'lookup', description: 'Looks up', input_schema: z.toJSONSchema(lookupSchema) as { type: 'object' } };
const helperDefinition = { name: 'helper', description: 'A helper agent', input_schema: z.toJSONSchema(helperSchema) as { type: 'object' } };
async function loop(client: Anthropic, system: string | undefined, first: string, tools: unknown[], run: (input: unknown) => Promise<string>): Promise<BetaMessage> {
  const messages: BetaMessageParam[] = [{ role: 'user', content: first }];
  for (;;) {
    const message = await client.beta.messages.create({ model, max_tokens: 256, ...(system && { system }), messages, tools: tools as never });
    messages.push({ role: 'assistant', content: message.content as BetaContentBlockParam[] });
    const uses = message.content.filter((block) => block.type === 'tool_use');
    if (message.stop_reason !== 'tool_use' || uses.length === 0) return message;
    const results = await Promise.all(uses.map(async (use) => ({ type: 'tool_result' as const, tool_use_id: use.id, content: await run(use.input) })));
    messages.push({ role: 'user', content: results });
  }
}
const handWritten: Loop = (client, lookupRun) =>
  loop(client, undefined, 'Go.', [helperDefinition], async (input) => {
    const { task } = helperSchema.parse(input);
    return textOf(await loop(client, 'sub', task, [lookupDefinition], async (inner) => lookupRun(lookupSchema.parse(inner).n)));
  });

const loops: Record<LoopName, Loop> = { agentTool: withAgentTool, 'hand-written nested loop': handWritten };

/** One run of `name` against the server at `url`: CPU ms per request; fails unless it made exactly the requests and calls planned. */
async function measureRun(url: string, name: LoopName, parentTurns: number): Promise<number> {
  const scenario: Scenario = { kind: 'agents', parentTurns, subTurns: SUB_TURNS };
  let requests = 0;
  let lookups = 0;
  const counted: typeof fetch = (input, init) => {
    requests++;
    return fetch(input, init);
  };
  const client = new Anthropic({ apiKey: 'bench', baseURL: url, maxRetries: 0, timeout: 120_000, defaultHeaders: { 'x-bench': JSON.stringify(scenario) }, fetch: counted });
  globalThis.gc?.();
  const start = cpuMs();
  const final = await loops[name](client, (n) => (lookups++, `value ${n}`));
  const used = cpuMs() - start;
  const expected = { requests: parentTurns * (SUB_TURNS + 1) + 1, lookups: parentTurns * (SUB_TURNS - 1), text: 'done' };
  const got = { requests, lookups, text: textOf(final) };
  if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`${name} did not run the same agents: ${JSON.stringify(got)}; expected ${JSON.stringify(expected)}`);
  return used / requests;
}

interface AgentsRequest {
  url: string;
  parentTurns: number;
}

/** The loop `name` in a process of its own: each request is a warm-up run, then the measured run. */
function agentsWorker(name: LoopName) {
  const child = fork(new URL(import.meta.url).pathname, ['worker', name], { execArgv: ['--expose-gc', '--import', 'tsx'] });
  return {
    measure: (request: AgentsRequest) =>
      new Promise<number>((resolve, reject) => {
        const exited = (code: number | null) => reject(new Error(`The ${name} worker exited (${code})`));
        child.once('exit', exited);
        child.once('message', (answer: { perTurnMs: number } | { error: string }) => {
          child.off('exit', exited);
          if ('error' in answer) reject(new Error(answer.error));
          else resolve(answer.perTurnMs);
        });
        child.send(request);
      }),
    stop: () => child.connected && child.disconnect(),
  };
}

/** `rounds` rounds of both loops, each in its process, run at the same time: CPU ms per request of each, by round. */
export async function agentsScenario(url: string, rounds: number, parentTurns: number): Promise<Record<LoopName, number[]>> {
  const workers = AGENT_LOOPS.map((name) => ({ name, worker: agentsWorker(name) }));
  const figures = { agentTool: [] as number[], 'hand-written nested loop': [] as number[] };
  try {
    for (let round = 0; round < rounds; round++) {
      // At the same time, as the long scenario's pairs: the two runs share the machine's drift.
      const perTurn = await Promise.all(workers.map(({ worker }) => worker.measure({ url, parentTurns })));
      workers.forEach(({ name }, i) => figures[name].push(perTurn[i]!));
    }
  } finally {
    for (const { worker } of workers) worker.stop();
  }
  return figures;
}

if (process.argv[2] === 'worker') {
  const name = process.argv[3] as LoopName;
  if (!AGENT_LOOPS.includes(name) || !process.send) throw new Error(`Usage: bench/agents.ts worker <${AGENT_LOOPS.join(' | ')}>, with an IPC channel`);
  const send = process.send.bind(process);
  process.on('message', ({ url, parentTurns }: AgentsRequest) => {
    measureRun(url, name, parentTurns)
      .then(() => measureRun(url, name, parentTurns))
      .then(
        (perTurnMs) => send({ perTurnMs }),
        (error: unknown) => send({ error: String((error as Error)?.stack ?? error) }),
      );
  });
  process.on('disconnect', () => process.exit(0));
} else if (process.argv[1] === new URL(import.meta.url).pathname) {
  const { pinToCoreZero, startServer } = await import('./server-process.js');
  const rounds = Number(process.argv[2] ?? 9);
  const parentTurns = Number(process.argv[3] ?? 100);
  const { url, child } = await startServer(pinToCoreZero());
  try {
    const figures = await agentsScenario(url, rounds, parentTurns);
    const ratios = figures.agentTool.map((ms, i) => ms / figures['hand-written nested loop'][i]!);
    console.log(
      `${parentTurns} parent turns × a ${SUB_TURNS}-turn sub-agent (${parentTurns * (SUB_TURNS + 1) + 1} requests), client CPU per request: ` +
        `agentTool ${median(figures.agentTool).toFixed(3)} ms, hand-written nested loop ${median(figures['hand-written nested loop']).toFixed(3)} ms; ` +
        `ratio median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}) over ${rounds} rounds`,
    );
  } finally {
    child.kill('SIGTERM');
  }
}
