/** Small helpers that make the content blocks of a scripted reply, with ids like the API's. */
import type { BetaContentBlock, BetaTextBlock, BetaThinkingBlock, BetaToolUseBlock } from '../types.js';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** An id like the API's: `prefix_01` and 22 base62 characters. */
export function apiId(prefix: 'msg' | 'toolu' | 'srvtoolu' | 'req'): string {
  // Web Crypto, global in Node, Bun, Deno and pages: a bundler that skips the package's `browser: null` for this
  // subpath (Vite) stubs node:crypto empty, and toolUse() failed there with "randomBytes is not a function".
  const bytes = crypto.getRandomValues(new Uint8Array(22));
  let id = `${prefix}_01`;
  for (const byte of bytes) id += ALPHABET[byte % ALPHABET.length];
  return id;
}

// The helpers of one kind of block return that kind, not the union of blocks: a step may then add a field to the block
// by spreading it (`{ ...toolUse('key', input), toolset_name: 'computer' }`, a toolset member's call), which the union
// refuses with an error listing its seventeen kinds.

/** A text block. */
export function text(value: string): BetaTextBlock {
  return { type: 'text', text: value, citations: null };
}

/** A client tool call; the id is generated unless given. */
export function toolUse(name: string, input: unknown = {}, id: string = apiId('toolu')): BetaToolUseBlock {
  return { type: 'tool_use', id, name, input };
}

/** A server tool call (web search, code execution, ...): never run by the client. */
export function serverToolUse(
  name: 'web_search' | 'web_fetch' | 'code_execution' | (string & {}),
  input: unknown,
  id: string = apiId('srvtoolu'),
): BetaContentBlock {
  return { type: 'server_tool_use', id, name, input } as BetaContentBlock;
}

/** The result of a `web_search` server tool call. */
export function webSearchResult(
  toolUseId: string,
  results: Array<{ url: string; title: string; content?: string }>,
): BetaContentBlock {
  return {
    type: 'web_search_tool_result',
    tool_use_id: toolUseId,
    content: results.map((result) => ({
      type: 'web_search_result',
      url: result.url,
      title: result.title,
      encrypted_content: base64(result.content ?? result.title),
      page_age: null,
    })),
  } as BetaContentBlock;
}

/** A thinking block (extended thinking). */
export function thinking(value: string, signature = 'c2lnbmF0dXJl'): BetaThinkingBlock {
  return { type: 'thinking', thinking: value, signature };
}

/** `text` as UTF-8, in base64 (as Node's `Buffer` writes it), with the globals every runtime has: a page has no `Buffer`. */
function base64(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}
