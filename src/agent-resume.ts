/**
 * What a sub-agent resumed from its state after a stop for approval is given again: the tools of its params, and
 * those its run had added with `addTools()`, kept with that state in this process (never another run's, and never
 * in a snapshot: a tool is code), and with its copies (snapshot-copy.ts). Resumed from a snapshot read back from
 * JSON, only its params' tools are known.
 */
import { toolChangeNames } from './resume.js';
import type { RunnerSnapshot } from './snapshot.js';
import { addedBeside, keepAdded } from './snapshot-copy.js';
import type { RunnableTool, ToolEntry } from './surface.js';

/** The sub-agent's state, with the tools its run had added kept beside it (and beside its copies: snapshot-copy.ts). */
export function withAddedTools(snapshot: RunnerSnapshot, added: readonly RunnableTool[]): RunnerSnapshot {
  keepAdded(snapshot, added);
  return snapshot;
}

/** The tools a resumed sub-agent is given: its params' tools, and those its run added that the snapshot names. */
export function resumedTools(snapshot: RunnerSnapshot, given: readonly ToolEntry[]): ToolEntry[] {
  const names = new Set(given.map((entry) => (entry as { name?: unknown }).name));
  const used = new Set(toolChangeNames(snapshot));
  const again = addedBeside(snapshot).filter((tool) => used.has(tool.name) && !names.has(tool.name));
  return [...given, ...again];
}

/** Said when a resumed sub-agent could not be made because a tool its run added is missing: where it must be. */
export function addedToolsHint(snapshot: RunnerSnapshot, error: unknown): string {
  const missing = toolChangeNames(snapshot).some((name) => String((error as { message?: unknown })?.message).includes(`uses tool '${name}'`));
  return missing ? " (a tool the sub-agent added with addTools() is given again only after a stop for approval in this process: resumed from a snapshot, put it in the agent's params tools)" : '';
}
