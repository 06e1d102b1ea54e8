/** Size and concurrency guards around tool calls. */
import type { ToolResultContent } from './types.js';

export const DEFAULT_MAX_TOOL_RESULT_CHARS = 100_000;

/** Cuts the text of a result to `limit` characters in all, with a note the model can see. */
export function truncateResult(content: ToolResultContent, limit: number): ToolResultContent {
  if (typeof content === 'string') {
    return content.length <= limit ? content : `${content.slice(0, limit)}${truncationNote(content.length, limit)}`;
  }
  let total = 0;
  for (const block of content) if (block.type === 'text') total += block.text.length;
  if (total <= limit) return content;
  let left = limit;
  const kept: Exclude<ToolResultContent, string> = [];
  for (const block of content) {
    if (block.type !== 'text') {
      kept.push(block);
      continue;
    }
    if (left <= 0) continue;
    kept.push(block.text.length <= left ? block : { ...block, text: block.text.slice(0, left) });
    left -= block.text.length;
  }
  kept.push({ type: 'text', text: truncationNote(total, limit).trimStart() });
  return kept;
}

function truncationNote(length: number, limit: number): string {
  return `\n[truncated: the result had ${length} characters; only the first ${limit} are shown]`;
}

/** Runs at most `max` tasks at once; the others wait their turn in order. */
export class Limiter {
  readonly #max: number;
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(max: number) {
    this.#max = max;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#max) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#running++;
    try {
      return await task();
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }
}
