/** The Messages API's wire format: a message as JSON, or as the SSE events that stream it. */
import type { BetaContentBlock, BetaMessage } from '../types.js';

/** One server-sent event: its name and JSON payload. */
export interface SseEvent {
  event: string;
  data: unknown;
}

/**
 * Splits `value` into chunks of `size` characters (at least one chunk, at least `minChunks` when long
 * enough). Characters are code points, so a chunk never ends in half a surrogate pair: the API's deltas
 * are always well-formed text.
 */
export function chunk(value: string, size: number, minChunks = 1): string[] {
  const characters = Array.from(value);
  const step = Math.max(1, Math.min(size, Math.ceil(characters.length / minChunks)));
  const chunks: string[] = [];
  for (let i = 0; i < characters.length; i += step) chunks.push(characters.slice(i, i + step).join(''));
  return chunks.length > 0 ? chunks : [''];
}

/** The SSE events that stream `message`, deltas cut into chunks of `chunkSize` characters. */
export function messageEvents(message: BetaMessage, chunkSize: number): SseEvent[] {
  const events: SseEvent[] = [];
  const { content, stop_reason, stop_sequence, stop_details, usage, container, ...head } = message;
  events.push({
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        ...head,
        // A reply handed to a fallback model starts as the model asked's: its `fallback` block names the one that answers.
        model: firstAsked(content) ?? head.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        container: container ?? null,
        usage: { ...usage, output_tokens: Math.min(1, usage.output_tokens) },
      },
    },
  });
  events.push({ event: 'ping', data: { type: 'ping' } });
  // One push per event: a long reply cut fine has more events than a call can take as arguments.
  content.forEach((block, index) => {
    for (const event of blockEvents(block, index, chunkSize)) events.push(event);
  });
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason, stop_sequence, stop_details: stop_details ?? null, container: container ?? null },
      usage,
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

/** The model a reply handed over by `fallback` blocks was first asked of, if it was handed over. */
function firstAsked(content: readonly BetaContentBlock[]): string | undefined {
  const handed = content.find((block) => block.type === 'fallback') as { from?: { model?: unknown } } | undefined;
  return typeof handed?.from?.model === 'string' ? handed.from.model : undefined;
}

function blockEvents(block: BetaContentBlock, index: number, chunkSize: number): SseEvent[] {
  const start = (content_block: unknown): SseEvent => ({
    event: 'content_block_start',
    data: { type: 'content_block_start', index, content_block },
  });
  const delta = (value: unknown): SseEvent => ({
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index, delta: value },
  });
  const events: SseEvent[] = [];
  switch (block.type) {
    case 'text': {
      // Citations come as their own deltas, before the text they cite, as the API streams them.
      const cited = Array.isArray(block.citations) && block.citations.length > 0 ? block.citations : undefined;
      events.push(start(cited ? { ...block, text: '', citations: [] } : { ...block, text: '' }));
      for (const citation of cited ?? []) events.push(delta({ type: 'citations_delta', citation }));
      for (const piece of chunk(block.text, chunkSize)) events.push(delta({ type: 'text_delta', text: piece }));
      break;
    }
    case 'thinking': {
      events.push(start({ ...block, thinking: '', signature: '' }));
      for (const piece of chunk(block.thinking, chunkSize)) events.push(delta({ type: 'thinking_delta', thinking: piece }));
      events.push(delta({ type: 'signature_delta', signature: block.signature }));
      break;
    }
    case 'tool_use':
    case 'server_tool_use':
    case 'mcp_tool_use': {
      events.push(start({ ...block, input: {} }));
      const json = JSON.stringify(block.input ?? {});
      // Several chunks, as the API sends them, so clients must join partial JSON.
      for (const piece of chunk(json, chunkSize, 3)) events.push(delta({ type: 'input_json_delta', partial_json: piece }));
      break;
    }
    default:
      events.push(start(block));
  }
  events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  return events;
}

/** One event as it goes on the wire. */
export function encodeEvent(event: SseEvent): string {
  return `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}
