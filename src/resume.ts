/** `resumeToolRunner`: continues a run from its JSON snapshot, in this process or another. */
import type { ClientLike } from './client.js';
import type { ToolRunnerOptions } from './options.js';
import { ToolRunner } from './runner.js';
import { SNAPSHOT_VERSION, type RunnerSnapshot } from './snapshot.js';
import type { AnyTool, RunnerParams, ToolEntry } from './surface.js';
import { isRunnableTool } from './tool.js';
import { isToolSource } from './tool-set.js';

/**
 * Continues a run from `runner.toJSON()`, in this process or another: also a run stopped for
 * approval (approve or deny its `pendingApprovals`, then iterate or `await`). The runnable tools
 * are supplied again by name; `iteration` and `usage` carry on.
 *
 * @example
 * ```ts
 * const runner = resumeToolRunner(client, JSON.parse(saved), { tools: [getWeather, sendEmail] });
 * for (const call of runner.pendingApprovals) runner.approve(call.id);
 * const final = await runner;
 * ```
 */
export function resumeToolRunner(
  client: ClientLike,
  snapshot: RunnerSnapshot,
  resume: { tools?: ToolEntry[]; options?: ToolRunnerOptions } = {},
): ToolRunner<boolean> {
  if (typeof snapshot !== 'object' || snapshot === null) throw new TypeError('resumeToolRunner: the snapshot must be an object');
  if (snapshot.version !== SNAPSHOT_VERSION) {
    throw new TypeError(
      `resumeToolRunner: snapshot version ${JSON.stringify(snapshot.version)} is not supported (this version of tool-runner reads version ${SNAPSHOT_VERSION})`,
    );
  }
  const supplied = new Map<string, AnyTool>();
  for (const entry of resume.tools ?? []) if (isRunnableTool(entry)) supplied.set(entry.name, entry);
  // Tool sources (MCP servers) are supplied again, in the order they had.
  const sources = (resume.tools ?? []).filter(isToolSource);
  const tools = snapshot.tools.map((entry): ToolEntry => {
    if ('definition' in entry) return entry.definition;
    if ('source' in entry) {
      const source = sources.shift();
      if (!source) throw new TypeError('resumeToolRunner: the snapshot uses a tool source (an MCP server); supply it again in tools');
      return source;
    }
    const runnable = supplied.get(entry.runnable);
    if (!runnable) {
      const given = [...supplied.keys()].join(', ') || 'none';
      throw new TypeError(`resumeToolRunner: the snapshot uses tool '${entry.runnable}', which was not supplied (supplied: ${given})`);
    }
    return runnable;
  });
  const params = { ...snapshot.params, ...(tools.length > 0 && { tools }) } as RunnerParams;
  return new ToolRunner(client, params, resume.options, snapshot);
}
