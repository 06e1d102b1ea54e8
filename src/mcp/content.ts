/** An MCP tool result's content items as tool-result content blocks (src/mcp/index.ts runs the calls). */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ToolResultContentBlock } from '../types.js';

export type McpContent = Awaited<ReturnType<Client['callTool']>> extends infer R ? (R extends { content: Array<infer C> } ? C : never) : never;

/** The UTF-8 text of base64 bytes (`atob` and `TextDecoder`: every runtime the SDK runs on has them). */
function utf8OfBase64(data: string): string {
  return new TextDecoder().decode(Uint8Array.from(atob(data), (char) => char.charCodeAt(0)));
}

/** The image types a tool result can hold. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/**
 * One item of a failed call's content: a kind a result cannot hold is said in words beside the others
 * (the server's own error text), rather than the error replacing them all.
 */
export function errorBlock(toolName: string, item: McpContent): ToolResultContentBlock {
  try {
    return toBlock(toolName, item);
  } catch (error) {
    return { type: 'text', text: (error as Error).message };
  }
}

/** One MCP content item as a tool-result content block; a kind the API cannot take is a clear error. */
export function toBlock(toolName: string, item: McpContent): ToolResultContentBlock {
  switch (item.type) {
    case 'text':
      // (A lone surrogate, from a server that cut its text inside an emoji, is mended with every tool result: result-sent.ts.)
      return { type: 'text', text: item.text };
    case 'image':
      if (!IMAGE_TYPES.has(item.mimeType)) {
        throw new Error(`MCP tool '${toolName}' returned an image of type ${item.mimeType}, which a tool result cannot hold (JPEG, PNG, GIF and WebP can)`);
      }
      return {
        type: 'image',
        source: { type: 'base64', media_type: item.mimeType as 'image/png', data: item.data },
      };
    case 'resource': {
      const resource = item.resource;
      if ('text' in resource && typeof resource.text === 'string') {
        return { type: 'text', text: `Resource ${resource.uri}:\n${resource.text}` };
      }
      if ('blob' in resource) {
        const data = String(resource.blob);
        const type = resource.mimeType ?? '';
        if (type === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data } };
        if (IMAGE_TYPES.has(type)) return { type: 'image', source: { type: 'base64', media_type: type as 'image/png', data } };
        // Text sent as bytes (base64), or bytes of no stated type (the SDK's helpers read them as text too): read as UTF-8.
        if (type === '' || type.startsWith('text/')) return { type: 'text', text: `Resource ${resource.uri}:\n${utf8OfBase64(data)}` };
      }
      throw new Error(
        `MCP tool '${toolName}' returned an embedded resource of type ${resource.mimeType ?? 'unknown'}, which a tool result cannot hold (text, JPEG, PNG, GIF and WebP images and PDF documents can)`,
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
