/**
 * `npm run bench`: this runner against the SDK's runner, a hand-written loop and the peers (the AI
 * SDK, LangChain, Mastra, OpenAI Agents), in one run. Targets are interleaved round by round (the
 * long scenarios run two loops at once, each in a process of its own; each peer runs in a process
 * of its own throughout); ratios are computed per round, then summarised as median (min–max).
 * Writes a markdown table to stdout, bench/results.json and bench/chart.svg.
 * `--smoke` runs every scenario at tiny sizes (the test suite does) and writes nothing;
 * `--no-peers` leaves the peers out.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { agentsScenario } from './agents.js';
import { type Pair, type PairFigures, pairRatios, pairsScenario, peersLongRound, startPeers, stopPairs } from './against-peers.js';
import { bundleSizes } from './bundle.js';
import { compactionTokens } from './compaction.js';
import { BEFORE, bundleSize, importTime, validationCost } from './portability.js';
import { pinToCoreZero, startServer } from './server-process.js';
import type { LongFigures } from './long-worker.js';
import { type LongWorker, longWorker, runTogether } from './long-workers.js';
import { peers as allPeers } from './peers/index.js';
import { type Comparison, type Goal, type Row, type Series, aheadOfPeers, markdown, ratio, writeResults } from './report.js';
import { FULL, SMOKE, concurrent, eager, measuredRuns, parallel, throughput } from './scenarios.js';
import { handWritten, ours, oursGuarded, sdk, targets } from './targets.js';

const smoke = process.argv.includes('--smoke');
/** `--no-peers`: this runner, the SDK's runner and the hand-written loop only (the run as it was before the peers). */
const peers = process.argv.includes('--no-peers') ? [] : allPeers;
const sizes = smoke ? SMOKE : FULL;
const rounds = (full: number) => (smoke ? 1 : full);

if (!globalThis.gc) throw new Error('Run the bench with node --expose-gc (npm run bench does).');

const rows: Row[] = [];
const goals: Goal[] = [];
/** Each target against its hand-written loop, by scenario (bench/report.ts). */
const comparisons: Comparison[] = [];
const columns = [ours.name, sdk.name, ...peers.map((peer) => peer.name)];
const log = (line: string) => process.stderr.write(`${line}\n`);

/**
 * The bench runs on core 0 and the server on core 1, when the machine allows it. Not in a smoke
 * run: it measures nothing, and its dozen processes load faster on both cores.
 */
const pinned = !smoke && pinToCoreZero();

/**
 * The long scenarios' worker processes: each runner beside a hand-written loop of its own. A
 * hand-written process shared by both pairs ran twice the runs of the loop it was compared with,
 * and that alone moved this runner's ratios at 300 turns with the whole history from 1.02–1.03 to
 * 1.07–1.08 per turn, and from 0.94–1.00 to 1.07–1.23 over the last 10% of turns.
 */
interface LongWorkers {
  ours: LongWorker;
  handBesideOurs: LongWorker;
  sdk: LongWorker;
  handBesideSdk: LongWorker;
  /** This runner with a loop guard and a budget on (the whole-history scenarios only: their cost does not depend on the thread). */
  guarded: LongWorker;
  handBesideGuarded: LongWorker;
  /** This runner watched by the inspector with its page open in headless Chromium (bench/inspected.ts); not in a smoke run. */
  inspected?: LongWorker;
  handBesideInspected?: LongWorker;
}

