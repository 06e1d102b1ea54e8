/**
 * The caller's control API at random moments while a run goes on (test/fuzz/control/harness.ts): fixed seeds, each a
 * run over the testing kit's server in which the loop body, listeners, hooks, tools, timers and the code after the run
 * call pushMessages, setMessagesParams, setRequestOptions, generateToolResponse, approve / deny, deferToolCall,
 * addTools / removeTools, compactBeforeNextTurn, toJSON (resumed), abort, break, and await the runner concurrently.
 * More seeds: `node --import tsx test/fuzz/control/run.ts [firstSeed] [count] [--trace]`.
 */
import { describe, expect, it } from 'vitest';
import { fuzzRun } from './fuzz/control/harness.js';

// 4103: the seed that found the results lost to a message pushed in a cancelled wait's tool.end (approval.test.ts).
const SEEDS = [...Array.from({ length: 40 }, (_, i) => i + 1), 4103];

describe('control API at random moments', () => {
  it('keeps the history valid, every pushed message once, each call run once with its own result; nothing hangs or is left unhandled', async () => {
    const failures: string[] = [];
    for (const seed of SEEDS) {
      const outcome = await fuzzRun(seed);
      if (outcome.violations.length > 0) failures.push(`seed ${seed}: ${[...new Set(outcome.violations)].join('\n  ')}\n${outcome.trace.join('\n')}`);
    }
    expect(failures).toEqual([]);
  }, 60_000);
});
