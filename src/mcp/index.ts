/**
 * tool-runner/mcp: the tools of a connected MCP client (`@modelcontextprotocol/sdk` `Client`, any
 * transport) as runnable tools. Input is validated against each tool's JSON Schema; results become
 * content blocks; an MCP `isError` result becomes an `is_error` tool result; a `tools/list_changed`
 * notification is picked up before the next request.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../tool-error.js';
import { wellFormed } from '../cut.js';
import { type McpContent, errorBlock, toBlock } from './content.js';
import type { RunnableTool, ToolContext, ToolSource } from '../surface.js';
import { compileJsonSchema, isInvalidSchemaError } from '../json-schema.js';
import { checkTimeoutMs } from '../guards.js';
import { described, unknownOption } from '../described.js';
import { tiedSignal } from '../on-abort.js';
import { checkNeedsApproval } from '../tool-set.js';
import { taskResult } from './task-result.js';
import { goneError } from './gone.js';
import { mcpErrorText, withHttpStatus } from './http-error.js';
import { checkInputSchemas, checkPrefix, checkToolNames } from './tool-names.js';
import { type McpTool, type McpToolFilter, checkToolFilter, keptTools } from './tool-filter.js';
import type { Promisable } from '../types.js';

export interface McpToolsetOptions {
  /**
   * Put before each tool's name (e.g. `github_`), to keep the names of several servers apart. Like
   * the names, letters, digits, `_` and `-` only: the Messages API takes no other in a tool's name.
   */
  prefix?: string | undefined;
  /**
   * Abort a call after this many ms (in place of the runner's `toolTimeoutMs`, which applies when
   * this is not given); the timeout of each request that lists the tools, too.
   */
  timeoutMs?: number | undefined;
  /**
   * Ask for approval before these tools run (see the approval docs): all of them, or some by MCP name (a rule given the
   * tool's MCP name, the input and the call's context, as a tool's own rule is; it may answer a promise).
   */
  needsApproval?: (boolean | ((name: string, input: unknown, context: ToolContext) => Promisable<boolean>)) | undefined;
  /**
   * Offer the model only some of the server's tools: these by MCP name (before `prefix`, as `needsApproval`'s rule is
   * given them), or those a rule given each listed tool keeps. The others are never checked, defined or callable. A
   * name the server does not list when the tools are first listed is an error; one gone after a list change is just gone.
   */
  tools?: McpToolFilter | undefined;
}

// The rule is given the MCP SDK's `Tool` (`@modelcontextprotocol/sdk/types.js`), as the server lists it.
export type { McpToolFilter };

const OPTIONS = ['prefix', 'timeoutMs', 'needsApproval', 'tools'];

/** A clear error for an unknown option (a typo would drop a timeout or an approval silently) or a bad value. */
function checkOptions(options: McpToolsetOptions): void {
  if (typeof options !== 'object' || options === null) throw new TypeError('mcpToolset: options must be an object');
  for (const key of Object.keys(options)) if (!OPTIONS.includes(key)) throw unknownOption('mcpToolset', key, OPTIONS);
  checkPrefix(options.prefix);
  if (options.timeoutMs !== undefined) checkTimeoutMs(options.timeoutMs, 'mcpToolset: timeoutMs');
  checkNeedsApproval(options.needsApproval, 'mcpToolset: needsApproval');
  checkToolFilter(options.tools);
}

/**
 * The MCP client's tools as a tool source for `tools`: listed now, listed again after the server
 * announces a change.
 *
 * @example
 * ```ts
 * const client = new Client({ name: 'my-agent', version: '1.0.0' });
 * await client.connect(new StdioClientTransport({ command: 'node', args: ['server.js'] }));
 * const runner = toolRunner(anthropic, { model, max_tokens: 1024, messages, tools: [await mcpToolset(client)] });
 * ```
 */
export async function mcpToolset(client: Client, options: McpToolsetOptions = {}): Promise<McpToolset> {
  const toolset = new McpToolset(client, options);
  await firstListing(toolset.refresh());
  return toolset;
}

/** The first listing: the server's or the MCP client's failure (a list its schema refuses: a bare ZodError) said as ours; ours as they are. */
async function firstListing(listing: Promise<void>): Promise<void> {
  try {
    await listing;
  } catch (error) {
    if (error instanceof Error && /^(mcpToolset|tool-runner\/mcp):/.test(error.message)) throw error;
    throw new Error(`mcpToolset: listing the server's tools failed: ${mcpErrorText(error)}`, { cause: error });
  }
}

