/**
 * The loop guard (`options.loopGuard`): a model that calls the same tool with the same input again
 * and again is stopped. A call identical (name, and deep-equal input, key order aside) to
 * `maxRepeats` earlier calls of the run is not run; a second such repeat stops the run.
 */
import type { LoopGuardOptions } from './run-control-options.js';
import type { BetaToolUseBlock } from './types.js';

/** What a snapshot keeps of the guard: the calls seen, by key, and the repeats answered. */
export interface LoopGuardJSON {
  seen: Record<string, number>;
  repeats: number;
}

export class LoopGuard {
  readonly #maxRepeats: number;
  /** Calls seen so far (run or not), by name and input. */
  readonly #seen = new Map<string, number>();
  #repeats = 0;

  constructor(options: LoopGuardOptions, snapshot?: LoopGuardJSON) {
    this.#maxRepeats = options.maxRepeats;
    if (snapshot) this.restore(snapshot);
  }

  /** The calls seen from `json` again (a snapshot's, or those before a reply that was not kept). */
  restore(json: LoopGuardJSON): void {
    this.#seen.clear();
    for (const [key, count] of Object.entries(json.seen)) this.#seen.set(key, count);
    this.#repeats = json.repeats;
  }

  /** Repeats answered so far in the run. */
  get repeats(): number {
    return this.#repeats;
  }

  /**
   * Records a call; returns the text of its result when it repeats `maxRepeats` earlier ones (it is not run). `toolset`:
   * a toolset member's family (a member and a tool of the run may share a name; they are different tools).
   */
  admit(name: string, input: unknown, toolset?: string): string | undefined {
    const key = keyOf(name, input, toolset);
    const earlier = this.#seen.get(key) ?? 0;
    this.#seen.set(key, earlier + 1);
    if (earlier < this.#maxRepeats) return undefined;
    this.#repeats++;
    return `Error: the call to '${name}' was not run: it repeats an earlier call with the same input (made ${earlier} time${earlier === 1 ? '' : 's'} already; loopGuard.maxRepeats is ${this.#maxRepeats}). Use the result you have, or try something different.`;
  }

  /** A call admitted (and run) whose result the model never got: it counts as no earlier call. */
  forget(use: BetaToolUseBlock): void {
    oneLess(this.#seen, keyOfUse(use));
  }

  /**
   * A summary took the place of the calls `gone`: no more calls of a name and input count than the history still holds
   * (`left`, kept verbatim). (Not one less per call summarised: a call the run never counted, the caller's own or one cut
   * off by max_tokens, would take a kept call's count with it, and the model be let repeat a call whose result it has.)
   */
  summarised(gone: readonly BetaToolUseBlock[], left: readonly BetaToolUseBlock[]): void {
    const kept = new Map<string, number>();
    for (const call of left) {
      const key = keyOfUse(call);
      kept.set(key, (kept.get(key) ?? 0) + 1);
    }
    for (const use of gone) {
      const key = keyOfUse(use);
      const still = kept.get(key) ?? 0;
      if ((this.#seen.get(key) ?? 0) <= still) continue;
      if (still > 0) this.#seen.set(key, still);
      else this.#seen.delete(key);
    }
  }

  toJSON(): LoopGuardJSON {
    return { seen: Object.fromEntries(this.#seen), repeats: this.#repeats };
  }
}

/**
 * A call whose result the model never got, forgotten in a snapshot's guard: a reply cut off while its `onMessage` hook
 * runs is counted into the snapshot (run-state.ts), as the run forgets the call once it counts the reply.
 */
export function forgetInJSON(json: LoopGuardJSON, use: BetaToolUseBlock): void {
  const seen = new Map(Object.entries(json.seen));
  oneLess(seen, keyOfUse(use));
  json.seen = Object.fromEntries(seen);
}

/** One call fewer of `key` seen. */
function oneLess(seen: Map<string, number>, key: string): void {
  const earlier = seen.get(key) ?? 0;
  if (earlier > 1) seen.set(key, earlier - 1);
  else seen.delete(key);
}

/** The key of a call of the history. */
function keyOfUse(use: BetaToolUseBlock): string {
  const toolset = (use as { toolset_name?: unknown }).toolset_name;
  return keyOf(use.name, use.input, typeof toolset === 'string' ? toolset : undefined);
}

/** A call's key: its toolset's family (a member and a tool of the run may share a name), its name and its input. */
function keyOf(name: string, input: unknown, toolset: string | undefined): string {
  return `${toolset === undefined ? '' : `${toolset}\u0001`}${name}\u0000${canonicalJson(input)}`;
}

/** JSON with every object's keys in order, so that deep-equal values (key order aside) give the same text. */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const key of Object.keys(record).sort()) {
    if (record[key] === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${canonicalJson(record[key])}`;
    first = false;
  }
  return `${out}}`;
}
