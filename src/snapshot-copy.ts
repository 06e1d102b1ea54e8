/**
 * Copies of a run's snapshot that keep what this process holds beside a sub-agent's state: the tools its
 * run added with `addTools()`, which no snapshot holds (a tool is code: agent-resume.ts). A sub-agent's state
 * is copied when its runner's snapshot is taken (`toJSON()` makes a copy), when it stops (its parent holds a
 * copy) and when it goes on (a resumed run owns a copy), and it may sit inside another's (a sub-agent of a
 * sub-agent): every copy keeps what its original had, at every depth. A snapshot read from JSON has nothing beside it.
 */
import type { RunnerSnapshot, ToolCallsJSON } from './snapshot.js';
import type { RunnableTool } from './surface.js';

/** The tools a sub-agent's run had added, by the state it stopped with (this process only). */
const addedBy = new WeakMap<RunnerSnapshot, readonly RunnableTool[]>();

/** Keeps `added` beside `snapshot` (a sub-agent's state). */
export function keepAdded(snapshot: RunnerSnapshot, added: readonly RunnableTool[]): void {
  if (added.length > 0) addedBy.set(snapshot, added);
}

/** The tools kept beside `snapshot`, if any. */
export function addedBeside(snapshot: RunnerSnapshot): readonly RunnableTool[] {
  return addedBy.get(snapshot) ?? [];
}

/** A deep copy of `snapshot` (`structuredClone`), with what was kept beside it and beside the sub-agents' states in it. */
export function copySnapshot<S extends RunnerSnapshot>(snapshot: S): S {
  const copy = structuredClone(snapshot);
  keepBeside(snapshot, copy);
  return copy;
}

function keepBeside(from: RunnerSnapshot, to: RunnerSnapshot): void {
  const added = addedBy.get(from);
  if (added) addedBy.set(to, added);
  keepBesideCalls(from.calls, to.calls);
}

/** What was kept beside the sub-agents' states held in `from`, kept beside theirs in `to`, its copy (the same order: the same index is the same call). */
export function keepBesideCalls(from: ToolCallsJSON, to: ToolCallsJSON): void {
  from.held.forEach((call, i) => {
    const inside = call.agent?.snapshot;
    const copied = to.held[i]?.agent?.snapshot;
    if (inside && copied) keepBeside(inside, copied);
  });
}