export class McpToolset implements ToolSource {
  readonly kind = 'tool-source' as const;
  readonly #client: Client;
  readonly #options: McpToolsetOptions;
  #tools: RunnableTool[] = [];
  /** The listing a list change began, until a `tools()` call has waited for it. */
  #refreshing: Promise<void> | undefined;
  /** How many listings have begun; the latest of them, and how to abort it. */
  #listings = 0;
  #latest: Promise<void> | undefined;
  #abortListing: AbortController | undefined;
  /** A listing has set the tools; until then `tools()` lists them (`#firstListing`, shared by the askers). */
  #listed = false;
  #firstListing: Promise<void> | undefined;

  constructor(client: Client, options: McpToolsetOptions = {}) {
    checkClient(client);
    checkOptions(options);
    this.#client = client;
    // A copy: a list the caller changes later does not change the tools it said to keep.
    this.#options = Array.isArray(options.tools) ? { ...options, tools: [...options.tools] } : options;
    McpToolset.#listen(client, this);
  }

  /** What the client's handler calls when the server's tools changed: held by the toolset, so that a listener lives as long as it. */
  readonly #listener: ChangeListener = { listChanged: () => this.#listChanged() };

  /**
   * Hears the client's `tools/list_changed` for `toolset`. The MCP client keeps one handler per
   * notification: one handler per client serves its toolsets (those still in use), and whoever
   * listened before (the client's own `listChanged` option) still hears of the change.
   */
  static #listen(client: Client, toolset: McpToolset): void {
    let entry = LISTENING.get(client);
    if (!entry) {
      LISTENING.set(client, (entry = { listeners: new Set(), installed: undefined, sweepAt: SWEEP_FROM }));
      McpToolset.#install(client, entry);
    }
    const { listeners } = entry;
    // Toolsets made and dropped (one a request, on a long-lived client) leave their refs: swept as the set doubles.
    if (listeners.size >= entry.sweepAt) {
      for (const ref of listeners) if (!ref.deref()) listeners.delete(ref);
      entry.sweepAt = Math.max(SWEEP_FROM, listeners.size * 2);
    }
    listeners.add(new WeakRef(toolset.#listener));
  }

  /** Sets the client's one `tools/list_changed` handler to the one that serves `entry`'s toolsets, after the handler it had. */
  static #install(client: Client, entry: Listening): void {
    const handlers = notificationHandlers(client);
    // The handler it had (its `listChanged` option's, or the caller's) hears each change too.
    const foreign = handlers?.get(TOOLS_CHANGED);
    client.setNotificationHandler(ToolListChangedNotificationSchema, async (notification) => {
      McpToolset.#changed(entry);
      await foreign?.(notification);
    });
    entry.installed = handlers?.get(TOOLS_CHANGED);
  }

