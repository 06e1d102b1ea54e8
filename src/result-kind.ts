/**
 * What a tool may return as its result: a string, content blocks of the kinds a result holds, or
 * nothing; anything else named in words for the model and the log (a tool's, a toolset member's).
 */
/** The key of a durable run's stand-in for a value no tool may return: the kind it recorded (`standInOfKind`). */
const RECORDED_KIND = Symbol.for('tool-runner.invalidResultKind.v1');

/** The block types a tool result may hold. */
const RESULT_BLOCK_TYPES = new Set(['text', 'image', 'document', 'search_result', 'tool_reference', 'browser_state']);

/**
 * What a tool returned that no tool may return, in words (`'object'`, `'null'`, `'an array whose item 0 is null'`);
 * `undefined` for a string, an array of content blocks, or nothing.
 */
export function invalidResultKind(value: unknown): string | undefined {
  if (typeof value === 'string' || value === undefined) return undefined;
  if (Array.isArray(value)) return invalidBlock(value);
  if (value === null) return 'null';
  if (typeof value === 'object' && RECORDED_KIND in value) return String((value as { [RECORDED_KIND]: unknown })[RECORDED_KIND]);
  return typeof value;
}

/** A value a replay gives in place of one of `kind` no tool may return: the runner refuses it in the same words. */
export function standInOfKind(kind: string): unknown {
  return { [RECORDED_KIND]: kind };
}

function invalidBlock(blocks: unknown[]): string | undefined {
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i];
    if (typeof block !== 'object' || block === null) return `an array whose item ${i} is ${block === null ? 'null' : typeof block}`;
    const { type, text } = block as { type?: unknown; text?: unknown };
    if (typeof type !== 'string' || !RESULT_BLOCK_TYPES.has(type)) {
      return `an array whose item ${i} is no content block (its type: ${typeof type === 'string' ? `'${type}'` : 'none'}; a result holds ${[...RESULT_BLOCK_TYPES].join(', ')} blocks)`;
    }
    if (type === 'text' && typeof text !== 'string') return `an array whose item ${i} is a text block without text`;
  }
  return undefined;
}
