/**
 * Tool changes during a run (the inline-tools beta, the SDK's `addTools()` / `removeTools()`): the
 * model is told in a `system` message of `tool_addition` / `tool_removal` blocks with the next
 * request, and `params.tools` never changes (a changed `tools` misses the prompt cache). Which tool
 * runs under a name follows the changes at once, and a `tool_removal` already in the history (or in
 * a compaction block's `tool_changes`) withdraws a tool too: a call to it is answered "not found".
 */
import { ToolsetContractError } from '@anthropic-ai/sdk/lib/tools/BetaRunnableToolset';
import type { AnyTool, RunnableTool } from './surface.js';
import { isRunnableTool, toolDefinition } from './tool.js';
import { definitionFamily, isRunnableToolset, toolsetFamily } from './toolsets.js';
import { checkToolEntry, isToolSource } from './tool-set.js';
import { checkAgentOptions } from './agent-link.js';
import type { ToolChangesJSON } from './snapshot.js';
import { eachToolChange } from './tool-change-blocks.js';
import type { BetaMessageParam, BetaToolUnion } from './types.js';

type Change = { type: 'addition'; tool: AnyTool } | { type: 'removal'; name: string };

const NO_CHANGES: Change[] = [];

/** Each tool is an argument of its own: an array, or something that is no tool, is a clear error (changing nothing). */
function checkChangeArguments(method: 'addTools' | 'removeTools', tools: unknown[]): void {
  for (const tool of tools) {
    if (Array.isArray(tool)) throw new TypeError(`${method}() takes each tool as an argument of its own: ${method}(a, b), not ${method}([a, b])`);
    const isTool = typeof tool === 'object' && tool !== null;
    if (!isTool && !(method === 'removeTools' && typeof tool === 'string')) {
      throw new TypeError(`${method}() takes tools${method === 'removeTools' ? ' or tool names' : ''}, got ${tool === null ? 'null' : typeof tool}`);
    }
    // A source's tools change as it says (an MCP server's): it is a runner's entry, listed before each request.
    if (isToolSource(tool)) throw new TypeError(`${method}() takes tools, not a tool source (an MCP toolset, say): a tool runner's tool sources come only from its tools param; change them with setMessagesParams(), or build a new runner`);
    if (method === 'removeTools' && isTool && typeof (tool as { name?: unknown }).name !== 'string') throw new TypeError('removeTools() takes tools with a name, or tool names');
  }
}

const USE_A_NEW_RUNNER = "a tool runner's toolsets come only from its tools param; change them with setMessagesParams(), or build a new runner";
const REMOVE_WITH_A_NEW_RUNNER = "a tool runner's toolsets come only from its tools param; remove it there with setMessagesParams(), or build a new runner without it";

export class ToolChanges {
  // Every run has one and most never change their tools: nothing is allocated until something changes.
  /** The runnable tool added under a name, or `null` once the name was removed or taken by a plain definition. */
  #overrides: Map<string, RunnableTool | null> | undefined;
  /** Changes for the next request, in call order. */
  #pending: Change[] = NO_CHANGES;
  /** The last change the history makes to each name, read once per message (see #scan). */
  #fromHistory: Map<string, Change['type']> | undefined;
  /** The history read so far: the array, and how many of its messages. */
  #scannedMessages: readonly BetaMessageParam[] | undefined;
  #scannedLength = 0;

