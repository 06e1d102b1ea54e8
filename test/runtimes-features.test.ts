/**
 * What users do on every runtime the SDK runs in (SPEC §9.5): test/runtimes/features.mjs, one program of
 * scenarios (eager tools, aborts, timeouts, approvals, a snapshot resumed, typed output, a JSON Schema
 * tool, the budget, the API's errors), run by Node, Bun, Deno, workerd and headless Chromium, each scenario
 * against its own testing-kit server on Node. Every runtime's report is Node's.
 */
import { describe, expect, it } from 'vitest';
import { text, toolUse } from 'tool-runner/testing';
import type { MockServer } from 'tool-runner/testing';
import { mockServer } from './helpers.js';
import { type Runtime, browser, bun, deno, node, workerd } from './runtimes/launch.js';

const steps = () => ({
  eager: [
    { content: [toolUse('mark', { n: 1 }, 'toolu_m1'), text('a text after the call, long enough to take a while to stream')], chunkSize: 3, eventDelayMs: 5 },
    { content: [text('eager done')] },
  ],
  abortStream: [{ content: [text('a long answer that will never finish streaming')], chunkSize: 2, stallAfterEvents: 5 }],
  abortTool: [{ content: [toolUse('wait', {}, 'toolu_w')] }],
  timeout: [{ content: [toolUse('heeds', {}, 'toolu_h'), toolUse('ignores', {}, 'toolu_i'), toolUse('quick', {}, 'toolu_q')] }, { content: [text('timed')] }],
  approvals: [
    { content: [toolUse('refund', { amount: 20 }, 'toolu_r1'), toolUse('refund', { amount: 400 }, 'toolu_r2'), toolUse('refund', { amount: 90 }, 'toolu_r3')] },
    { content: [text('decided')] },
    { content: [toolUse('refund', { amount: 400 }, 'toolu_r4'), toolUse('refund', { amount: 70 }, 'toolu_r5')] },
    { content: [text('inline')] },
  ],
  resume: [{ content: [toolUse('deploy', { env: 'staging' }, 'toolu_d1'), toolUse('deploy', { env: 'prod' }, 'toolu_d2')] }, { content: [text('resumed')] }],
  output: [
    { content: [text('{"city":"oslo","temp":-3.5,"at":"yesterday"}')] },
    { content: [text('{"city":"Øslo","temp":-3,"at":"2026-12-06T10:00:00Z"}')] },
  ],
  jsonSchema: [
    {
      content: [
        toolUse('book', { day: '2026-12-24', traveller: 'Émile', cabin: 'eco', email: 'e@example.com' }, 'toolu_j1'),
        toolUse('book', { day: 'tomorrow', traveller: 'émile', cabin: 'first', email: 'not an email', seats: 0 }, 'toolu_j2'),
      ],
    },
    { content: [text('booked')] },
  ],
  budget: [
    { content: [toolUse('add', { a: 1, b: 2 }, 'toolu_b1'), toolUse('add', { a: 3, b: 4 }, 'toolu_b2')] },
    { content: [toolUse('add', { a: 5, b: 6 }, 'toolu_b3')] },
    { content: [toolUse('add', { a: 1, b: 1 }, 'toolu_t1')], usage: { input_tokens: 2_000 } },
  ],
  errors: [
    { error: { status: 429, retryAfter: 0 } },
    { content: [text('after a retry')] },
    { error: { status: 500 } },
    { content: [text('the stream breaks here')], error: { status: 529, type: 'overloaded_error', afterEvents: 3 } },
  ],
  brokenReplies: [
    { content: [text('a reply cut off in the middle')], chunkSize: 3, disconnectAfterEvents: 4 },
    { content: [text('whole again')] },
    { content: [text('a reply cut off at its end')], disconnectAfterEvents: 100 },
    { content: [text('whole once more')] },
    { content: [text('not json')], malformed: true },
    { content: [text('read at last')] },
  ],
  reactiveHistory: [{ content: [text('reactive ok')] }],
  eagerAbort: [{ content: [toolUse('wait', {}, 'toolu_ew'), text('and a long text after the call that streams slowly')], chunkSize: 2, eventDelayMs: 20 }],
  subAgent: [
    { content: [toolUse('helper', { task: 'refund 30' }, 'toolu_sub')] },
    { content: [toolUse('refund', { amount: 30 }, 'toolu_inner')] },
    { content: [text('helper done')] },
    { content: [text('lead done')] },
  ],
  outputJsonSchema: [{ content: [text('{"from":"osl","to":"CDG","cabin":"first"}')] }, { content: [text('{"from":"OSL","to":"CDG","cabin":"eco"}')] }],
  breakStream: [
    { content: [toolUse('add', { a: 2, b: 2 }, 'toolu_p')], chunkSize: 2 },
    { content: [text('partly read')], chunkSize: 2 },
    { content: [text('never ends')], stallAfterEvents: 2 },
  ],
});

