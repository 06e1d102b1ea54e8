/**
 * `maxToolResultChars`: a tool result cut to a number of characters of text in all, wherever its text
 * is (text blocks, a search result's text, a document's text), with a note the model can see.
 */
import { cutText } from './cut.js';
import { sameItems } from './lists.js';
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
      // A search result is its text: with none left, it goes (its source and title with it).
      const content = cutBlocks(block.content as Fields[], budget);
      if (!content.some((inner) => inner.type === 'text')) return undefined;
      return sameItems(content, block.content as Fields[]) ? block : { ...block, content };
    }
    case 'document':
      return cutDocument(block, block.source as Fields | undefined, budget);
    default:
      return block;
  }
}

/** A document with the text of its source cut: a text source's `data`, a content source's string or blocks (its images stay). */
function cutDocument(block: Fields, source: Fields | undefined, budget: { left: number }): Fields | undefined {
  if (source?.type === 'text' && typeof source.data === 'string') {
    const data = cutString(source.data, budget);
    return data === undefined ? undefined : data === source.data ? block : { ...block, source: { ...source, data } };
  }
  if (source?.type !== 'content') return block;
  if (typeof source.content === 'string') {
    const content = cutString(source.content, budget);
    return content === undefined ? undefined : content === source.content ? block : { ...block, source: { ...source, content } };
  }
  const blocks = source.content as Fields[];
  const content = cutBlocks(blocks, budget);
  if (content.length === 0) return undefined;
  return sameItems(content, blocks) ? block : { ...block, source: { ...source, content } };
}

/** Blocks inside a block (a search result's, a content source's), cut; those left without text go, images stay. */
function cutBlocks(blocks: Fields[], budget: { left: number }): Fields[] {
  const kept: Fields[] = [];
  for (const block of blocks) {
    const cut = cutBlock(block, budget);
    if (cut) kept.push(cut);
  }
  return kept;
}

/** The text cut to what the budget has left (and counted off it); `undefined` when the cut leaves it blank. */
function cutString(text: string, budget: { left: number }): string | undefined {
  if (budget.left <= 0) return undefined;
  const cut = cutText(text, budget.left);
  budget.left -= text.length;
  return /\S/.test(cut) ? cut : undefined;
}
