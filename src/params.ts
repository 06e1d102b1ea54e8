/** The runner's params: the Messages create params plus runner-only keys, checked and split apart. */
import { type CompactionControl, checkCompactionControl } from './compaction.js';
import type { AnyTool, RunnableTool } from './tool.js';
import type { ToolEntry } from './tool-set.js';
import { isRunnableTool, toolDefinition } from './tool.js';
import type { BetaMessageParam, BetaToolUnion, MessageCreateParamsBase } from './types.js';

/** Keys that configure the loop and are never sent to the API. */
export interface RunnerSettings {
  /** Stop after this many requests that returned a reply. */
  max_iterations?: number | undefined;
  /** Yield the SDK's `MessageStream` for each iteration instead of the whole message. */
  stream?: boolean | undefined;
  /** Start each tool as soon as its `tool_use` block is complete in the stream (works without `stream: true` too). */
  runToolsEagerly?: boolean | undefined;
  /** Client-side compaction: summarise the conversation when a reply's tokens pass a threshold. */
  compactionControl?: CompactionControl | undefined;
  /**
   * `false`: send the whole history with every request. By default a run on an `Anthropic` client
   * goes over a message thread (the server holds the conversation; each request sends only the new
   * messages), as the SDK's runner does.
   */
  thread?: false | undefined;
}

/** `toolRunner`'s params: what `messages.create` takes, with runnable tools, plus the runner's settings. */
export type RunnerParams = Omit<MessageCreateParamsBase, 'tools' | 'stream' | 'thread' | 'messages'> &
  RunnerSettings & {
    messages: BetaMessageParam[];
    /** Runnable tools (`tool()`, `betaZodTool`, ...), plain tool definitions (server tools, ...) and tool sources (MCP). */
    tools?: ToolEntry[] | undefined;
  };

const SETTING_NAMES: ReadonlySet<string> = new Set(['max_iterations', 'stream', 'runToolsEagerly', 'compactionControl', 'thread']);

export interface SplitParams {
  api: Record<string, unknown>;
  settings: RunnerSettings;
  messages: BetaMessageParam[];
  tools: ToolEntry[] | undefined;
}

/** Checks the params and splits them into what is sent and what configures the runner. */
export function splitParams(params: RunnerParams): SplitParams {
  if (typeof params !== 'object' || params === null) throw new TypeError('toolRunner: params must be an object');
  const { messages, tools, ...rest } = params;
  if (!Array.isArray(messages)) throw new TypeError('toolRunner: params.messages must be an array of messages');
  if (messages.length === 0) throw new TypeError('toolRunner: params.messages is empty; give at least one user message');
  messages.forEach((message, i) => {
    const { role, content } = (message ?? {}) as { role?: unknown; content?: unknown };
    if (role !== 'user' && role !== 'assistant' && role !== 'system') {
      throw new TypeError(`toolRunner: params.messages[${i}].role must be 'user' or 'assistant', got ${JSON.stringify(role)}`);
    }
    if (typeof content !== 'string' && !Array.isArray(content)) {
      throw new TypeError(`toolRunner: params.messages[${i}].content must be a string or an array of content blocks`);
    }
  });
  const { thread } = params as { thread?: unknown };
  if (thread !== undefined && thread !== false) {
    throw new TypeError('toolRunner: `thread` may only be `false` (send the whole history every turn); the runner sets each request\'s thread itself');
  }
  if (tools !== undefined && !Array.isArray(tools)) throw new TypeError('toolRunner: params.tools must be an array');
  // Copied key by key, not deleted from a copy: a deleted key leaves an object slow to copy and send.
  const api: Record<string, unknown> = {};
  const settings: Record<string, unknown> = {};
  for (const key in rest) {
    const value = (rest as Record<string, unknown>)[key];
    if (!SETTING_NAMES.has(key)) api[key] = value;
    else if (value !== undefined) settings[key] = value;
  }
  checkCompactionControl(settings['compactionControl'] as CompactionControl | undefined);
  const max = settings['max_iterations'] as number | undefined;
  if (max !== undefined && !(Number.isInteger(max) && max > 0)) {
    throw new RangeError(`toolRunner: max_iterations must be a positive integer, got ${String(max)}`);
  }
  return { api, settings: settings as RunnerSettings, messages, tools };
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
export function toolMaps(tools: AnyTool[] | undefined): ToolMaps {
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

function buildToolMaps(tools: AnyTool[] | undefined): ToolMaps {
  const runnable = new Map<string, RunnableTool>();
  if (!tools) return { runnable, definitions: undefined };
  const names = new Set<string>();
  for (const entry of tools) {
    const name = toolName(entry);
    if (name !== undefined) {
      if (names.has(name)) throw new TypeError(`toolRunner: two tools are named '${name}'; tool names must be unique`);
      names.add(name);
    }
    if ('run' in entry && typeof (entry as { run?: unknown }).run !== 'function') {
      throw new TypeError(`toolRunner: tool '${name}' has a \`run\` that is not a function`);
    }
    if (isRunnableTool(entry)) runnable.set(entry.name, entry);
  }
  return { runnable, definitions: tools.map(toolDefinition) };
}

function toolName(entry: AnyTool): string | undefined {
  if (typeof entry !== 'object' || entry === null) throw new TypeError('toolRunner: every entry of tools must be an object');
  const named = entry as { name?: unknown; mcp_server_name?: unknown };
  if (typeof named.name === 'string') return named.name;
  return typeof named.mcp_server_name === 'string' ? named.mcp_server_name : undefined;
}
