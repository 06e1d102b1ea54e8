/**
 * The tools a model request offered, recorded with its step, so that a replay on a worker whose tools changed fails
 * the run naming the tool, rather than answering a call of it "not found" where it ran (or was cut off by the crash).
 */
import { eachToolChange } from '../tool-change-blocks.js';

/**
 * The names of the tools a request's body offers the model (none: undefined, and nothing is recorded). Its `tools` are not
 * all it offers: a tool added or removed during the run (`addTools()` / `removeTools()`, an `onEvent` listener's) goes in a
 * `system` message of `tool_addition` / `tool_removal` blocks, `params.tools` unchanged, so a replay of a reply calling an
 * added tool was never checked. (A durable run sends the whole history each time: its step client holds no thread.)
 */
export function offeredTools(body: unknown): string[] | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { tools, messages } = body as { tools?: unknown; messages?: unknown };
  const given = Array.isArray(tools) ? tools.flatMap((entry) => nameOf(entry)) : [];
  const names = Array.isArray(messages) ? withChanges(given, messages) : given;
  return names.length > 0 ? names : undefined;
}

/** `names` with the tool changes `messages` make, in their order (a compaction's block holds those it summarised). */
function withChanges(names: string[], messages: unknown[]): string[] {
  let changed: Set<string> | undefined;
  eachToolChange(messages, (name, kind) => {
    changed ??= new Set(names);
    if (kind === 'addition') changed.add(name);
    else changed.delete(name);
  });
  return changed ? [...changed] : names;
}

function nameOf(entry: unknown): string[] {
  const name = typeof entry === 'object' && entry !== null ? (entry as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? [name] : [];
}

/**
 * On a replay of a request's step: the error saying that this worker lacks a tool the recorded reply calls, which the
 * request offered when it was recorded (a name the model made up was "not found" then too, and is let be). DBOS checks
 * only the names of the steps it recorded, and the step of a call the crash cut off was never recorded: the recovery
 * answered the call "not found", and the run went on. Undefined when nothing is missing, or the record is older than
 * this.
 */
export function missingOnReplay(recorded: { reply: unknown; tools?: string[] | undefined }, body: unknown, workflow: string | undefined): Error | undefined {
  if (!recorded.tools) return undefined;
  const now = new Set(offeredTools(body));
  const content = (recorded.reply as { content?: unknown } | null)?.content;
  const called = Array.isArray(content) ? content.flatMap((block: { type?: unknown; name?: unknown }) => (block?.type === 'tool_use' && typeof block.name === 'string' ? [block.name] : [])) : [];
  const missing = [...new Set(called.filter((name) => recorded.tools!.includes(name) && !now.has(name)))];
  if (missing.length === 0) return undefined;
  const names = missing.map((name) => `'${name}'`).join(', ');
  return new Error(
    `durableToolRunner: run '${workflow ?? '?'}' recorded a reply that calls ${missing.length === 1 ? 'tool' : 'tools'} ${names}, which this worker's agent does not have (it has: ${[...now].join(', ') || 'none'}): the agent's tools changed since the run started. Its recovery would answer the call "not found" where it had run, or was cut off by the crash. Recover the run on workers of the release that started it (set applicationVersion in DBOS.setConfig, or DBOS__APPVERSION, for each release)`,
  );
}
