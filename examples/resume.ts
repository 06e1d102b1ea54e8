/**
 * Pause and resume: `runner.toJSON()` is a JSON snapshot; `resumeToolRunner` continues it — here
 * a run stopped for approval, saved to a string as it would be to a database, resumed later.
 */
import { z } from 'zod';
import { resumeToolRunner, textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const deploy = tool({
  name: 'deploy',
  description: 'Deploys a service',
  inputSchema: z.object({ service: z.string() }),
  needsApproval: true,
  run: ({ service }) => `${service} deployed`,
});

const { client, model, close } = await exampleClient([
  { content: [toolUse('deploy', { service: 'billing' })] },
  { content: [text('billing is live.')] },
]);

const runner = toolRunner(client, {
  model,
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Deploy billing.' }],
  tools: [deploy],
});
await runner;
const saved = JSON.stringify(runner.toJSON()); // store it anywhere
console.log(`saved a snapshot of ${saved.length} bytes, waiting for: ${runner.pendingApprovals.map((c) => c.name).join(', ')}`);

// Later, perhaps in another process: supply the tools again by name, decide, go on.
const resumed = resumeToolRunner(client, JSON.parse(saved), { tools: [deploy] });
for (const call of resumed.pendingApprovals) resumed.approve(call.id);
const final = await resumed;
console.log(`answer: ${textOf(final)} (${resumed.iteration} requests in all)`);
await close();