async function servers(): Promise<{ urls: Record<string, string>; servers: Record<string, MockServer> }> {
  const started: Record<string, MockServer> = {};
  for (const [name, list] of Object.entries(steps())) started[name] = await mockServer(list as never);
  return { urls: Object.fromEntries(Object.entries(started).map(([name, server]) => [name, server.url])), servers: started };
}

const result = (id: string, content: string, is_error = false) => ({ id, content, is_error });
const denied = (reason: string) => `Error: the call to 'refund' was denied by the user: ${reason}. It was not run.`;

/** What the program reports on Node, scenario by scenario (the other runtimes are compared with Node's own report). */
const expected = {
  eager: { startedBeforeStop: [true, true], results: [result('toolu_m1', 'marked 1')], stoppedBy: 'model', problems: [] },
  abortStream: { error: { name: 'APIUserAbortError', apiError: true }, stoppedBy: 'abort', messages: 1 },
  abortTool: { reason: 'AbortError', error: { name: 'APIUserAbortError' }, stoppedBy: 'abort', problems: [] },
  timeout: {
    reason: 'TimeoutError',
    results: [
      result('toolu_h', "Error: the call to 'heeds' timed out after 50 ms and was stopped.", true),
      result('toolu_i', "Error: the call to 'ignores' timed out after 50 ms and was stopped.", true),
      result('toolu_q', 'in time'),
    ],
    final: 'timed',
  },
  approvals: {
    stoppedRun: {
      stoppedFor: 'approval',
      pending: [['toolu_r2', 'refund', { amount: 400 }], ['toolu_r3', 'refund', { amount: 90 }]],
      results: [result('toolu_r1', 'refunded 20'), result('toolu_r2', 'refunded 300'), result('toolu_r3', denied('too much'), true)],
      final: 'decided',
      stoppedBy: 'model',
    },
    inline: { asked: [['toolu_r4', true], ['toolu_r5', true]], results: [result('toolu_r4', denied('over 100'), true), result('toolu_r5', 'refunded 70')], final: 'inline' },
    ran: [20, 300, 70],
  },
  resume: { pending: ['toolu_d2'], ran: ['staging', 'prod'], results: [result('toolu_d1', 'deployed staging'), result('toolu_d2', 'deployed prod')], final: 'resumed', stoppedBy: 'model', iteration: 2 },
  output: { output: { city: 'Øslo', temp: -3, at: '2026-12-06T10:00:00Z' }, repair: expect.stringMatching(/- city: .*\n- temp: .*\n- at: /), stoppedBy: 'model' },
  jsonSchema: {
    results: [
      result('toolu_j1', JSON.stringify({ day: '2026-12-24', traveller: 'Émile', cabin: 'eco', email: 'e@example.com', seats: 1 })),
      result(
        'toolu_j2',
        "Invalid input for tool 'book':\n- day: must match the pattern \"^\\\\d{4}-\\\\d{2}-\\\\d{2}$\"\n- traveller: must match the pattern \"^\\\\p{Lu}\\\\p{Ll}+$\"\n- cabin: must be one of \"eco\", \"biz\"\n- seats: must be >= 1\nFix the input and call the tool again.",
        true,
      ),
    ],
    final: 'booked',
  },
  budget: {
    stoppedBy: 'budget',
    results: [result('toolu_b1', '3'), result('toolu_b2', "Error: the call to 'add' was not run: the run reached its limit of 1 tool calls (budget.maxToolCalls). Answer with what you have.", true)],
    last: ['toolu_b3'],
    problems: [],
    tokens: { stoppedBy: 'budget', iteration: 1, last: ['toolu_t1'] },
  },
  errors: {
    retried: { final: 'after a retry', iteration: 1 },
    failed: { error: { name: 'InternalServerError', status: 500, apiError: true }, stoppedBy: 'error', iteration: 1 },
    streamed: { error: { name: 'APIError', apiError: true, message: expect.stringContaining('overloaded_error') }, stoppedBy: 'error' },
  },
  brokenReplies: [
    { error: { name: 'AnthropicError' }, final: 'whole again', iteration: 2, messages: 2, problems: [] },
    { error: { name: 'AnthropicError' }, final: 'whole once more', iteration: 2, messages: 2, problems: [] },
    {
      error: { name: 'ReplyError', message: "The API's reply could not be read (…). Nothing of it was added to the history; iterate again to send the request again." },
      final: 'read at last',
      iteration: 2,
      messages: 2,
      problems: [],
    },
  ],
  reactiveHistory: { final: 'reactive ok', sent: [{ role: 'user', content: [{ type: 'text', text: 'Go' }] }, { role: 'assistant', content: [{ type: 'text', text: 'reactive ok', citations: null }] }] },
  eagerAbort: { reason: 'AbortError', error: 'APIUserAbortError', stoppedBy: 'abort', messages: 1, problems: [] },
  subAgent: {
    stoppedBy: 'approval',
    pending: [{ id: 'toolu_inner', name: 'refund', path: ['helper'] }],
    ran: [30],
    final: 'lead done',
    results: [result('toolu_sub', 'helper done')],
    events: expect.arrayContaining(['helper:tool.end', 'helper:request.end', 'tool.end', 'run.end']),
  },
  outputJsonSchema: { output: { from: 'OSL', to: 'CDG', cabin: 'eco' }, repair: expect.stringMatching(/- from: must match the pattern .*\n- cabin: must be one of "eco", "biz"/) },
  breakStream: {
    partial: { seen: ['message_start', 'content_block_start', 'tool_use', 'message_start', 'content_block_start', 'end_turn'], results: [result('toolu_p', '4')], final: 'partly read', stoppedBy: 'model' },
    leaving: { stoppedBy: 'break', messages: 1 },
  },
};

