/**
 * A fresh clone of the committed HEAD packs a working package: `npm pack` builds `dist/` by itself,
 * and a new project that installs the tarball runs an agent from plain ESM and from CommonJS.
 * Slow (a clean install and a build): `npm run test:quick` leaves it out.
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

// npm, run under `npm test`, exports its own config and package as npm_* variables: a nested npm
// must not inherit them (npm_config_local_prefix would point it back at this repository).
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_|^INIT_CWD$/i.test(key)));

async function run(command: string, args: string[], cwd: string) {
  return exec(command, args, { cwd, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
}
const npm = (args: string[], cwd: string) => run('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund'], cwd);

afterAll(() => rmSync(temp, { recursive: true, force: true }));

describe('a fresh clone packs a working package', () => {
  it('npm pack builds dist/; the tarball installs and runs an agent from ESM and CommonJS', async () => {
    const clone = join(temp, 'clone');
    await run('git', ['clone', '--quiet', '--no-hardlinks', repo, clone], temp);
    const { stdout: head } = await run('git', ['rev-parse', 'HEAD'], repo);
    expect((await run('git', ['rev-parse', 'HEAD'], clone)).stdout).toBe(head);

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
    expect(files.filter((file) => !/^package\/(dist\/|LICENSE$|README\.md$|package\.json$)/.test(file))).toEqual([]);

    // A new project, as a user makes one: the tarball, the SDK and zod, at the versions tested here.
    const project = join(temp, 'project');
    const { devDependencies: dev } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'packed-agent', private: true }));
    await npm(['install', join(temp, tarball!), `@anthropic-ai/sdk@${dev['@anthropic-ai/sdk']}`, `zod@${dev['zod']}`], project);
    expect(readFileSync(join(project, 'node_modules/tool-runner/LICENSE'), 'utf8')).toMatch(
      /^MIT License\n\nCopyright \(c\) 2026 tool-runner contributors\n/,
    );

    for (const file of ['agent.mjs', 'agent.cjs']) copyFileSync(join(fixtures, file), join(project, file));
    const esm = await run(process.execPath, ['agent.mjs'], project);
    expect(esm.stdout).toBe('esm answer: Order A-17 ships with TRK-71-A. (2 requests)\n');
    const cjs = await run(process.execPath, ['agent.cjs'], project);
    expect(cjs.stdout).toBe('cjs answer: twice 21 is 42\n');
  }, 180_000);
});
