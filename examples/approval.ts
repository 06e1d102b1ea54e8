/**
 * Approval (human in the loop) without a manual loop: tools marked `needsApproval` wait for a
 * decision. Here the run stops with `pendingApprovals`; a person decides; the run goes on.
 */
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const refund = tool({
  name: 'refund',
  description: 'Refunds an order',
  inputSchema: z.object({ order: z.string(), amount: z.number() }),
  needsApproval: ({ amount }) => amount > 50, // small refunds go through
  run: ({ order, amount }) => `refunded ${amount} EUR on ${order}`,
});

const { client, model, close } = await exampleClient([
  { content: [toolUse('refund', { order: 'A-1', amount: 20 }), toolUse('refund', { order: 'B-2', amount: 400 })] },
  { content: [text('A-1 was refunded; the B-2 refund was declined by a supervisor.')] },
]);

const runner = toolRunner(client, {
  model,
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Refund A-1 (20 EUR) and B-2 (400 EUR).' }],
  tools: [refund],
});

await runner; // runs what needs no approval, then stops
for (const call of runner.pendingApprovals) {
  console.log(`waiting for approval: ${call.name} ${JSON.stringify(call.input)}`);
  runner.deny(call.id, 'refunds over 50 EUR need a supervisor'); // or runner.approve(call.id, { input })
}
const final = await runner; // goes on with the decisions
console.log(`answer: ${textOf(final)}`);

// Or decide inline, without stopping: options.approve is asked for each call that needs it.
// toolRunner(client, params, { approve: async (call) => ({ decision: 'allow' }) });
await close();
