/**
 * The wire fuzzer (test/fuzz/wire/harness.ts) over fixed seeds: the real runner and client over HTTP against a server that
 * damages its answers (streams cut at a byte, events missing, repeated or out of order, a `data:` line of broken JSON, an
 * `error` event mid-stream, the wrong content type, a JSON body cut short, an empty 200, 429/500/529 with and without
 * `retry-after`, a connection reset after the headers, stalls). `npx tsx scripts/wire-fuzz.ts <first seed> <count>` runs
 * it over more seeds; what a fault gives on the SDK's runner and on this one, side by side: test/fuzz/wire/compare.ts.
 */
import { describe, expect, it } from 'vitest';
import { plan, wireRun } from './fuzz/wire/harness.js';
import { compareOnFault } from './fuzz/wire/compare.js';

/** Seeds 1 to SEEDS (about 12 s), and the seeds that found a defect (scripts/wire-fuzz.ts runs any others). */
const SEEDS = 30;
const FOUND = [
  695, // a JSON reply without `role`: kept, a history the API refuses
  194, // a JSON reply without `id`, over a thread: the next continue refused, the snapshot not resumable
  420, // a JSON reply with a null block: a TypeError of the runner's own
  750, // the same, its request never ended (no request.end)
  5883, // a stream without a call's content_block_start, over a thread: kept without the call, the thread continued with it unanswered
];

describe('the wire fuzzer (fixed seeds)', () => {
  it('whatever the wire does, the run ends, its errors say what happened, the history is valid, nothing is kept broken or told twice, nothing is left open', async () => {
    const failures: string[] = [];
    for (const seed of [...Array.from({ length: SEEDS }, (_, i) => i + 1), ...FOUND]) {
      const outcome = await wireRun(plan(seed));
      if (outcome.violations.length > 0) failures.push(`seed ${seed}: ${outcome.violations.join('; ')}\n  ${outcome.log.join('\n  ')}`);
    }
    expect(failures).toEqual([]);
  }, 90_000);
});

describe('a damaged answer on both runners', () => {
  it.each([
    ['cut', 0.5, true],
    ['badJson', 0.5, true],
    ['cutEnd', 0.5, false],
    ['empty', 0, false],
    ['contentType', 0, false],
    ['reset', 0, false],
  ] as const)('%s (at %s, stream %s): this runner says what broke and what to do, where the SDK says the runtime words', async (fault, at, stream) => {
    const { sdk, ours } = await compareOnFault(fault, at, stream);
    expect(sdk).not.toBe('no error');
    expect(ours).toMatch(/^ReplyError: (The reply stream broke before the message was complete|The API's reply could not be read) \(.+\)\. Nothing of it was added to the history; iterate again to send the request again\.$/);
  });
});
