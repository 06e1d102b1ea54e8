/**
 * What users do with the runner, the same in every runtime (Node, Bun, Deno, workerd, a browser page):
 * a streamed run with `runToolsEagerly`, an abort mid-stream and mid-tool, a tool's timeout, approvals
 * (decided inline, and stopped for then decided), a snapshot through JSON resumed, typed output with a
 * repair turn, a JSON Schema tool with `$ref`, `enum` and patterns, the budget, and the API's errors
 * through the SDK's retries. `runFeatures(servers)` takes one testing-kit server per scenario
 * (`{ eager: url, … }`: a scenario that fails cannot shift the next one's steps) and resolves to a
 * report the test compares with Node's. Plain JavaScript, so each runtime loads it as it is.
 */
import Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { agentTool, historyProblems, resumeToolRunner, tool, toolRunner } from 'tool-runner';

const params = { model: 'claude-sonnet-5-5', max_tokens: 256, messages: [{ role: 'user', content: 'Go' }] };
const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
const results = (runner, index) => runner.params.messages[index].content.map((block) => ({ id: block.tool_use_id, content: block.content, is_error: block.is_error === true }));
// The request id in a message differs from run to run.
const errorOf = (error) => ({ name: error?.name, message: error?.message?.replace(/req_\w+/, 'req_…'), status: error?.status, apiError: error instanceof Anthropic.APIError });
const lastText = (message) => message.content.find((block) => block.type === 'text')?.text;
const checked = (runner) => historyProblems(runner.params.messages);

const add = tool({ name: 'add', description: 'Adds', inputSchema: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => String(a + b) });