async function main() {
  const { url, child } = await startServer(pinned);
  const started = performance.now();
  try {
    // The long scenarios: each loop in a process of its own, two at a time (bench/long-workers.ts),
    // so that the two loops of a ratio share the machine's drift.
    const workers: LongWorkers = {
      ours: longWorker(ours.name),
      handBesideOurs: longWorker(handWritten.name),
      sdk: longWorker(sdk.name),
      handBesideSdk: longWorker(handWritten.name),
      guarded: longWorker(oursGuarded.name),
      handBesideGuarded: longWorker(handWritten.name),
      // The inspector's own tests drive the browser; a smoke run leaves it out.
      ...(!smoke && { inspected: longWorker(INSPECTED), handBesideInspected: longWorker(handWritten.name) }),
    };
    const all = Object.values(workers);
    // The peers load their loops during the warm-up; each measured run of theirs follows a 200-turn run (`long`).
    const peerPairs = startPeers(peers, smoke);
    try {
      log('warm-up');
      // Long enough for each loop's code to reach its optimised tier before the first measured round.
      for (const thread of [false, true]) await runTogether(all, { url, turns: smoke ? 10 : 300, thread });
      // No process loads its code while others are measured.
      await Promise.all(peerPairs.flatMap((pair) => [pair.worker.ready, pair.hand.ready]));
      for (const thread of [false, true]) {
        for (const turns of sizes.longTurns) await longScenario(url, workers, peerPairs, turns, thread);
      }
      // The comparison with the peers measures every target alike: in its process, beside its hand-written loop's.
      const pairs: Pair[] = [
        { name: ours.name, worker: workers.ours, hand: workers.handBesideOurs },
        { name: sdk.name, worker: workers.sdk, hand: workers.handBesideSdk },
        ...peerPairs,
      ];
      await inProcessScenarios(url, peers.length ? pairs : []);
      await agentsAsTools(url);
    } finally {
      stopPairs(peerPairs);
      for (const worker of all) worker.stop();
    }
  } finally {
    child.kill('SIGTERM');
  }
  await bundles();
  await compaction();
  durable();
  soak();
  await portability();
  report((performance.now() - started) / 1000);
}

/**
 * The scenarios that run the loops on the SDK's client in this process, interleaved (the goals);
 * then every target in its own process beside its hand-written loop's (the comparison with the peers).
 */
