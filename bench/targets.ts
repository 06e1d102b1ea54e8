/**
 * The three loops the bench compares on the SDK's client, each given the same job: this runner,
 * the SDK's runner and a hand-written `while` loop — all sending the whole history
 * (`thread: false`), or all over a message thread (only the new messages each turn). The peers
 * (bench/peers/) are given the same job through their own Anthropic providers.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import type { BetaMessage, BetaMessageParam, BetaRawMessageStreamEvent } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { z } from 'zod';
import { type ToolRunnerOptions, tool, toolRunner } from '../src/index.js';
import { MESSAGE_THREADS_BETA } from '../src/thread.js';

/** The bench server as a provider other than the SDK's client reaches it: the same headers and `fetch`. */
export interface Connection {
  /** The server's origin (without `/v1`). */
  baseURL: string;
  /** `x-bench`: the scenario, which the server reads. */
  headers: Record<string, string>;
  /** Counts the requests (bench/scenarios.ts checks them after each run). */
  fetch: typeof fetch;
}

/** One job: the request params, the one tool the model calls, and how the loop reads each reply. */
export interface Job {
  client: Anthropic;
  /** The same server for the peers' own providers. */
  connection: Connection;
  params: { model: string; max_tokens: number; messages: BetaMessageParam[] };
  tool: { name: string; run: (input: { n?: number | undefined; q?: string | undefined }) => Promise<string> | string };
  stream: boolean;
  /** Start tools while the reply streams (ours and the SDK's runner; the hand-written loop cannot). */
  eager: boolean;
  /** Called with every stream event (or a peer's stream part) the loop body sees (stream jobs only). */
  onEvent?: (event: unknown) => void;
  /** Over a message thread (each request sends only the new messages). */
  thread?: boolean;
}

export interface Target {
  name: string;
  /** Runs the job to its end; resolves with the text of the last reply. */
  run(job: Job): Promise<string>;
}

/** The text of a reply. */
export const textOf = (message: BetaMessage) => message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

const inputSchema = z.object({ n: z.number().optional(), q: z.string().optional() });
const description = 'A bench tool';

/** Tools are defined once per job, as an application defines them once for all its runs. */
function once<T>(make: (job: Job) => T): (job: Job) => T {
  const made = new WeakMap<Job, T>();
  return (job) => {
    let value = made.get(job);
    if (value === undefined) made.set(job, (value = make(job)));
    return value;
  };
}
export const ourTool = once((job) => tool({ name: job.tool.name, description, inputSchema, run: (input) => job.tool.run(input) }));
const sdkTool = once((job) =>
  betaZodTool({ name: job.tool.name, description, inputSchema, run: (input) => job.tool.run(input) }),
);
const handWrittenDefinition = once((job) => ({
  name: job.tool.name,
  description,
  input_schema: z.toJSONSchema(inputSchema) as { type: 'object' },
}));

/** This runner, with `options` (none for the plain target). */
function ourTarget(name: string, options?: ToolRunnerOptions): Target {
  return {
    name,
    async run(job) {
      const runner = toolRunner(
        job.client,
        {
          ...job.params,
          tools: [ourTool(job)],
          stream: job.stream,
          runToolsEagerly: job.eager,
          ...(job.thread ? {} : { thread: false }),
        },
        options,
      );
      for await (const item of runner) {
        if (job.stream) {
          for await (const event of item as AsyncIterable<BetaRawMessageStreamEvent>) job.onEvent?.(event);
        }
      }
      return textOf(await runner.done());
    },
  };
}

export const ours = ourTarget('tool-runner');

/** Run control's per-turn cost: this runner with a loop guard and a budget on (limits the runs never reach). */
export const oursGuarded = ourTarget('tool-runner, guards on', {
  loopGuard: { maxRepeats: 3 },
  budget: { maxTokens: 1_000_000_000, maxToolCalls: 1_000_000, maxCallsPerTool: 1_000_000 },
});

export const sdk: Target = {
  name: 'sdk toolRunner',
  async run(job) {
    const runner = job.client.beta.messages.toolRunner({
      ...job.params,
      tools: [sdkTool(job)],
      ...(job.thread ? {} : { thread: false as const }),
      stream: job.stream as true,
      ...(job.eager ? { runToolsEagerly: true } : {}),
    });
    for await (const item of runner) {
      if (job.stream) for await (const event of item) job.onEvent?.(event);
    }
    return textOf(await runner.done());
  },
};

export const handWritten: Target = {
  name: 'hand-written',
  async run(job) {
    const definition = handWrittenDefinition(job);
    const messages = [...job.params.messages];
    let previous: BetaMessage | undefined;
    for (;;) {
      // Over a thread: the whole history once, then only the tool results, continuing from the last reply.
      const body = !job.thread
        ? { ...job.params, messages, tools: [definition] }
        : previous
          ? { model: job.params.model, max_tokens: job.params.max_tokens, messages: messages.slice(-1), betas: [MESSAGE_THREADS_BETA], thread: { type: 'continue' as const, previous_message_id: previous.id } }
          : { ...job.params, messages, tools: [definition], betas: [MESSAGE_THREADS_BETA], thread: { type: 'create' as const } };
      let message: BetaMessage;
      if (job.stream) {
        const stream = job.client.beta.messages.stream(body);
        for await (const event of stream) job.onEvent?.(event);
        message = await stream.finalMessage();
      } else {
        message = await job.client.beta.messages.create(body);
      }
      previous = message;
      messages.push({ role: 'assistant', content: message.content });
      const calls = message.content.filter((block) => block.type === 'tool_use');
      if (message.stop_reason !== 'tool_use' || calls.length === 0) return textOf(message);
      const results = await Promise.all(
        calls.map(async (call) => ({
          type: 'tool_result' as const,
          tool_use_id: call.id,
          content: await job.tool.run(inputSchema.parse(call.input)),
        })),
      );
      messages.push({ role: 'user', content: results });
    }
  },
};

/** The loops on the SDK's client; the peers are loaded by name (bench/target-by-name.ts). */
export const targets = [ours, sdk, handWritten];

/** Every loop a long-scenario worker can run (bench/long-worker.ts). */
export const longTargets = [...targets, oursGuarded];
