/**
 * The same damaged answer to the SDK's runner and to this one: what each run throws, to tell an unclear error of the
 * runner's own from the SDK's words passed on (this runner aims to be at least as clear). One reply, a text and a
 * call, with the fault at `at`; the client's retries off.
 */
import Anthropic from '@anthropic-ai/sdk';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { z } from 'zod';
import { toolRunner } from '../../../src/index.js';
import { text, toolUse } from '../../../src/testing/index.js';
import { describe } from './harness.js';
import { type Fault, damagingServer } from './server.js';

export interface Compared {
  sdk: string;
  ours: string;
}

export async function compareOnFault(fault: Fault, at: number, stream: boolean): Promise<Compared> {
  const run = async (start: (client: Anthropic) => PromiseLike<unknown>) => {
    const server = await damagingServer();
    server.queue.push({ content: [text('Looking.'), toolUse('act', { n: 1 }, 'toolu_1')], stopReason: 'tool_use', fault, at, status: 529, retryAfter: false, stallMs: 300 });
    const client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0, timeout: 200, logLevel: 'off' });
    try {
      await start(client);
      return 'no error';
    } catch (error) {
      return describe(error);
    } finally {
      await server.close();
    }
  };
  const act = betaZodTool({ name: 'act', inputSchema: z.object({ n: z.number() }), run: () => 'done', description: 'acts' });
  const params = { model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user' as const, content: 'go' }], tools: [act], stream, thread: false as const, max_iterations: 1 };
  const signal = AbortSignal.timeout(3_000);
  return {
    sdk: await run((client) => client.beta.messages.toolRunner(params as never, { signal }).runUntilDone()),
    ours: await run((client) => toolRunner(client, params as never, { signal }).runUntilDone()),
  };
}