async function inProcessScenarios(url: string, pairs: Pair[]) {
  const phase: Record<string, Series> = {};
  for (let round = 0; round < rounds(5); round++) {
    for (const target of rotate(targets, round)) {
      log(`parallel: ${target.name}, round ${round + 1}`);
      (phase[target.name] ??= []).push((await parallel(url, target, sizes)).toolPhaseMs);
    }
  }
  rows.push({ scenario: `parallel ${sizes.parallelCalls} × ${sizes.toolMs} ms`, measure: 'tool-phase wall ms', figures: phase });
  goals.push({
    name: `parallel: tool phase vs ${sizes.toolMs} ms`,
    ratios: phase[ours.name]!.map((ms) => ms / sizes.toolMs),
    limit: 1.15,
    description: '≤ 1.15×',
  });
  const pairPhase = await pairsScenario(pairs, 'parallel', { url, sizes }, { rounds: rounds(5), warmUp: !smoke }, log);
  addPeerFigures(phase, pairPhase);
  comparisons.push({
    scenario: `parallel ${sizes.parallelCalls} × ${sizes.toolMs} ms: tool phase`,
    ratios: pairRatios(pairPhase),
    goal: true,
    digits: 3,
    note: 'Mastra runs at most 10 tool calls at once by default (`toolCallConcurrency`)',
  });

  const eagerTargets = [
    { label: 'tool-runner, stream + eager', target: ours, stream: true, eager: true },
    { label: 'tool-runner, eager without stream', target: ours, stream: false, eager: true },
    { label: 'tool-runner, stream, not eager', target: ours, stream: true, eager: false },
    { label: 'sdk toolRunner, stream + eager', target: sdk, stream: true, eager: true },
    { label: 'hand-written, stream', target: handWritten, stream: true, eager: false },
  ];
  const total: Record<string, Series> = {};
  const bounds: Series = [];
  const eagerRatios: Record<string, Series> = {};
  for (let round = 0; round < rounds(3); round++) {
    const figures: Record<string, Awaited<ReturnType<typeof eager>>> = {};
    for (const variant of rotate(eagerTargets, round)) {
      log(`eager: ${variant.label}, round ${round + 1}`);
      figures[variant.label] = await eager(url, variant.target, sizes, variant);
      (total[variant.label] ??= []).push(figures[variant.label]!.totalMs);
    }
    const baseline = figures['hand-written, stream']!;
    const bound = 1.05 * Math.max(baseline.streamMs, sizes.eagerToolMs) + baseline.finalTurnMs;
    bounds.push(bound);
    for (const label of ['tool-runner, stream + eager', 'tool-runner, eager without stream']) {
      (eagerRatios[label] ??= []).push(figures[label]!.totalMs / bound);
    }
  }
  rows.push({ scenario: `eager (~${sizes.eagerTextChunks * sizes.eagerChunkDelayMs} ms stream, ${sizes.eagerToolMs} ms tool)`, measure: 'end-to-end wall ms', figures: { ...total, 'goal bound': bounds } });
  for (const [label, values] of Object.entries(eagerRatios)) {
    goals.push({ name: `eager: ${label} vs 1.05 × max(stream, tool) + final turn`, ratios: values, limit: 1, description: '≤ 1.00 of the bound' });
  }

  const heap: Record<string, Series> = {};
  for (const target of targets) await concurrent(url, target, { ...sizes, concurrentRuns: 50, holdMs: 200, checkInFlight: false });
  for (let round = 0; round < rounds(3); round++) {
    for (const target of rotate(targets, round)) {
      log(`concurrent: ${target.name}, round ${round + 1}`);
      (heap[target.name] ??= []).push((await concurrent(url, target, sizes)).heapPerRunKB);
    }
  }
  const pairHeap = await pairsScenario(pairs, 'concurrent', { url, sizes }, { rounds: rounds(3), warmUp: !smoke }, log);
  addPeerFigures(heap, pairHeap);
  rows.push({ scenario: `concurrent ${sizes.concurrentRuns} runs`, measure: 'heap KB per in-flight run', figures: heap });
  comparisons.push({
    scenario: `concurrent ${sizes.concurrentRuns} runs: heap per in-flight run`,
    ratios: pairRatios(pairHeap),
    goal: true,
  });
  goals.push({
    name: 'concurrent: heap per run minus hand-written (KB)',
    ratios: heap[ours.name]!.map((kb, i) => kb - heap[handWritten.name]![i]!),
    limit: 3,
    description: '≤ +3 KB',
    notRatio: true,
  });

  const streamTargets = [
    { label: 'tool-runner', target: ours, eagerStart: false },
    { label: 'tool-runner, eager on', target: ours, eagerStart: true },
    { label: 'sdk toolRunner', target: sdk, eagerStart: false },
    { label: 'hand-written', target: handWritten, eagerStart: false },
  ];
  const streamCpu: Record<string, Series> = {};
  let events = 0;
  // Warm-up: the first streamed replies of each loop run unoptimised code.
  for (const variant of streamTargets) await throughput(url, variant.target, sizes, variant.eagerStart, 2);
  // Four rounds: each of the four variants runs first once.
  for (let round = 0; round < rounds(4); round++) {
    for (const variant of rotate(streamTargets, round)) {
      log(`throughput: ${variant.label}, round ${round + 1}`);
      const figures = await throughput(url, variant.target, sizes, variant.eagerStart);
      if (variant.target === handWritten) events = figures.events;
      (streamCpu[variant.label] ??= []).push(figures.cpuMs);
    }
  }
  // Three rounds, where this process runs four: the peers' replies take 1–2 s of CPU each and their ratios are 8–15.
  const pairStream = await pairsScenario(pairs, 'throughput', { url, sizes }, { rounds: rounds(3), warmUp: !smoke }, log);
  addPeerFigures(streamCpu, pairStream);
  const parts = peers.map((peer) => `${peer.name} ${pairStream[peer.name]?.events}`).join(', ');
  rows.push({ scenario: `stream ${sizes.throughputChars / 1000} KB in ${events} events`, measure: 'client CPU ms', figures: streamCpu });
  comparisons.push({
    scenario: `stream ${sizes.throughputChars / 1000} KB: client CPU`,
    ratios: pairRatios(pairStream),
    note: `stream parts each loop body saw per reply: ${parts}`,
  });
  for (const label of ['tool-runner', 'tool-runner, eager on', 'sdk toolRunner']) {
    goals.push({
      name: `stream throughput: ${label} vs hand-written`,
      ratios: ratio(streamCpu[label]!, streamCpu['hand-written']!),
      limit: label.startsWith('sdk') ? Number.NaN : 1.05,
      description: label.startsWith('sdk') ? 'reference' : '≤ 1.05×',
    });
  }
}

