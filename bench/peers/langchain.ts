/** LangChain: `createAgent` with one tool, on `@langchain/anthropic`'s `ChatAnthropic`. */
import { ChatAnthropic } from '@langchain/anthropic';
import { type AIMessage, createAgent, tool } from 'langchain';
import type { z } from 'zod';
import type { Target } from '../targets.js';
import { MAX_STEPS, description, inputSchema, perJob, prompt } from './shared.js';

const agentFor = perJob((job) =>
  createAgent({
    model: new ChatAnthropic({
      model: job.params.model,
      apiKey: 'bench',
      maxTokens: job.params.max_tokens,
      maxRetries: 0,
      anthropicApiUrl: job.connection.baseURL,
      clientOptions: { defaultHeaders: job.connection.headers, fetch: job.connection.fetch },
    }),
    tools: [tool((input: z.infer<typeof inputSchema>) => job.tool.run(input), { name: job.tool.name, description, schema: inputSchema })],
  }),
);

/** A LangGraph step is a node: each turn is two (the model, then the tools). */
const config = { recursionLimit: 2 * MAX_STEPS };

const lastText = (messages: AIMessage[]) => String(messages.at(-1)?.text ?? '');

export const langChain: Target = {
  name: 'LangChain',
  async run(job) {
    const agent = agentFor(job);
    const input = { messages: [{ role: 'user' as const, content: prompt(job) }] };
    if (!job.stream) return lastText((await agent.invoke(input, config)).messages as AIMessage[]);
    // Tokens as the model streams them ('messages'), and the state after each step ('values') for the last reply.
    let messages: AIMessage[] = [];
    for await (const [mode, payload] of await agent.stream(input, { ...config, streamMode: ['messages', 'values'] })) {
      if (mode === 'messages') job.onEvent?.(payload);
      else messages = (payload as { messages: AIMessage[] }).messages;
    }
    return lastText(messages);
  },
};
