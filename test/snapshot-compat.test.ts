/**
 * Snapshots an earlier release wrote resume on this one: a user stores `runner.toJSON()` in a database, deploys a new
 * version and resumes. The fixtures (test/fixtures/snapshots-b574096/) were written by the runner at commit b574096, in
 * the states a run is saved in; each is resumed here against the testing kit.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type RunnerSnapshot, agentTool, resumeToolRunner, tool, toolRunner } from 'tool-runner';
import { type ScriptedReply, historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer, wire } from './helpers.js';
import { byAgent, model } from './fixtures/agent-tools.js';

/** The tools the fixtures' runs had, logging each run. */
function tools(log: string[]) {
  const lookup = tool({ name: 'lookup', description: 'Looks up', inputSchema: z.object({ n: z.number() }), run: ({ n }) => (log.push(`lookup ${n}`), `row ${n}`) });
  const slow = tool({ name: 'slow', description: 'Slow', inputSchema: z.object({ n: z.number() }), run: ({ n }) => (log.push(`slow ${n}`), `slow ${n}`) });
  const deploy = tool({ name: 'deploy', description: 'Deploys', inputSchema: z.object({ service: z.string() }), needsApproval: true, run: ({ service }) => (log.push(`deploy ${service}`), `${service} deployed`) });
  const publish = tool({ name: 'publish', description: 'Publishes', inputSchema: z.object({ title: z.string() }), needsApproval: true, run: ({ title }) => (log.push(`publish ${title}`), `published ${title}`) });
  const researcher = agentTool({ name: 'researcher', description: 'Researches', params: ({ task }) => ({ model, max_tokens: 512, system: 'researcher', messages: [{ role: 'user', content: task }], tools: [lookup, publish] }) });
  const lead = agentTool({ name: 'lead', description: 'Leads', params: ({ task }) => ({ model, max_tokens: 512, system: 'lead', messages: [{ role: 'user', content: task }], tools: [researcher] }) });
  return { lookup, slow, deploy, publish, researcher, lead };
}
type Tools = ReturnType<typeof tools>;

const stored = (name: string): RunnerSnapshot => JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures/snapshots-b574096', `${name}.json`), 'utf8'));
const done = (): ScriptedReply[] => [{ content: [text('done')] }];

interface Case {
  /** What the run was doing when its snapshot was taken. */
  state: string;
  file: string;
  tools: (t: Tools) => unknown[];
  options?: Record<string, unknown>;
  steps: () => Parameters<typeof mockServer>[0];
  /** Approve every call waiting. */
  approve?: true;
  /** The tools the resumed run runs (none of those that had finished). */
  ran: string[];
  answer: string;
  /** The results the last request sends, in order. */
  results?: string[];
}

const cases: Case[] = [
  { state: 'stopped for approval, a neighbour finished', file: 'approval-plain', tools: (t) => [t.lookup, t.deploy], steps: done, approve: true, ran: ['deploy billing'], answer: 'done', results: ['row 1', 'billing deployed'] },
  { state: "stopped for approval inside a sub-agent", file: 'approval-subagent', tools: (t) => [t.researcher], steps: () => byAgent({ researcher: [{ content: [text('report')] }], parent: done() }), approve: true, ran: ['publish Otters'], answer: 'done', results: ['report'] },
  { state: 'stopped for approval three levels down', file: 'approval-3levels', tools: (t) => [t.lead], steps: () => byAgent({ researcher: [{ content: [text('report')] }], lead: [{ content: [text('lead report')] }], parent: done() }), approve: true, ran: ['publish Sleep'], answer: 'done', results: ['lead report'] },
  { state: 'asking the approver (a decision not given)', file: 'approval-approver-pending', tools: (t) => [t.deploy, t.lookup], steps: done, approve: true, ran: ['deploy x'], answer: 'done', results: ['x deployed', 'row 4'] },
  { state: 'in the loop body, a reply with calls', file: 'loop-body-calls', tools: (t) => [t.lookup], steps: done, ran: ['lookup 1', 'lookup 2'], answer: 'done', results: ['row 1', 'row 2'] },
  { state: 'stopped by the budget', file: 'stop-budget', tools: (t) => [t.lookup], options: { budget: { maxToolCalls: 1 } }, steps: done, ran: [], answer: 'done' },
  { state: 'stopped by the loop guard', file: 'stop-loopGuard', tools: (t) => [t.lookup], options: { loopGuard: { maxRepeats: 1 } }, steps: done, ran: [], answer: 'done' },
  { state: 'ended with typed output', file: 'output-ended', tools: (t) => [t.lookup], options: { output: z.object({ answer: z.string() }) }, steps: () => [], ran: [], answer: '{"answer":"42"}' },
  { state: 'just compacted (client side)', file: 'compaction-just', tools: (t) => [t.lookup], steps: done, ran: ['lookup 2'], answer: 'done', results: ['row 2'] },
  { state: 'finished', file: 'finished', tools: (t) => [t.lookup], steps: () => [], ran: [], answer: 'all done' },
  { state: 'mid-stream, a call running early (runToolsEagerly)', file: 'eager-mid-stream', tools: (t) => [t.lookup, t.slow], steps: () => [{ content: [toolUse('lookup', { n: 1 }), toolUse('slow', { n: 2 })] }, ...done()], ran: ['lookup 1', 'slow 2'], answer: 'done', results: ['row 1', 'slow 2'] },
  // A message pushed while the calls ran: that release placed it after their reply (no `late`); their results are in the
  // snapshot, and the calls are answered with them, not as never run (the model would call them again).
  { state: 'in onToolResult, a message pushed while the calls ran', file: 'pushed-await-calls', tools: (t) => [t.lookup, t.slow], steps: done, ran: [], answer: 'done', results: ['row 1', 'slow 2'] },
  { state: 'in the loop body after it set the history and ran the calls', file: 'body-control', tools: (t) => [t.lookup], steps: done, ran: [], answer: 'done', results: ['row 1'] },
];

