/** The built package (npm test builds it first) loads as ESM and CJS through its exports map. */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { builtinModules } from 'node:module';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('the built package', () => {
  it('loads with import and require, with the same named exports', async () => {
    const script = (kind: 'esm' | 'cjs') =>
      kind === 'esm'
        ? `const m = await import('tool-runner'); const t = await import('tool-runner/testing'); console.log(JSON.stringify([Object.keys(m).sort(), Object.keys(t).sort()]))`
        : `const m = require('tool-runner'); const t = require('tool-runner/testing'); console.log(JSON.stringify([Object.keys(m).sort(), Object.keys(t).sort()]))`;
    const esm = await run(process.execPath, ['--input-type=module', '-e', script('esm')]);
    const cjs = await run(process.execPath, ['-e', script('cjs')]);
    const [core, testing] = JSON.parse(esm.stdout) as [string[], string[]];
    expect(core).toEqual(expect.arrayContaining(['ToolError', 'ToolRunner', 'tool', 'toolRunner']));
    expect(testing).toEqual(expect.arrayContaining(['createMockServer', 'text', 'toolUse', 'serverToolUse', 'thinking']));
    expect(JSON.parse(cjs.stdout)).toEqual([core, testing]);
  });

  it('a project that is not strict compiles tool() and agentTool() with zod and JSON Schema input', async () => {
    // json-schema-to-ts needs strict mode: without it, inference was "excessively deep" for every tool() (zod ones too).
    const tsc = 'node_modules/typescript/bin/tsc';
    const { stdout } = await run(process.execPath, [tsc, '-p', 'test/fixtures/loose/tsconfig.json']).catch((error: { stdout: string }) => error);
    expect(stdout).toBe('');
  }, 60_000);

  it("a library's declarations name the runner's types through the package's entries (runner.params' too), never a chunk of dist", async () => {
    const out = mkdtempSync(join(tmpdir(), 'tool-runner-declarations-'));
    const tsc = 'node_modules/typescript/bin/tsc';
    const flags = ['--declaration', '--emitDeclarationOnly', '--outDir', out, '--rootDir', 'test/fixtures/declarations', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', '--types', 'node'];
    // `paramsOf(run) { return run.params }` was TS2742: "cannot be named without a reference to './dist/surface-….js'".
    const { stdout } = await run(process.execPath, [tsc, ...flags, 'test/fixtures/declarations/library.ts']).catch((error: { stdout: string }) => error);
    expect(stdout).toBe('');
    const emitted = readFileSync(join(out, 'library.d.ts'), 'utf8');
    expect(emitted).toContain('export declare function paramsOf');
    expect(emitted).not.toMatch(/dist\//);
  }, 60_000);

  it('the mcp, otel and dbos subpaths load, and import their optional peers only there', async () => {
    const esm = await run(process.execPath, [
      '--input-type=module',
      '-e',
      `const m = await import('tool-runner/mcp'); const o = await import('tool-runner/otel'); const d = await import('tool-runner/dbos'); console.log(JSON.stringify([Object.keys(m), Object.keys(o), Object.keys(d).sort()]))`,
    ]);
    expect(JSON.parse(esm.stdout)).toEqual([expect.arrayContaining(['mcpToolset', 'McpToolset']), ['openTelemetry'], ['durableApprovals', 'durableToolRunner']]);
    const core = readFileSync('dist/index.js', 'utf8');
    expect(core).not.toMatch(/@opentelemetry|@modelcontextprotocol|@dbos-inc/);
    expect(readFileSync('dist/dbos/index.js', 'utf8')).toMatch(/from "@dbos-inc\/dbos-sdk"/);
    expect(readFileSync('dist/mcp/index.js', 'utf8')).toMatch(/from "@modelcontextprotocol\/sdk\/types.js"/);
    expect(readFileSync('dist/otel/index.js', 'utf8')).toMatch(/from "@opentelemetry\/api"/);
  });

  it("toolsets of the ESM and the CommonJS build on one MCP client share one handler: no listing without a change, each hears of one", async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/fixtures/mcp-two-copies.ts'], { timeout: 30_000 });
    expect(JSON.parse(stdout)).toEqual({ idle: 0, heard: [true, true] });
  }, 40_000);

  it("a tool() of the CommonJS build run by the ESM build's runner: what its schema's own code throws is the model's answer there too", async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/fixtures/two-copies-refine.ts'], { timeout: 30_000 });
    expect(JSON.parse(stdout)).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'No user "bob"; ask for another name.' });
  }, 40_000);

  it('the inspect subpath loads with import and require, needs no other package, and the bin serves a recorded file', async () => {
    const esm = await run(process.execPath, ['--input-type=module', '-e', `const i = await import('tool-runner/inspect'); console.log(JSON.stringify(Object.keys(i).sort()))`]);
    const cjs = await run(process.execPath, ['-e', `console.log(JSON.stringify(Object.keys(require('tool-runner/inspect')).sort()))`]);
    expect(JSON.parse(esm.stdout)).toEqual(['inspectRecording', 'inspector']);
    expect(JSON.parse(cjs.stdout)).toEqual(['inspectRecording', 'inspector']);
    expect(packagesImportedBy('dist/inspect/index.js').filter((name) => !builtinModules.includes(name.replace(/^node:/, '')))).toEqual([]);
    const { bin } = JSON.parse(readFileSync('package.json', 'utf8')) as { bin: Record<string, string> };
    expect(readFileSync(bin['tool-runner']!, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    const help = await run(process.execPath, [bin['tool-runner']!, '--help']);
    expect(help.stdout).toMatch(/^Usage: tool-runner inspect FILE/);
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect((await run(process.execPath, [bin['tool-runner']!, '--version'])).stdout).toBe(`${version}\n`);
    const file = join(mkdtempSync(join(tmpdir(), 'tool-runner-bin-')), 'runs.jsonl');
    writeFileSync(file, `${JSON.stringify({ run: 'r-1', time: 1, type: 'run.start', model: 'm' })}\n`);
    const child = spawn(process.execPath, [bin['tool-runner']!, 'inspect', file], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const url = await new Promise<string>((resolve) => child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
      expect((await fetch(url)).status).toBe(200);
      expect((await fetch(url.replace(/\?token=.*/, ''))).status).toBe(403);
    } finally {
      child.kill();
    }
  });

  it("bundled as Vite does for a page (node: modules stubbed empty, null exports skipped), the testing kit and the inspector (live or over a recorded file) say they need Node", async () => {
    const { build } = await import('esbuild');
    const dir = mkdtempSync(join(tmpdir(), 'tool-runner-page-'));
    const entry = join(dir, 'page.mjs');
    // The files the `import` condition names, where such a bundler lands after skipping the `null` ones.
    const dist = (subpath: string) => JSON.stringify(join(process.cwd(), 'dist', subpath, 'index.js'));
    writeFileSync(entry, `import { createMockServer } from ${dist('testing')};\nimport { inspector, inspectRecording } from ${dist('inspect')};\nexport { createMockServer, inspector, inspectRecording };\n`);
    const stubbed = { name: 'stub-node', setup: (b: { onResolve: Function; onLoad: Function }) => {
      b.onResolve({ filter: new RegExp(`^(node:)?(${builtinModules.join('|')})$`) }, (args: { path: string }) => ({ path: args.path, namespace: 'stub' }));
      b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
    } };
    const outfile = join(dir, 'page.bundle.mjs');
    await build({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'neutral', outfile, conditions: ['import'], plugins: [stubbed as never], logLevel: 'error', mainFields: ['module', 'main'] });
    // Loaded where a page's globals are, without Node's (`Buffer`, `process`, …): in this process the bundle would find them.
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', onPage(`
      const page = await import(${JSON.stringify(outfile)});
      const failed = async (start) => { try { await start(); return 'started'; } catch (error) { return error.message; } };
      log(JSON.stringify([await failed(() => page.createMockServer({ steps: [] })), await failed(() => page.inspector()), await failed(() => page.inspectRecording('runs.jsonl'))]));`)]);
    const [testing, inspect, recorded] = JSON.parse(stdout) as [string, string, string];
    // The inspector's module made a Buffer as it loaded: "Buffer is not defined" ended the page's script before any call.
    expect(testing).toMatch(/^tool-runner\/testing needs Node, Bun or Deno: it starts an HTTP server/);
    expect(inspect).toMatch(/^tool-runner\/inspect needs Node, Bun or Deno/);
    // It was "Buffer is not defined", from the reader of the file it made first.
    expect(recorded).toMatch(/^tool-runner\/inspect needs Node, Bun or Deno/);
  });

  it("bundled as Vite does for a page, the testing kit's block builders work: only the server needs Node", async () => {
    const { build } = await import('esbuild');
    const dir = mkdtempSync(join(tmpdir(), 'tool-runner-page-'));
    const entry = join(dir, 'page.mjs');
    writeFileSync(entry, `export { apiId, serverToolUse, toolUse } from ${JSON.stringify(join(process.cwd(), 'dist', 'testing', 'index.js'))};\n`);
    const stubbed = { name: 'stub-node', setup: (b: { onResolve: Function; onLoad: Function }) => {
      b.onResolve({ filter: new RegExp(`^(node:)?(${builtinModules.join('|')})$`) }, (args: { path: string }) => ({ path: args.path, namespace: 'stub' }));
      b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
    } };
    const outfile = join(dir, 'page.bundle.mjs');
    await build({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'neutral', outfile, conditions: ['import'], plugins: [stubbed as never], logLevel: 'error', external: ['@anthropic-ai/sdk', 'zod'] });
    const page = (await import(outfile)) as { apiId: (prefix: string) => string; toolUse: (name: string, input: unknown) => { id: string }; serverToolUse: (name: string, input: unknown) => { id: string } };
    // They made their ids with node:crypto's randomBytes: "(0, import_crypto.randomBytes) is not a function" in a page.
    expect(page.toolUse('add', { a: 1 }).id).toMatch(/^toolu_01[0-9A-Za-z]{22}$/);
    expect(page.serverToolUse('web_search', { query: 'x' }).id).toMatch(/^srvtoolu_01[0-9A-Za-z]{22}$/);
    expect(page.apiId('msg')).toMatch(/^msg_01[0-9A-Za-z]{22}$/);
  });

  it('the core bundle imports neither zod nor the testing kit, nor any node: module', () => {
    expect(packagesImportedBy('dist/index.js')).toEqual([
      '@anthropic-ai/sdk',
      '@anthropic-ai/sdk/lib/BetaMessageStream',
      '@anthropic-ai/sdk/lib/tools/BetaRunnableToolset',
      '@anthropic-ai/sdk/lib/tools/ToolError',
      '@anthropic-ai/sdk/lib/transform-json-schema',
      '@anthropic-ai/sdk/resources/beta/messages/messages',
      '@cfworker/json-schema',
    ]);
  });
});

/** A script for `node -e` that runs `body` as on a page: Node's own globals gone (console.log kept as `log`). */
function onPage(body: string): string {
  return `const log = console.log.bind(console); for (const name of ['Buffer', 'process', 'global', 'setImmediate', 'clearImmediate', 'require']) delete globalThis[name];\n${body}`;
}

/** The packages (and node: modules) a built entry loads, through the chunks it shares with the other entries; sorted. */
function packagesImportedBy(entry: string): string[] {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s[^;]*?from\s*["']([^"']+)["'];?$|^import\s*["']([^"']+)["'];?$/gm)) {
      if (specifier === undefined) continue;
      if (specifier.startsWith('.')) visit(join(dirname(file), specifier));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return [...packages].sort();
}