/** A peer's own figures beside the others' in a scenario's rows (its hand-written loop's are in the comparison). */
function addPeerFigures(figures: Record<string, Series>, pairFigures: Record<string, PairFigures>) {
  for (const peer of peers) figures[peer.name] = pairFigures[peer.name]!.target;
}

/** What a user installs for the core loop of each target, bundled (bench/bundle.ts). */
async function bundles() {
  log('bundle sizes');
  const sizes = await bundleSizes([...columns, handWritten.name]);
  const scenario = 'bundle of the core loop (esbuild, minified, provider included, zod left out)';
  rows.push({ scenario, measure: 'KB minified', figures: Object.fromEntries(Object.entries(sizes).map(([name, size]) => [name, [size.minifiedKB]])) });
  rows.push({ scenario, measure: 'KB minified + gzip', figures: Object.fromEntries(Object.entries(sizes).map(([name, size]) => [name, [size.gzipKB]])) });
  const bare = sizes[handWritten.name]!.gzipKB;
  comparisons.push({
    scenario: 'bundle, minified + gzip',
    ratios: Object.fromEntries(columns.map((name) => [name, [sizes[name]!.gzipKB / bare]])),
    note: `÷ the SDK's client alone (${bare.toFixed(1)} KB), which the hand-written loop is`,
  });
}

/**
 * One long scenario, round by round: this runner and its hand-written loop run at the same time,
 * then the SDK's runner and its own, then each peer and its own (whole history only); ratios are
 * taken within each pair.
 */
