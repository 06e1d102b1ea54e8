/**
 * Agents as tools, CPU per turn: 100 parent turns, each calling a sub-agent of 3 turns (two tool
 * turns and an answer), every turn counted (401 requests), run by `agentTool` and by a hand-written
 * nested loop on the same client. The model is an in-process `fetch` that answers at once with
 * canned JSON (the same for both), so the figure is the loops' own CPU, not a server's. Alternating
 * rounds; the median ratio is printed.
 * With `runs` as the third argument it compares 100 runs of the 3-turn sub-agent alone (this
 * runner, no agentTool) with the hand-written 3-turn loop: the share of the runner's own per-run cost.
 * Usage: node --import tsx bench/agents.ts [rounds=15] [parentTurns=100] [nested|runs]
 */
import Anthropic from '@anthropic-ai/sdk';
import type { BetaContentBlockParam, BetaMessage, BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { z } from 'zod';
import { agentTool, tool, toolRunner } from '../src/index.js';

const rounds = Number(process.argv[2] ?? 15);
const parentTurns = Number(process.argv[3] ?? 100);
const SUB_TURNS = 3;
const model = 'bench-model';

let counter = 0;
function reply(content: unknown[], stop: 'tool_use' | 'end_turn'): Response {
  const message = {
    id: `msg_${counter++}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
  return new Response(JSON.stringify(message), { status: 200, headers: { 'content-type': 'application/json', 'request-id': 'req_bench' } });
}

/** The model: the parent calls the agent each turn until its last; the sub-agent calls `lookup` twice, then answers. */
const fakeFetch = async (_input: unknown, init?: RequestInit): Promise<Response> => {
  const body = JSON.parse(String(init?.body)) as { system?: string; messages: unknown[] };
  const turn = (body.messages.length - 1) / 2;
  if (body.system === 'sub') {
    if (turn < SUB_TURNS - 1) return reply([{ type: 'tool_use', id: `toolu_${counter}`, name: 'lookup', input: { n: turn } }], 'tool_use');
    return reply([{ type: 'text', text: 'sub answer' }], 'end_turn');
  }
  if (turn < parentTurns) return reply([{ type: 'tool_use', id: `toolu_${counter}`, name: 'helper', input: { task: `task ${turn}` } }], 'tool_use');
  return reply([{ type: 'text', text: 'done' }], 'end_turn');
};

const client = new Anthropic({ apiKey: 'bench', baseURL: 'http://bench.invalid', maxRetries: 0, fetch: fakeFetch as typeof fetch });
const lookupRun = ({ n }: { n: number }) => `value ${n}`;

// This runner: the sub-agent is an agentTool.
const lookup = tool({ name: 'lookup', description: 'Looks up', inputSchema: z.object({ n: z.number() }), run: lookupRun });
const helper = agentTool({
  name: 'helper',
  description: 'A helper agent',
  params: ({ task }) => ({ model, max_tokens: 256, thread: false, system: 'sub', messages: [{ role: 'user', content: task }], tools: [lookup] }),
});
async function withAgentTool(): Promise<BetaMessage> {
  return toolRunner(client, { model, max_tokens: 256, thread: false, messages: [{ role: 'user', content: 'Go.' }], tools: [helper] });
}

// The hand-written nested loop: the same requests, tools validated with the same zod schemas.
const lookupSchema = z.object({ n: z.number() });
const helperSchema = z.object({ task: z.string() });
const lookupDefinition = { name: 'lookup', description: 'Looks up', input_schema: z.toJSONSchema(lookupSchema) as { type: 'object' } };
const helperDefinition = { name: 'helper', description: 'A helper agent', input_schema: z.toJSONSchema(helperSchema) as { type: 'object' } };

async function loop(system: string | undefined, first: string, tools: unknown[], run: (name: string, input: unknown) => Promise<string>): Promise<BetaMessage> {
  const messages: BetaMessageParam[] = [{ role: 'user', content: first }];
  for (;;) {
    const message = await client.beta.messages.create({ model, max_tokens: 256, ...(system && { system }), messages, tools: tools as never });
    messages.push({ role: 'assistant', content: message.content as BetaContentBlockParam[] });
    const uses = message.content.filter((block) => block.type === 'tool_use');
    if (message.stop_reason !== 'tool_use' || uses.length === 0) return message;
    const results = await Promise.all(uses.map(async (use) => ({ type: 'tool_result' as const, tool_use_id: use.id, content: await run(use.name, use.input) })));
    messages.push({ role: 'user', content: results });
  }
}
const textOfMessage = (message: BetaMessage) => message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
async function handWritten(): Promise<BetaMessage> {
  return loop(undefined, 'Go.', [helperDefinition], async (_name, input) => {
    const { task } = helperSchema.parse(input);
    const final = await loop('sub', task, [lookupDefinition], async (_inner, innerInput) => lookupRun(lookupSchema.parse(innerInput)));
    return textOfMessage(final);
  });
}

async function cpuMs(run: () => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const runsOnly = process.argv[4] === 'runs';
async function subRuns(): Promise<void> {
  for (let i = 0; i < parentTurns; i++) await toolRunner(client, { model, max_tokens: 256, thread: false, system: 'sub', messages: [{ role: 'user', content: `task ${i}` }], tools: [lookup] });
}
async function handWrittenSubRuns(): Promise<void> {
  for (let i = 0; i < parentTurns; i++) await loop('sub', `task ${i}`, [lookupDefinition], async (_inner, innerInput) => lookupRun(lookupSchema.parse(innerInput)));
}
const ours_ = runsOnly ? subRuns : withAgentTool;
const theirs_ = runsOnly ? handWrittenSubRuns : handWritten;
const turns = runsOnly ? parentTurns * SUB_TURNS : parentTurns + 1 + parentTurns * SUB_TURNS;
for (let i = 0; i < 3; i++) {
  await ours_();
  await theirs_();
}
const ratios: number[] = [];
const ours: number[] = [];
const theirs: number[] = [];
for (let round = 0; round < rounds; round++) {
  const first = round % 2 === 0;
  const a = first ? await cpuMs(ours_) : 0;
  const b = await cpuMs(theirs_);
  const c = first ? a : await cpuMs(ours_);
  ours.push(c / turns);
  theirs.push(b / turns);
  ratios.push(c / b);
}
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
console.log(
  `${runsOnly ? `${parentTurns} runs of ${SUB_TURNS} turns, no agentTool` : `${parentTurns} parent turns × a ${SUB_TURNS}-turn sub-agent`} (${turns} turns): ${runsOnly ? 'tool-runner' : 'agentTool'} ${median(ours).toFixed(3)} ms, ${runsOnly ? 'hand-written loop' : 'hand-written nested loop'} ${median(theirs).toFixed(3)} ms CPU per turn; ratio median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}) over ${rounds} rounds`,
);