  /** Tells `entry`'s toolsets (but the one of `listing`, which is listing already) that the server's tools changed. */
  static #changed(entry: Listening, listing?: ChangeListener): void {
    for (const ref of entry.listeners) {
      const listener = ref.deref();
      if (!listener) entry.listeners.delete(ref);
      else if (listener !== listing) listener.listChanged();
    }
  }

  /**
   * Sets the handler again when another replaced it: `client.connect()` sets the client's own (its
   * `listChanged` option) over one set before it, and so may the caller. That one still hears of each change.
   * A change may have come while the toolsets did not hear: they list again (but `listing`, which is listing now).
   */
  static #stillListening(client: Client, listing?: ChangeListener): void {
    const entry = LISTENING.get(client);
    if (entry?.installed === undefined || notificationHandlers(client)?.get(TOOLS_CHANGED) === entry.installed) return;
    McpToolset.#install(client, entry);
    McpToolset.#changed(entry, listing);
  }

  /** The server announced a change: the next `tools()` waits for the new list. */
  #listChanged(): void {
    const refreshing = this.refresh();
    // A failure is the next `tools()` call's to report (a run's request), never an unhandled rejection.
    refreshing.catch(() => {});
    this.#refreshing = refreshing;
  }

  /**
   * The tools now; after a list change, once the new list has arrived. A new list that could not be
   * had (the server went away, say) rejects once, with why; the last list stays.
   */
  tools(): RunnableTool[] | Promise<RunnableTool[]> {
    // Made with `new McpToolset()` rather than `mcpToolset()`: listed when first asked (one listing for
    // the askers meanwhile; asked again after it failed).
    if (!this.#listed) return this.#listFirst();
    McpToolset.#stillListening(this.#client);
    return this.#refreshing ? this.#newest() : this.#tools;
  }

  async #listFirst(): Promise<RunnableTool[]> {
    this.#firstListing ??= firstListing(this.refresh()).finally(() => (this.#firstListing = undefined));
    await this.#firstListing;
    return this.#tools;
  }

  /** Waits for the listing under way, and for any that began meanwhile (a later change). */
  async #newest(): Promise<RunnableTool[]> {
    for (let refreshing = this.#refreshing; refreshing; refreshing = this.#refreshing) {
      try {
        await refreshing;
      } catch (error) {
        // A later listing began meanwhile: its outcome is the one to report.
        if (this.#refreshing !== undefined && this.#refreshing !== refreshing) continue;
        this.#refreshing = undefined;
        throw new Error(`mcpToolset: listing the server's tools again after it announced a change failed: ${mcpErrorText(error)}`, { cause: error });
      }
      if (this.#refreshing === refreshing) this.#refreshing = undefined;
    }
    return this.#tools;
  }

  /**
   * Lists the server's tools again (every page; `timeoutMs` is the timeout of each page's request).
   * Only the latest listing sets the tools: one begun earlier is aborted and settles as the latest
   * does, so that a list read before a later change never replaces the newer one.
   */
  refresh(): Promise<void> {
    const listing = this.#list(++this.#listings);
    this.#latest = listing;
    return listing;
  }

  async #list(listing: number): Promise<void> {
    checkConnected(this.#client);
    McpToolset.#stillListening(this.#client, this.#listener);
    this.#abortListing?.abort();
    const abort = (this.#abortListing = new AbortController());
    const { timeoutMs } = this.#options;
    const listed: McpTool[] = [];
    try {
      const seen = new Set<string>();
      let cursor: string | undefined;
      do {
        // A signal of each page's own: the MCP client never removes the listener it adds (past ten pages, Node would warn).
        const page = tiedSignal(abort.signal);
        try {
          const options = { signal: page.signal, ...(timeoutMs !== undefined && { timeout: timeoutMs }) };
          const { tools, nextCursor } = await this.#client.listTools(cursor === undefined ? {} : { cursor }, options);
          listed.push(...tools);
          cursor = nextCursor;
        } finally {
          page.stop();
        }
        // A server that gives a cursor again would be listed forever.
        if (cursor && seen.has(cursor)) throw new Error(`tool-runner/mcp: the server gave the tools/list cursor '${cursor}' twice; its listing would never end`);
        if (cursor) seen.add(cursor);
      } while (cursor);
    } catch (error) {
      if (listing === this.#listings) throw error;
    }
    if (listing !== this.#listings) return this.#latest;
    const prefix = this.#options.prefix ?? '';
    // Only the tools kept are checked: one the API would refuse, left out, no longer fails the whole server.
    const kept = keptTools(listed, this.#options.tools, !this.#listed, prefix);
    checkToolNames(kept.map((entry) => entry.name), prefix);
    checkInputSchemas(kept, prefix);
    this.#tools = kept.map((entry) => this.#runnable(entry));
    this.#listed = true;
  }

  #runnable(entry: McpTool): RunnableTool {
    const { prefix = '', timeoutMs, needsApproval } = this.#options;
    const client = this.#client;
    const schema = { ...entry.inputSchema, type: 'object' as const };
    const definition = {
      name: `${prefix}${entry.name}`,
      description: wellFormed(entry.description ?? entry.title ?? entry.name),
      ...(timeoutMs !== undefined && { timeoutMs }),
      ...(needsApproval !== undefined && {
        needsApproval: typeof needsApproval === 'function' ? (input: unknown, context: ToolContext) => needsApproval(entry.name, input, context) : needsApproval,
      }),
      run: async (input: unknown, context: ToolContext) => {
        // A signal of the call's own: the MCP client never removes the listener it adds, and the
        // signal a tool gets may be shared by every call (one that never aborts).
        const call = tiedSignal(context.signal);
        let result: Awaited<ReturnType<Client['callTool']>>;
        try {
          // `timeoutMs` is the MCP client's request timeout too (its own default is 60 s).
          const params = { name: entry.name, arguments: input as Record<string, unknown> };
          const options = { signal: call.signal, ...(timeoutMs !== undefined && { timeout: timeoutMs }) };
          // A tool that runs only as a task (MCP's experimental tasks): the MCP client refuses `callTool` for it.
          result = entry.execution?.taskSupport === 'required' ? await taskResult(client, params, options) : await client.callTool(params, undefined, options);
        } catch (error) {
          // A server gone (its connection closed, or its session with it): the model is told which, and not to call again.
          throw goneError(client, entry.name, error) ?? withHttpStatus(error);
        } finally {
          call.stop();
        }
        const content = ('content' in result && Array.isArray(result.content) ? result.content : []) as McpContent[];
        const structured = 'structuredContent' in result && result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : undefined;
        if (result.isError) {
          // The server's words; its structured error (a code, the details) when it said none: an error result holds text
          // only, so beside content of no text (a screenshot) the model would learn nothing of why.
          const blocks = content.map((item) => errorBlock(entry.name, item));
          if (structured !== undefined && !content.some((item) => item.type === 'text' && item.text !== '')) blocks.push({ type: 'text', text: `MCP tool '${entry.name}' failed: ${structured}` });
          throw new ToolError(blocks.length > 0 ? blocks : `MCP tool '${entry.name}' failed`);
        }
        let blocks = content.map((item) => toBlock(entry.name, item));
        if (blocks.length === 0 && structured !== undefined) blocks = [{ type: 'text', text: structured }];
        return blocks;
      },
    };
    try {
      // The input is checked as the model wrote it, and goes to the server so: the server fills its own defaults. Filled
      // here (as tool() fills them), one its type refuses (Python's `limit: int = None`, `{ type: 'integer', default: null }`)
      // failed every call that left it out, and the server got values it was not sent by the model.
      const owner = { label: `Tool '${definition.name}'`, key: 'inputSchema', noun: 'the input schema' };
      return { ...definition, input_schema: schema, validateInput: compileJsonSchema(owner, schema, false).validate } as RunnableTool;
    } catch (error) {
      if (!isInvalidSchemaError(error)) throw error;
      // A schema this runner cannot compile (a pattern in another regex dialect, an external $ref):
      // the tool is sent with it as it is and its input is not checked here, as the SDK's MCP helpers do.
      return { ...definition, input_schema: schema } as RunnableTool;
    }
  }
}

/** A client's toolsets, by what their handler calls, and that handler. */
interface Listening {
  listeners: Set<WeakRef<ChangeListener>>;
  /** The handler as the client keeps it (wrapped): another in its place replaced it. */
  installed: NotificationHandler | undefined;
  sweepAt: number;
}

interface ChangeListener {
  listChanged(): void;
}

/**
 * Each client's toolsets, shared by every copy of this module in the process (the ESM and CommonJS builds): one handler
 * per client serves them all. With a map each, each copy took the other's handler for a caller's, and set its own again.
 */
const LISTENING: WeakMap<Client, Listening> = ((globalThis as Record<symbol, unknown>)[Symbol.for('tool-runner.mcp.listening.v1')] ??= new WeakMap()) as WeakMap<Client, Listening>;

type NotificationHandler = (notification: unknown) => Promise<void>;

const TOOLS_CHANGED = ToolListChangedNotificationSchema.shape.method.value;

/** The MCP client's notification handlers (a field of its `Protocol` base): where the one for a method is read. */
function notificationHandlers(client: Client): Map<string, NotificationHandler> | undefined {
  return (client as unknown as { _notificationHandlers?: Map<string, NotificationHandler> })._notificationHandlers;
}

/** The first argument must be an MCP client: anything else failed later, deep in a call, without saying so. */
function checkClient(client: Client): void {
  const methods = ['listTools', 'callTool', 'setNotificationHandler', 'getServerCapabilities'] as const;
  if (typeof client !== 'object' || client === null || methods.some((method) => typeof (client as Partial<Client>)[method] !== 'function')) {
    throw new TypeError(`mcpToolset: the first argument must be a Client of @modelcontextprotocol/sdk (client/index.js), connected to the server, got ${client === null || typeof client !== 'object' ? described(client) : 'an object that is none (no listTools, callTool, getServerCapabilities)'}`);
  }
}

/** Before a listing: a client that is not connected, or a server without tools, is said so, not "Not connected" or "Method not found". */
function checkConnected(client: Client): void {
  const capabilities = client.getServerCapabilities();
  if (capabilities === undefined) throw new Error('mcpToolset: the client is not connected: await client.connect(transport) before its tools are listed');
  if (!capabilities.tools) throw new Error("mcpToolset: the server has no tools (it did not offer the 'tools' capability when the client connected)");
}

/** The toolsets of one client past which the refs of those no longer in use are swept (then at twice those left). */
const SWEEP_FROM = 64;
