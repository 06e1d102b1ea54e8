/**
 * A non-streamed reply checked before the runner reads it: a body of another shape (a proxy's error
 * envelope answered with 200) fails as a reply that could not be read, not as a TypeError deep inside.
 */
import { described } from './described.js';
import type { BetaMessage } from './types.js';

/**
 * Whether a reply is a message as the runner reads it: its content blocks, its usage, and the assistant's role. The
 * role goes into the history as the reply's (a gateway that leaves it out, or says another, would have the history
 * hold a message the API refuses, every request after it refused).
 */
export function isMessage(reply: unknown): reply is BetaMessage {
  return hasBlocksAndUsage(reply) && (reply as { role?: unknown }).role === 'assistant';
}

function hasBlocksAndUsage(reply: unknown): boolean {
  const { content, usage } = (typeof reply === 'object' && reply !== null ? reply : {}) as { content?: unknown; usage?: unknown };
  return Array.isArray(content) && typeof usage === 'object' && usage !== null;
}

/** What a body that is no message holds, for the error: its keys, or its kind. */
export function shapeOf(reply: unknown): string {
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) return described(reply);
  if (hasBlocksAndUsage(reply)) return `a message of role ${described((reply as { role?: unknown }).role)}, not "assistant"`;
  const keys = Object.keys(reply);
  return keys.length === 0 ? 'an empty object' : `an object with ${keys.slice(0, 6).join(', ')}${keys.length > 6 ? ', ...' : ''} (no content blocks and usage)`;
}
