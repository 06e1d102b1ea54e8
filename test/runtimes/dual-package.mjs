/**
 * Node's dual-package hazard: a program whose `agentTool` comes from the ESM build and whose runner
 * comes from the CommonJS build (as when a CommonJS dependency makes the runner) holds two copies of
 * the package. The sub-agent must still get the parent's client, and its approval must still stop
 * the parent. Prints what it saw as one JSON line.
 */
import { createRequire } from 'node:module';
import { agentTool, tool } from 'tool-runner';
import { createMockServer, text, toolUse } from 'tool-runner/testing';

const { toolRunner } = createRequire(import.meta.url)('tool-runner');

const server = await createMockServer({
  steps: [
    { content: [toolUse('helper', { task: 'refund order 7' }, 'toolu_helper')] },
    { content: [toolUse('refund', { order: '7' }, 'toolu_refund')] },
    { content: [text('refunded 7')] },
    { content: [text('done')] },
  ],
});
const refund = tool({
  name: 'refund',
  inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
  needsApproval: true,
  run: ({ order }) => `refunded ${order}`,
});
// No client of its own: it runs on the parent's, which only the parent's runner can lend it.
const helper = agentTool({
  name: 'helper',
  description: 'Does a task',
  params: ({ task }) => ({ model: 'claude-sonnet-5-5', max_tokens: 100, messages: [{ role: 'user', content: task }], tools: [refund] }),
});
const runner = toolRunner(server.client(), { model: 'claude-sonnet-5-5', max_tokens: 100, messages: [{ role: 'user', content: 'go' }], tools: [helper] });
await runner;
const stopped = runner.stoppedBy;
const pending = runner.pendingApprovals.map((call) => ({ id: call.id, name: call.name, path: call.path }));
for (const call of runner.pendingApprovals) runner.approve(call.id);
const final = await runner;
console.log(JSON.stringify({ stopped, pending, final: final.content.map((block) => block.text).join(''), requests: server.requests.length }));
await server.close();
