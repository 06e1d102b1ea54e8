/**
 * The tools of a run: runnable tools, plain definitions, and tool sources whose tools can change
 * between requests (an MCP server's, for instance), looked up again before each request.
 */
import { toolMaps } from './params.js';
import type { AnyTool, RunnableTool } from './tool.js';
import type { BetaToolUnion } from './types.js';

/** A `tools` entry whose tools may change during a run (see `tool-runner/mcp`). */
export interface ToolSource {
  readonly kind: 'tool-source';
  /** The tools now. Called before each request: return the same array while nothing changed. */
  tools(): AnyTool[] | Promise<AnyTool[]>;
}

/** Anything `tools` may hold. */
export type ToolEntry = AnyTool | ToolSource;

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

  constructor(entries: ToolEntry[] | undefined) {
    this.entries = entries;
    this.#lists = entries?.some(isToolSource) ? entries.filter(isToolSource).map(() => []) : NO_LISTS;
    ({ runnable: this.runnable, definitions: this.definitions } = toolMaps(this.#expanded()));
  }

  /** Whether some entries are tool sources (asked for their tools before each request). */
  get hasSources(): boolean {
    return this.#lists.length > 0;
  }

  /** Asks the sources for their tools; rebuilds the maps when one changed. */
  async refresh(): Promise<void> {
    const sources = (this.entries ?? []).filter(isToolSource);
    if (sources.length === 0) return;
    const lists = await Promise.all(sources.map((source) => source.tools()));
    if (lists.every((list, i) => list === this.#lists[i])) return;
    this.#lists = lists;
    ({ runnable: this.runnable, definitions: this.definitions } = toolMaps(this.#expanded()));
  }

  #expanded(): AnyTool[] | undefined {
    if (!this.entries) return undefined;
    let source = 0;
    return this.entries.flatMap((entry) => (isToolSource(entry) ? this.#lists[source++]! : [entry]));
  }
}
