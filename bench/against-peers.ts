/**
 * The comparison with the peers in `npm run bench`: each target in a process of its own beside a
 * hand-written loop of its own (bench/long-worker.ts), its figures divided by that loop's, round by
 * round. The long scenarios' processes of this runner and of the SDK's runner are such pairs
 * already; each peer has one of its own, which is the only process that loads it.
 */
import type { LongFigures, ScenarioFigure, ScenarioRequest } from './long-worker.js';
import { type LongWorker, longWorker, runTogether } from './long-workers.js';
import type { Peer } from './peers/index.js';
import { type Series, ratio } from './report.js';
import type { Sizes } from './scenarios.js';
import { handWritten } from './targets.js';

/** A target's process and the hand-written loop's beside it. */
export interface Pair {
  name: string;
  worker: LongWorker;
  hand: LongWorker;
  /** Set for a peer. */
  peer?: Peer;
}

/**
 * Starts each peer's pair of processes (each loads its loop while the bench warms the others up).
 * `oneHandWritten`: the peers share one hand-written process (a smoke run, which measures nothing:
 * a dozen processes' start is most of its time).
 */
export function startPeers(peers: Peer[], oneHandWritten = false): Pair[] {
  const shared = oneHandWritten && peers.length ? longWorker(handWritten.name) : undefined;
  return peers.map((peer) => ({ name: peer.name, peer, worker: longWorker(peer.name), hand: shared ?? longWorker(handWritten.name) }));
}

export function stopPairs(pairs: Pair[]) {
  for (const pair of pairs) {
    pair.worker.stop();
    pair.hand.stop();
  }
}

/** A target's figures in one scenario, and its hand-written loop's in the same rounds. */
export interface PairFigures {
  target: Series;
  hand: Series;
  /** Throughput: the stream events (or parts) the loop body saw per reply. */
  events?: number;
}

/**
 * One round of a long scenario (whole history; no peer speaks message threads) for each peer that
 * still has rounds at this size: the peer and its hand-written loop at the same time, one run each.
 */
export async function peersLongRound(
  pairs: Pair[],
  request: { url: string; turns: number },
  round: number,
  roundsOf: (peer: Peer) => number,
  record: (name: string, peer: LongFigures, hand: LongFigures) => void,
  log: (line: string) => void,
) {
  for (const pair of pairs) {
    if (!pair.peer || round >= roundsOf(pair.peer)) continue;
    log(`long ${request.turns}: ${pair.name}, round ${round + 1}`);
    const [theirs, hand] = await runTogether([pair.worker, pair.hand], { ...request, thread: false, runs: 1 });
    record(pair.name, theirs!, hand!);
  }
}

/** How many runs or replies a round of a scenario measures in a process: see `pairsScenario`. */
function repeats(scenario: ScenarioRequest['scenario'], pair: Pair, worker: LongWorker): number | undefined {
  if (scenario === 'parallel') return 5;
  if (scenario === 'throughput') return pair.peer && worker === pair.worker ? 1 : 3;
  return undefined;
}

/**
 * A scenario in each pair's processes, `plan.rounds` times (after an unmeasured round, unless a smoke run): parallel one loop after the other (it is a
 * wall time; a round's figure is the median of five runs, so that one stall of the shared machine
 * does not decide it), concurrent and stream throughput both loops at once (heap and CPU of each
 * process, which then share the machine's drift). A peer's streamed reply of 200 KB takes 1–2 s of
 * CPU: one is measured per round where the hand-written loop's three are (40 ms each).
 */
export async function pairsScenario(
  pairs: Pair[],
  scenario: ScenarioRequest['scenario'],
  request: { url: string; sizes: Sizes },
  plan: { rounds: number; warmUp: boolean },
  log: (line: string) => void,
): Promise<Record<string, PairFigures>> {
  const figures: Record<string, PairFigures> = {};
  for (const pair of pairs) {
    const ask = (worker: LongWorker, sizes = request.sizes) => {
      const times = repeats(scenario, pair, worker);
      return worker.measure({ scenario, url: request.url, sizes, ...(times ? { repeats: times } : {}) });
    };
    // Unmeasured first, as in the bench's own process (bench/run.ts): fewer runs in flight; streamed replies.
    if (plan.warmUp && scenario !== 'parallel') {
      const warmUp = scenario === 'concurrent' ? { ...request.sizes, concurrentRuns: 50, holdMs: 200, checkInFlight: false } : request.sizes;
      await Promise.all([ask(pair.worker, warmUp), ask(pair.hand, warmUp)]);
    }
    const series: PairFigures = { target: [], hand: [] };
    for (let round = 0; round < plan.rounds; round++) {
      log(`${scenario}, each in its own process: ${pair.name}, round ${round + 1}`);
      let theirs: ScenarioFigure;
      let hand: ScenarioFigure;
      if (scenario === 'parallel') {
        const first = round % 2 === 0;
        const a = await ask(first ? pair.worker : pair.hand);
        const b = await ask(first ? pair.hand : pair.worker);
        [theirs, hand] = first ? [a, b] : [b, a];
      } else {
        [theirs, hand] = await Promise.all([ask(pair.worker), ask(pair.hand)]);
      }
      series.target.push(theirs.value);
      series.hand.push(hand.value);
      if (theirs.events !== undefined) series.events = theirs.events;
    }
    figures[pair.name] = series;
  }
  return figures;
}

/** Each target's ratios to its hand-written loop. */
export const pairRatios = (figures: Record<string, PairFigures>) =>
  Object.fromEntries(Object.entries(figures).map(([name, { target, hand }]) => [name, ratio(target, hand)]));
