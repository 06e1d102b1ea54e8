/**
 * The tools of a run: runnable tools, plain definitions, and tool sources whose tools can change
 * between requests (an MCP server's, for instance), looked up again before each request.
 */
import { APIUserAbortError } from '@anthropic-ai/sdk';
import { described } from './described.js';
import { isThenable } from './completion.js';
import { checkTimeoutMs, untilAborted } from './guards.js';
import type { AnyTool, RunnableTool, ToolEntry, ToolSource } from './surface.js';
import { isRunnableTool, toolDefinition } from './tool.js';
import { toolsetEntryName } from './toolsets.js';
import type { BetaToolUnion } from './types.js';

export function isToolSource(value: unknown): value is ToolSource {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'tool-source';
}

const NO_LISTS: AnyTool[][] = [];

export class ToolSet {
  readonly entries: ToolEntry[] | undefined;
  runnable: Map<string, RunnableTool>;
  definitions: BetaToolUnion[] | undefined;
  /** The tools each source gave last, in the order of the sources among the entries. */
  #lists: AnyTool[][];
  #listed: boolean;

  constructor(entries: ToolEntry[] | undefined) {
    // A list of its own: the caller's array changed later (a push, a replacement, a removal) is not the run's (README).
    this.entries = entries && [...entries];
    this.#lists = entries?.some(isToolSource) ? entries.filter(isToolSource).map(() => []) : NO_LISTS;
    this.#listed = this.#lists.length === 0;
    ({ runnable: this.runnable, definitions: this.definitions } = toolMaps(this.#expanded()));
  }

  /**
   * The definitions to send now: a runnable tool changed since they were made (a field set, added or removed) is read
   * again, as the SDK reads its tools at each request; the maps are made anew then (a shared set is left as it is).
   */
  definitionsNow(): BetaToolUnion[] | undefined {
    const { definitions } = this;
    if (!definitions) return definitions;
    const tools = this.#lists.length === 0 ? (this.entries as AnyTool[]) : this.#expanded()!;
    if (tools.some((tool, i) => toolDefinition(tool) !== definitions[i])) ({ runnable: this.runnable, definitions: this.definitions } = buildToolMaps(tools));
    return this.definitions;
  }

  /** Whether some entries are tool sources (asked for their tools before each request). */
  get hasSources(): boolean {
    return this.#lists.length > 0;
  }

  /** The sources gave their tools at least once (or there are none): the maps hold every tool. */
  get listed(): boolean {
    return this.#listed;
  }

  /**
   * Asks the sources for their tools; rebuilds the maps when one changed. The run's `signal` reaches
   * the sources and ends the wait at once (`APIUserAbortError`), whether a source heeds it or not.
   */
  async refresh(signal?: AbortSignal): Promise<void> {
    const sources = (this.entries ?? []).filter(isToolSource);
    if (sources.length === 0) return;
    const asked = Promise.all(sources.map((source) => (signal ? source.tools({ signal }) : source.tools())));
    let lists: AnyTool[][];
    if (signal) {
      const settled = await untilAborted(asked, signal);
      if (settled.aborted) {
        // A source that ignores the signal answers (or fails) later: nobody waits for it.
        asked.catch(() => {});
        throw new APIUserAbortError();
      }
      lists = settled.value;
    } else lists = await asked;
    // Kept (and listed) only once their maps are built: lists that clash (two tools of one name) fail again when the run retries.
    if (!lists.every((list, i) => list === this.#lists[i])) {
      ({ runnable: this.runnable, definitions: this.definitions } = toolMaps(this.#expanded(lists)));
      this.#lists = lists;
    }
    this.#listed = true;
  }

  #expanded(lists = this.#lists): AnyTool[] | undefined {
    if (!this.entries) return undefined;
    let source = 0;
    return this.entries.flatMap((entry) => (isToolSource(entry) ? lists[source++]! : [entry]));
  }
}

interface ToolMaps {
  runnable: Map<string, RunnableTool>;
  definitions: BetaToolUnion[] | undefined;
}

/**
 * Runs given the same tools (the same objects, in the same order) share one read-only set of maps:
 * many runs in flight then hold no copy of their own.
 */
const shared = new WeakMap<object, Array<{ tools: AnyTool[]; maps: ToolMaps }>>();

/** The runnable tools by name and the definitions sent to the API (read-only: they may be shared). */
function toolMaps(tools: AnyTool[] | undefined): ToolMaps {
  const first = tools?.[0];
  if (!tools || typeof first !== 'object' || first === null) return buildToolMaps(tools);
  const bucket = shared.get(first) ?? [];
  const hit = bucket.find((entry) => entry.tools.length === tools.length && entry.tools.every((tool, i) => tool === tools[i]));
  if (hit) return hit.maps;
  const maps = buildToolMaps(tools);
  bucket.unshift({ tools: [...tools], maps });
  if (bucket.length > 8) bucket.pop();
  shared.set(first, bucket);
  return maps;
}

/** The types of the API's client tools a runnable tool may have besides `custom` (the SDK's `BetaClientRunnableToolType`). */
const CLIENT_TOOL_TYPE = /^(bash|computer|memory|text_editor)_\d{8}$/;

/** A rule other than a boolean or a function would be read as "no approval": a safety control does not fail open. */
export function checkNeedsApproval(rule: unknown, what: string): void {
  if (rule === undefined || typeof rule === 'boolean' || typeof rule === 'function') return;
  throw new TypeError(`${what} must be true, false or a function that decides each call, got ${described(rule)}`);
}

function buildToolMaps(tools: AnyTool[] | undefined): ToolMaps {
  const runnable = new Map<string, RunnableTool>();
  if (!tools) return { runnable, definitions: undefined };
  const names = new Set<string>();
  for (const entry of tools) {
    const name = toolName(entry);
    if (name !== undefined) {
      if (names.has(name)) {
        const toolset = tools.some((other) => typeof other === 'object' && other !== null && toolsetEntryName(other) === name) ? ` (a ${name} toolset is named '${name}')` : '';
        throw new TypeError(`toolRunner: two tools are named '${name}'${toolset}; tool names must be unique`);
      }
      names.add(name);
    }
    checkToolEntry(entry, name, 'toolRunner');
    if (isRunnableTool(entry)) runnable.set(entry.name, entry);
  }
  return { runnable, definitions: tools.map(toolDefinition) };
}

/**
 * What of a tool (an entry of `tools`, or one `addTools()` is given: `where`) the API would refuse, or the runner would
 * misread, as a clear error: a schema object as its `input_schema`, a `run` that is no function, a runnable tool without a
 * schema (tool() forgotten), a timeout or an approval rule of the wrong kind.
 */
export function checkToolEntry(entry: object, name: string | undefined, where: string): void {
  const called = name === undefined ? 'a tool without a name' : `tool '${name}'`;
  const schema = (entry as { input_schema?: unknown }).input_schema;
  if (isSchemaObject(schema)) {
    const vendor = String((schema as { '~standard': { vendor?: unknown } })['~standard']?.vendor ?? 'Standard Schema');
    throw new TypeError(`${where}: ${called}: input_schema takes JSON Schema, not a schema object (${vendor}): make the tool with tool({ name, inputSchema, run }), which converts it`);
  }
  if ('run' in entry && typeof (entry as { run?: unknown }).run !== 'function') {
    throw new TypeError(`${where}: ${called} has a \`run\` that is not a function`);
  }
  if (!isRunnableTool(entry)) return;
  // A plain object with `run` (tool() forgotten): the API would refuse it for want of a schema. A
  // built-in client tool (`type: 'memory_20250818'`, `'bash_20250124'`, ...: the SDK's betaMemoryTool) has none.
  const { type } = entry as { type?: unknown };
  const builtIn = typeof type === 'string' && CLIENT_TOOL_TYPE.test(type);
  if (!builtIn && (typeof schema !== 'object' || schema === null)) {
    throw new TypeError(`${where}: ${called} has no input_schema: make it with tool({ name, inputSchema, run })${'inputSchema' in entry ? ', which turns inputSchema into it' : ''}`);
  }
  const { timeoutMs } = entry as { timeoutMs?: unknown };
  if (timeoutMs !== undefined) checkTimeoutMs(timeoutMs, `${where}: ${called}: timeoutMs`);
  checkNeedsApproval(entry.needsApproval, `${where}: ${called}: needsApproval`);
}

function toolName(entry: AnyTool): string | undefined {
  // A function is the likely slip: a plain one (as other libraries take tools), or tool() itself instead of what it makes.
  if (typeof entry !== 'object' || entry === null) {
    throw new TypeError(`toolRunner: every entry of tools must be an object (a tool), got ${described(entry)}: make a tool with tool({ name, inputSchema, run })`);
  }
  if (isThenable(entry)) {
    throw new TypeError('toolRunner: an entry of tools is a promise: await it first (tools: [await mcpToolset(client)], say)');
  }
  const named = entry as { name?: unknown; mcp_server_name?: unknown };
  // A toolset is named after its family (the SDK's computer toolset has no name): two of one family clash, as a tool
  // named like one (the SDK's runner ran the first toolset of a family, this one the last; the API refuses both).
  const toolset = toolsetEntryName(entry);
  if (toolset !== undefined) return toolset;
  if (typeof named.name === 'string') return named.name;
  return typeof named.mcp_server_name === 'string' ? named.mcp_server_name : undefined;
}

/**
 * A zod, valibot, arktype, ... schema itself, not JSON Schema: a function or a class instance with
 * `~standard`, or a plain object whose `~standard` shows. zod's exported JSON Schema is a plain
 * object with a hidden (non-enumerable) `~standard`: JSON Schema.
 */
function isSchemaObject(schema: unknown): boolean {
  if (typeof schema === 'function') return '~standard' in schema;
  if (typeof schema !== 'object' || schema === null || !('~standard' in schema)) return false;
  const prototype = Object.getPrototypeOf(schema);
  return (prototype !== Object.prototype && prototype !== null) || Object.prototype.propertyIsEnumerable.call(schema, '~standard');
}
