/** Stream mode: eager tool starts while the reply still streams. */
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import type { BetaToolUseBlock } from './types.js';

/** What the stream tells of the calls of a reply as it streams. */
export interface EagerCalls {
  /** A call the model has moved on from: it may start. */
  startEagerly(toolUse: BetaToolUseBlock): void;
  /** A `tool_use` block that finished streaming. */
  closedInStream(toolUse: BetaToolUseBlock): void;
}

/**
 * Calls `calls.startEagerly` with each `tool_use` block of the streamed reply as soon as the model has moved on
 * from it: when the next block starts, or when the reply stops with `tool_use`. A block cut off by
 * `max_tokens` is never started.
 */
export function startToolsEagerly(stream: BetaMessageStream, calls: EagerCalls): void {
  stream.on('streamEvent', (event, snapshot) => {
    if (event.type === 'content_block_stop') {
      const block = snapshot.content[event.index];
      if (isToolUse(block)) calls.closedInStream(block);
    }
    let finished: unknown;
    if (event.type === 'content_block_start' && event.index > 0) {
      finished = snapshot.content[event.index - 1];
    } else if (event.type === 'message_delta' && event.delta.stop_reason === 'tool_use') {
      finished = snapshot.content.at(-1);
    }
    if (isToolUse(finished)) calls.startEagerly(finished);
  });
}

function isToolUse(block: unknown): block is BetaToolUseBlock {
  return typeof block === 'object' && block !== null && (block as { type?: unknown }).type === 'tool_use';
}
