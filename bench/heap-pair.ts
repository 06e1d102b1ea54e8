/**
 * The concurrent scenario alone, as `npm run bench` measures it: 1,000 runs of this runner, then of
 * the hand-written loop, in flight at once while the server holds their responses; the heap per
 * in-flight run after a full GC, and this runner's minus the loop's (the goal: at most +3 KB). About
 * a minute, where the full bench takes half an hour: run it after a change to what a run holds.
 * A round's difference moves by a few tenths of a KB; compare medians. docs/benchmark.md tells how
 * a heap snapshot finds what a run holds.
 * Usage: node --expose-gc --import tsx bench/heap-pair.ts [rounds=4]
 */
import { FULL, concurrent, median } from './scenarios.js';
import { startServer } from './server-process.js';
import { handWritten, ours } from './targets.js';

if (!globalThis.gc) throw new Error('Run with --expose-gc: the heap is read after a full GC.');
const rounds = Number(process.argv[2] ?? 4);
const { url, child: server } = await startServer(false);
try {
  // One unmeasured round of each loop first: the first round of 1,000 runs holds several KB more per
  // run (the bench's own first round does too, and its median over three rounds leaves it out).
  for (const target of [ours, handWritten]) await concurrent(url, target, { ...FULL, checkInFlight: false });
  const differences: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const [a, b] = round % 2 ? [ours, handWritten] : [handWritten, ours];
    const first = (await concurrent(url, a, FULL)).heapPerRunKB;
    const second = (await concurrent(url, b, FULL)).heapPerRunKB;
    const [mine, loop] = a === ours ? [first, second] : [second, first];
    differences.push(mine - loop);
    console.error(`round ${round}: ${ours.name} ${mine.toFixed(2)} KB, ${handWritten.name} ${loop.toFixed(2)} KB per in-flight run, +${(mine - loop).toFixed(2)} KB`);
  }
  const shown = differences.map((kb) => kb.toFixed(2)).join(', ');
  console.log(`concurrent ${FULL.concurrentRuns} runs: heap per in-flight run, ${ours.name} minus ${handWritten.name}: median +${median(differences).toFixed(2)} KB (rounds: ${shown}); goal ≤ +3 KB`);
} finally {
  server.kill();
}