async function longScenario(url: string, workers: LongWorkers, peerPairs: Pair[], turns: number, thread: boolean) {
  const label = thread ? 'long on a thread' : 'long';
  const versus = thread ? 'hand-written thread loop' : 'hand-written';
  const perTurn: Record<string, Series> = {};
  const first: Record<string, Series> = {};
  const last: Record<string, Series> = {};
  const sdkRatios: Series = [];
  const guardedRatios: Series = [];
  const inspectedRatios: Series = [];
  const peerRatio: Record<string, { perTurn: Series; last: Series }> = {};
  const record = (name: string, figures: LongFigures) => {
    (perTurn[name] ??= []).push(figures.perTurnMs);
    (first[name] ??= []).push(figures.firstTenthMs);
    (last[name] ??= []).push(figures.lastTenthMs);
  };
  const recordPeer = (name: string, theirs: LongFigures, hand: LongFigures) => {
    record(name, theirs);
    const ratios = (peerRatio[name] ??= { perTurn: [], last: [] });
    ratios.perTurn.push(theirs.perTurnMs / hand.perTurnMs);
    ratios.last.push(theirs.lastTenthMs / hand.lastTenthMs);
  };
  const request = { url, turns, thread, runs: smoke ? 1 : measuredRuns(turns) };
  const sdkLast: Series = [];
  for (let round = 0; round < rounds(7); round++) {
    log(`${label} ${turns}: round ${round + 1}`);
    const [mine, hand] = await runTogether([workers.ours, workers.handBesideOurs], request);
    record(ours.name, mine!);
    record(handWritten.name, hand!);
    const [theirs, handBesideTheirs] = await runTogether([workers.sdk, workers.handBesideSdk], request);
    record(sdk.name, theirs!);
    sdkRatios.push(theirs!.perTurnMs / handBesideTheirs!.perTurnMs);
    if (!thread) {
      const [guarded, handBesideGuarded] = await runTogether([workers.guarded, workers.handBesideGuarded], request);
      (perTurn[oursGuarded.name] ??= []).push(guarded!.perTurnMs);
      guardedRatios.push(guarded!.perTurnMs / handBesideGuarded!.perTurnMs);
    }
    if (workers.inspected && workers.handBesideInspected) {
      const [inspected, handBesideInspected] = await runTogether([workers.inspected, workers.handBesideInspected], request);
      (perTurn[INSPECTED] ??= []).push(inspected!.perTurnMs);
      inspectedRatios.push(inspected!.perTurnMs / handBesideInspected!.perTurnMs);
    }
    sdkLast.push(theirs!.lastTenthMs / handBesideTheirs!.lastTenthMs);
    if (!thread) await peersLongRound(peerPairs, { url, turns }, round, (peer) => (smoke ? 1 : (peer.longRounds[turns] ?? 7)), recordPeer, log);
  }
  const scenario = `${label} ${turns} turns`;
  rows.push({ scenario, measure: 'client CPU ms per turn', figures: perTurn });
  rows.push({ scenario, measure: 'CPU ms per turn, first 10% of turns', figures: first });
  rows.push({ scenario, measure: 'CPU ms per turn, last 10% of turns', figures: last });
  const hand = perTurn[handWritten.name]!;
  goals.push({ name: `${label} ${turns}: CPU/turn vs ${versus}`, ratios: ratio(perTurn[ours.name]!, hand), limit: 1.1, description: '≤ 1.10×' });
  // The runner's extra cost does not grow with the history: it stays within the bound at the end of the run too.
  goals.push({ name: `${label} ${turns}: first-10% turns CPU vs ${versus}`, ratios: ratio(first[ours.name]!, first[handWritten.name]!), limit: Number.NaN, description: 'reference' });
  goals.push({ name: `${label} ${turns}: last-10% turns CPU vs ${versus}`, ratios: ratio(last[ours.name]!, last[handWritten.name]!), limit: 1.1, description: '≤ 1.10× (flat)' });
  goals.push({ name: `${label} ${turns}: SDK runner CPU/turn vs ${versus}`, ratios: sdkRatios, limit: Number.NaN, description: 'reference' });
  if (!thread) goals.push({ name: `${label} ${turns}: CPU/turn with loopGuard + budget vs ${versus}`, ratios: guardedRatios, limit: 1.1, description: '≤ 1.10×' });
  if (inspectedRatios.length > 0) goals.push({ name: `${label} ${turns}: CPU/turn with the inspector, its page open, vs ${versus}`, ratios: inspectedRatios, limit: 1.15, description: '≤ 1.15×' });
  if (thread) return;
  const peerColumn = (pick: 'perTurn' | 'last') => Object.fromEntries(Object.entries(peerRatio).map(([name, ratios]) => [name, ratios[pick]]));
  comparisons.push({
    scenario: `${scenario}: CPU per turn`,
    ratios: { [ours.name]: ratio(perTurn[ours.name]!, hand), [sdk.name]: sdkRatios, ...peerColumn('perTurn') },
    goal: true,
    note: roundsNote(turns),
  });
  comparisons.push({
    scenario: `${scenario}: CPU per turn, last 10% of turns`,
    ratios: { [ours.name]: ratio(last[ours.name]!, last[handWritten.name]!), [sdk.name]: sdkLast, ...peerColumn('last') },
  });
}

/** This runner watched by the inspector, its page open (bench/inspected.ts, loaded only in its worker's process). */
const INSPECTED = 'tool-runner + inspector';

