import { FULL, concurrent } from './scenarios.js';
import { pinToCoreZero, startServer } from './server-process.js';
import { handWritten, ours } from './targets.js';
const { url, child } = await startServer(pinToCoreZero());
try {
  for (const target of [ours, handWritten]) await concurrent(url, target, { ...FULL, concurrentRuns: 50, holdMs: 200 });
  const diffs: number[] = [];
  for (let round = 0; round < 3; round++) {
    const a = (await concurrent(url, ours, FULL)).heapPerRunKB;
    const b = (await concurrent(url, handWritten, FULL)).heapPerRunKB;
    diffs.push(a - b);
    console.log(`round ${round + 1}: ours ${a.toFixed(2)} hand ${b.toFixed(2)} diff ${(a - b).toFixed(2)}`);
  }
} finally {
  child.kill();
}
