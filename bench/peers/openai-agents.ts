/**
 * OpenAI Agents JS: an `Agent` with one tool, run by `run()`, on `@ai-sdk/anthropic` through the
 * AI SDK model adapter (`aisdk` from `@openai/agents-extensions`). Tracing is off: its default
 * exporter sends spans to OpenAI's servers.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { Agent, type Model, run, setTracingDisabled, tool } from '@openai/agents';
import { aisdk } from '@openai/agents-extensions/ai-sdk';
import type { Target } from '../targets.js';
import { MAX_STEPS, description, inputSchema, perJob, prompt } from './shared.js';

setTracingDisabled(true);

const agentFor = perJob((job) => {
  const anthropic = createAnthropic({ baseURL: `${job.connection.baseURL}/v1`, apiKey: 'bench', headers: job.connection.headers, fetch: job.connection.fetch });
  return new Agent({
    name: 'bench',
    instructions: '',
    // The adapter's result type has `rawUsage?: … | undefined`, which this repository's `exactOptionalPropertyTypes` rejects.
    model: aisdk(anthropic(job.params.model)) as unknown as Model,
    modelSettings: { maxTokens: job.params.max_tokens },
    tools: [tool({ name: job.tool.name, description, parameters: inputSchema, execute: (input) => job.tool.run(input) })],
  });
});

const options = { maxTurns: MAX_STEPS, tracingDisabled: true } as const;

export const openAiAgents: Target = {
  name: 'OpenAI Agents',
  async run(job) {
    const agent = agentFor(job);
    if (!job.stream) return String((await run(agent, prompt(job), options)).finalOutput);
    const result = await run(agent, prompt(job), { ...options, stream: true });
    for await (const event of result) job.onEvent?.(event);
    await result.completed;
    if (result.error) throw result.error;
    return String(result.finalOutput);
  },
};
