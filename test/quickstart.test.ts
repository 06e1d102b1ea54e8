/** The README's quick start, as a new user copies it: a plain ESM file run with node against the built package. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const readme = readFileSync('README.md', 'utf8');
const quickStart = /<!-- quickstart -->\n```js\n([\s\S]*?)```/.exec(readme)?.[1];
// Inside the package folder, so that `tool-runner` resolves to this package (its exports, its dist/) by name.
const dir = mkdtempSync(join(process.cwd(), 'test/.quickstart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the README's quick start", () => {
  it('is there, and runs offline as printed (plain ESM, node, the built package)', async () => {
    expect(quickStart).toBeDefined();
    const file = join(dir, 'agent.mjs');
    writeFileSync(file, quickStart!);
    const env: Record<string, string | undefined> = { ...process.env, ANTHROPIC_LOG: 'warn' };
    delete env['ANTHROPIC_API_KEY'];
    const { stdout, stderr } = await run(process.execPath, [file], { env, timeout: 30_000 });
    expect(stdout.trim()).toBe('It is 21°C and clear in Paris.');
    expect(stderr).toBe('');
  });
});
