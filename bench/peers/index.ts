/**
 * The peers a TypeScript developer would pick instead of this runner, as the bench knows them
 * without loading them: each is loaded only in a process of its own (bench/long-worker.ts), so
 * that its code is not in the processes that measure the other loops.
 */
import type { Target } from '../targets.js';

export interface Peer {
  name: string;
  load(): Promise<Target>;
  /** The packages a user installs for it (their versions go in the results). */
  packages: string[];
  /** What a user's core loop imports from them, provider included (bench/bundle.ts). */
  bundle: string;
  /**
   * Rounds of the long scenarios (one run each), by turns: fewer than the seven of the loops on the
   * SDK's client, the fewer the wider the peer's margin and the longer its run (Mastra's one run of
   * 1,000 turns takes about four minutes): docs/benchmark.md, "The peers".
   */
  longRounds: Record<number, number>;
}

export const peers: Peer[] = [
  {
    name: 'AI SDK',
    load: async () => (await import('./ai-sdk.js')).aiSdk,
    packages: ['ai', '@ai-sdk/anthropic'],
    bundle: `export { generateText, streamText, stepCountIs, tool } from 'ai'; export { createAnthropic } from '@ai-sdk/anthropic';`,
    longRounds: { 300: 3, 1000: 3 },
  },
  {
    name: 'LangChain',
    load: async () => (await import('./langchain.js')).langChain,
    packages: ['langchain', '@langchain/anthropic', '@langchain/core'],
    bundle: `export { createAgent, tool } from 'langchain'; export { ChatAnthropic } from '@langchain/anthropic';`,
    longRounds: { 300: 3, 1000: 2 },
  },
  {
    name: 'Mastra',
    load: async () => (await import('./mastra.js')).mastra,
    packages: ['@mastra/core', '@ai-sdk/anthropic'],
    bundle: `export { Agent } from '@mastra/core/agent'; export { createTool } from '@mastra/core/tools'; export { createAnthropic } from '@ai-sdk/anthropic';`,
    longRounds: { 300: 2, 1000: 1 },
  },
  {
    name: 'OpenAI Agents',
    load: async () => (await import('./openai-agents.js')).openAiAgents,
    packages: ['@openai/agents', '@openai/agents-extensions', '@ai-sdk/anthropic'],
    bundle: `export { Agent, run, setTracingDisabled, tool } from '@openai/agents'; export { aisdk } from '@openai/agents-extensions/ai-sdk'; export { createAnthropic } from '@ai-sdk/anthropic';`,
    longRounds: { 300: 2, 1000: 1 },
  },
];