  /**
   * `addTools()`: throws `ToolsetContractError` (adding nothing) for a toolset, or a definition of one of the run's toolsets.
   * `client`: the run's, which an agent tool without a client of its own checks its options against (as at construction).
   */
  add(tools: AnyTool[], families: ReadonlySet<string>, client: unknown): void {
    checkChangeArguments('addTools', tools);
    for (const tool of tools) {
      if (isRunnableToolset(tool)) {
        throw new ToolsetContractError(`addTools() can't add the '${toolsetFamily(tool)}' toolset: ${USE_A_NEW_RUNNER}`);
      }
      const family = definitionFamily(tool);
      if (families.has(family)) throw new ToolsetContractError(`addTools() can't replace the '${family}' toolset: ${USE_A_NEW_RUNNER}`);
    }
    // As the runner's own tools are checked: a rule read as "no approval" would let the call run unasked; a zod schema as
    // the `input_schema`, a `run` that is no function, or no schema (tool() forgotten) were taken, and the model's next
    // request refused (or the tool never ran, its calls "not found").
    for (const tool of tools) checkToolEntry(tool, (tool as { name?: string }).name, 'addTools()');
    // A mistake in an agent tool's options is an error here, not the model's answer at the agent's first call.
    checkAgentOptions(tools, client);
    for (const tool of tools) {
      const name = (tool as { name?: unknown }).name;
      // A definition without a name (an `mcp_toolset`) is nothing the runner runs or stops running.
      if (typeof name === 'string') (this.#overrides ??= new Map()).set(name, isRunnableTool(tool) ? tool : null);
      this.#pending = [...this.#pending, { type: 'addition', tool }];
    }
  }

  /** `removeTools()`: throws `ToolsetContractError` (removing nothing) for the name of one of the run's toolsets. */
  remove(tools: Array<AnyTool | string>, families: ReadonlySet<string>): void {
    checkChangeArguments('removeTools', tools);
    const names = tools.map((tool) => (typeof tool === 'string' ? tool : String((tool as { name?: unknown }).name)));
    for (const name of names) {
      if (families.has(name)) throw new ToolsetContractError(`removeTools() can't remove the '${name}' toolset: ${REMOVE_WITH_A_NEW_RUNNER}`);
    }
    for (const name of names) {
      (this.#overrides ??= new Map()).set(name, null);
      this.#pending = [...this.#pending, { type: 'removal', name }];
    }
  }

  /** The runnable tools `addTools()` gave the run (a snapshot names them; a resumed run is given them again). */
  get added(): RunnableTool[] {
    return [...(this.#overrides?.values() ?? [])].filter((tool): tool is RunnableTool => tool !== null);
  }

  /** What a snapshot keeps (runnable tools by name); none while nothing changed. */
  toJSON(): ToolChangesJSON | undefined {
    if (!this.#overrides && this.#pending.length === 0) return undefined;
    return {
      overrides: Object.fromEntries([...(this.#overrides ?? [])].map(([name, tool]) => [name, tool ? { runnable: tool.name } : null])),
      pending: this.#pending.map((change) => {
        if (change.type === 'removal') return change;
        return isRunnableTool(change.tool) ? { type: 'addition', runnable: change.tool.name } : { type: 'addition', definition: change.tool as BetaToolUnion };
      }),
    };
  }

  /** Takes the changes of a snapshot back, with the runnable tools supplied again by name. */
  restore(json: ToolChangesJSON, supplied: (name: string) => RunnableTool): void {
    for (const [name, tool] of Object.entries(json.overrides)) (this.#overrides ??= new Map()).set(name, tool ? supplied(tool.runnable) : null);
    this.#pending = json.pending.map((change): Change => {
      if (change.type === 'removal') return change;
      return 'runnable' in change ? { type: 'addition', tool: supplied(change.runnable) } : { type: 'addition', tool: change.definition };
    });
  }

  /** The `system` message that tells the model of the changes since the last request, once; none without changes. */
  takeMessage(): BetaMessageParam | undefined {
    if (this.#pending.length === 0) return undefined;
    const content = this.#pending.map((change) =>
      change.type === 'removal'
        ? { type: 'tool_removal', tool: { type: 'tool_reference', name: change.name } }
        : { type: 'tool_addition', tool: { type: 'tool_definition', definition: toolDefinition(change.tool) } },
    );
    this.#pending = NO_CHANGES;
    return { role: 'system', content } as unknown as BetaMessageParam;
  }

  /**
   * The tools that run under their names now: the run's, changed by `addTools` / `removeTools`,
   * less the ones the history (or a change not yet sent) withdrew. The run's own map, unchanged
   * (no copy), when nothing changed any name.
   */
  runnable(base: ReadonlyMap<string, RunnableTool>, messages: readonly BetaMessageParam[]): ReadonlyMap<string, RunnableTool> {
    this.#scan(messages);
    if (!this.#overrides && !this.#fromHistory && this.#pending.length === 0) return base;
    const last = new Map(this.#fromHistory);
    for (const change of this.#pending) {
      const name = change.type === 'removal' ? change.name : (change.tool as { name?: unknown }).name;
      if (typeof name === 'string') last.set(name, change.type);
    }
    const runnable = new Map(base);
    for (const [name, tool] of this.#overrides ?? []) {
      if (tool) runnable.set(name, tool);
      else runnable.delete(name);
    }
    for (const [name, type] of last) if (type === 'removal') runnable.delete(name);
    return runnable;
  }

  /** The history is about to be replaced (a server-side compaction): the tools it removed stay removed. */
  keepRemovals(messages: readonly BetaMessageParam[]): void {
    this.#scan(messages);
    for (const [name, type] of this.#fromHistory ?? []) if (type === 'removal') (this.#overrides ??= new Map()).set(name, null);
  }

  /** What a snapshot keeps once `messages` are replaced by a compaction: the tools they removed, removed (`keepRemovals`). */
  toJSONKeepingRemovals(messages: readonly BetaMessageParam[]): ToolChangesJSON | undefined {
    this.#scan(messages);
    const json = this.toJSON();
    const removed = [...(this.#fromHistory ?? [])].filter(([, type]) => type === 'removal');
    if (removed.length === 0) return json;
    const overrides = { ...json?.overrides };
    for (const [name] of removed) overrides[name] = null;
    return { overrides, pending: json?.pending ?? [] };
  }

  /**
   * Reads the tool changes of the history: its `system` messages' blocks and its compaction blocks'
   * `tool_changes`. The runner appends to the same array, so only new messages are read.
   */
  #scan(messages: readonly BetaMessageParam[]): void {
    let from = 0;
    if (this.#scannedMessages === messages && this.#scannedLength <= messages.length) from = this.#scannedLength;
    else this.#fromHistory = undefined;
    eachToolChange(messages, this.#recordChange, from);
    this.#scannedMessages = messages;
    this.#scannedLength = messages.length;
  }

  /** A change the history makes (made once per run: the history is read at each request). */
  readonly #recordChange = (name: string, kind: Change['type']): void => void (this.#fromHistory ??= new Map()).set(name, kind);
}

/**
 * The history with each `tool_addition` block that holds a runnable tool (`{ name, input_schema, run }`, a
 * `betaZodTool`) holding its definition as the API takes it instead: its API fields only, as the SDK's runner sends
 * it (a tool's `run` cannot be copied, and the API refuses its other fields). The same array when none does. A tool
 * given this way is only sent, as by the SDK's runner: a tool runs from `tools` or `addTools()`.
 */
export function withToolDefinitions<Messages extends readonly BetaMessageParam[]>(messages: Messages): Messages {
  if (!messages.some(addsRunnableTool)) return messages;
  return messages.map((message) => {
    if (!addsRunnableTool(message)) return message;
    const content = (message.content as Block[]).map((block) => (holdsRunnable(block) ? { ...block, tool: { ...block.tool, definition: toolDefinition(block.tool!.definition as AnyTool) } } : block));
    return { ...message, content } as unknown as BetaMessageParam;
  }) as unknown as Messages;
}

type Block = { type?: unknown; tool?: { type?: unknown; definition?: unknown } };

function addsRunnableTool(message: BetaMessageParam): boolean {
  return (message.role as string) === 'system' && Array.isArray(message.content) && (message.content as Block[]).some(holdsRunnable);
}

function holdsRunnable(block: Block): boolean {
  const definition = block.type === 'tool_addition' && block.tool?.type === 'tool_definition' ? block.tool.definition : undefined;
  return typeof definition === 'object' && definition !== null && typeof (definition as { run?: unknown }).run === 'function';
}
