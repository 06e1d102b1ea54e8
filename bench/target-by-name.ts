/** A loop by its name: one of the loops on the SDK's client (bench/targets.ts), or a peer, loaded then. */
import { peers } from './peers/index.js';
import { type Target, targets } from './targets.js';

export const targetNames = [...targets.map((target) => target.name), ...peers.map((peer) => peer.name)];

export async function targetByName(name: string): Promise<Target> {
  const target = targets.find((candidate) => candidate.name === name) ?? (await peers.find((peer) => peer.name === name)?.load());
  if (!target) throw new Error(`No bench loop named '${name}': one of ${targetNames.join(', ')}`);
  return target;
}
