/**
 * The client every example runs on: Claude when ANTHROPIC_API_KEY is set (ANTHROPIC_BASE_URL
 * points it at any Messages-compatible server), otherwise the testing kit's local server with a
 * scripted model, so each example runs offline and in the test suite.
 */
import Anthropic from '@anthropic-ai/sdk';
import { type Step, createMockServer } from 'tool-runner/testing';

export interface ExampleClient {
  client: Anthropic;
  model: string;
  offline: boolean;
  close(): Promise<void>;
}

export async function exampleClient(offlineSteps: Step[]): Promise<ExampleClient> {
  const model = process.env['EXAMPLE_MODEL'] ?? 'claude-sonnet-5-5';
  if (process.env['ANTHROPIC_API_KEY']) {
    return { client: new Anthropic(), model, offline: false, close: async () => {} };
  }
  const server = await createMockServer({ steps: offlineSteps });
  console.log(`[offline model] no ANTHROPIC_API_KEY: a scripted model answers on ${server.url}\n`);
  return { client: server.client(), model, offline: true, close: () => server.close() };
}
