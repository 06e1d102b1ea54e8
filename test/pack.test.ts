/**
 * A fresh clone of the committed HEAD packs a working package: `npm pack` builds `dist/` by itself,
 * and a new project that installs the tarball runs an agent from plain ESM and from CommonJS; a
 * project that installs it from a git URL gets a built package too.
 * Slow (clean installs and builds): `npm run test:quick` leaves it out.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/packed/', import.meta.url));
const temp = mkdtempSync(join(tmpdir(), 'tool-runner-pack-'));

async function run(command: string, args: string[], cwd: string, timeout = 120_000) {
  return exec(command, args, { cwd, timeout, maxBuffer: 16 * 1024 * 1024 });
}
const npm = (args: string[], cwd: string, timeout?: number) => run('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund'], cwd, timeout);

// Two clones' node_modules: on a busy machine removing them takes longer than a hook's default 10 s.
afterAll(() => rmSync(temp, { recursive: true, force: true }), 60_000);

/** A fresh clone of this repository's committed HEAD. */
async function cloneHead(name: string) {
  const clone = join(temp, name);
  await run('git', ['clone', '--quiet', '--no-hardlinks', repo, clone], temp);
  const { stdout: head } = await run('git', ['rev-parse', 'HEAD'], repo);
  expect((await run('git', ['rev-parse', 'HEAD'], clone)).stdout).toBe(head);
  return clone;
}

/** A new project, as a user makes one: the package given, the SDK and zod at the versions tested here. */
async function newProject(name: string, toolRunnerSpec: string, installTimeout?: number) {
  const project = join(temp, name);
  const { devDependencies: dev } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name, private: true }));
  await npm(['install', toolRunnerSpec, `@anthropic-ai/sdk@${dev['@anthropic-ai/sdk']}`, `zod@${dev['zod']}`], project, installTimeout);
  for (const file of ['agent.mjs', 'agent.cjs']) copyFileSync(join(fixtures, file), join(project, file));
  return project;
}

const esmAnswer = 'esm answer: Order A-17 ships with TRK-71-A. (2 requests)\n';

