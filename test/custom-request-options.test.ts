/**
 * The SDK's `RequestOptions` may be extended by declaration merging, to carry context of the caller's
 * own to middleware (`ctx.options`): the SDK passes a key it does not know through. So does this runner
 * when middleware can read it; a near miss of a known option, or a key no middleware can read, is
 * still a clear error at construction.
 */
import type { Middleware } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { agentTool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer, weatherTool } from './helpers.js';

/** Middleware that notes the `tenant` of each request's options. */
function tenantReader(seen: unknown[]): Middleware {
  return (request, next, context) => {
    seen.push((context.options as { tenant?: unknown } | undefined)?.tenant);
    return next(request);
  };
}

const steps = () => [{ content: [toolUse('get_weather', { location: 'Paris' })] }, { content: [text('21°C')] }];

describe('a request option of the caller’s own, at the top level of the options', () => {
  it('reaches middleware given in the options, on every request', async () => {
    const server = await mockServer(steps());
    const seen: unknown[] = [];
    const options = { tenant: 'acme', middleware: [tenantReader(seen)] } as Parameters<typeof toolRunner>[2];
    await toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] }, options);
    expect(seen).toEqual(['acme', 'acme']);
  });

  it("reaches the client's own middleware", async () => {
    const server = await mockServer(steps());
    const seen: unknown[] = [];
    const runner = toolRunner(server.client({ middleware: [tenantReader(seen)] }), { ...baseParams, tools: [weatherTool()] }, { tenant: 'acme' } as never);
    await runner;
    expect(seen).toEqual(['acme', 'acme']);
    expect((runner.requestOptions as { tenant?: unknown }).tenant).toBe('acme');
  });

  it('is a clear error where no middleware could read it, before any request', async () => {
    const server = await mockServer(steps());
    expect(() => toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] }, { tenant: 'acme' } as never)).toThrow(
      /^toolRunner: unknown option 'tenant'; the options are .*\. A request option of your own reaches only middleware, and neither these options nor the client have any$/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it('a near miss of a known option is a mistake even with middleware, and names the option', async () => {
    const server = await mockServer(steps());
    const client = server.client({ middleware: [tenantReader([])] });
    const make = (options: object) => () => toolRunner(client, { ...baseParams, tools: [weatherTool()] }, options as never);
    expect(make({ timeuot: 5 })).toThrow(/unknown option 'timeuot'; .*\. Did you mean 'timeout'\?$/);
    expect(make({ concurency: 2 })).toThrow(/unknown option 'concurency'; .*\. Did you mean 'concurrency'\?$/);
    expect(make({ on_event: () => {} })).toThrow(/unknown option 'on_event'; .*\. Did you mean 'onEvent'\?$/);
    expect(server.requests).toHaveLength(0);
  });

  it('a name of its own that begins with a known option (concurrencyKey, fallbackUrl, loggerTag) reaches middleware: a word added is no other ending of the word', async () => {
    const server = await mockServer(steps());
    const seen: unknown[] = [];
    const reader: Middleware = (request, next, context) => {
      const options = context.options as Record<string, unknown> | undefined;
      seen.push([options?.['concurrencyKey'], options?.['fallbackUrl'], options?.['loggerTag']]);
      return next(request);
    };
    const options = { concurrencyKey: 'tenant-1', fallbackUrl: 'https://backup.example', loggerTag: 'run-7', middleware: [reader] };
    await toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] }, options as never);
    expect(seen).toEqual([['tenant-1', 'https://backup.example', 'run-7'], ['tenant-1', 'https://backup.example', 'run-7']]);
  });

  it("over an SDK thread, toolRunner(thread, settings, options): reaches the thread's client's middleware", async () => {
    const server = await mockServer(steps());
    const seen: unknown[] = [];
    const client = server.client({ middleware: [tenantReader(seen)] });
    const thread = client.beta.messages.thread({ ...baseParams, tools: [weatherTool()] } as never);
    await toolRunner(thread, {}, { tenant: 'acme' } as never);
    expect(seen).toEqual(['acme', 'acme']);
    expect(() => toolRunner(server.client().beta.messages.thread({ ...baseParams } as never), {}, { tenant: 'acme' } as never)).toThrow(/unknown option 'tenant'/);
  });

  it("a sub-agent's options: checked again when it runs, on the client it runs on", async () => {
    const seen: unknown[] = [];
    const server = await mockServer([
      { content: [toolUse('helper', { task: 'go' })] },
      { content: [text('helped')] },
      { content: [text('done')] },
    ]);
    const helper = agentTool({
      name: 'helper',
      description: 'Helps',
      params: ({ task }: { task: string }) => ({ model: baseParams.model, max_tokens: 256, messages: [{ role: 'user' as const, content: task }] }),
      options: { tenant: 'sub' } as never,
    });
    await toolRunner(server.client({ middleware: [tenantReader(seen)] }), { ...baseParams, tools: [helper] });
    expect(seen).toEqual([undefined, 'sub', undefined]);
  });
});
