/**
 * Taking control of the history: in the loop body, pushMessages / setMessagesParams mean the
 * runner does not append this turn; the next request goes out with exactly your state.
 */
import { textOf, toolRunner } from 'tool-runner';
import { text } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const { client, model, close } = await exampleClient([
  { content: [text('Paris is sunny today.')] },
  { content: [text('Berlin is cloudy, 15°C.')] },
]);

const runner = toolRunner(client, {
  model,
  max_tokens: 512,
  max_iterations: 4, // you own the history now: bound the loop
  messages: [{ role: 'user', content: 'How is the weather in Paris? One sentence.' }],
});

let askedFollowUp = false;
for await (const message of runner) {
  console.log(`assistant: ${textOf(message)}`);
  if (!askedFollowUp) {
    askedFollowUp = true;
    // Keep this turn (append the reply yourself) and inject a follow-up question.
    runner.pushMessages({ role: 'assistant', content: message.content }, { role: 'user', content: 'And Berlin?' });
  }
}
console.log(`history: ${runner.params.messages.map((m) => m.role).join(' → ')}`);
await close();