describe('snapshots an earlier release (b574096) wrote', () => {
  for (const c of cases) it(`resume: ${c.state}`, async () => {
    const server = await mockServer(c.steps());
    const log: string[] = [];
    const resumed = resumeToolRunner(server.client(), stored(c.file), { tools: c.tools(tools(log)) as never, ...(c.options && { options: c.options }) });
    if (c.approve) {
      expect(resumed.pendingApprovals).not.toEqual([]);
      for (const call of resumed.pendingApprovals) resumed.approve(call.id);
    }
    const final = await resumed;
    expect(final.content.map((block) => (block.type === 'text' ? block.text : block.type)).join('')).toBe(c.answer);
    expect(log).toEqual(c.ran);
    expect(historyProblems(resumed.params.messages)).toEqual([]);
    // Every request the server took whole (a thread it no longer holds is answered thread_not_found, and sent again whole).
    for (const request of server.requests.filter((sent) => wire(sent).body.thread?.type !== 'continue')) expect(historyProblems(request.messages)).toEqual([]);
    if (c.results) {
      const parent = server.requests.filter((sent) => wire(sent).body.system === undefined && wire(sent).body.thread?.type !== 'continue').at(-1)!;
      const answered = parent.messages.flatMap((message) => (Array.isArray(message.content) ? message.content : [])).filter((block) => block.type === 'tool_result');
      expect(answered.slice(-c.results.length).map((block) => (block as { content: unknown }).content)).toEqual(c.results);
    }
    server.assertComplete();
  });
});

describe('a snapshot taken in a loop body that set the history', () => {
  it('and ran the calls with generateToolResponse(): resumed, it answers them with their results, not as never run', async () => {
    const server = await mockServer([{ content: [toolUse('lookup', { n: 1 })] }]);
    const log: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [tools(log).lookup] });
    let saved: RunnerSnapshot | undefined;
    for await (const message of runner) {
      runner.pushMessages({ role: 'assistant', content: message.content }, { role: 'user', content: 'And Berlin?' });
      await runner.generateToolResponse();
      saved = JSON.parse(JSON.stringify(runner.toJSON()));
      break;
    }
    expect(log).toEqual(['lookup 1']);
    const again = await mockServer(done());
    const resumed = resumeToolRunner(again.client(), saved!, { tools: [tools(log).lookup] });
    await resumed;
    expect(log).toEqual(['lookup 1']);
    const sent = again.requests.at(-1)!.messages as any[];
    expect(sent.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'user']);
    expect(sent[2].content).toEqual([expect.objectContaining({ type: 'tool_result', content: 'row 1' })]);
    expect(sent[2].content[0].is_error).toBeUndefined();
    expect(sent[3].content).toBe('And Berlin?');
  });
});
