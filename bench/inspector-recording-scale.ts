/**
 * The CLI's page over a large recording in headless Chromium (Debian's, or CHROMIUM_PATH): writes a file of about SIZE MB
 * (60 short runs, then one long run: a reply's text, a call with 60 lines of output, every 10th failing), serves it with
 * `dist/cli.js inspect` (run `npm run build` first), and says how long until the page shows the long run, on opening and
 * on a reload, the page's JS heap and DOM nodes, the CLI's memory, and what "Show earlier items" costs.
 * Figures, not a test: docs/inspector.md quotes them.
 * Usage: node --import tsx bench/inspector-recording-scale.ts [size=50]
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const size = Number(process.argv[2] ?? 50);
const dir = mkdtempSync(join(tmpdir(), 'inspector-recording-'));
const file = join(dir, 'runs.jsonl');
const out = createWriteStream(file);
let bytes = 0;
let time = Date.now() - 3600_000;
const w = (r: object) => { const line = JSON.stringify({ ...r, time: time++ }) + '\n'; bytes += line.length; return out.write(line) ? undefined : new Promise<void>((res) => out.once('drain', () => res())); };
const usage = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
async function turn(run: string, t: number, fail: boolean) {
  const id = `toolu_${run}_${t}`;
  await w({ type: 'request.start', run, requestId: t, purpose: 'turn', model: 'claude-sonnet-5-5', messages: 2 * t + 1 });
  await w({ type: 'request.end', run, requestId: t, stopReason: 'tool_use', model: 'claude-sonnet-5-5', usage, text: `Step ${t}: ${'let me think about this. '.repeat(20)}`, toolUses: [{ id, name: 'step' }] });
  await w({ type: 'tool.start', run, id, name: 'step', input: { n: t, path: `/src/file${t}.ts` } });
  await w({ type: 'tool.end', run, id, name: 'step', isError: fail, result: (fail ? 'Error: ' : '') + 'line of output\n'.repeat(60) });
}
for (let r = 0; r < 60; r++) { await w({ type: 'run.start', run: `r${r}`, model: 'claude-sonnet-5-5', prompt: `task ${r}` }); for (let t = 0; t < 5; t++) await turn(`r${r}`, t, t === 3); await w({ type: 'run.end', run: `r${r}`, state: 'finished', stoppedBy: 'model', usage }); }
await w({ type: 'run.start', run: 'long', model: 'claude-sonnet-5-5', prompt: 'the long one' });
let t = 0;
while (bytes < size * 1e6) await turn('long', t, t++ % 10 === 9);
await w({ type: 'run.end', run: 'long', state: 'finished', stoppedBy: 'model', usage });
out.end(); await new Promise<void>((r) => out.on('finish', () => r()));
console.log(`${(bytes / 1e6).toFixed(1)} MB recorded, long run ${t} turns`);
const cli = spawn('node', ['dist/cli.js', 'inspect', file], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise<string>((resolve) => cli.stdout!.on('data', (d) => { const m = /http\S+/.exec(String(d)); if (m) resolve(m[0]); }));
const rss = () => Math.round(Number(readFileSync(`/proc/${cli.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)![1]) / 1024) + ' MB';
const hwm = () => Math.round(Number(readFileSync(`/proc/${cli.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/)![1]) / 1024) + ' MB';
console.log('CLI up, RSS', rss());
const browser = await chromium.launch({ executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium', headless: true });
const page = await (await browser.newContext()).newPage();
const cdp = await page.context().newCDPSession(page);
await cdp.send('Performance.enable');
for (const pass of ['open', 'reload']) {
  const t0 = Date.now();
  if (pass === 'open') await page.goto(url); else await page.reload();
  await page.waitForFunction(() => (globalThis as any).document.querySelector('[role=status]')?.textContent?.startsWith('State: finished') && (globalThis as any).document.querySelectorAll('#runs li').length === 61, undefined, { timeout: 120_000 });
  const shown = Date.now() - t0;
  await cdp.send('HeapProfiler.collectGarbage');
  const m = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x: any) => [x.name, x.value]));
  console.log(`${pass}: long run shown after ${shown} ms; page JS heap ${(m.JSHeapUsedSize / 1e6).toFixed(1)} MB, DOM nodes ${m.Nodes}, main thread ${(m.TaskDuration * 1000).toFixed(0)} ms so far; CLI RSS ${rss()} (peak ${hwm()})`);
  console.log('  more button:', await page.locator('button.more').textContent());
}
const earlier = /\((\d+) not shown/.exec((await page.locator('button.more').textContent())!)![1];
const c0 = Date.now();
await page.locator('button.more').click({ timeout: 300_000 });
await page.waitForFunction((before) => !(globalThis as any).document.querySelector('button.more')?.textContent.includes(`(${before} not shown)`), earlier, { timeout: 300_000 });
await page.evaluate(() => new Promise((r) => (globalThis as any).requestAnimationFrame(() => setTimeout(r, 0))));
await cdp.send('HeapProfiler.collectGarbage');
const m2 = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x: any) => [x.name, x.value]));
console.log(`Show earlier clicked: drawn after ${Date.now() - c0} ms; page JS heap ${(m2.JSHeapUsedSize / 1e6).toFixed(1)} MB, DOM nodes ${m2.Nodes}`);
await browser.close();
cli.kill();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
