/**
 * What a sub-agent resumed from its state (after a stop for approval, or from the parent's snapshot) is given again:
 * the tools of its params, and those its run had added with `addTools()`, which only the process that added them has.
 */
import type { RunnerSnapshot } from './snapshot.js';
import type { RunnableTool, ToolEntry } from './surface.js';

/** Said when a resumed sub-agent could not be made: where an added tool must be for another process. */
export const ADDED_TOOLS_HINT = " (a tool the sub-agent added with addTools() is given again only in the process that added it: in another, put it in the agent's params tools)";

/** The tools a resumed sub-agent is given: its params' tools, and the tools its runs `added` that the snapshot names. */
export function resumedTools(added: ReadonlyMap<string, RunnableTool>, snapshot: RunnerSnapshot, given: readonly ToolEntry[]): ToolEntry[] {
  const names = new Set(given.map((entry) => (entry as { name?: unknown }).name));
  const changes = snapshot.toolChanges;
  const used = [...Object.keys(changes?.overrides ?? {}), ...(changes?.pending ?? []).flatMap((change) => ('runnable' in change ? [change.runnable] : []))];
  const again = new Set(used.filter((name) => !names.has(name) && added.has(name)).map((name) => added.get(name)!));
  return [...given, ...again];
}
