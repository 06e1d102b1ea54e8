/** The built package (npm test builds it first) loads as ESM and CJS through its exports map. */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

  it('the core bundle imports neither zod nor the testing kit, nor any node: module', () => {
    const bundle = readFileSync('dist/index.js', 'utf8');
    const imports = [...bundle.matchAll(/^import .* from ['"]([^'"]+)['"];$/gm)].map((match) => match[1]);
    expect([...new Set(imports)].sort()).toEqual([
      '@anthropic-ai/sdk',
      '@anthropic-ai/sdk/lib/BetaMessageStream',
      '@anthropic-ai/sdk/lib/tools/BetaRunnableToolset',
      '@anthropic-ai/sdk/lib/transform-json-schema',
      '@anthropic-ai/sdk/resources/beta/messages/messages',
      '@cfworker/json-schema',
    ]);
  });
});
