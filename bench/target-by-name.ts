/** A loop by its name: one of the loops on the SDK's client (bench/targets.ts), or a peer, loaded then. */
import { peers } from './peers/index.js';
import { type Target, longTargets as targets } from './targets.js';

export const targetNames = [...targets.map((target) => target.name), ...peers.map((peer) => peer.name), 'tool-runner + inspector', 'tool-runner + inspector, no page'];

export async function targetByName(name: string): Promise<Target> {
  // This runner watched by the inspector (bench/inspected.ts) is loaded only in its own process, as a peer is.
  const inspected = name.startsWith('tool-runner + inspector') ? (Object.values(await import('./inspected.js')) as Target[]) : [];
  const target = [...targets, ...inspected].find((candidate) => candidate.name === name) ?? (await peers.find((peer) => peer.name === name)?.load());
  if (!target) throw new Error(`No bench loop named '${name}': one of ${targetNames.join(', ')}`);
  return target;
}
