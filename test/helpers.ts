import { afterEach } from 'vitest';
import { z } from 'zod';
import { tool } from 'tool-runner';
import { type MockServer, type MockServerOptions, type RecordedRequest, createMockServer } from 'tool-runner/testing';

const open: MockServer[] = [];

/** A mock server closed after the test. */
export async function mockServer(options: MockServerOptions | MockServerOptions['steps']): Promise<MockServer> {
  const server = await createMockServer(Array.isArray(options) ? { steps: options } : options);
  open.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});

export const baseParams = {
  model: 'claude-sonnet-5-5',
  max_tokens: 1024,
  messages: [{ role: 'user' as const, content: 'Weather in Paris?' }],
};

export function weatherTool(calls: string[] = []) {
  return tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    inputSchema: z.object({ location: z.string(), unit: z.enum(['celsius', 'fahrenheit']).default('celsius') }),
    run: async ({ location, unit }) => {
      calls.push(location);
      return JSON.stringify({ location, unit, temperature: 21 });
    },
  });
}

/** A logger that keeps every line, by level. */
export function captureLogger() {
  const lines: Array<{ level: string; message: string }> = [];
  const show = (value: unknown) => {
    if (typeof value === 'string') return value;
    try {
      return JSON.stringify(value, (_key, inner) => (inner instanceof Headers ? Object.fromEntries(inner) : inner));
    } catch {
      return String(value);
    }
  };
  // Every argument in full, objects as JSON, so a test sees all that a logger would print.
  const at = (level: string) => (message: string, ...rest: unknown[]) =>
    lines.push({ level, message: [message, ...rest.map(show)].join(' ') });
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A recorded request as the JSON it is, for tests that read deep into what was sent. The testing
 * kit types requests (see `toolResults` for the usual read); these tests check the wire as it is.
 */
export function wire(request: RecordedRequest): { body: any; messages: any[] } {
  return request as unknown as { body: any; messages: any[] };
}

/** What the process emitted as `event` while `body` ran, and in the `settleMs` after it (Node emits both on a later tick). */
async function processEventsDuring(event: 'warning' | 'unhandledRejection', settleMs: number, body: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const record = (value: unknown) => seen.push(value);
  process.on(event, record);
  try {
    await body();
    await sleep(settleMs);
  } finally {
    process.off(event, record);
  }
  return seen;
}

/** The names of the process warnings (`MaxListenersExceededWarning`, say) emitted while `body` runs, and just after it. */
export async function warningsDuring(body: () => Promise<void>): Promise<string[]> {
  return (await processEventsDuring('warning', 10, body)).map((warning) => (warning as Error).name);
}

/** Runs `body`, then waits a little: the unhandled rejections seen meanwhile (a Node process ends on one). */
export function unhandledDuring(body: () => Promise<void>): Promise<unknown[]> {
  return processEventsDuring('unhandledRejection', 50, body);
}
