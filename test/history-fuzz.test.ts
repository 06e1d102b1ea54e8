/**
 * The history fuzzer (test/fuzz/history/harness.ts) over fixed seeds, and the cases it found, each shrunk to a test of
 * its own. `node --import tsx scripts/history-fuzz.ts <first seed> <count>` runs it over more seeds.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { fuzzRun, plan } from './fuzz/history/harness.js';
import { baseParams, mockServer } from './helpers.js';

/** Seeds 1 to SEEDS (about 20 s); scripts/history-fuzz.ts runs any others. */
const SEEDS = 50;

const act = () => tool({ name: 'act', inputSchema: z.object({}), run: () => 'done' });

describe('a history the loop body set, at a stop with no request after it', () => {
  it.each([
    ['max_iterations', { max_iterations: 1 }, {}],
    ['budget', {}, { budget: { maxTokens: 10 } }],
  ] as const)('stopped by %s: the calls it leaves unanswered are answered (SPEC: the history the runner holds can be sent as it is)', async (stop, params, options) => {
    const server = await mockServer([{ content: [toolUse('act', {}, 'toolu_1')], usage: { input_tokens: 50, output_tokens: 5 } }, { content: [text('Berlin too.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, ...params, tools: [act()] }, options);
    for await (const message of runner) runner.pushMessages(message, { role: 'user', content: 'And Berlin?' });
    expect(runner.stoppedBy).toBe(stop);
    expect(historyProblems(runner.params.messages)).toEqual([]);
    expect(runner.params.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'user']);
    expect(runner.params.messages[2]!.content).toEqual([expect.objectContaining({ tool_use_id: 'toolu_1', is_error: true })]);
    // The run goes on as before once the limit is raised: the history it sends is the one it holds.
    runner.setMessagesParams((p) => ({ ...p, max_iterations: 0 }));
    if (stop === 'budget') return;
    await runner;
    expect(server.requests[1]!.messages).toEqual(runner.params.messages.slice(0, 4));
    server.assertComplete();
  });
});

describe('the history fuzzer (fixed seeds)', () => {
  it('whatever fails, the history stays valid, nothing pushed is lost, no finished call runs twice, errors are typed, no run hangs, and the run goes on with a request the API takes', async () => {
    const failures: string[] = [];
    for (let seed = 1; seed <= SEEDS; seed++) {
      const outcome = await fuzzRun(plan(seed));
      if (outcome.violations.length > 0) failures.push(`seed ${seed}: ${outcome.violations.join('; ')}\n  ${outcome.log.join('\n  ')}`);
    }
    expect(failures).toEqual([]);
  }, 90_000);
});
