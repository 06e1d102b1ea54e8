/**
 * The content a tool call's span records when the client's `openTelemetry.traces.contentMode` is
 * `'content'`, as the SDK's runner records it: the call's arguments and its result's blocks, as JSON,
 * within `maxContentBytes` bytes of UTF-8 (the arguments are left out whole when they alone are
 * over; the result loses blocks from its end), with `anthropic.content.truncated` when something
 * was left out. Image and document data and `encrypted_` fields are never recorded.
 */
import type { SpanLike } from './trace-context.js';

const ARGUMENTS = 'gen_ai.tool.call.arguments';
const RESULT = 'anthropic.tool_result.content';
const TRUNCATED = 'anthropic.content.truncated';

/** Records `input` and, when the call has one, its result's `content` on `span`. */
export function setToolContentAttributes(span: SpanLike, input: unknown, result: { content?: unknown } | undefined, limit: number): void {
  const args = input === undefined ? undefined : (JSON.stringify(input) as string | undefined);
  const blocks = result ? toolResultContentBlocks(result.content).map((block) => JSON.stringify(block)) : undefined;
  // A UTF-16 code unit takes at most three bytes: content a third of the limit long fits unmeasured.
  const length = (blocks ?? []).reduce((sum, text) => sum + text.length + 1, 2) + (args?.length ?? 0);
  const sizeOf = 3 * length <= limit ? (text: string) => 3 * text.length : utf8Length;
  let size = 0;
  let truncated = false;
  let keptArgs = args;
  if (args !== undefined) {
    const argsSize = sizeOf(args);
    if (argsSize > limit) {
      keptArgs = undefined;
      truncated = true;
    } else {
      size += argsSize;
    }
  }
  let resultJson: string | undefined;
  if (blocks) {
    const kept: string[] = [];
    // The JSON of an array: its brackets, its elements, and a comma between each two.
    let keptSize = 2;
    for (const block of blocks) {
      const next = keptSize + (kept.length === 0 ? 0 : 1) + sizeOf(block);
      if (next > limit - size) break;
      kept.push(block);
      keptSize = next;
    }
    resultJson = `[${kept.join(',')}]`;
    if (kept.length < blocks.length) truncated = true;
  }
  if (truncated) span.setAttribute(TRUNCATED, true);
  if (keptArgs !== undefined) span.setAttribute(ARGUMENTS, keptArgs);
  if (resultJson !== undefined) span.setAttribute(RESULT, resultJson);
}

/** A result's content as a list of blocks: text and search results keep their fields, others only their type. */
export function toolResultContentBlocks(content: unknown): unknown[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((block: { type?: unknown }) => {
    if (block.type === 'text' || block.type === 'search_result') return withoutLeftOutFields(block);
    return typeof block.type === 'string' ? { type: block.type } : { type: 'unknown' };
  });
}

/** `value` without `encrypted_` fields and image or document data, at any depth. */
export function withoutLeftOutFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutLeftOutFields);
  if (typeof value !== 'object' || value === null) return value;
  const { type, file_type } = value as { type?: unknown; file_type?: unknown };
  if (type === 'image' || type === 'document') return { type };
  const view = type === 'text_editor_code_execution_view_result' && (file_type === 'image' || file_type === 'pdf');
  return Object.fromEntries(
    Object.entries(value)
      .filter(([name]) => !name.startsWith('encrypted_') && !(name === 'content' && view))
      .map(([name, field]) => [name, withoutLeftOutFields(field)]),
  );
}

/** The size of `text` in UTF-8, in bytes, without encoding it. */
export function utf8Length(text: string): number {
  let size = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) size += 1;
    else if (unit < 0x800) size += 2;
    else if (unit >= 0xd800 && unit < 0xdc00 && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00) {
      size += 4;
      index++;
    } else size += 3;
  }
  return size;
}
