/**
 * Two loops measured in pairs that run at the same time, each in a process of its own
 * (bench/long-worker.ts), on one core (the server on another). This machine's CPU time drifts by
 * ±20% from one run to the next; two runs that share the same seconds share that drift, so the
 * ratio of a pair is close to the loops' own difference (the hand-written loop paired with itself:
 * median 1.01 over 8 pairs of 1,000 turns over a thread; shorter runs spread more). A diagnostic beside `npm run bench`: under contention the caches are colder,
 * which weighs on the longer code path, so ratios here are, if anything, higher than alone.
 * Usage: node --import tsx bench/paired.ts [turns=1000] [thread|whole] [pairs=8] [a=tool-runner] [b=hand-written]
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { LongFigures, LongRequest } from './long-worker.js';
import { median } from './scenarios.js';
import { pinToCoreZero, startServer } from './server-process.js';

const [turns = 1000, mode = 'thread', pairs = 8, a = 'tool-runner', b = 'hand-written'] = process.argv.slice(2).map((arg, i) => (i === 0 || i === 2 ? Number(arg) : arg)) as [number?, string?, number?, string?, string?];
const thread = mode !== 'whole';
const { url, child: server } = await startServer(pinToCoreZero());

function worker(name: string): { run(request: LongRequest): Promise<LongFigures>; child: ChildProcess } {
  const child = fork(new URL('./long-worker.ts', import.meta.url).pathname, [name], { execArgv: ['--expose-gc', '--import', 'tsx'] });
  const run = (request: LongRequest) =>
    new Promise<LongFigures>((resolve, reject) => {
      child.once('message', (answer: { figures: LongFigures } | { error: string }) => ('error' in answer ? reject(new Error(answer.error)) : resolve(answer.figures)));
      child.send(request);
    });
  return { run, child };
}

const [first, second] = [worker(a), worker(b)];
try {
  for (let i = 0; i < 3; i++) await Promise.all([first.run({ url, turns: 1000, thread }), second.run({ url, turns: 1000, thread })]);
  const ratios: number[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    const [x, y] = await Promise.all([first.run({ url, turns, thread }), second.run({ url, turns, thread })]);
    ratios.push(x.perTurnMs / y.perTurnMs);
    console.error(`pair ${pair + 1}: ${a} ${x.perTurnMs.toFixed(3)}, ${b} ${y.perTurnMs.toFixed(3)} ms per turn, ratio ${(x.perTurnMs / y.perTurnMs).toFixed(3)}`);
  }
  console.log(`${turns} turns ${thread ? 'over a thread' : 'with the whole history'}: ${a} / ${b} CPU per turn, median of ${pairs} pairs ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})`);
} finally {
  first.child.disconnect();
  second.child.disconnect();
  server.kill();
}
