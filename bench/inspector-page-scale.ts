/**
 * The inspector page at scale in headless Chromium (Debian's, or CHROMIUM_PATH): 60 short runs (sub-agents, three calls
 * left waiting for approval), then one long run of TURNS turns as a runner's events (8 streamed text pieces a turn, a
 * tool call, every 10th failing). Every 500 turns: the page's main-thread time for them, its JS heap and DOM nodes
 * (CDP Performance.getMetrics, after a collection), and the inspector process's heap; then how long a reload takes
 * until the long run shows. Figures, not a test: docs/inspector.md quotes them.
 * Usage: node --import tsx bench/inspector-page-scale.ts [turns=3000]
 */
import { chromium } from 'playwright-core';
import { inspector } from '../src/inspect/index.js';

const TURNS = Number(process.argv[2] ?? 3000);
const inspect = await inspector({ maxRuns: 100 });
const browser = await chromium.launch({ executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium', headless: true });
const page = await (await browser.newContext()).newPage();
page.on('pageerror', (e) => console.log('pageerror', e));
const cdp = await page.context().newCDPSession(page);
await cdp.send('Performance.enable');
async function metrics() {
  await cdp.send('HeapProfiler.collectGarbage');
  const { metrics } = await cdp.send('Performance.getMetrics');
  const m = Object.fromEntries(metrics.map((x: any) => [x.name, x.value]));
  return { task: m.TaskDuration, script: m.ScriptDuration, layout: m.LayoutDuration + m.RecalcStyleDuration, heap: m.JSHeapUsedSize, nodes: m.Nodes };
}
const tick = () => new Promise((r) => setImmediate(r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
await page.goto(inspect.url);
await page.waitForFunction(() => (globalThis as any).document.getElementById('connection').textContent === 'live');
const usage = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
function runnerOf() { return { params: { messages: [{ role: 'user', content: 'go' }] }, usage: { input_tokens: 0, output_tokens: 0 }, pendingApprovals: [] } as any; }
const ev = (e: any) => inspect.onEvent(e);
async function turn(runner: any, t: number, r: string, extra: Record<string, unknown> = {}, fail = false) {
  const id = `toolu_${r}_${t}`;
  ev({ type: 'request.start', runner, requestId: t, purpose: 'turn', body: { model: 'claude-sonnet-5-5', messages: [] }, ...extra });
  for (let k = 0; k < 8; k++) ev({ type: 'request.text', runner, requestId: t, text: `word ${k} of turn ${t}. `, ...extra });
  ev({ type: 'request.end', runner, requestId: t, message: { id: 'm', stop_reason: 'tool_use', model: 'claude-sonnet-5-5', usage, content: [{ type: 'text', text: 'x' }, { type: 'tool_use', id, name: 'step', input: { n: t } }] }, ...extra });
  const call = { id, name: 'step', input: { n: t }, toolUse: { type: 'tool_use', id, name: 'step', input: { n: t } } };
  ev({ type: 'tool.start', runner, call, ...extra });
  ev({ type: 'tool.end', runner, call, result: { type: 'tool_result', tool_use_id: id, content: fail ? `failed ${t}: ${'e'.repeat(200)}` : `ok ${t} ${'r'.repeat(200)}`, is_error: fail }, ...extra });
}
// 60 short runs; every 10th with a sub-agent; 3 left waiting for approval.
const waits: Promise<unknown>[] = [];
for (let r = 0; r < 60; r++) {
  const runner = runnerOf();
  ev({ type: 'run.start', runner, model: 'claude-sonnet-5-5' });
  for (let t = 0; t < 5; t++) await turn(runner, t, `s${r}`, {}, t === 3);
  if (r % 10 === 0) {
    const agentCall = { id: `toolu_agent_${r}`, name: 'researcher', input: { task: 'x' }, toolUse: { type: 'tool_use', id: `toolu_agent_${r}`, name: 'researcher', input: {} } };
    ev({ type: 'tool.start', runner, call: agentCall });
    const sub = runnerOf();
    const extra = { path: ['researcher'], callPath: [agentCall.id] };
    ev({ type: 'run.start', runner: sub, model: 'claude-haiku', ...extra });
    for (let t = 0; t < 5; t++) await turn(sub, t, `sub${r}`, extra);
    ev({ type: 'run.end', runner: sub, message: undefined, ...extra });
    ev({ type: 'tool.end', runner, call: agentCall, result: { type: 'tool_result', tool_use_id: agentCall.id, content: 'found' } });
  }
  if (r >= 57) {
    const call = { id: `toolu_wait_${r}`, name: 'send_email', input: { to: 'a' }, toolUse: { type: 'tool_use', id: `toolu_wait_${r}`, name: 'send_email', input: { to: 'a' } } };
    waits.push(Promise.resolve(inspect.approve(call as any, { signal: new AbortController().signal } as any)));
    continue; // its run stays running, a call waiting
  }
  ev({ type: 'run.end', runner, message: undefined });
  await tick();
}
await sleep(1500);
const short = await metrics();
console.log(`after 60 short runs: ${await page.locator('#runs li').count()} runs listed, page JS heap ${(short.heap / 1e6).toFixed(1)} MB, DOM nodes ${short.nodes}`);
// The long run.
const runner = runnerOf();
ev({ type: 'run.start', runner, model: 'claude-sonnet-5-5' });
await sleep(300);
let before = await metrics();
const t0 = Date.now();
for (let t = 0; t < TURNS; t++) {
  await turn(runner, t, 'long', {}, t % 10 === 9);
  if (t % 4 === 0) await tick();
  if (t % 5 === 0) await sleep(1);
  if ((t + 1) % 500 === 0) {
    await sleep(700);
    const now = await metrics();
    const node = process.memoryUsage();
    console.log(`turns ${t + 1}: page main thread ${((now.task - before.task) * 1000).toFixed(0)} ms / 500 turns (script ${((now.script - before.script) * 1000).toFixed(0)}, style+layout ${((now.layout - before.layout) * 1000).toFixed(0)}), JS heap ${(now.heap / 1e6).toFixed(1)} MB, DOM nodes ${now.nodes}; inspector process heap ${(node.heapUsed / 1e6).toFixed(1)} MB`);
    before = await metrics();
  }
}
ev({ type: 'run.end', runner, message: undefined });
await sleep(1000);
console.log(`${TURNS} turns sent in ${Date.now() - t0} ms`);
const r0 = Date.now();
await page.reload();
await page.waitForFunction(() => (globalThis as any).document.querySelector('[role=status]')?.textContent?.startsWith('State: finished') && (globalThis as any).document.querySelectorAll('#run article.item').length > 0);
const reloaded = await metrics();
console.log(`reload until the long run shows: ${Date.now() - r0} ms; page JS heap ${(reloaded.heap / 1e6).toFixed(1)} MB, DOM nodes ${reloaded.nodes}`);
await browser.close();
await inspect.close();
process.exit(0);
