/**
 * The README's screenshots of the inspector page, light and dark: a run with a streamed reply, a
 * failing call, a sub-agent and an approval waiting, shown in headless Chromium.
 * Usage: npx tsx scripts/inspector-screenshots.ts   (needs Debian's chromium, or CHROMIUM_PATH)
 * Writes docs/images/inspector-light.png and docs/images/inspector-dark.png.
 */
import { chromium } from 'playwright-core';
import { z } from 'zod';
import { type RunnerEvent, textOf, tool, toolRunner } from '../src/index.js';
import { inspector } from '../src/inspect/index.js';
import { createMockServer, text, toolUse } from '../src/testing/index.js';

const server = await createMockServer({
  chunkSize: 12,
  eventDelayMs: 2,
  steps: [
    { content: [text('I will ask the researcher, then check your calendar.'), toolUse('researcher', { task: 'Weather in Paris on Monday' }), toolUse('read_calendar', { day: 'monday' })] },
    { content: [text('Monday in Paris: sunny, 21°C, light wind from the west.')] },
    { content: [text('Sunny on Monday. I will let Ann know.'), toolUse('send_email', { to: 'ann@example.com', body: 'Picnic on Monday? It will be sunny, 21°C.' })] },
    { content: [text('Done.')] },
  ],
});
const inspect = await inspector();
const researcher = tool({
  name: 'researcher',
  description: 'A sub-agent that looks things up',
  inputSchema: z.object({ task: z.string() }),
  run: async ({ task }) => {
    // An agent as a tool: its runner's events reach the same page, with a path.
    const onEvent = (event: RunnerEvent) => inspect.onEvent({ ...event, path: ['researcher'] } as unknown as RunnerEvent);
    return textOf(await toolRunner(server.client(), { model: 'claude-haiku-5', max_tokens: 512, stream: true, messages: [{ role: 'user', content: task }] }, { onEvent }));
  },
});
const readCalendar = tool({
  name: 'read_calendar',
  description: "A day's meetings",
  inputSchema: z.object({ day: z.string() }),
  run: () => {
    throw new Error('calendar service unavailable (503)');
  },
});
const sendEmail = tool({
  name: 'send_email',
  description: 'Sends an email',
  inputSchema: z.object({ to: z.string(), body: z.string() }),
  needsApproval: true,
  run: ({ to }) => `sent to ${to}`,
});
const run = toolRunner(
  server.client(),
  { model: 'claude-sonnet-5-5', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: 'Is Monday good for a picnic in Paris? If so, invite Ann.' }], tools: [researcher, readCalendar, sendEmail] },
  { onEvent: inspect.onEvent, approve: inspect.approve, logger: { debug() {}, info() {}, warn() {}, error() {} } },
).runUntilDone();

const browser = await chromium.launch({ executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium' });
try {
  for (const colorScheme of ['light', 'dark'] as const) {
    const page = await browser.newPage({ viewport: { width: 1200, height: 1380 }, colorScheme });
    await page.goto(inspect.url);
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const path = `docs/images/inspector-${colorScheme}.png`;
    await page.screenshot({ path });
    console.log(`wrote ${path}`);
    await page.close();
  }
} finally {
  await browser.close();
  await inspect.close(); // denies the waiting call, so the run ends
  await run;
  await server.close();
}