const scenarios = {
  /** A streamed run with runToolsEagerly: the tool starts before the reply has ended. */
  async eager(client) {
    let started = false;
    const mark = tool({ name: 'mark', description: 'Marks', inputSchema: z.object({ n: z.number() }), run: ({ n }) => ((started = true), `marked ${n}`) });
    const runner = toolRunner(client, { ...params, stream: true, runToolsEagerly: true, tools: [mark] });
    const seen = [];
    for await (const stream of runner) {
      for await (const event of stream) if (event.type === 'message_stop') seen.push(started);
    }
    return { startedBeforeStop: seen, results: results(runner, 2), stoppedBy: runner.stoppedBy, problems: checked(runner) };
  },

  /** The run's signal aborted while the reply streams (the server stalls): the run ends, no hang. */
  async abortStream(client) {
    const controller = new AbortController();
    const runner = toolRunner(client, { ...params, stream: true, tools: [add] }, { signal: controller.signal });
    let events = 0;
    let error;
    try {
      for await (const stream of runner) {
        for await (const _event of stream) if (++events === 3) controller.abort();
      }
    } catch (caught) {
      error = errorOf(caught);
    }
    // (An event the runtime had already read may still come after the abort: Node's fetch reads ahead, Deno's and workerd's do not.)
    return { error, stoppedBy: runner.stoppedBy, messages: runner.params.messages.length };
  },

  /** The run's signal aborted while a tool runs: the tool's signal aborts, and the run ends. */
  async abortTool(client) {
    const { controller, wait, reason } = abortedWhileWaiting();
    const runner = toolRunner(client, { ...params, tools: [wait] }, { signal: controller.signal });
    const error = await runner.then(() => undefined, errorOf);
    return { reason: reason(), error: { name: error?.name }, stoppedBy: runner.stoppedBy, problems: checked(runner) };
  },

  /** A tool's timeoutMs: one that heeds its signal, one that ignores it, one in time. */
  async timeout(client) {
    let reason;
    const heeds = tool({ name: 'heeds', description: 'x', inputSchema: z.object({}), timeoutMs: 50, run: async (_i, { signal }) => (await sleep(2_000, signal).catch((e) => (reason = `${e?.name}`)), 'late') });
    const ignores = tool({ name: 'ignores', description: 'x', inputSchema: z.object({}), timeoutMs: 50, run: async () => (await sleep(300), 'late') });
    const quick = tool({ name: 'quick', description: 'x', inputSchema: z.object({}), timeoutMs: 1_000, run: async () => (await sleep(5), 'in time') });
    const runner = toolRunner(client, { ...params, tools: [heeds, ignores, quick] });
    const final = await runner;
    return { reason, results: results(runner, 2), final: lastText(final) };
  },

  /** Approvals: stopped for (pendingApprovals, approve with edited input, deny, await again), then decided inline. */
  async approvals(client) {
    const ran = [];
    const refund = tool({
      name: 'refund',
      description: 'Refunds',
      inputSchema: z.object({ amount: z.number() }),
      needsApproval: ({ amount }) => amount > 50,
      run: ({ amount }) => (ran.push(amount), `refunded ${amount}`),
    });
    const runner = toolRunner(client, { ...params, tools: [refund] });
    await runner;
    const stopped = { stoppedFor: runner.stoppedBy, pending: runner.pendingApprovals.map((call) => [call.id, call.name, call.input]) };
    runner.approve('toolu_r2', { input: { amount: 300 } });
    runner.deny('toolu_r3', 'too much');
    const final = await runner;
    const stoppedRun = { ...stopped, results: results(runner, 2), final: lastText(final), stoppedBy: runner.stoppedBy };

    const asked = [];
    const inline = toolRunner(
      client,
      { ...params, tools: [refund] },
      { approve: async (call, { signal }) => (asked.push([call.toolUse.id, signal instanceof AbortSignal]), call.input.amount > 100 ? { decision: 'deny', reason: 'over 100' } : { decision: 'allow' }) },
    );
    const inlineFinal = await inline;
    return { stoppedRun, inline: { asked, results: results(inline, 2), final: lastText(inlineFinal) }, ran };
  },

  /** toJSON() → JSON.stringify → resumeToolRunner in the same runtime, at an approval stop. */
  async resume(client) {
    const ran = [];
    const deploy = tool({ name: 'deploy', description: 'x', inputSchema: z.object({ env: z.string() }), needsApproval: ({ env }) => env === 'prod', run: ({ env }) => (ran.push(env), `deployed ${env}`) });
    const runner = toolRunner(client, { ...params, tools: [deploy] }, { budget: { maxToolCalls: 5 } });
    await runner;
    const saved = JSON.stringify(runner.toJSON());
    const resumed = resumeToolRunner(client, JSON.parse(saved), { tools: [deploy], options: { budget: { maxToolCalls: 5 } } });
    const pending = resumed.pendingApprovals.map((call) => call.id);
    for (const id of pending) resumed.approve(id);
    const final = await resumed;
    return { pending, ran, results: results(resumed, 2), final: lastText(final), stoppedBy: resumed.stoppedBy, iteration: resumed.iteration, usage: resumed.usage };
  },

  /** Typed output with a zod schema: an invalid answer, the repair turn, the answer parsed. */
  async output(client) {
    const schema = z.object({ city: z.string().regex(/^\p{Lu}/u), temp: z.number().int(), at: z.string().datetime() });
    const runner = toolRunner(client, { ...params, tools: [add] }, { output: schema });
    await runner;
    return { output: runner.output, repair: runner.params.messages.at(-2)?.content, stoppedBy: runner.stoppedBy };
  },

  /** A JSON Schema tool: $ref into $defs, enum, patterns (one with a Unicode property escape), format. */
  async jsonSchema(client) {
    const book = tool({
      name: 'book',
      description: 'Books a seat',
      inputSchema: {
        type: 'object',
        $defs: { day: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }, name: { type: 'string', pattern: '^\\p{Lu}\\p{Ll}+$' } },
        properties: {
          day: { $ref: '#/$defs/day' },
          traveller: { $ref: '#/$defs/name' },
          cabin: { enum: ['eco', 'biz'] },
          email: { type: 'string', format: 'email' },
          seats: { type: 'integer', minimum: 1, default: 1 },
        },
        required: ['day', 'traveller', 'cabin'],
        additionalProperties: false,
      },
      run: (input) => JSON.stringify(input),
    });
    const runner = toolRunner(client, { ...params, tools: [book] });
    const final = await runner;
    return { results: results(runner, 2), final: lastText(final), sent: runner.params.tools.map((t) => t.input_schema) };
  },

  /** The budget: a call past maxToolCalls is not run, a second reply past it stops the run. */
  async budget(client) {
    const runner = toolRunner(client, { ...params, tools: [add] }, { budget: { maxToolCalls: 1 } });
    const final = await runner;
    const tokens = toolRunner(client, { ...params, tools: [add] }, { budget: { maxTokens: 1_000 } });
    const tokensFinal = await tokens;
    return {
      stoppedBy: runner.stoppedBy,
      results: results(runner, 2),
      last: final.content.map((block) => block.id ?? block.text),
      problems: checked(runner),
      tokens: { stoppedBy: tokens.stoppedBy, iteration: tokens.iteration, last: tokensFinal.content.map((block) => block.id ?? block.text) },
    };
  },

  /** The API's errors: a 429 retried by the SDK, a 500 with maxRetries: 0, an error event mid-stream. */
  async errors(client, baseURL) {
    const retrying = new Anthropic({ apiKey: 'test-key', baseURL, maxRetries: 2, dangerouslyAllowBrowser: true });
    const retried = toolRunner(retrying, { ...params, tools: [add] });
    const retriedFinal = await retried.then(lastText, errorOf);
    const failing = toolRunner(client, { ...params, tools: [add] });
    const failed = await failing.then(lastText, errorOf);
    const streamed = toolRunner(client, { ...params, stream: true, tools: [add] });
    let streamError;
    try {
      for await (const stream of streamed) for await (const _event of stream);
    } catch (error) {
      streamError = errorOf(error);
    }
    return {
      retried: { final: retriedFinal, iteration: retried.iteration },
      failed: { error: failed, stoppedBy: failing.stoppedBy, iteration: failing.iteration },
      streamed: { error: streamError, stoppedBy: streamed.stoppedBy },
    };
  },

  /** A reply that cannot be read (a stream cut mid-reply, one cut after message_stop, a body that is no JSON): a ReplyError, then the same request again. */
  async brokenReplies(client) {
    const outcomes = [];
    for (const stream of [true, true, false]) {
      const runner = toolRunner(client, { ...params, stream, tools: [add] });
      let error;
      try {
        for await (const item of runner) if (stream) for await (const _event of item);
      } catch (caught) {
        // The SDK's own error escapes a loop body that reads the stream, in the runtime's words ('terminated', 'network error', …).
        error = caught?.name === 'ReplyError' ? { name: caught.name, message: caught.message.replace(/ \(.*\)\./, ' (…).') } : { name: caught?.name };
      }
      const final = await runner.then(lastText, (caught) => `${caught?.name}: ${caught?.message}`);
      outcomes.push({ error, final, iteration: runner.iteration, messages: runner.params.messages.length, problems: checked(runner) });
    }
    return outcomes;
  },

  /** A history in a Proxy (a UI framework's reactive list, as a page holds it), with a function in a block. */
  async reactiveHistory(client) {
    const reactive = (value) => new Proxy(value, {});
    const messages = reactive([reactive({ role: 'user', content: reactive([reactive({ type: 'text', text: 'Go', onClick: () => {} })]) })]);
    const runner = toolRunner(client, { ...params, messages, tools: [add] });
    const final = await runner;
    return { final: lastText(final), sent: runner.params.messages };
  },

  /** runToolsEagerly with the run's signal aborted while an eager call runs and the reply still streams. */
  async eagerAbort(client) {
    const { controller, wait, reason } = abortedWhileWaiting();
    const runner = toolRunner(client, { ...params, stream: true, runToolsEagerly: true, tools: [wait] }, { signal: controller.signal });
    let error;
    try {
      for await (const stream of runner) for await (const _event of stream);
    } catch (caught) {
      error = caught?.name;
    }
    return { reason: reason(), error, stoppedBy: runner.stoppedBy, messages: runner.params.messages.length, problems: checked(runner) };
  },

  /** A sub-agent (agentTool) whose tool needs approval: the parent stops with it, the snapshot goes through JSON, resumed it runs. */
  async subAgent(client) {
    const ran = [];
    const refund = tool({ name: 'refund', description: 'x', inputSchema: z.object({ amount: z.number() }), needsApproval: true, run: ({ amount }) => (ran.push(amount), `refunded ${amount}`) });
    const helper = agentTool({ name: 'helper', description: 'Helps', params: ({ task }) => ({ ...params, system: 'helper', messages: [{ role: 'user', content: task }], tools: [refund] }) });
    const events = [];
    const runner = toolRunner(client, { ...params, tools: [helper] }, { onEvent: (event) => events.push(event.path ? `${event.path.join('/')}:${event.type}` : event.type) });
    await runner;
    const pending = runner.pendingApprovals.map((call) => ({ id: call.id, name: call.name, path: call.path }));
    const resumed = resumeToolRunner(client, JSON.parse(JSON.stringify(runner.toJSON())), { tools: [helper] });
    for (const call of resumed.pendingApprovals) resumed.approve(call.id);
    const final = await resumed;
    return { stoppedBy: runner.stoppedBy, pending, ran, final: lastText(final), results: results(resumed, 2), events: [...new Set(events)].sort() };
  },

  /** Typed output with a plain JSON Schema: enum, pattern, $ref, an invalid answer repaired. */
  async outputJsonSchema(client) {
    const schema = {
      type: 'object',
      $defs: { code: { type: 'string', pattern: '^[A-Z]{3}$' } },
      properties: { from: { $ref: '#/$defs/code' }, to: { $ref: '#/$defs/code' }, cabin: { enum: ['eco', 'biz'] } },
      required: ['from', 'to', 'cabin'],
      additionalProperties: false,
    };
    const runner = toolRunner(client, { ...params }, { output: schema });
    await runner;
    return { output: runner.output, repair: runner.params.messages.at(-2)?.content };
  },

  /** A loop body that reads part of the stream (the runner reads the rest), then one that leaves the loop while the server stalls. */
  async breakStream(client) {
    const partial = toolRunner(client, { ...params, stream: true, tools: [add] });
    const seen = [];
    for await (const stream of partial) {
      // (Leaving the stream's own loop would abort it, as the SDK's MessageStream does: read a few events, then the message.)
      const events = stream[Symbol.asyncIterator]();
      seen.push((await events.next()).value.type, (await events.next()).value.type);
      seen.push((await stream.finalMessage()).stop_reason);
    }
    const leaving = toolRunner(client, { ...params, stream: true, tools: [add] });
    for await (const stream of leaving) {
      await stream[Symbol.asyncIterator]().next();
      break;
    }
    return {
      partial: { seen, results: results(partial, 2), final: lastText(partial.params.messages.at(-1)), stoppedBy: partial.stoppedBy },
      leaving: { stoppedBy: leaving.stoppedBy, messages: leaving.params.messages.length },
    };
  },
};

/** A tool that waits (heeding its signal) and aborts the run 10 ms after it starts; `reason()`: the name its wait ended with. */
function abortedWhileWaiting() {
  const controller = new AbortController();
  let reason;
  const wait = tool({
    name: 'wait',
    description: 'Waits',
    inputSchema: z.object({}),
    run: async (_input, { signal }) => {
      setTimeout(() => controller.abort(), 10);
      await sleep(5_000, signal).catch((error) => (reason = error?.name));
      return 'waited';
    },
  });
  return { controller, wait, reason: () => reason };
}

export const scenarioNames = Object.keys(scenarios);

export async function runFeatures(servers) {
  const report = {};
  for (const [name, run] of Object.entries(scenarios)) {
    const client = new Anthropic({ apiKey: 'test-key', baseURL: servers[name], maxRetries: 0, dangerouslyAllowBrowser: true });
    const started = Date.now();
    try {
      report[name] = await run(client, servers[name]);
    } catch (error) {
      report[name] = { thrown: `${error?.name}: ${error?.message}`, stack: error?.stack };
    }
    // Generous bounds: a scenario that waits seconds instead of milliseconds has hung on something.
    if (Date.now() - started > 4_000) report[name].slow = true;
  }
  return report;
}
