/**
 * Starts the agent program (`agent.mjs`) in each runtime and reads its report: Node, Bun, Deno as
 * commands; workerd with the program bundled as a Worker (no `nodejs_compat`); headless Chromium
 * with the program bundled into a page served from another origin than the testing kit's server, under
 * a Content-Security-Policy that forbids code made from strings. Every binary comes from the
 * project's devDependencies (or Debian's chromium, which .ci/run installs); one that cannot start
 * fails with its reason.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
/** Resolves from test/runtimes/binaries, where `npm test` installs the runtimes (scripts/test-runtimes.ts). */
const require = createRequire(join(here, 'binaries', 'package.json'));

export type Report = Record<string, unknown>;
export type Program = 'agent' | 'features';

export interface Runtime {
  name: string;
  /** Runs `program` (agent.mjs by default; 'features': features.mjs, `server` then JSON of a URL by scenario). */
  run(server: string, program?: Program): Promise<Report>;
}

/** The first of the packages' binaries that is a real executable (a postinstall may have moved it from one to the other). */
export function binary(name: string, candidates: Array<[pkg: string, path: string]>): string {
  const looked: string[] = [];
  for (const [pkg, path] of candidates) {
    let file: string;
    try {
      file = join(dirname(require.resolve(`${pkg}/package.json`)), path);
    } catch {
      looked.push(`${pkg} (not installed)`);
      continue;
    }
    looked.push(file);
    if (existsSync(file) && readFileSync(file).subarray(0, 4).toString('latin1') === '\x7fELF') return file;
  }
  throw new Error(`No ${name} binary: looked at ${looked.join(', ')}. Run npx tsx scripts/test-runtimes.ts (npm test does): the binary ships in the npm package.`);
}

function command(file: string, args: string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd: root, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${file} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

const cli = join(here, 'cli.mjs');
const tsconfig = join(here, 'tsconfig.json');
/** What a program printed last: one JSON line. */
export const lastLine = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Report;

export const node: Runtime = {
  name: 'node',
  run: async (url, program = 'agent') => lastLine(await command(process.execPath, [cli, url, program])),
};

export const bun: Runtime = {
  name: 'bun',
  run: async (url, program = 'agent') =>
    lastLine(await command(binary('bun', [['@oven/bun-linux-x64', 'bin/bun'], ['bun', 'bin/bun.exe']]), ['--tsconfig-override', tsconfig, cli, url, program])),
};

export const deno: Runtime = {
  name: 'deno',
  // The permissions the SDK's client needs, and no more (SPEC §9.5).
  run: async (url, program = 'agent') =>
    lastLine(await command(binary('deno', [['@deno/linux-x64-glibc', 'deno'], ['deno', 'deno']]), ['run', '--no-lock', '--allow-net', '--allow-env', cli, url, program])),
};

/** Bundles `entry` as a bundler would for that platform, and returns the output file. */
async function bundle(entry: string, conditions: string[], dir: string): Promise<string> {
  const outfile = join(dir, entry.replace(/\.mjs$/, '.js'));
  await build({ entryPoints: [join(here, entry)], bundle: true, format: 'esm', platform: 'browser', conditions, outfile, tsconfig, logLevel: 'error' });
  return outfile;
}

export const workerd: Runtime = {
  name: 'workerd',
  async run(url, program = 'agent') {
    const dir = mkdtempSync(join(tmpdir(), 'tool-runner-workerd-'));
    await bundle('worker.mjs', ['workerd', 'worker', 'browser'], dir);
    const port = await freePort();
    // No nodejs_compat flag; outbound fetches may reach loopback, where the testing kit's server is.
    writeFileSync(
      join(dir, 'config.capnp'),
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "agent", worker = .agent), (name = "loopback", network = (allow = ["local"]))],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "agent")],
);
const agent :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2025-09-01",
  globalOutbound = "loopback",
);
`,
    );
    const file = binary('workerd', [['@cloudflare/workerd-linux-64', 'bin/workerd'], ['workerd', 'bin/workerd']]);
    const child = spawn(file, ['serve', join(dir, 'config.capnp')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    try {
      const response = await fetchWhenUp(`http://127.0.0.1:${port}/?server=${encodeURIComponent(url)}&program=${program}`, child, () => output);
      return (await response.json()) as Report;
    } finally {
      child.kill();
    }
  },
};

/** Fetches once the server answers (retrying refused connections for up to 20 s), failing with the process's output if it exits. */
async function fetchWhenUp(url: string, child: ReturnType<typeof spawn>, output: () => string): Promise<Response> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`workerd exited with ${child.exitCode}: ${output()}`);
    try {
      return await fetch(url);
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`workerd did not answer: ${String(error)}\n${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Debian's chromium (`apt-get install chromium`, as .ci/run does), or CHROMIUM_PATH. */
export function chromiumPath(): string {
  const path = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
  if (!existsSync(path)) throw new Error(`No Chromium at ${path}: install Debian's chromium package (apt-get install chromium), as .ci/run does, or set CHROMIUM_PATH`);
  return path;
}

export const browser: Runtime = {
  name: 'chromium',
  async run(url, program = 'agent') {
    const { chromium } = require('playwright-core') as PlaywrightCore;
    const dir = mkdtempSync(join(tmpdir(), 'tool-runner-page-'));
    const script = readFileSync(await bundle('page.mjs', ['browser'], dir));
    // The page's own origin (another port than the testing kit's server: its requests are cross-origin
    // and preflighted), and a policy that forbids code made from strings, as a strict site's would.
    const pages = createServer((req, res) => {
      const js = req.url?.startsWith('/page.js');
      res.writeHead(200, { 'content-type': js ? 'text/javascript' : 'text/html', 'content-security-policy': "script-src 'self'" });
      res.end(js ? script : '<!doctype html><title>agent</title><script type="module" src="/page.js"></script>');
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    const launched = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
    try {
      const tab = await launched.newPage();
      await tab.goto(`http://127.0.0.1:${(pages.address() as AddressInfo).port}/?server=${encodeURIComponent(url)}&program=${program}`);
      return (await tab.evaluate(() => (globalThis as unknown as { agentReport: Promise<Report> }).agentReport)) as Report;
    } finally {
      await launched.close();
      pages.close();
    }
  },
};

/** What this test uses of playwright-core (installed beside the runtimes, so typed here). */
interface PlaywrightCore {
  chromium: {
    launch(options: { executablePath: string; args: string[] }): Promise<{
      newPage(): Promise<{ goto(url: string): Promise<unknown>; evaluate<T>(run: () => T): Promise<Awaited<T>> }>;
      close(): Promise<void>;
    }>;
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
