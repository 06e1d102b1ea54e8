/** `resumeToolRunner`: continues a run from its JSON snapshot, in this process or another. */
import type { ClientLike } from './client.js';
import type { ToolRunnerOptions } from './options.js';
import type { OutputOf, OutputSchema } from './output.js';
import { ToolRunner } from './runner.js';
import type { RunnerSnapshot } from './snapshot.js';
import { isMessageThread } from './sdk-thread.js';
import { checkSnapshot } from './snapshot-check.js';
import { copySnapshot } from './snapshot-copy.js';
import type { RunnableTool, RunnerParams, ToolEntry } from './surface.js';
import { type CallOf, isRunnableTool } from './tool.js';
import { isToolSource } from './tool-set.js';
import { toolsetsOf } from './toolsets.js';

/**
 * Continues a run from `runner.toJSON()`, in this process or another: also a run stopped for
 * approval (approve or deny its `pendingApprovals`, then iterate or `await`). The runnable tools
 * are supplied again by name, and so are the options (`output`, `budget`, `loopGuard`, hooks, ...):
 * `iteration`, `usage`, `stoppedBy`, `output` and what the budget and the loop guard counted carry on.
 *
 * @example
 * ```ts
 * const runner = resumeToolRunner(client, JSON.parse(saved), { tools: [getWeather, sendEmail] });
 * for (const call of runner.pendingApprovals) runner.approve(call.id);
 * const final = await runner;
 * ```
 */
/** The third argument: `{ tools?, options? }` (the run's options go in `options`). */
function checkResumeArgument(resume: unknown): void {
  if (Array.isArray(resume)) throw new TypeError('resumeToolRunner: the third argument is { tools, options? }: pass the tools as { tools: [...] }');
  if (typeof resume !== 'object' || resume === null) throw new TypeError('resumeToolRunner: the third argument must be { tools?, options? }');
  for (const [key, value] of Object.entries(resume)) {
    if (key === 'tools' || key === 'options') continue;
    // A tool given by its own name (`{ deploy }`) belongs in the tools, anything else in the options.
    const where = isToolLike(value) ? `the tools go in { tools: [${key}, ...] }` : `the run's options go in { options: { ${key}, ... } }`;
    throw new TypeError(`resumeToolRunner: unknown key '${key}' in the third argument, which is { tools?, options? }: ${where}`);
  }
}

/** A runnable tool, a toolset or a tool definition: something with a name and a `run`, or an API tool's fields. */
function isToolLike(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return typeof (value as { name?: unknown }).name === 'string' && ('run' in value || 'input_schema' in value || 'type' in value);
}

