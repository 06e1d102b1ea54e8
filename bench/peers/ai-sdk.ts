/** Vercel AI SDK: `generateText` / `streamText` with one tool and `stopWhen`, on `@ai-sdk/anthropic`. */
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import type { Target } from '../targets.js';
import { MAX_STEPS, description, inputSchema, perJob, prompt } from './shared.js';

const setup = perJob((job) => {
  const anthropic = createAnthropic({ baseURL: `${job.connection.baseURL}/v1`, apiKey: 'bench', headers: job.connection.headers, fetch: job.connection.fetch });
  return {
    model: anthropic(job.params.model),
    tools: { [job.tool.name]: tool({ description, inputSchema, execute: (input) => job.tool.run(input) }) },
    maxOutputTokens: job.params.max_tokens,
    maxRetries: 0,
    stopWhen: stepCountIs(MAX_STEPS),
  };
});

export const aiSdk: Target = {
  name: 'AI SDK',
  async run(job) {
    const options = { ...setup(job), prompt: prompt(job) };
    if (!job.stream) return (await generateText(options)).text;
    const result = streamText(options);
    for await (const part of result.fullStream) {
      if (part.type === 'error') throw part.error;
      job.onEvent?.(part);
    }
    return result.text;
  },
};
