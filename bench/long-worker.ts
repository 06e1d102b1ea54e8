/**
 * One loop of the long scenarios in a Node process of its own. Loops that share a process share
 * the JIT's type feedback for the SDK's code and one heap: each then runs the SDK's code on
 * call sites the other loops made polymorphic, and a measured run costs more or less depending
 * on which loop ran before it. An application runs one loop; so does each of these processes.
 * The parent (bench/long-workers.ts) sends `{ url, turns, thread, runs }`; the worker answers with the figures
 * of `long()` for its loop.
 * Usage: node --expose-gc --import tsx bench/long-worker.ts <target name>   (with an IPC channel)
 */
import { long } from './scenarios.js';
import { longTargets as benchTargets } from './targets.js';

export interface LongRequest {
  url: string;
  turns: number;
  /** Measured runs of `turns` turns, one after another (default 1). */
  runs?: number;
  thread: boolean;
}
export type LongFigures = Awaited<ReturnType<typeof long>>;

const name = process.argv[2];
// Besides the bench's three loops: this runner watched by the inspector (bench/inspected.ts), loaded only for it.
const targets = name?.startsWith('tool-runner + inspector') ? Object.values(await import('./inspected.js')) : benchTargets;
const target = targets.find((candidate) => candidate.name === name);
if (!target || !process.send) throw new Error(`Usage: run with an IPC channel and one of: ${targets.map((t) => t.name).join(', ')}`);
const send = process.send.bind(process);

process.on('message', (request: LongRequest) => {
  long(request.url, target, request.turns, request.thread, request.runs).then(
    (figures) => send({ figures }),
    (error: unknown) => send({ error: String((error as Error)?.stack ?? error) }),
  );
});
process.on('disconnect', () => process.exit(0));
