/**
 * The inspector page in a real browser: headless Chromium (Debian's `chromium`, which .ci/run
 * installs) driven by playwright-core. A run with a streamed reply, two tool calls (one failing) and
 * an approval decided by a click; reloads; a page opened late; the recorded file served by the CLI.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type Locator, type Page, chromium } from 'playwright-core';

/** What the page function reads of an element. */
interface Element {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): Element | null;
}
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type RunnerEvent, agentTool, resumeToolRunner, tool, toolRunner } from 'tool-runner';
import { type Inspector, inspectRecording, inspector } from 'tool-runner/inspect';
import { type MockServer, text, toolUse } from 'tool-runner/testing';
import { detachedElements } from './fixtures/detached-elements.js';
import { inspectedSteps, inspectedTools, params, prompt, withToken } from './fixtures/inspected.js';
import { baseParams, mockServer, sleep } from './helpers.js';

const executablePath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const haveBrowser = existsSync(executablePath);
if (!haveBrowser && process.env['CI']) throw new Error(`No Chromium at ${executablePath}: .ci/run installs Debian's chromium (or set CHROMIUM_PATH)`);

const dir = mkdtempSync(join(tmpdir(), 'tool-runner-inspect-browser-'));
let browser: Browser;
const inspectors: Inspector[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  if (haveBrowser) browser = await chromium.launch({ executablePath, headless: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill();
  await Promise.all(inspectors.splice(0).map((inspect) => inspect.close()));
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on('pageerror', (error) => {
    throw error;
  });
  return page;
}
/** A promise to wait on, and what opens it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
/** Whether an element is in the timeline's view (#run, the scrolled box). */
function inView(locator: Locator): Promise<boolean> {
  return locator.evaluate((el: { getBoundingClientRect(): { top: number; bottom: number }; closest(selector: string): { getBoundingClientRect(): { top: number; bottom: number } } | null }) => {
    const item = el.getBoundingClientRect();
    const view = el.closest('#run')!.getBoundingClientRect();
    return item.bottom > view.top && item.top < view.bottom;
  });
}
/** A sub-agent tool whose run's events go to `inspect` under the path `['researcher']`, as a nested run's do. */
function researcherWatchedBy(inspect: Inspector, server: MockServer) {
  return tool({
    name: 'researcher',
    inputSchema: z.object({ task: z.string() }),
    run: async ({ task }) => {
      const forward = (event: RunnerEvent) => inspect.onEvent({ ...event, path: ['researcher'] } as unknown as RunnerEvent);
      const reply = await toolRunner(server.client(), { ...baseParams, messages: [{ role: 'user', content: task }] }, { onEvent: forward });
      return reply.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    },
  });
}

const card = (page: Page, name: string) => page.locator('article.tool', { has: page.locator('code', { hasText: new RegExp(`^${name}$`) }) });
const request = (page: Page, n: number) => page.locator('article.request', { has: page.getByRole('heading', { name: `Request ${n}` }) });

/** Checks what the page shows of the finished run (live, reloaded, or over the recorded file). */
async function expectFinishedRun(page: Page) {
  await expect.poll(() => page.getByRole('status').textContent()).toBe('State: finished — stopped by model');
  await expect.poll(() => page.locator('article.prompt pre').textContent()).toBe(prompt);
  await expect.poll(() => request(page, 1).locator('pre.text').textContent()).toBe('Let me look up the weather and your calendar.');
  expect(await request(page, 1).locator('.status').textContent()).toBe('stop reason: tool_use');
  expect(await request(page, 1).locator('.meta').first().textContent()).toMatch(/\d+ in · \d+ out · cache 0 read, 0 written · latency \d+(\.\d+)? m?s/);
  expect(await request(page, 3).locator('pre.text').textContent()).toBe('Done: it is sunny in Paris, and Ann knows.');
  expect(await card(page, 'get_weather').locator('.status').textContent()).toBe('done');
  expect(await card(page, 'get_weather').locator('pre').allTextContents()).toEqual(['{\n  "city": "Paris"\n}', '21°C and sunny in Paris']);
  expect(await card(page, 'read_calendar').locator('.status').textContent()).toBe('error');
  expect(await card(page, 'read_calendar').locator('pre.error').textContent()).toBe('Error: calendar service unavailable');
  expect(await card(page, 'send_email').locator('.status').textContent()).toBe('done');
  expect(await card(page, 'send_email').locator('header .meta').textContent()).toMatch(/^allowed after \d+(\.\d+)? m?s · took \d+ ms$/);
  expect(await card(page, 'send_email').getByRole('button').count()).toBe(0);
  expect(await page.locator('.usage').textContent()).toMatch(/^Usage so far: [\d,]+ in · [\d,]+ out · cache 0 read, 0 written · 3 requests · 3 tool calls/);
  expect(await page.getByRole('navigation', { name: 'Runs' }).getByRole('link').count()).toBe(1);
}

describe.skipIf(!haveBrowser)('the inspector page in Chromium', () => {
  it('shows the streamed reply, each call and the approval; Allow lets the run finish; reloads and the recorded file show the same', async () => {
    const file = join(dir, 'runs.jsonl');
    const server = await mockServer({ steps: inspectedSteps(), chunkSize: 4, eventDelayMs: 25 });
    const inspect = await inspector({ record: file });
    inspectors.push(inspect);
    const page = await newPage();
    await page.goto(inspect.url);
    await expect.poll(() => page.locator('#connection').textContent()).toBe('live');

    const log: string[] = [];
    const run = toolRunner(server.client(), params(inspectedTools(log)), { onEvent: inspect.onEvent, approve: inspect.approve }).runUntilDone();
    // The text shows while it streams: part of it, with the reply still on its way.
    const full = 'Let me look up the weather and your calendar.';
    await page.waitForFunction((length) => {
      // In the page (no DOM types here): the first request's card and its text so far.
      const card = (globalThis as unknown as { document: { querySelector(selector: string): Element | null } }).document.querySelector('article.request');
      const shown = card?.querySelector('pre.text')?.textContent ?? '';
      return card?.getAttribute('data-status') === 'running' && shown.length > 0 && shown.length < length;
    }, full.length);
    expect(await page.getByRole('status').textContent()).toBe('State: running');

    const allow = card(page, 'send_email').getByRole('button', { name: 'Allow' });
    await allow.waitFor();
    expect(await page.getByRole('status').textContent()).toBe('State: waiting for approval');
    expect(await card(page, 'send_email').getByRole('button', { name: 'Deny' }).isVisible()).toBe(true);
    expect(await card(page, 'read_calendar').locator('.status').textContent()).toBe('error');
    expect(log).toEqual(['get_weather', 'read_calendar']);

    // A reload keeps the state: every record again, the approval still waiting.
    await page.reload();
    await card(page, 'send_email').getByRole('button', { name: 'Allow' }).click();
    await run;
    expect(log).toEqual(['get_weather', 'read_calendar', 'send_email ann@example.com: Sunny on Monday!']);
    await expectFinishedRun(page);
    await page.reload();
    await expectFinishedRun(page);

    // A page opened now shows the run from its start.
    const late = await newPage();
    await late.goto(inspect.url);
    await expectFinishedRun(late);

    expect((await late.goto(withToken(inspect.url, undefined)))!.status()).toBe(403);
    expect((await late.goto(withToken(inspect.url, 'wrong')))!.status()).toBe(403);

    // The recorded file, served by the CLI, shows the same run.
    await inspect.close();
    const cli = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'inspect', file], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(cli);
    const url = await new Promise<string>((resolve) => cli.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
    const recorded = await newPage();
    await recorded.goto(url);
    await expectFinishedRun(recorded);
    expect(await recorded.locator('#connection').textContent()).toBe('recorded file: runs.jsonl');

    // Without the token, or with a wrong one: 403, for the CLI's page as for the live one (above).
    expect((await recorded.goto(withToken(url, undefined)))!.status()).toBe(403);
    expect((await recorded.goto(withToken(url, 'wrong')))!.status()).toBe(403);
  }, 60_000);

  it('a fast run of many turns: the page keeps its last items (the rest behind a button); past maxRuns it lets go of the oldest runs', async () => {
    const turns = 400;
    const steps = [
      { content: [text('first')] },
      { content: [text('second')] },
      ...Array.from({ length: turns - 1 }, (_, n) => ({ content: [toolUse('step', { n }, `toolu_${n}`)] })),
      { content: [text('done')] },
    ];
    const server = await mockServer(steps);
    const inspect = await inspector({ maxRuns: 2 });
    inspectors.push(inspect);
    const page = await newPage();
    await page.goto(inspect.url);
    const step = tool({ name: 'step', inputSchema: z.object({ n: z.number() }), run: ({ n }) => `ok ${n}` });
    const options = { onEvent: inspect.onEvent };
    const runs = page.locator('#runs li');
    await toolRunner(server.client(), { ...baseParams, messages: [{ role: 'user', content: 'one' }] }, options);
    await expect.poll(() => runs.count()).toBe(1);
    await toolRunner(server.client(), { ...baseParams, messages: [{ role: 'user', content: 'two' }] }, options);
    await expect.poll(() => runs.count()).toBe(2);
    await toolRunner(server.client(), { ...baseParams, messages: [{ role: 'user', content: 'three' }], tools: [step] }, options);
    // The oldest run is gone from the page as from the inspector; the newest is shown.
    await expect.poll(() => page.getByRole('status').textContent()).toBe('State: finished — stopped by model');
    expect(await runs.locator('.run-name').allTextContents()).toEqual(['Run 3', 'Run 2']);
    // 400 requests and 399 calls (and the prompt): the page holds the last of them, at most 400.
    const items = page.locator('#run article.item');
    const more = page.locator('button.more');
    const shown = await items.count();
    expect(shown).toBeGreaterThanOrEqual(50);
    expect(shown).toBeLessThanOrEqual(400);
    const hidden = 2 * turns - shown;
    expect(await items.last().locator('pre.text').textContent()).toBe('done');
    // Earlier items 200 at a time, above those shown (all at once, a long run's thousands kept the page busy for seconds).
    const firstShown = await items.first().textContent();
    await more.click();
    await expect.poll(() => items.count()).toBe(shown + Math.min(200, hidden));
    expect(await more.textContent()).toBe(`Show ${Math.min(200, hidden - 200)} earlier items (${hidden - 200} not shown)`);
    expect(await items.nth(Math.min(200, hidden)).textContent()).toBe(firstShown);
    while (await more.count()) await more.click();
    await expect.poll(() => items.count()).toBe(2 * turns);
    expect(await items.first().locator('pre').textContent()).toBe('three');
  }, 60_000);

  it("a sub-agent's lane shows in its call's card when the card is drawn again (\"Show earlier items\"), never apart from it at the timeline's end; and is let go of with the card", async () => {
    const turns = 240;
    const steps = [
      { content: [toolUse('researcher', { task: 'Paris weather' }, 'toolu_agent')] },
      { content: [text('Sunny, 21°C.')] },
      // Each reply a little late, so that a page open during the run draws the researcher's card and later lets go of it.
      ...Array.from({ length: turns }, (_, n) => ({ content: [toolUse('step', { n }, `toolu_${n}`)], delayMs: 2 })),
      { content: [text('done')] },
    ];
    const server = await mockServer(steps);
    const inspect = await inspector();
    inspectors.push(inspect);
    const researcher = researcherWatchedBy(inspect, server);
    const step = tool({ name: 'step', inputSchema: z.object({ n: z.number() }), run: ({ n }) => `ok ${n}` });
    const live = await newPage();
    await live.goto(inspect.url);
    await toolRunner(server.client(), { ...baseParams, tools: [researcher, step] }, { onEvent: inspect.onEvent });
    await expect.poll(() => live.locator('#run article.item').last().locator('pre.text').textContent()).toBe('done');
    // The card let go of as the run went on: its lane, which held its detached section (and drew into it), too.
    expect(await card(live, 'researcher').count()).toBe(0);
    expect(await detachedElements(live)).toEqual({});
    // Opened once the run is done: the researcher's call is among the earlier items, not on the page.
    const page = await newPage();
    await page.goto(inspect.url);
    await expect.poll(() => page.getByRole('status').textContent()).toBe('State: finished — stopped by model');
    expect(await card(page, 'researcher').count()).toBe(0);
    // Its lane is not drawn apart from its card (it was, at the timeline's end, below 'done').
    expect(await page.getByRole('region', { name: 'Sub-agent researcher' }).count()).toBe(0);
    const more = page.locator('button.more');
    while (await more.count()) await more.click();
    const lane = card(page, 'researcher').getByRole('region', { name: 'Sub-agent researcher' });
    await expect.poll(() => lane.locator('pre.text').textContent()).toBe('Sunny, 21°C.');
    expect(await page.getByRole('region', { name: 'Sub-agent researcher' }).count()).toBe(1);
  }, 60_000);

  it('a long run and a run shown before hold no elements off the page (a call let go of keeps no parts; a run left keeps no timeline)', async () => {
    const turns = 300;
    // Each reply a little late, so that the page draws calls and later lets go of them as the run goes on.
    const steps = [...Array.from({ length: turns }, (_, n) => ({ content: [toolUse('step', { n }, `toolu_${n}`)], delayMs: 2 })), { content: [text('done')] }, { content: [text('short')] }];
    const server = await mockServer(steps);
    const inspect = await inspector();
    inspectors.push(inspect);
    const page = await newPage();
    await page.goto(inspect.url);
    const step = tool({ name: 'step', inputSchema: z.object({ n: z.number() }), run: ({ n }) => `ok ${n}` });
    await toolRunner(server.client(), { ...baseParams, messages: [{ role: 'user', content: 'long' }], tools: [step] }, { onEvent: inspect.onEvent });
    await expect.poll(() => page.locator('#run article.item').last().locator('pre.text').textContent()).toBe('done');
    const shown = await page.locator('#run article.item').count();
    expect(shown).toBeLessThan(2 * turns);
    // The calls let go of (the rest behind "Show earlier") are not held: each call's parts held its card.
    expect(await detachedElements(page)).toEqual({});
    // A run that starts takes the page; the long run, no longer shown, lets go of its timeline.
    await toolRunner(server.client(), { ...baseParams, messages: [{ role: 'user', content: 'short' }] }, { onEvent: inspect.onEvent });
    await expect.poll(() => page.locator('#run article.item').last().locator('pre.text').textContent()).toBe('short');
    expect(await detachedElements(page)).toEqual({});
  }, 60_000);

  it("the page follows a run's end; scrolled up, what the person reads stays while the run goes on; back at the end, it follows again", async () => {
    const turns = 400;
    const steps = [...Array.from({ length: turns }, (_, n) => ({ content: [toolUse('step', { n }, `toolu_${n}`)] })), { content: [text('done')] }];
    const server = await mockServer(steps);
    const inspect = await inspector();
    inspectors.push(inspect);
    const page = await newPage();
    await page.goto(inspect.url);
    // The run waits at call 150 (while the person scrolls up) and at call 300 (while they scroll back down).
    const gates = [gate(), gate()];
    const step = tool({
      name: 'step',
      inputSchema: z.object({ n: z.number() }),
      run: async ({ n }) => {
        if (n === 150) await gates[0]!.opened;
        if (n === 300) await gates[1]!.opened;
        return `ok ${n}`;
      },
    });
    const run = toolRunner(server.client(), { ...baseParams, tools: [step] }, { onEvent: inspect.onEvent }).runUntilDone();
    const call = (n: number) => page.locator('article.tool', { has: page.locator('pre', { hasText: new RegExp(`^\\{\\s+"n": ${n}\\s+\\}$`) }) });
    await expect.poll(() => call(150).locator('.status').textContent()).toBe('running');
    // Following the end: the call running is in view.
    await expect.poll(() => inView(call(150))).toBe(true);

    // The person scrolls up to read call 140, with the mouse's wheel.
    const main = page.locator('#run');
    const box = (await main.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, (await call(140).boundingBox())!.y - box.y);
    await expect.poll(() => inView(call(140))).toBe(true);
    // 150 turns later (300 items), call 140 is still on the page, in view.
    gates[0]!.open();
    await expect.poll(() => call(300).locator('.status').textContent()).toBe('running');
    expect(await inView(call(140))).toBe(true);
    expect(await inView(call(300))).toBe(false);

    // Back at the end, the page follows again, and lets go of old items.
    await expect.poll(async () => {
      await page.mouse.wheel(0, 1e7);
      return main.evaluate((el: { scrollTop: number; clientHeight: number; scrollHeight: number }) => el.scrollTop + el.clientHeight >= el.scrollHeight - 2);
    }).toBe(true);
    gates[1]!.open();
    await run;
    const last = page.locator('#run article.item').last();
    await expect.poll(() => last.locator('pre.text').textContent()).toBe('done');
    await expect.poll(() => inView(last)).toBe(true);
    await expect.poll(() => page.locator('#run article.item').count()).toBeLessThanOrEqual(400);
    expect(await call(140).count()).toBe(0);
  }, 60_000);

  it('a record of a run dropped past maxRuns that comes later (a call that ended after its run failed) is not shown as a run of its own, on a page open then or opened since', async () => {
    const inspect = await inspector({ maxRuns: 2 });
    inspectors.push(inspect);
    const page = await newPage();
    await page.goto(inspect.url);
    const runs = page.locator('#runs li');
    const slow = tool({ name: 'slow', inputSchema: z.object({}), run: () => sleep(400).then(() => 'slow done') });
    const fast = tool({ name: 'fast', inputSchema: z.object({}), run: () => 'fast done' });
    const failing = await mockServer([{ content: [toolUse('slow', {}, 'toolu_slow'), toolUse('fast', {}, 'toolu_fast')] }]);
    const hooks = {
      onToolResult: (_result: unknown, call: { name: string }) => {
        if (call.name === 'fast') throw new Error('the hook failed');
      },
    };
    await expect(toolRunner(failing.client(), { ...baseParams, tools: [slow, fast] }, { onEvent: inspect.onEvent, hooks }).runUntilDone()).rejects.toThrow(/the hook failed/);
    const plain = await mockServer([{ content: [text('two')] }, { content: [text('three')] }]);
    for (let i = 0; i < 2; i++) await toolRunner(plain.client(), baseParams, { onEvent: inspect.onEvent });
    await expect.poll(() => runs.locator('.run-name').allTextContents()).toEqual(['Run 3', 'Run 2']);
    // A page opened after the failed run was dropped: it never saw that run.
    const later = await newPage();
    await later.goto(inspect.url);
    const laterRuns = later.locator('#runs li');
    await expect.poll(() => laterRuns.locator('.run-name').allTextContents()).toEqual(['Run 2', 'Run 1']);
    // The failed run's slow call ends now.
    await sleep(600);
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
    expect(await runs.locator('.run-name').allTextContents()).toEqual(['Run 3', 'Run 2']);
    expect(await laterRuns.locator('.run-name').allTextContents()).toEqual(['Run 2', 'Run 1']);
  }, 60_000);

  it('with two pages open the first decision counts; edited input and a reason go with it; sub-agents show as nested lanes', async () => {
    const server = await mockServer([
      { content: [toolUse('researcher', { task: 'Paris weather' }, 'toolu_agent')] },
      { content: [text('Sunny, 21°C.')] },
      { content: [toolUse('send_email', { to: 'ann@example.com', body: 'Sunny' }, 'toolu_one'), toolUse('send_email', { to: 'bob@example.com', body: 'Sunny' }, 'toolu_two')] },
      { content: [text('Ann was emailed; Bob was not.')] },
    ]);
    const inspect = await inspector();
    inspectors.push(inspect);
    const researcher = researcherWatchedBy(inspect, server);
    const log: string[] = [];
    const [, , email] = inspectedTools(log);
    const first = await newPage();
    const second = await newPage();
    await first.goto(inspect.url);
    await second.goto(inspect.url);
    const run = toolRunner(server.client(), { ...baseParams, tools: [researcher, email!] }, { onEvent: inspect.onEvent, approve: inspect.approve }).runUntilDone();

    // The sub-agent's request shows in a lane inside the researcher call.
    const lane = card(first, 'researcher').getByRole('region', { name: 'Sub-agent researcher' });
    await expect.poll(() => lane.locator('pre.text').textContent()).toBe('Sunny, 21°C.');
    expect(await lane.locator('.lane-head').textContent()).toBe('Sub-agent researcher — finished');

    // One question at a time: Ann's first. Edited input on the first page, and the second page follows.
    const ann = first.getByRole('group', { name: 'Approval of send_email' });
    await ann.getByText('Edit input').click();
    await ann.getByRole('textbox', { name: 'Input to allow' }).fill('{ "to": "ann@example.com", "body": "Sunny, 21°C" }');
    await second.getByRole('group', { name: 'Approval of send_email' }).waitFor();
    await ann.getByRole('button', { name: 'Allow' }).click();
    // Bob's is next; the second page decides it, with a reason; the first page's buttons go.
    const bob = second.locator('article.tool', { hasText: 'bob@example.com' }).getByRole('group', { name: 'Approval of send_email' });
    await expect.poll(() => second.getByRole('group', { name: 'Approval of send_email' }).count()).toBe(1);
    await bob.getByRole('textbox', { name: 'Reason for Deny' }).fill('not Bob');
    await bob.getByRole('button', { name: 'Deny' }).click();
    await run;
    expect(log).toEqual(['send_email ann@example.com: Sunny, 21°C']);
    for (const page of [first, second]) {
      await expect.poll(() => page.getByRole('status').textContent()).toBe('State: finished — stopped by model');
      expect(await page.getByRole('button', { name: 'Allow' }).count()).toBe(0);
      const statuses = await page.locator('article.tool > header .status').allTextContents();
      expect(statuses).toEqual(['done', 'done', 'denied']);
      expect(await page.locator('article.tool > header .meta').allTextContents()).toEqual([
        expect.stringMatching(/^took \d+ ms$/),
        expect.stringMatching(/^allowed with edited input after .* · took \d+ ms$/),
        expect.stringMatching(/^denied after .* \(not Bob\) · took \d+ ms$/),
      ]);
      // Ann's call shows the input that ran, the edited one.
      expect(await page.locator('article.tool', { hasText: 'ann@example.com' }).locator('pre').first().textContent()).toBe(JSON.stringify({ to: 'ann@example.com', body: 'Sunny, 21°C' }, null, 2));
    }
  }, 60_000);

  it('a url whose #run= part does not decode (a stray %) shows the newest run, as for a run it does not know', async () => {
    const server = await mockServer([{ content: [text('Hello.')] }]);
    const inspect = await inspector();
    inspectors.push(inspect);
    await toolRunner(server.client(), baseParams, { onEvent: inspect.onEvent });
    const page = await newPage();
    await page.goto(`${inspect.url}#run=100%`);
    await expect.poll(() => page.getByRole('status').textContent()).toBe('State: finished — stopped by model');
    expect(await page.getByRole('navigation', { name: 'Runs' }).getByRole('link').count()).toBe(1);
    // And on a hash changed to one.
    await page.evaluate('location.hash = "#run=%E0%A4%A"');
    await page.waitForTimeout(300);
    expect(await page.getByRole('status').textContent()).toBe('State: finished — stopped by model');
  }, 30_000);

  it('a run stopped for approval and continued counts each call once', async () => {
    const server = await mockServer([{ content: [toolUse('send_email', { to: 'ann@example.com', body: 'Hi' }, 'toolu_email')] }, { content: [text('Sent.')] }]);
    const inspect = await inspector();
    inspectors.push(inspect);
    const page = await newPage();
    await page.goto(inspect.url);
    const [, , email] = inspectedTools();
    const runner = toolRunner(server.client(), { ...baseParams, tools: [email!] }, { onEvent: inspect.onEvent });
    await runner;
    runner.approve('toolu_email');
    await runner;
    await expect.poll(() => page.getByRole('status').textContent()).toBe('State: finished — stopped by model');
    expect(await page.locator('.usage').textContent()).toMatch(/ · 2 requests · 1 tool calls · /);
    expect(await page.locator('#runs .run-meta').textContent()).toMatch(/ · 2 req · 1 calls$/);
  }, 60_000);

  it('a sub-agent stopped for approval shows as waiting; a request whose fallback failed too says failed on it', async () => {
    const server = await mockServer([
      { content: [toolUse('mailer', { task: 'Email Ann' }, 'toolu_mailer')] },
      { content: [toolUse('send_email', { to: 'ann@example.com', body: 'Hi' }, 'toolu_email')] },
      { error: { status: 529 } },
    ]);
    const fallback = await mockServer([{ error: { status: 529 } }]);
    const inspect = await inspector();
    inspectors.push(inspect);
    const page = await newPage();
    await page.goto(inspect.url);
    const [, , email] = inspectedTools();
    const mailer = agentTool({ name: 'mailer', description: 'Sends emails', params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }], tools: [email!] }) });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [mailer] }, { onEvent: inspect.onEvent });
    await runner;
    expect(runner.stoppedBy).toBe('approval');
    const lane = card(page, 'mailer').getByRole('region', { name: 'Sub-agent mailer' });
    await expect.poll(() => lane.locator('.lane-head').textContent()).toBe('Sub-agent mailer — waiting for approval');

    const failing = toolRunner(server.client({ maxRetries: 0 }), baseParams, { onEvent: inspect.onEvent, fallback: [{ client: fallback.client({ maxRetries: 0 }) }] });
    await expect(failing.runUntilDone()).rejects.toThrow(/529|overloaded/i);
    const runs = page.getByRole('navigation', { name: 'Runs' }).getByRole('link');
    await expect.poll(() => runs.count()).toBe(2);
    await runs.filter({ hasText: 'failed' }).click();
    await expect.poll(() => request(page, 1).locator('.meta').first().textContent()).toMatch(/failed on fallback #0/);
    expect(await request(page, 1).locator('.meta').first().textContent()).not.toMatch(/answered by/);
  }, 60_000);

  it("a call whose approver threw shows the error's message", async () => {
    const server = await mockServer([{ content: [toolUse('send_email', { to: 'ann@example.com', body: 'Hi' }, 'toolu_email')] }]);
    const inspect = await inspector();
    inspectors.push(inspect);
    const page = await newPage();
    await page.goto(inspect.url);
    const [, , email] = inspectedTools();
    const approve = () => {
      throw new Error('the approval service is down');
    };
    await expect(toolRunner(server.client(), { ...baseParams, tools: [email!] }, { onEvent: inspect.onEvent, approve }).runUntilDone()).rejects.toThrow(/approval service is down/);
    await expect.poll(() => card(page, 'send_email').locator('.status').textContent()).toBe('error');
    await expect.poll(() => card(page, 'send_email').locator('p.error').allTextContents()).toEqual(['HookError: approve threw: Error: the approval service is down']);
  }, 60_000);

  it('calls asked of the page by an approve without onEvent show as allowed and denied once decided, not as running', async () => {
    const server = await mockServer([
      { content: [toolUse('send_email', { to: 'ann@example.com', body: 'Hi' }, 'toolu_ann'), toolUse('send_email', { to: 'bob@example.com', body: 'Hi' }, 'toolu_bob')] },
      { content: [text('Sent one.')] },
    ]);
    const inspect = await inspector();
    inspectors.push(inspect);
    const page = await newPage();
    await page.goto(inspect.url);
    const [, , email] = inspectedTools();
    const run = toolRunner(server.client(), { ...baseParams, tools: [email!] }, { approve: inspect.approve }).runUntilDone();
    const to = (address: string) => page.locator('article.tool', { hasText: address });
    await to('ann@').getByRole('button', { name: 'Allow' }).click();
    await to('bob@').getByRole('button', { name: 'Deny' }).click();
    await run;
    // No tool.start or tool.end of these calls comes (no onEvent): their decision is what the page knows of them.
    await expect.poll(() => to('bob@').locator('.status').textContent()).toBe('denied');
    expect(await to('ann@').locator('.status').textContent()).toBe('allowed');
  }, 60_000);

  it("a run resumed from a snapshot: its usage so far counts the snapshot's tokens from its start, as runner.usage does, not only at its end", async () => {
    const usage = (input_tokens: number, output_tokens: number) => ({ input_tokens, output_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    const server = await mockServer([
      { content: [toolUse('send_email', { to: 'ann@example.com', body: 'Hi' }, 'toolu_email')], usage: usage(1000, 100) },
      { content: [text('Sent.')], usage: usage(2000, 200) },
    ]);
    const inspect = await inspector();
    inspectors.push(inspect);
    const [, , email] = inspectedTools();
    const stopped = toolRunner(server.client(), { ...baseParams, tools: [email!] }, { onEvent: inspect.onEvent });
    await stopped;
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(stopped.toJSON())), { tools: [email!], options: { onEvent: inspect.onEvent, approve: inspect.approve } });
    const run = resumed.runUntilDone();
    const page = await newPage();
    await page.goto(inspect.url);
    await card(page, 'send_email').getByRole('button', { name: 'Allow' }).waitFor();
    expect(await page.locator('.usage').textContent()).toMatch(/^Usage so far: 1,000 in · 100 out · cache 0 read, 0 written · 0 requests · /);
    await card(page, 'send_email').getByRole('button', { name: 'Allow' }).click();
    await run;
    expect(resumed.usage).toMatchObject(usage(3000, 300));
    await expect.poll(() => page.getByRole('status').textContent()).toBe('State: finished — stopped by model');
    expect(await page.locator('.usage').textContent()).toMatch(/^Usage so far: 3,000 in · 300 out · cache 0 read, 0 written · 1 requests · /);
  }, 60_000);

  it('following the newest run, the page stays on a run with a call waiting for a decision (its edited input kept) while another starts; then moves on', async () => {
    const server = await mockServer([{ content: [toolUse('send_email', { to: 'ann@example.com', body: 'Hi' }, 'toolu_email')] }, { content: [text('Sent.')] }]);
    const other = await mockServer([{ content: [text('Another run, done.')] }]);
    const inspect = await inspector();
    inspectors.push(inspect);
    const page = await newPage();
    await page.goto(inspect.url);
    const log: string[] = [];
    const [, , email] = inspectedTools(log);
    const run = toolRunner(server.client(), { ...baseParams, tools: [email!] }, { onEvent: inspect.onEvent, approve: inspect.approve }).runUntilDone();
    const waiting = card(page, 'send_email');
    await waiting.getByRole('button', { name: 'Allow' }).waitFor();
    await waiting.getByText('Edit input').click();
    await waiting.getByRole('textbox', { name: 'Input to allow' }).fill('{ "to": "ann@example.com", "body": "Hi Ann" }');
    await toolRunner(other.client(), baseParams, { onEvent: inspect.onEvent });
    const runs = page.getByRole('navigation', { name: 'Runs' }).getByRole('link');
    await expect.poll(() => runs.count()).toBe(2);
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
    expect(await page.locator('.run-head h2').textContent()).toBe('Run 1 · claude-sonnet-5-5');
    await waiting.getByRole('button', { name: 'Allow' }).click();
    await run;
    expect(log).toEqual(['send_email ann@example.com: Hi Ann']);
    // Decided: the page follows the newest run again.
    await expect.poll(() => page.locator('.run-head h2').textContent()).toMatch(/^Run 2 /);
    expect(await runs.filter({ hasText: 'Run 2' }).getAttribute('aria-current')).toBe('page');
    expect(await runs.filter({ hasText: 'Run 1' }).getAttribute('aria-current')).toBe(null);
  }, 60_000);

  it('after close() an open page says the inspector stopped (it does not try to reconnect)', async () => {
    const inspect = await inspector();
    inspectors.push(inspect);
    const page = await newPage();
    await page.goto(inspect.url);
    await expect.poll(() => page.locator('#connection').textContent()).toBe('live');
    await inspect.close();
    await expect.poll(() => page.locator('#connection').textContent()).toBe('live — the inspector stopped');
  }, 60_000);

  it('a recorded file written again while its page is open: the page starts over, and shows the file as it is now', async () => {
    const file = join(dir, 'again.jsonl');
    const record = (run: string, time: number, type: string, extra: object = {}) => JSON.stringify({ run, time, type, ...extra });
    const write = (lines: string[]) => writeFileSync(file, `${lines.join('\n')}\n`);
    write([record('old-1', 1, 'run.start', { model: 'm' }), record('old-1', 2, 'run.end', { state: 'finished', stoppedBy: 'model' }), record('old-2', 3, 'run.start')]);
    const served = await inspectRecording(file, { pollMs: 20 });
    try {
      const page = await newPage();
      await page.goto(served.url);
      const runs = page.getByRole('navigation', { name: 'Runs' }).getByRole('link');
      await expect.poll(() => runs.count()).toBe(2);
      write([record('new-1', 10, 'run.start', { model: 'm' }), record('new-1', 11, 'run.end', { state: 'finished', stoppedBy: 'max_iterations' })]);
      await expect.poll(() => page.getByRole('status').textContent()).toBe('State: finished — stopped by max iterations');
      expect(await runs.count()).toBe(1);
    } finally {
      await served.close();
    }
  }, 60_000);

  it("a recorded call known only by its approval, decided in a way this version does not know (a newer one's), is drawn with the decision's own word; the rest of the run is drawn", async () => {
    const file = join(dir, 'decisions.jsonl');
    const record = (time: number, type: string, extra: object = {}) => JSON.stringify({ run: 'r-1', time, type, ...extra });
    writeFileSync(
      file,
      `${[
        record(1, 'run.start', { model: 'm' }),
        record(2, 'approval.waiting', { id: 'toolu_1', name: 'refund' }),
        record(3, 'approval.decided', { id: 'toolu_1', decision: 'expired' }),
        record(4, 'approval.waiting', { id: 'toolu_2', name: 'pay' }),
        record(5, 'approval.decided', { id: 'toolu_2', decision: 'constructor' }),
        record(6, 'run.end', { state: 'finished', stoppedBy: 'model' }),
      ].join('\n')}\n`,
    );
    const served = await inspectRecording(file);
    try {
      const page = await newPage();
      await page.goto(served.url);
      // The status was looked up in a table of the known decisions: none for this one, and the drawing threw (the run's head
      // was never drawn, and every later update of the run threw again).
      await expect.poll(() => page.getByRole('status').textContent()).toBe('State: finished — stopped by model');
      expect(await card(page, 'refund').locator('.status').textContent()).toBe('expired');
      expect(await card(page, 'pay').locator('.status').textContent()).toBe('constructor');
    } finally {
      await served.close();
    }
  }, 60_000);

  it('a message pushed while the run was stopped shows as a prompt where it came: after the call it went past, before the request it went with', async () => {
    const [first, second] = inspectedSteps();
    const server = await mockServer([first!, second!, { content: [text('Not sent.')] }]);
    const inspect = await inspector();
    inspectors.push(inspect);
    const page = await newPage();
    await page.goto(inspect.url);
    const runner = toolRunner(server.client(), params(inspectedTools(), false), { onEvent: inspect.onEvent });
    await runner;
    runner.pushMessages({ role: 'user', content: 'Do not send it.' });
    await runner;
    await expect.poll(() => page.getByRole('status').textContent()).toBe('State: finished — stopped by model');
    expect(await page.locator('article.prompt pre').allTextContents()).toEqual([prompt, 'Do not send it.']);
    const titles = await page.locator('#run section > .items > article > h3, #run section > .items > article > header > h3').allTextContents();
    expect(titles.slice(-3)).toEqual(['Tool call send_email', 'Prompt', 'Request 3']);
  }, 60_000);
});