/** Which peers ran fewer rounds than the loops on the SDK's client, at this size. */
function roundsNote(turns: number) {
  if (smoke) return '';
  const fewer = peers.filter((peer) => (peer.longRounds[turns] ?? 7) < 7).map((peer) => `${peer.name} ${peer.longRounds[turns]}`);
  return fewer.length ? `rounds: 7, peers ${fewer.join(', ')} (one run each; docs/benchmark.md)` : '';
}

/** Scenario 6: input tokens of a long run with big tool results, with and without client-side compaction. */
async function compaction() {
  const [turns, threshold] = smoke ? [20, 5_000] : [200, 20_000];
  log(`compaction: ${turns} turns`);
  const without = await compactionTokens(turns, threshold, false);
  const compacted = await compactionTokens(turns, threshold, true);
  const scenario = `compaction, ${turns} turns of ~2,000-token results, threshold ${threshold}`;
  rows.push({ scenario, measure: 'input tokens sent (all requests)', figures: { 'without compaction': [without.inputTokens], 'with compaction': [compacted.inputTokens] } });
  rows.push({ scenario, measure: 'largest request, tokens', figures: { 'without compaction': [without.largestRequestTokens], 'with compaction': [compacted.largestRequestTokens] } });
  rows.push({ scenario, measure: 'completed (1 = yes) / summary requests', figures: { 'with compaction': [compacted.completed ? 1 : 0], summaries: [compacted.summaries] } });
  goals.push({
    name: 'compaction: input tokens with ÷ without',
    ratios: [compacted.inputTokens / without.inputTokens],
    limit: 0.2,
    description: '≤ 0.20 (80% fewer)',
  });
}

/** The cost of a durable run (tool-runner/dbos) on PostgreSQL, in a process of its own (it launches DBOS). */
function durable() {
  const [turns, durableRounds] = smoke ? [5, 1] : [100, 5];
  log(`durable: ${turns} turns × ${durableRounds} rounds`);
  // Not pinned: the PostgreSQL it starts would inherit the core it runs on.
  const result = spawnSync(process.execPath, ['--import', 'tsx', new URL('./durable.ts', import.meta.url).pathname, String(turns), String(durableRounds)], {
    encoding: 'utf8',
  });
  const figures = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as
    | { skipped: string }
    | { plainMsPerTurn: number; durableMsPerTurn: number; extraMsPerStep: number[] };
  const scenario = `durable ${turns} turns of one tool call (PostgreSQL, fsync on)`;
  if ('skipped' in figures) {
    log(`durable: skipped (${figures.skipped})`);
    return;
  }
  rows.push({ scenario, measure: 'wall ms per turn', figures: { 'tool-runner': [figures.plainMsPerTurn], 'durable (DBOS)': [figures.durableMsPerTurn] } });
  rows.push({ scenario, measure: 'extra wall ms per step (request or tool call)', figures: { 'durable (DBOS)': figures.extraMsPerStep } });
}

/** Agents as tools (issue 22): `agentTool` against a hand-written nested loop, each in a process of its own (bench/agents.ts). */
async function agentsAsTools(url: string) {
  const parentTurns = smoke ? 3 : 100;
  const scenario = `agents as tools: ${parentTurns} parent turns × a 3-turn sub-agent`;
  log(scenario);
  const figures = await agentsScenario(url, rounds(9), parentTurns);
  rows.push({ scenario, measure: 'client CPU ms per request', figures });
  goals.push({
    name: 'agents as tools: CPU/turn vs hand-written nested loop',
    ratios: ratio(figures.agentTool, figures['hand-written nested loop']),
    limit: 1.15,
    description: '≤ 1.15×',
  });
}

