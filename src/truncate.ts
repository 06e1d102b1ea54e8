/**
 * `maxToolResultChars`: a tool result cut to a number of characters of text in all, wherever its text
 * is (text blocks, a search result's text, a document's text), with a note the model can see.
 */
import { cutText } from './cut.js';
import type { ToolResultContent } from './types.js';

export const DEFAULT_MAX_TOOL_RESULT_CHARS = 100_000;

type Block = Exclude<ToolResultContent, string>[number];
/** A block as this module reads it: its type, and the fields that hold text. */
type Fields = Record<string, unknown>;

/**
 * The result cut to `limit` characters of text, with a note. Images and other blocks stay whole; a
 * block the cut leaves without text (or with blank text, which the API refuses) goes.
 */
export function truncateResult(content: ToolResultContent, limit: number): ToolResultContent {
  if (typeof content === 'string') {
    return content.length <= limit ? content : `${cutText(content, limit)}${truncationNote(content.length, limit)}`;
  }
  let total = 0;
  for (const block of content) total += textLength(block as unknown as Fields);
  if (total <= limit) return content;
  const budget = { left: limit };
  const kept: Block[] = [];
  for (const block of content) {
    const cut = cutBlock(block as unknown as Fields, budget);
    if (cut) kept.push(cut as unknown as Block);
  }
  kept.push({ type: 'text', text: truncationNote(total, limit).trimStart() });
  return kept;
}

function truncationNote(length: number, limit: number): string {
  return `\n[truncated: the result had ${length} characters; only the first ${limit} are shown]`;
}

/** The characters of text a block holds. */
function textLength(block: Fields): number {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text.length : 0;
    case 'search_result':
      return innerLength(block.content);
    case 'document': {
      const source = block.source as Fields | undefined;
      if (source?.type === 'text') return typeof source.data === 'string' ? source.data.length : 0;
      if (source?.type === 'content') return typeof source.content === 'string' ? source.content.length : innerLength(source.content);
      return 0;
    }
    default:
      return 0;
  }
}

function innerLength(blocks: unknown): number {
  let length = 0;
  if (Array.isArray(blocks)) for (const block of blocks) length += textLength(block as Fields);
  return length;
}

/** The block with its text cut to what the budget has left; `undefined` when no text is left of it. */
function cutBlock(block: Fields, budget: { left: number }): Fields | undefined {
  switch (block.type) {
    case 'text': {
      const text = cutString(block.text as string, budget);
      return text === undefined ? undefined : text === block.text ? block : { ...block, text };
    }
    case 'search_result': {
      const content = cutBlocks(block.content, budget);
      return content === undefined ? undefined : content === block.content ? block : { ...block, content };
    }
    case 'document': {
      const source = block.source as Fields | undefined;
      let cut: Fields | undefined;
      if (source?.type === 'text' && typeof source.data === 'string') {
        const data = cutString(source.data, budget);
        cut = data === undefined ? undefined : { ...source, data };
      } else if (source?.type === 'content') {
        const content = typeof source.content === 'string' ? cutString(source.content, budget) : cutBlocks(source.content, budget);
        cut = content === undefined ? undefined : { ...source, content };
      } else return block;
      return cut === undefined ? undefined : cut.data === source.data && cut.content === source.content ? block : { ...block, source: cut };
    }
    default:
      return block;
  }
}

/** Blocks inside a block (a search result's, a content source's), cut; `undefined` when none is left with text. */
function cutBlocks(blocks: unknown, budget: { left: number }): unknown[] | undefined {
  if (!Array.isArray(blocks)) return blocks as undefined;
  const kept: unknown[] = [];
  let same = true;
  for (const block of blocks) {
    const cut = cutBlock(block as Fields, budget);
    if (cut !== block) same = false;
    if (cut) kept.push(cut);
  }
  if (same) return blocks;
  return kept.some((block) => (block as Fields).type === 'text') ? kept : undefined;
}

/** The text cut to what the budget has left (and counted off it); `undefined` when the cut leaves it blank. */
function cutString(text: string, budget: { left: number }): string | undefined {
  if (budget.left <= 0) return undefined;
  const cut = cutText(text, budget.left);
  budget.left -= text.length;
  return /\S/.test(cut) ? cut : undefined;
}
