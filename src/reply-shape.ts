/**
 * A reply (a body, or a stream's final message) checked before the runner reads it: a body of another shape (a proxy's
 * error envelope answered with 200, a block that is none) fails as a reply that could not be read, not as a TypeError
 * deep inside, nor as a history the API refuses.
 */
import { described } from './described.js';
import type { BetaMessage } from './types.js';

/**
 * Whether a reply is a message as the runner reads it: its content blocks, its usage, and the assistant's role. The
 * role and the blocks go into the history as the reply's (a gateway that leaves the role out, or sends a block that is
 * none, or a call without its id or name, would have the history hold a message the API refuses, every request after
 * it refused; a null block made the runner throw a TypeError once the loop body had the reply).
 */
export function isMessage(reply: unknown): reply is BetaMessage {
  return hasBlocksAndUsage(reply) && (reply as { role?: unknown }).role === 'assistant' && blockProblem((reply as { content: unknown[] }).content) === undefined;
}

/** The first block of a reply's `content` that is no block the API takes back: not an object with a type, or a call without its id or name. */
function blockProblem(content: readonly unknown[]): string | undefined {
  // Read for every reply: an indexed loop, no iterator or pair made per block.
  for (let i = 0; i < content.length; i++) {
    const block = content[i];
    const { type, id, name } = (typeof block === 'object' && block !== null ? block : {}) as { type?: unknown; id?: unknown; name?: unknown };
    if (typeof type !== 'string') return `block ${i} is not a content block (an object with a type): ${described(block)}`;
    if (type === 'tool_use' && (typeof id !== 'string' || typeof name !== 'string')) return `tool_use block ${i} has no string ${typeof id !== 'string' ? 'id' : 'name'}`;
  }
  return undefined;
}

function hasBlocksAndUsage(reply: unknown): boolean {
  const { content, usage } = (typeof reply === 'object' && reply !== null ? reply : {}) as { content?: unknown; usage?: unknown };
  return Array.isArray(content) && typeof usage === 'object' && usage !== null;
}

/** What a body that is no message holds, for the error: its keys, or its kind. */
export function shapeOf(reply: unknown): string {
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) return described(reply);
  if (hasBlocksAndUsage(reply)) {
    const { role, content } = reply as { role?: unknown; content: unknown[] };
    return role === 'assistant' ? `a message whose ${blockProblem(content)}` : `a message of role ${described(role)}, not "assistant"`;
  }
  const keys = Object.keys(reply);
  return keys.length === 0 ? 'an empty object' : `an object with ${keys.slice(0, 6).join(', ')}${keys.length > 6 ? ', ...' : ''} (no content blocks and usage)`;
}
