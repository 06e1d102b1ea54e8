/**
 * Everywhere the SDK runs (SPEC §9.5): one agent program (test/runtimes/agent.mjs) run by Node, Bun,
 * Deno, workerd and headless Chromium against the testing kit's server on Node. It uses the built
 * package (`npm test` builds first), as a user's program would.
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { toolUse, text, toolResults } from 'tool-runner/testing';
import { mockServer } from './helpers.js';
import { type Runtime, binary, browser, bun, deno, lastLine, node, workerd } from './runtimes/launch.js';

const here = dirname(fileURLToPath(import.meta.url));
const execFileAsync = promisify(execFile);

const script = () => [
  { content: [toolUse('add', { a: 2, b: 3 }, 'toolu_add'), toolUse('lookup', { key: 'sea' }, 'toolu_bad'), toolUse('lookup', { key: 'sky' }, 'toolu_ok')] },
  { content: [text('done')] },
  { content: [toolUse('add', { a: 1, b: 1 }, 'toolu_streamed')] },
  { content: [text('streamed answer')], chunkSize: 4 },
];

const invalidLookup = "Invalid input for tool 'lookup':\n- key: must be one of \"sky\", \"grass\"\nFix the input and call the tool again.";

/** Runtimes that refuse code made from strings: there, the core must not need it. */
const strict = new Set(['workerd', 'chromium']);

describe('the same agent program runs in every runtime the SDK runs in', () => {
  const runtimes: Runtime[] = [node, bun, deno, workerd, browser];
  for (const runtime of runtimes) {
    it(`${runtime.name}: a zod tool, a JSON Schema tool, an invalid call as an is_error result, two turns, a streamed run, clear errors for a bad schema`, async () => {
      const server = await mockServer(script());
      const report = await runtime.run(server.url);
      expect(report).not.toHaveProperty('error');
      expect(report).toMatchObject({
        runtime: runtime.name === 'chromium' ? 'browser' : runtime.name,
        turns: 2,
        results: [
          { id: 'toolu_add', content: '5', is_error: false },
          { id: 'toolu_bad', content: invalidLookup, is_error: true },
          // The JSON Schema's default reached the tool.
          { id: 'toolu_ok', content: 'plain blue', is_error: false },
        ],
        final: 'done',
        streamed: { turns: 2, text: 'streamed answer', result: '2' },
        badSchema: expect.stringMatching(/^TypeError: Tool 'bad': the input schema is not a valid JSON Schema: properties\.n\.type: "numbr" is not a JSON Schema type/),
        badPattern: expect.stringMatching(/^TypeError: Tool 'bad': the input schema is not a valid JSON Schema: properties\.s\.pattern: "\(" is not a valid regular expression/),
      });
      if (strict.has(runtime.name)) expect(report['codeFromStrings']).toMatch(/^refused/);
      // What the server saw: four Messages requests (no preflight among them), the results in the model's order.
      expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual(Array(4).fill('POST /v1/messages'));
      expect(toolResults(server.requests[1]!).map((result) => [result.tool_use_id, result.is_error === true])).toEqual([
        ['toolu_add', false],
        ['toolu_bad', true],
        ['toolu_ok', false],
      ]);
      expect(server.requests[2]!.body.stream).toBe(true);
      server.assertComplete();
    }, 90_000);
  }
});

describe("a tool's timeout measures the tool", () => {
  it('in a cold process, a 5 ms tool under timeoutMs: 50 is not timed out by another call of its message that is the first to use a JSON Schema tool', async () => {
    // The validator is prepared when the tool is defined, never on another call's clock (ajv compiled it lazily, on the first call).
    const { stdout } = await execFileAsync(process.execPath, [join(here, 'runtimes', 'cold-timeout.mjs')], { cwd: join(here, '..') });
    expect(lastLine(stdout)).toEqual([
      { id: 'toolu_nap', content: 'slept 5 ms', is_error: false },
      { id: 'toolu_add', content: '3', is_error: false },
    ]);
  });
});

describe('a program that loads both builds of the package (ESM and CommonJS)', () => {
  it("an agentTool from the ESM build, in a runner from the CommonJS build, gets the parent's client and stops it for approval", async () => {
    const { stdout } = await execFileAsync(process.execPath, [join(here, 'runtimes', 'dual-package.mjs')], { cwd: join(here, '..') });
    expect(lastLine(stdout)).toEqual({
      stopped: 'approval',
      pending: [{ id: 'toolu_refund', name: 'refund', path: ['helper'] }],
      final: 'done',
      requests: 4,
    });
  });
});

describe('a CommonJS program (require), in Node and in Bun', () => {
  const bunBinary = () => binary('bun', [['@oven/bun-linux-x64', 'bin/bun'], ['bun', 'bin/bun.exe']]);
  for (const [name, file] of [['node', () => process.execPath], ['bun', bunBinary]] as const) {
    it(`${name}: an API error keeps the SDK's class (one SDK in the program), and a run resumes after a tool call ran in the process`, async () => {
      const { stdout } = await execFileAsync(file(), [join(here, 'runtimes', 'commonjs.cjs')], { cwd: join(here, '..') });
      expect(lastLine(stdout)).toEqual({ error: 'OverloadedError', apiError: true, final: 'again' });
    });
  }
});

describe("package.json's conditions say where each entry runs", () => {
  const bundleFor = (conditions: string[], specifier: string) =>
    build({
      stdin: { contents: `export * from '${specifier}';`, resolveDir: join(here, 'runtimes'), loader: 'js' },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      conditions,
      external: ['@anthropic-ai/sdk', 'zod'],
      tsconfig: join(here, 'runtimes', 'tsconfig.json'),
      logLevel: 'silent',
    });

  it('a Worker or page bundle gets the core, with no node: module in it', async () => {
    for (const conditions of [['workerd', 'worker', 'browser'], ['browser']]) {
      const { outputFiles } = await bundleFor(conditions, 'tool-runner');
      expect(outputFiles[0]!.text).not.toMatch(/from ["']node:|require\(["']node:/);
    }
  });

  it('the testing kit, the durable runs and the inspector, which need Node, are not exported to a Worker or a page', async () => {
    for (const specifier of ['tool-runner/testing', 'tool-runner/dbos', 'tool-runner/inspect']) {
      const failure = (await bundleFor(['workerd', 'worker', 'browser'], specifier).catch((error: unknown) => error)) as { errors?: Array<{ text: string; notes: Array<{ text: string }> }> };
      expect(failure.errors?.[0]?.text).toBe(`Could not resolve "${specifier}"`);
      expect(failure.errors?.[0]?.notes[0]?.text).toMatch(/cannot be imported from package "tool-runner" because it was explicitly disabled by the package author/);
    }
  });
});
