/** What the peers share: the bench tool's schema and description, the step limit, and a per-job cache. */
import { z } from 'zod';
import type { Job } from '../targets.js';

/** The bench tool's input, as every target declares it (bench/targets.ts). */
export const inputSchema = z.object({ n: z.number().optional(), q: z.string().optional() });
export const description = 'A bench tool';

/**
 * The peers' step limits are set far above any scenario's turns (each stops on its own default:
 * 1 step for `generateText`, 25 for LangGraph, 5 for Mastra, 10 for OpenAI Agents): the server's
 * reply without a tool call ends each run, as for the loops on the SDK's client.
 */
export const MAX_STEPS = 100_000;

/** The user message of a job, as a plain string (every peer takes one). */
export const prompt = (job: Job) => String(job.params.messages[0]?.content);

/** An agent is made once per job, as an application makes it once for all its runs. */
export function perJob<T>(make: (job: Job) => T): (job: Job) => T {
  const made = new WeakMap<Job, T>();
  return (job) => {
    let value = made.get(job);
    if (value === undefined) made.set(job, (value = make(job)));
    return value;
  };
}
