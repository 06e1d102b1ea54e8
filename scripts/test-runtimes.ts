/**
 * Installs the runtimes test/runtimes.test.ts needs (Bun, Deno, workerd, playwright-core: binaries
 * inside npm packages) into test/runtimes/binaries from its lockfile, unless they are there. `npm test`
 * runs it first (pretest). Chromium is Debian's package: .ci/run installs it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../test/runtimes/binaries/', import.meta.url));
const wanted = Object.keys((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies);
const missing = wanted.filter((name) => !existsSync(join(dir, 'node_modules', name, 'package.json')));
if (missing.length > 0) {
  console.log(`test runtimes: installing ${missing.join(', ')} into test/runtimes/binaries`);
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
}