describe('a fresh clone packs a working package', () => {
  it('npm pack builds dist/; the tarball installs and runs an agent from ESM and CommonJS', async () => {
    const clone = await cloneHead('clone');
    // Dependencies only (--ignore-scripts skips prepare): the build must come from npm pack itself.
    await npm(['ci', '--ignore-scripts'], clone);
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    await npm(['pack', '--pack-destination', temp], clone);
    const tarball = readdirSync(temp).find((name) => name.endsWith('.tgz'));
    expect(tarball).toBe('tool-runner-0.1.0.tgz');

    const { stdout: listing } = await run('tar', ['-tzf', join(temp, tarball!)], temp);
    const files = listing.split('\n').filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining([
        'package/LICENSE',
        'package/README.md',
        'package/package.json',
        'package/dist/index.js',
        'package/dist/index.cjs',
        'package/dist/index.d.ts',
        'package/dist/testing/index.js',
        'package/dist/testing/index.cjs',
      ]),
    );
    // The README's links point at files inside the package: the docs, the examples and the bench's results.
    expect(files).toEqual(expect.arrayContaining(['package/docs/architecture.md', 'package/examples/demo.ts', 'package/bench/results.md', 'package/bench/chart.svg']));
    expect(files.filter((file) => !/^package\/(dist\/|docs\/|examples\/|bench\/(results\.md|chart\.svg)$|LICENSE$|README\.md$|package\.json$)/.test(file))).toEqual([]);

    const project = await newProject('from-tarball', join(temp, tarball!));
    expect(readFileSync(join(project, 'node_modules/tool-runner/LICENSE'), 'utf8')).toMatch(
      /^MIT License\n\nCopyright \(c\) 2026 tool-runner contributors\n/,
    );
    // One copy of the runner in the ESM build, whatever entries a program imports (`tool-runner/dbos` drives
    // the runner that `agentTool` from `tool-runner` looks into): the entries share chunks. (The CommonJS
    // entries are whole; what they exchange is keyed by registered symbols: test/runtimes.test.ts.)
    const dist = join(project, 'node_modules/tool-runner/dist');
    const runnerCopies = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.js') && readFileSync(join(dist, file), 'utf8').includes('Cannot iterate over a consumed stream'));
    expect(runnerCopies).toHaveLength(1);
    // Classes keep the names they are written with (a stack reads `ReplyError: ...`, not `_ReplyError`).
    const names = "console.log([m.ReplyError, m.ContextOverflowError, m.ToolRunner].map((c) => c.name).join(' '))";
    expect((await run(process.execPath, ['--input-type=module', '-e', `const m = await import('tool-runner'); ${names}`], project)).stdout).toBe('ReplyError ContextOverflowError ToolRunner\n');
    expect((await run(process.execPath, ['-e', `const m = require('tool-runner'); ${names}`], project)).stdout).toBe('ReplyError ContextOverflowError ToolRunner\n');
    expect((await run(process.execPath, ['agent.mjs'], project)).stdout).toBe(esmAnswer);
    expect((await run(process.execPath, ['agent.cjs'], project)).stdout).toBe('cjs answer: twice 21 is 42\n');
    // Types resolve for every entry under TypeScript's `node10` resolution too (the default for `module: commonjs`), through typesVersions.
    writeFileSync(join(project, 'node10.ts'), "import { toolRunner } from 'tool-runner';\nimport { createMockServer } from 'tool-runner/testing';\nimport { inspector } from 'tool-runner/inspect';\nexport const used = [toolRunner, createMockServer, inspector];\n");
    const tsc = join(repo, 'node_modules/typescript/bin/tsc');
    await run(process.execPath, [tsc, '--noEmit', '--module', 'commonjs', '--moduleResolution', 'node10', '--skipLibCheck', 'node10.ts'], project);
    // A library exports its tools: their declarations can be emitted (the types they name are exported: TS2742 else).
    writeFileSync(
      join(project, 'tools.ts'),
      "import { z } from 'zod';\nimport { agentTool, tool } from 'tool-runner';\n" +
        "export const getWeather = tool({ name: 'get_weather', inputSchema: z.object({ city: z.string() }), run: ({ city }) => city });\n" +
        "export const plain = tool({ name: 'plain', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } as const, run: () => 'ok' });\n" +
        "export const helper = agentTool({ name: 'helper', description: 'Helps', params: ({ task }) => ({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: task }] }) });\n",
    );
    await run(process.execPath, [tsc, '--declaration', '--emitDeclarationOnly', '--outDir', 'types', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', 'tools.ts'], project);
    expect(readFileSync(join(project, 'types/tools.d.ts'), 'utf8')).toContain('export declare const getWeather');
    // The bin: `npx tool-runner inspect FILE`.
    expect((await run('npx', ['--no', '--', 'tool-runner', '--help'], project)).stdout).toMatch(/^Usage: tool-runner inspect FILE/);
  }, 180_000);

  it('npm install <git url> builds the package (prepare) and it runs', async () => {
    // npm clones the repository, installs its dev dependencies, runs prepare and packs the result.
    const clone = await cloneHead('git-source');
    // The install clones, installs every dev dependency and builds: more work than the other commands, beside the rest of the suite.
    const project = await newProject('from-git', `git+file://${clone}`, 360_000);
    expect(existsSync(join(project, 'node_modules/tool-runner/dist/index.d.ts'))).toBe(true);
    expect((await run(process.execPath, ['agent.mjs'], project)).stdout).toBe(esmAnswer);
    expect((await run(process.execPath, ['agent.cjs'], project)).stdout).toBe('cjs answer: twice 21 is 42\n');
  }, 420_000);
});