export function resumeToolRunner<Stream extends boolean = boolean, const Output extends OutputSchema | undefined = undefined, Tools extends ToolEntry[] = ToolEntry[]>(
  client: ClientLike,
  snapshot: RunnerSnapshot<Stream>,
  // The options typed by the tools supplied, as `toolRunner`'s are by its params' tools (an approver, hooks by tool name).
  resume: { tools?: Tools | undefined; options?: ToolRunnerOptions<CallOf<Tools>, Output> | undefined } = {},
): ToolRunner<Stream, OutputOf<Output>> {
  if (typeof snapshot === 'string') throw new TypeError('resumeToolRunner: the snapshot is a string: JSON.parse it first');
  if (typeof snapshot !== 'object' || snapshot === null || Array.isArray(snapshot)) throw new TypeError('resumeToolRunner: the snapshot must be an object');
  if (typeof (snapshot as { toJSON?: unknown }).toJSON === 'function') throw new TypeError('resumeToolRunner: pass the runner\'s snapshot, runner.toJSON(), not the runner');
  // A thread passes for a client until the first request (its `messages` is the history, no API): "create is not a function".
  if (isMessageThread(client)) throw new TypeError('resumeToolRunner: the first argument is an SDK message thread; resume on a client, resumeToolRunner(client, snapshot, { tools }): a snapshot of a run over a thread records no thread, and the resumed run sends the whole history once');
  checkResumeArgument(resume);
  checkSnapshot(snapshot);
  // The resumed run owns a copy: its decisions never change the caller's snapshot, which may be resumed again.
  // (Its sub-agents' states in it keep the tools their runs added, as the original's did: a sub-agent of a sub-agent goes on with them.)
  const owned = copySnapshot(snapshot);
  const supplied = new Map<string, RunnableTool>();
  for (const entry of resume.tools ?? []) {
    if (!isRunnableTool(entry)) continue;
    if (supplied.has(entry.name)) throw new TypeError(`resumeToolRunner: two tools are named '${entry.name}'; tool names must be unique`);
    supplied.set(entry.name, entry);
  }
  const toolsets = toolsetsOf(resume.tools);
  const runnable = (name: string): RunnableTool => {
    const tool = supplied.get(name);
    if (tool) return tool;
    const given = [...supplied.keys()].join(', ') || 'none';
    throw new TypeError(`resumeToolRunner: the snapshot uses tool '${name}', which was not supplied (supplied: ${given})`);
  };
  // Tool sources (MCP servers) are supplied again, in the order they had.
  const sources = (resume.tools ?? []).filter(isToolSource);
  const tools = owned.tools.map((entry): ToolEntry => {
    if ('definition' in entry) return entry.definition;
    if ('toolset' in entry) {
      const toolset = toolsets.get(entry.toolset);
      if (!toolset) throw new TypeError(`resumeToolRunner: the snapshot uses the '${entry.toolset}' toolset; supply it again in tools`);
      return toolset;
    }
    if ('source' in entry) {
      const source = sources.shift();
      if (!source) throw new TypeError('resumeToolRunner: the snapshot uses a tool source (an MCP server); supply it again in tools');
      return source;
    }
    return runnable(entry.runnable);
  });
  checkAllUsed(owned, supplied, toolsets, sources.length);
  const params = { ...owned.params, ...(tools.length > 0 && { tools }) } as RunnerParams;
  return new ToolRunner<Stream, OutputOf<Output>>(client, params as RunnerParams & { stream?: Stream }, resume.options, owned, runnable);
}

/**
 * Every tool supplied is one the snapshot names: a tool it does not name would not be sent (a resumed
 * run's tools are the snapshot's), so supplying one is a mistake, not a way to add it.
 */
function checkAllUsed(snapshot: RunnerSnapshot, supplied: ReadonlyMap<string, RunnableTool>, toolsets: ReadonlyMap<string, unknown>, sourcesLeft: number): void {
  const named = new Set<string>();
  const families = new Set<string>();
  for (const entry of snapshot.tools) {
    if ('runnable' in entry) named.add(entry.runnable);
    else if ('toolset' in entry) families.add(entry.toolset);
  }
  // Added by addTools (or taken away by removeTools: supplying one of those is harmless).
  for (const name of toolChangeNames(snapshot)) named.add(name);
  const hint = 'supply the tools of the run only; to give the resumed run another, call runner.addTools() (or setMessagesParams()) after resuming';
  for (const name of supplied.keys()) {
    if (!named.has(name)) throw new TypeError(`resumeToolRunner: tool '${name}' was supplied, but the snapshot does not use it (it uses: ${[...named].join(', ') || 'none'}): ${hint}`);
  }
  for (const family of toolsets.keys()) {
    if (!families.has(family)) throw new TypeError(`resumeToolRunner: the '${family}' toolset was supplied, but the snapshot does not use it: ${hint}`);
  }
  if (sourcesLeft > 0) throw new TypeError(`resumeToolRunner: more tool sources (MCP servers) were supplied than the snapshot uses: ${hint}`);
}

/** The names of the tools a snapshot's run added with `addTools()` (or took away with `removeTools()`). */
export function toolChangeNames(snapshot: RunnerSnapshot): string[] {
  const changes = snapshot.toolChanges;
  return [...Object.keys(changes?.overrides ?? {}), ...(changes?.pending ?? []).flatMap((change) => ('runnable' in change ? [change.runnable] : []))];
}