async function runFeatures(runtime: Runtime): Promise<Record<string, unknown>> {
  const { urls, servers: started } = await servers();
  const report = await runtime.run(JSON.stringify(urls), 'features');
  expect(report).not.toHaveProperty('error');
  for (const server of Object.values(started)) server.assertComplete();
  // A scenario that took seconds, not milliseconds, waited on something that should have ended it.
  for (const [name, scenario] of Object.entries(report)) expect({ [name]: scenario }).not.toMatchObject({ [name]: { slow: true } });
  return report;
}

describe('what users do, the same in every runtime', () => {
  let onNode: Promise<Record<string, unknown>> | undefined;
  const nodeReport = () => (onNode ??= runFeatures(node));

  it('node: every scenario as the README says', async () => {
    const report = await nodeReport();
    // One scenario at a time, so that a failure names it.
    for (const [name, want] of Object.entries(expected)) expect({ [name]: report[name] }).toMatchObject({ [name]: want });
    expect(Object.keys(report)).toEqual(Object.keys(expected));
  }, 120_000);

  for (const runtime of [bun, deno, workerd, browser]) {
    it(`${runtime.name}: every scenario as on Node`, async () => {
      const [report, reference] = await Promise.all([runFeatures(runtime), nodeReport()]);
      for (const name of Object.keys(expected)) expect({ [name]: report[name] }).toEqual({ [name]: reference[name] });
    }, 120_000);
  }
});
