/**
 * The peers in `npm run bench`: each in a process of its own beside a hand-written loop of its own
 * (bench/long-worker.ts), as this runner and the SDK's runner are in the long scenarios. Its figures
 * are divided by that loop's, round by round.
 */
import type { LongFigures, ScenarioFigure, ScenarioRequest } from './long-worker.js';
import { type LongWorker, longWorker, runTogether } from './long-workers.js';
import type { Peer } from './peers/index.js';
import { type Series, ratio } from './report.js';
import type { Sizes } from './scenarios.js';
import { handWritten } from './targets.js';

/** A peer's process and the hand-written loop's beside it. */
export interface PeerPair {
  peer: Peer;
  worker: LongWorker;
  hand: LongWorker;
}

/** Starts each peer's pair of processes (each loads its loop while the bench warms the others up). */
export function startPeers(peers: Peer[]): PeerPair[] {
  return peers.map((peer) => ({ peer, worker: longWorker(peer.name), hand: longWorker(handWritten.name) }));
}

export function stopPeers(pairs: PeerPair[]) {
  for (const pair of pairs) {
    pair.worker.stop();
    pair.hand.stop();
  }
}

/** A peer's figures in one scenario, and its hand-written loop's in the same rounds. */
export interface PeerFigures {
  peer: Series;
  hand: Series;
}

/**
 * One round of a long scenario (whole history; no peer speaks message threads) for each peer that
 * still has rounds at this size: the peer and its hand-written loop at the same time, one run each.
 */
export async function peersLongRound(
  pairs: PeerPair[],
  request: { url: string; turns: number },
  round: number,
  roundsOf: (peer: Peer) => number,
  record: (name: string, peer: LongFigures, hand: LongFigures) => void,
  log: (line: string) => void,
) {
  for (const pair of pairs) {
    if (round >= roundsOf(pair.peer)) continue;
    log(`long ${request.turns}: ${pair.peer.name}, round ${round + 1}`);
    const [theirs, hand] = await runTogether([pair.worker, pair.hand], { ...request, thread: false, runs: 1 });
    record(pair.peer.name, theirs!, hand!);
  }
}

/**
 * The other scenarios in each peer's process, `rounds` times: parallel one loop after the other
 * (it is a wall time), concurrent and stream throughput both loops at once (heap and CPU of each
 * process, which then share the machine's drift). A peer's streamed reply of 200 KB takes 1–2 s of
 * CPU: one is measured per round where the hand-written loop's three are (40 ms each).
 */
export async function peersScenario(
  pairs: PeerPair[],
  scenario: ScenarioRequest['scenario'],
  request: { url: string; sizes: Sizes },
  rounds: number,
  log: (line: string) => void,
): Promise<Record<string, PeerFigures & { events?: number }>> {
  const figures: Record<string, PeerFigures & { events?: number }> = {};
  for (const pair of pairs) {
    const ask = (worker: LongWorker, sizes = request.sizes) => worker.measure({ scenario, url: request.url, sizes, repeats: worker === pair.worker ? 1 : 3 });
    // Unmeasured first, as in this process (bench/run.ts): fewer runs in flight; streamed replies.
    if (scenario !== 'parallel') {
      const warmUp = scenario === 'concurrent' ? { ...request.sizes, concurrentRuns: 50, holdMs: 500 } : request.sizes;
      await Promise.all([ask(pair.worker, warmUp), ask(pair.hand, warmUp)]);
    }
    const series: PeerFigures & { events?: number } = { peer: [], hand: [] };
    for (let round = 0; round < rounds; round++) {
      log(`${scenario}: ${pair.peer.name}, round ${round + 1}`);
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
      series.peer.push(theirs.value);
      series.hand.push(hand.value);
      if (theirs.events !== undefined) series.events = theirs.events;
    }
    figures[pair.peer.name] = series;
  }
  return figures;
}

/** Each peer's ratios to its hand-written loop. */
export const peerRatios = (figures: Record<string, PeerFigures>) =>
  Object.fromEntries(Object.entries(figures).map(([name, { peer, hand }]) => [name, ratio(peer, hand)]));
