/**
 * tool-runner/mcp: the tools of a connected MCP client (`@modelcontextprotocol/sdk` `Client`, any
 * transport) as runnable tools. Input is validated against each tool's JSON Schema; results become
 * content blocks; an MCP `isError` result becomes an `is_error` tool result; a `tools/list_changed`
 * notification is picked up before the next request.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../tool-error.js';
import type { RunnableTool, ToolSource } from '../surface.js';
import { tool } from '../tool.js';
import type { ToolResultContentBlock } from '../types.js';

export interface McpToolsetOptions {
  /** Put before each tool's name (e.g. `github_`), to keep the names of several servers apart. */
  prefix?: string;
  /** Abort a call after this many ms (the runner's `toolTimeoutMs` applies too). */
  timeoutMs?: number;
  /** Ask for approval before these tools run (see the approval docs): all of them, or some by MCP name. */
  needsApproval?: boolean | ((name: string, input: unknown) => boolean);
}

type McpTool = Awaited<ReturnType<Client['listTools']>>['tools'][number];
type McpContent = Awaited<ReturnType<Client['callTool']>> extends infer R ? (R extends { content: Array<infer C> } ? C : never) : never;

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
  await toolset.refresh();
  return toolset;
}

export class McpToolset implements ToolSource {
  readonly kind = 'tool-source' as const;
  readonly #client: Client;
  readonly #options: McpToolsetOptions;
  #tools: RunnableTool[] = [];
  #refreshing: Promise<void> | undefined;

  constructor(client: Client, options: McpToolsetOptions = {}) {
    this.#client = client;
    this.#options = options;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      this.#refreshing = this.refresh();
    });
  }

  /** The tools now; after a list change, once the new list has arrived. */
  tools(): RunnableTool[] | Promise<RunnableTool[]> {
    const refreshing = this.#refreshing;
    if (!refreshing) return this.#tools;
    return refreshing.then(() => {
      if (this.#refreshing === refreshing) this.#refreshing = undefined;
      return this.#tools;
    });
  }

  /** Lists the server's tools again (every page). */
  async refresh(): Promise<void> {
    const listed: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.#client.listTools(cursor === undefined ? {} : { cursor });
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    this.#tools = listed.map((entry) => this.#runnable(entry));
  }

  #runnable(entry: McpTool): RunnableTool {
    const { prefix = '', timeoutMs, needsApproval } = this.#options;
    const client = this.#client;
    const schema = { ...entry.inputSchema, type: 'object' as const };
    return tool({
      name: `${prefix}${entry.name}`,
      description: entry.description ?? entry.title ?? entry.name,
      inputSchema: schema,
      ...(timeoutMs !== undefined && { timeoutMs }),
      ...(needsApproval !== undefined && {
        needsApproval: typeof needsApproval === 'function' ? (input: unknown) => needsApproval(entry.name, input) : needsApproval,
      }),
      run: async (input, context) => {
        const result = await client.callTool({ name: entry.name, arguments: input as Record<string, unknown> }, undefined, {
          signal: context.signal,
        });
        const content = 'content' in result && Array.isArray(result.content) ? result.content : [];
        let blocks = content.map((item) => toBlock(entry.name, item as McpContent));
        if (blocks.length === 0 && 'structuredContent' in result && result.structuredContent !== undefined) {
          blocks = [{ type: 'text', text: JSON.stringify(result.structuredContent) }];
        }
        if (result.isError) throw new ToolError(blocks.length > 0 ? blocks : `MCP tool '${entry.name}' failed`);
        return blocks;
      },
    });
  }
}

/** One MCP content item as a tool-result content block; a kind the API cannot take is a clear error. */
function toBlock(toolName: string, item: McpContent): ToolResultContentBlock {
  switch (item.type) {
    case 'text':
      return { type: 'text', text: item.text };
    case 'image':
      return {
        type: 'image',
        source: { type: 'base64', media_type: item.mimeType as 'image/png', data: item.data },
      };
    case 'resource': {
      const resource = item.resource;
      if ('text' in resource && typeof resource.text === 'string') {
        return { type: 'text', text: `Resource ${resource.uri}:\n${resource.text}` };
      }
      if (resource.mimeType === 'application/pdf' && 'blob' in resource) {
        return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: String(resource.blob) } };
      }
      throw new Error(
        `MCP tool '${toolName}' returned an embedded resource of type ${resource.mimeType ?? 'unknown'}, which a tool result cannot hold (text, images and PDF documents can)`,
      );
    }
    case 'resource_link':
      return { type: 'text', text: `Resource link: ${item.uri}${item.name ? ` (${item.name})` : ''}` };
    default:
      throw new Error(
        `MCP tool '${toolName}' returned ${item.type} content, which a tool result cannot hold (text, images, embedded text resources and PDF documents can)`,
      );
  }
}