/** The reliability soak, in a process of its own (its heap is the measure): random runs with random faults. */
function soak() {
  const [iterations, checkpoint] = smoke ? [200, 50] : [10_000, 1_000];
  log(`soak: ${iterations} iterations`);
  const command = [process.execPath, '--expose-gc', '--import', 'tsx', new URL('./soak.ts', import.meta.url).pathname, String(iterations), String(checkpoint)];
  const [program, ...args] = pinned ? ['taskset', '-c', '0', ...command] : command;
  const result = spawnSync(program!, args, { encoding: 'utf8' });
  const figures = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as {
    iterations: number;
    runs: number;
    seconds: number;
    heapAtCheckpointMB: number;
    heapAtEndMB: number;
    growth: number;
    violations: string[];
    unhandled: string[];
  };
  rows.push({
    scenario: `soak ${figures.iterations} iterations (${figures.runs} runs, random faults)`,
    measure: `heap MB after gc at ${checkpoint} / at the end`,
    figures: { [`at ${checkpoint}`]: [figures.heapAtCheckpointMB], 'at the end': [figures.heapAtEndMB] },
  });
  goals.push({ name: `soak: heap growth ${checkpoint} → ${figures.iterations} iterations`, ratios: [figures.growth], limit: 0.1, description: '≤ +10%', notRatio: true });
  goals.push({
    name: 'soak: violations + unhandled rejections',
    ratios: [figures.violations.length + figures.unhandled.length],
    limit: 0,
    description: '0',
    notRatio: true,
  });
}

/** Everywhere the SDK runs (issue 19): the core's bundle, its import time, the JSON Schema validation beside ajv's. */
async function portability() {
  log('portability: bundle, import, validation');
  const size = await bundleSize();
  const scenario = 'core bundle (ESM, minified; SDK and zod external)';
  rows.push({ scenario, measure: 'KB minified', figures: { 'tool-runner': [size.minKB], 'before (ajv)': [BEFORE.bundleMinKB] } });
  rows.push({ scenario, measure: 'KB gzipped', figures: { 'tool-runner': [size.gzipKB], 'before (ajv)': [BEFORE.bundleGzipKB] } });
  goals.push({ name: 'core bundle, KB gzipped', ratios: [size.gzipKB], limit: 20, description: '≤ 20 KB', notRatio: true });
  const imports: Series = [];
  for (let round = 0; round < rounds(3); round++) imports.push(await importTime(smoke ? 1 : 11));
  rows.push({ scenario: 'import of the core in Node', measure: 'ms, median of fresh processes', figures: { 'tool-runner': imports, 'before (ajv)': [BEFORE.importMs] } });
  const cost: Record<string, Series> = {};
  for (let round = 0; round < rounds(5); round++) {
    for (const [name, us] of Object.entries(validationCost(smoke ? 200 : 50_000))) (cost[name] ??= []).push(us);
  }
  rows.push({ scenario: 'JSON Schema validation, 10-field object', measure: 'µs per call', figures: cost });
}

function rotate<T>(list: T[], by: number): T[] {
  const shift = by % list.length;
  return [...list.slice(shift), ...list.slice(0, shift)];
}

/** The versions of the peers' packages measured, as installed. */
function versions(): Record<string, string> {
  const names = [...new Set(['@anthropic-ai/sdk', ...peers.flatMap((peer) => peer.packages)])];
  return Object.fromEntries(names.map((name) => [name, (JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as { version: string }).version]));
}

function report(seconds: number) {
  // Without the peers (`--no-peers`) there is nothing to compare with.
  const compared = peers.length ? comparisons : [];
  const results = { rows, goals: [...goals, ...aheadOfPeers(compared, ours.name, peers.map((peer) => peer.name))], comparisons: compared, columns, versions: versions() };
  const environment = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}${pinned ? ' (bench on core 0, server on core 1)' : ''}; ${seconds.toFixed(0)} s.`;
  console.log(markdown(results, { smoke, environment }));
  if (!smoke) writeResults(results, { date: new Date().toISOString(), node: process.version, cpus: cpus().length, seconds });
}

await main();
