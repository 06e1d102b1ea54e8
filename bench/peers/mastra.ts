/**
 * Mastra: an `Agent` with one tool (`createTool`), on `@ai-sdk/anthropic`. Mastra runs at most 10
 * tool calls of a step at once by default (`toolCallConcurrency`): left as a user gets it.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { Agent } from '@mastra/core/agent';
import type { MastraModelConfig } from '@mastra/core/llm';
import { createTool } from '@mastra/core/tools';
import type { Target } from '../targets.js';
import { MAX_STEPS, description, inputSchema, perJob, prompt } from './shared.js';

const agentFor = perJob((job) => {
  const anthropic = createAnthropic({ baseURL: `${job.connection.baseURL}/v1`, apiKey: 'bench', headers: job.connection.headers, fetch: job.connection.fetch });
  return new Agent({
    id: 'bench',
    name: 'bench',
    instructions: '',
    // Mastra's types for AI SDK 7 models disagree with @ai-sdk/anthropic 4's (`doGenerate`); it runs them as they are.
    model: anthropic(job.params.model) as unknown as MastraModelConfig,
    tools: { [job.tool.name]: createTool({ id: job.tool.name, description, inputSchema, execute: async (input) => job.tool.run(input) }) },
  });
});

const options = (job: Parameters<Target['run']>[0]) => ({ maxSteps: MAX_STEPS, modelSettings: { maxOutputTokens: job.params.max_tokens, maxRetries: 0 } });

export const mastra: Target = {
  name: 'Mastra',
  async run(job) {
    const agent = agentFor(job);
    if (!job.stream) return (await agent.generate(prompt(job), options(job))).text;
    const output = await agent.stream(prompt(job), options(job));
    for await (const part of output.fullStream) {
      if (part.type === 'error') throw part.payload.error;
      job.onEvent?.(part);
    }
    return output.text;
  },
};
