/**
 * One loop in a Node process of its own. Loops that share a process share the JIT's type feedback
 * for the SDK's code and one heap: each then runs the SDK's code on call sites the other loops made
 * polymorphic, and a measured run costs more or less depending on which loop ran before it. An
 * application runs one loop; so does each of these processes. A peer (bench/peers/) is loaded only
 * in its own process.
 * The parent (bench/long-workers.ts) sends a `LongRequest` (`{ url, turns, thread, runs }`: the
 * worker answers with the figures of `long()` for its loop) or a `ScenarioRequest` (a peer's
 * other scenarios: one figure).
 * Usage: node --expose-gc --import tsx bench/long-worker.ts <target name>   (with an IPC channel)
 */
import { type Sizes, concurrent, long, median, parallel, throughput } from './scenarios.js';
import { targetByName, targetNames } from './target-by-name.js';

export interface LongRequest {
  url: string;
  turns: number;
  /** Measured runs of `turns` turns, one after another (default 1). */
  runs?: number;
  thread: boolean;
}
export type LongFigures = Awaited<ReturnType<typeof long>>;

/** One of the other scenarios (bench/scenarios.ts), measured once in this loop's process. */
export interface ScenarioRequest {
  scenario: 'parallel' | 'concurrent' | 'throughput';
  url: string;
  sizes: Sizes;
  /** Parallel: the figure is the median of this many runs (default 1); throughput: the mean of this many replies (default 3). */
  repeats?: number;
}
/** Tool-phase wall ms, heap KB per in-flight run, or client CPU ms of a streamed reply. */
export interface ScenarioFigure {
  value: number;
  /** Stream events (or parts) the loop body saw per reply (throughput). */
  events?: number;
}

async function measure(request: ScenarioRequest): Promise<ScenarioFigure> {
  switch (request.scenario) {
    case 'parallel': {
      const phases: number[] = [];
      for (let i = 0; i < (request.repeats ?? 1); i++) phases.push((await parallel(request.url, target, request.sizes)).toolPhaseMs);
      return { value: median(phases) };
    }
    case 'concurrent':
      return { value: (await concurrent(request.url, target, request.sizes)).heapPerRunKB };
    case 'throughput': {
      const figures = await throughput(request.url, target, request.sizes, false, request.repeats);
      return { value: figures.cpuMs, events: figures.events };
    }
  }
}

const name = process.argv[2];
if (!name || !targetNames.includes(name) || !process.send) throw new Error(`Usage: run with an IPC channel and one of: ${targetNames.join(', ')}`);
const target = await targetByName(name);
const send = process.send.bind(process);

process.on('message', (request: LongRequest | ScenarioRequest) => {
  const figures = 'scenario' in request ? measure(request) : long(request.url, target, request.turns, request.thread, request.runs);
  figures.then(
    (answer) => send({ figures: answer }),
    (error: unknown) => send({ error: String((error as Error)?.stack ?? error) }),
  );
});
process.on('disconnect', () => process.exit(0));
send({ ready: true });
