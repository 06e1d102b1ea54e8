/**
 * Agents as tools: a research agent delegates to two sub-agents, which the model calls in one turn
 * so they run in parallel. Each is one tool call for the lead; their usage adds up in the lead's,
 * and their events reach the lead's listeners with a `path`.
 */
import { z } from 'zod';
import { agentTool, textOf, tool, toolRunner } from 'tool-runner';
import { type RecordedRequest, type ScriptedReply, text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const searchPapers = tool({
  name: 'search_papers',
  description: 'Searches research papers',
  inputSchema: z.object({ query: z.string() }),
  run: async ({ query }) => JSON.stringify([{ title: `A survey of ${query}`, year: 2025 }]),
});

const searchNews = tool({
  name: 'search_news',
  description: 'Searches the news',
  inputSchema: z.object({ query: z.string() }),
  run: async ({ query }) => JSON.stringify([{ headline: `${query} in the headlines`, date: '2026-11-30' }]),
});

// Each sub-agent: its own prompt, its own tools; the lead's client unless given one.
const papers = agentTool({
  name: 'papers_agent',
  description: 'Finds what the research literature says on a topic',
  params: ({ task }) => ({ model, max_tokens: 1024, system: 'You read papers.', messages: [{ role: 'user', content: task }], tools: [searchPapers] }),
});
const news = agentTool({
  name: 'news_agent',
  description: 'Finds what the news says on a topic',
  params: ({ task }) => ({ model, max_tokens: 1024, system: 'You read the news.', messages: [{ role: 'user', content: task }], tools: [searchNews] }),
});

// The offline model: each request is answered from the script of the agent that sent it.
const scripts: Record<string, ScriptedReply[]> = {
  lead: [
    { content: [toolUse('papers_agent', { task: 'Research on sea otter tool use' }), toolUse('news_agent', { task: 'News on sea otters' })] },
    { content: [text('Sea otters use rocks as tools (a 2025 survey), and they are in the news this week.')] },
  ],
  'You read papers.': [{ content: [toolUse('search_papers', { query: 'sea otter tool use' })] }, { content: [text('A 2025 survey: otters crack shells with rocks.')] }],
  'You read the news.': [{ content: [toolUse('search_news', { query: 'sea otters' })] }, { content: [text('Sea otters made headlines on 2026-11-30.')] }],
};
// (A request that continues a message thread sends no system prompt: its first message tells the agent.)
const agentOf = new Map<string, string>();
const byAgent = (request: RecordedRequest): ScriptedReply => {
  const first = JSON.stringify(request.messages[0]);
  const system = (request.body as { system?: string }).system;
  if (system !== undefined) agentOf.set(first, system);
  return scripts[system ?? agentOf.get(first) ?? 'lead']!.shift()!;
};
const { client, model, close } = await exampleClient(Array.from({ length: 6 }, () => byAgent));

const lead = toolRunner(
  client,
  { model, max_tokens: 1024, messages: [{ role: 'user', content: 'What do we know about sea otters and tools?' }], tools: [papers, news] },
  {
    onEvent: (event) => {
      // A sub-agent's events carry its path (outermost agent first); the lead's have none.
      if (event.path && event.type === 'tool.end') console.log(`[${event.path.join(' > ')}] ${event.call.name} done`);
    },
  },
);
const final = await lead;
for (const block of lead.params.messages.at(-2)!.content as Array<{ type: string; content?: unknown }>) {
  if (block.type === 'tool_result') console.log(`sub-agent answered: ${String(block.content)}`);
}
console.log(`answer: ${textOf(final)}`);
console.log(`usage of all three agents: ${lead.usage.input_tokens} in / ${lead.usage.output_tokens} out over ${lead.iteration} requests of the lead`);
await close();
