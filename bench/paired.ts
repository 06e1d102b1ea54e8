/**
 * Two loops measured in pairs that run at the same time, each in a process of its own
 * (bench/long-workers.ts), on one core (the server on another). This machine's CPU time drifts by
 * ±20% from one run to the next; two runs that share the same seconds share that drift, so the
 * ratio of a pair is close to the loops' own difference (the hand-written loop paired with itself:
 * median 0.99 over 8 pairs of 1,000 turns over a thread). `npm run bench`
 * measures its long scenarios the same way (this runner beside a hand-written loop, then the SDK's
 * runner beside another); this runs any two, e.g. a loop against itself to see the method's spread,
 * or a peer by its name ('AI SDK', 'LangChain', 'Mastra', 'OpenAI Agents'; whole history only).
 * Usage: node --import tsx bench/paired.ts [turns=1000] [thread|whole] [pairs=8] [a=tool-runner] [b=hand-written]
 */
import type { LongFigures } from './long-worker.js';
import { longWorker, runTogether } from './long-workers.js';
import { measuredRuns, median } from './scenarios.js';
import { pinToCoreZero, startServer } from './server-process.js';

const [turns = 1000, mode = 'thread', pairs = 8, a = 'tool-runner', b = 'hand-written'] = process.argv.slice(2).map((arg, i) => (i === 0 || i === 2 ? Number(arg) : arg)) as [number?, string?, number?, string?, string?];
const thread = mode !== 'whole';
const { url, child: server } = await startServer(pinToCoreZero());

const workers = [longWorker(a), longWorker(b)];
const spread = (values: number[]) => `${median(values).toFixed(3)} (${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)})`;
try {
  for (let i = 0; i < 3; i++) await runTogether(workers, { url, turns: 1000, thread });
  const ratios: number[] = [];
  const lastTenth: number[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    const [x, y] = (await runTogether(workers, { url, turns, thread, runs: measuredRuns(turns) })) as [LongFigures, LongFigures];
    ratios.push(x.perTurnMs / y.perTurnMs);
    lastTenth.push(x.lastTenthMs / y.lastTenthMs);
    console.error(`pair ${pair + 1}: ${a} ${x.perTurnMs.toFixed(3)}, ${b} ${y.perTurnMs.toFixed(3)} ms per turn, ratio ${(x.perTurnMs / y.perTurnMs).toFixed(3)}`);
  }
  console.log(`${turns} turns ${thread ? 'over a thread' : 'with the whole history'}: ${a} / ${b} CPU per turn, median of ${pairs} pairs ${spread(ratios)}; last 10% of turns ${spread(lastTenth)}`);
} finally {
  for (const worker of workers) worker.stop();
  server.kill();
}
