/**
 * A snapshot taken at each kind of stop (`stoppedBy`), resumed in another process
 * (test/fixtures/run-control-child.ts): `stoppedBy` and `output` survive `toJSON()`, and the
 * resumed run goes on (with a raised limit where a limit stopped it) without running a call twice.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type RunnerSnapshot, type StoppedBy, type ToolRunner, toolRunner } from 'tool-runner';
import { type MockServer, type ScriptedReply, text, toolUse } from 'tool-runner/testing';
import { controlTools, forecast } from './fixtures/run-control-tools.js';
import { baseParams, mockServer } from './helpers.js';

interface Child {
  before: { stoppedBy: StoppedBy | null; output: unknown; pending: string[] };
  after: { stoppedBy: StoppedBy; output: unknown; error: string | null; final: unknown; log: string[]; iteration: number; problems: string[] };
}

function resumeInChild(server: MockServer, snapshot: RunnerSnapshot, options: object, extra: object = {}): Promise<Child> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'test/fixtures/run-control-child.ts'],
      { env: { ...process.env, MOCK_URL: server.url } },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as Child)),
    );
    child.stdin!.end(JSON.stringify({ snapshot, options, ...extra }));
  });
}

const answer = { city: 'Paris', temperature: 21 };
const weather = (location: string) => toolUse('get_weather', { location });

/** Each kind of stop: the steps of the first part and of the resumed part, how the first part runs, and the child's options. */
const kinds: Array<{
  kind: StoppedBy;
  steps: ScriptedReply[];
  run: (runner: ToolRunner<false, unknown>, abort: () => void) => Promise<unknown>;
  options?: object;
  childOptions?: object;
  extra?: object;
  after: Partial<Child['after']>;
}> = [
  {
    kind: 'model',
    steps: [{ content: [text(JSON.stringify(answer))] }],
    run: async (runner) => runner,
    options: { output: forecast },
    childOptions: { output: true },
    // A finished run, resumed: it ends at once on its answer, no request sent.
    after: { stoppedBy: 'model', output: answer, iteration: 1 },
  },
  {
    kind: 'max_iterations',
    steps: [{ content: [weather('Paris')] }, { content: [text(JSON.stringify(answer))] }],
    run: async (runner) => runner,
    options: { output: forecast },
    childOptions: { output: true },
    extra: { maxIterations: 5 },
    after: { stoppedBy: 'model', output: answer, log: [], iteration: 2 },
  },
  {
    kind: 'approval',
    steps: [{ content: [toolUse('ask', {})] }, { content: [text('asked')] }],
    run: async (runner) => runner,
    after: { stoppedBy: 'model', log: ['ask'], iteration: 2 },
  },
  {
    kind: 'budget',
    steps: [{ content: [weather('Paris')], usage: { input_tokens: 500, output_tokens: 20 } }, { content: [text('done')] }],
    run: async (runner) => runner,
    options: { budget: { maxTokens: 500, maxToolCalls: 1 } },
    childOptions: { budget: { maxTokens: 5000, maxToolCalls: 1 } },
    after: { stoppedBy: 'model', log: [], iteration: 2 },
  },
  {
    kind: 'loop_guard',
    steps: [{ content: [weather('Paris')] }, { content: [weather('Paris')] }, { content: [weather('Paris')] }, { content: [weather('Rome')] }, { content: [text('done')] }],
    run: async (runner) => runner,
    options: { loopGuard: { maxRepeats: 1 } },
    childOptions: { loopGuard: { maxRepeats: 1 } },
    // The guard's count carries on: Paris ran once in the first process, Rome runs in the second.
    after: { stoppedBy: 'model', log: ['Rome'], iteration: 5 },
  },
  {
    kind: 'abort',
    steps: [{ content: [toolUse('hang', {})] }, { content: [text('done')] }],
    run: async (runner, abort) => {
      for await (const _ of runner) setTimeout(abort, 20);
    },
    after: { stoppedBy: 'model', iteration: 2 },
  },
  {
    kind: 'break',
    steps: [{ content: [weather('Paris')] }, { content: [weather('Paris')] }, { content: [text('done')] }],
    run: async (runner) => {
      for await (const _ of runner) break;
    },
    // The reply the loop body broke on was not kept: the resumed run sends its request again.
    after: { stoppedBy: 'model', log: ['Paris'], iteration: 3 },
  },
  {
    kind: 'error',
    steps: [{ content: [text('{"city":"Paris"}')] }, { content: [text(JSON.stringify(answer))] }],
    run: async (runner) => runner,
    options: { output: forecast, outputRepairs: 0 },
    childOptions: { output: true },
    // The OutputError's reply is the history's last message: going on asks for the repair first.
    after: { stoppedBy: 'model', output: answer, iteration: 2 },
  },
];

describe('a snapshot taken at each kind of stop, resumed in another process', () => {
  for (const { kind, steps, run, options, childOptions, extra, after } of kinds) {
    it(kind, async () => {
      const server = await mockServer(steps);
      const controller = new AbortController();
      const log: string[] = [];
      const runner = toolRunner(server.client(), { ...baseParams, tools: controlTools(log), max_iterations: kind === 'max_iterations' ? 1 : 10 }, { ...options, signal: controller.signal });
      await run(runner as ToolRunner<false, unknown>, () => controller.abort()).then(
        () => undefined,
        () => undefined,
      );
      expect(runner.stoppedBy).toBe(kind);
      const snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
      expect(snapshot.stoppedBy).toBe(kind);
      const sent = server.requests.length;

      const child = await resumeInChild(server, snapshot, childOptions ?? {}, extra);
      expect(child.before.stoppedBy).toBe(kind);
      expect(child.before.output).toEqual(kind === 'model' ? answer : null);
      expect(child.after).toMatchObject({ problems: [], error: null, ...after });
      if (kind === 'model') expect(server.requests).toHaveLength(sent);
      server.assertComplete();
    });
  }
});
