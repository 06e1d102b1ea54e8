/**
 * What a tool may return as its result: a string, content blocks of the kinds a result holds (with the
 * fields the API requires of each, and that JSON can send), or nothing; anything else named in words
 * for the model and the log (a tool's, a toolset member's). A block that passed here but that the SDK
 * cannot serialise, or the API refuses, would stay in the history and fail every later request.
 */
import { thrownMessage } from './described.js';

/** The key of a durable run's stand-in for a value no tool may return: the kind it recorded (`standInOfKind`). */
const RECORDED_KIND = Symbol.for('tool-runner.invalidResultKind.v1');

/** The block types a tool result may hold. */
const RESULT_BLOCK_TYPES = new Set(['text', 'image', 'document', 'search_result', 'tool_reference', 'browser_state']);

/**
 * What a tool returned that no tool may return, in words (`'object'`, `'null'`, `'an array whose item 0 is null'`,
 * `'an array whose item 0 is an image block without a source'`); `undefined` for a string, an array of content
 * blocks the API takes, or nothing.
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
    const { type } = block as { type?: unknown };
    if (typeof type !== 'string' || !RESULT_BLOCK_TYPES.has(type)) {
      return `an array whose item ${i} is no content block (its type: ${typeof type === 'string' ? `'${type}'` : 'none'}; a result holds ${[...RESULT_BLOCK_TYPES].join(', ')} blocks)`;
    }
    const problem = unsendable(block, type) ?? blockProblem(type, block as Fields);
    if (problem !== undefined) return `an array whose item ${i} is ${problem}`;
  }
  return undefined;
}

type Fields = Record<string, unknown>;

/** What each kind of source needs, as strings (a `content` source's `content` is checked apart). */
const IMAGE_SOURCES: Readonly<Record<string, readonly string[]>> = { base64: ['data', 'media_type'], url: ['url'], file: ['file_id'] };
const DOCUMENT_SOURCES: Readonly<Record<string, readonly string[]>> = { ...IMAGE_SOURCES, text: ['data', 'media_type'], content: [] };

/** What each kind of a `browser_state` block's state change needs, as strings. */
const STATE_CHANGES: Readonly<Record<string, readonly string[]>> = {
  tab_opened: ['tab_id'],
  download_started: ['download_id', 'url'],
  download_completed: ['download_id', 'url'],
  download_failed: ['download_id', 'url'],
};

/**
 * What the API refuses in a block of a known type, in words (`'an image block without a source'`): only
 * the fields it requires are checked, so that optional ones (`cache_control`, `citations`, ...) pass.
 */
function blockProblem(type: string, block: Fields): string | undefined {
  const name = blockName(type);
  switch (type) {
    case 'text':
      return wrongField(name, undefined, 'text', block.text, 'a string');
    case 'image':
      return sourceProblem(name, block.source, IMAGE_SOURCES);
    case 'document':
      return sourceProblem(name, block.source, DOCUMENT_SOURCES);
    case 'search_result':
      return (
        fieldsProblem(name, undefined, block, ['source', 'title']) ??
        (Array.isArray(block.content) ? innerBlocksProblem(name, 'content', block.content, ['text']) : wrongField(name, undefined, 'content', block.content, 'an array'))
      );
    case 'tool_reference':
      return fieldsProblem(name, undefined, block, ['tool_name']);
    case 'browser_state':
      return browserStateProblem(name, block);
    default:
      return undefined;
  }
}

/** An image's or a document's source: an object of a known type, with what that type needs. */
function sourceProblem(name: string, source: unknown, kinds: Readonly<Record<string, readonly string[]>>): string | undefined {
  const wrong = wrongField(name, undefined, 'source', source, 'an object');
  if (wrong !== undefined) return wrong;
  const { type } = source as Fields;
  const needs = typeof type === 'string' && Object.hasOwn(kinds, type) ? kinds[type] : undefined;
  if (needs === undefined) {
    return `${name} whose source is of no known type (its type: ${typeof type === 'string' ? `'${type}'` : 'none'}; a source is ${Object.keys(kinds).join(', ')})`;
  }
  const problem = fieldsProblem(name, `${type} source`, source as Fields, needs);
  if (problem !== undefined || type !== 'content') return problem;
  // A document's `content` source: a string, or text and image blocks.
  const { content } = source as Fields;
  if (typeof content === 'string') return undefined;
  return Array.isArray(content) ? innerBlocksProblem(name, 'content source', content, ['text', 'image']) : wrongField(name, 'content source', 'content', content, 'a string or an array');
}

/** The blocks inside a block (a search result's text, a content source's text and images), each of the types allowed. */
function innerBlocksProblem(name: string, where: string, blocks: unknown[], types: readonly string[]): string | undefined {
  for (let j = 0; j < blocks.length; j++) {
    const inner = blocks[j];
    const type = typeof inner === 'object' && inner !== null ? (inner as Fields).type : undefined;
    if (typeof type !== 'string' || !types.includes(type)) return `${name} whose ${where} item ${j} is no ${types.join(' or ')} block`;
    const problem = blockProblem(type, inner as Fields);
    if (problem !== undefined) return `${name} whose ${where} item ${j} is ${problem}`;
  }
  return undefined;
}

/** A `browser_state` block: its `tabs` (each with `tab_id`, `title`, `url`), and its `state_changes` if any. */
function browserStateProblem(name: string, block: Fields): string | undefined {
  const { tabs, state_changes: changes } = block;
  if (!Array.isArray(tabs)) return wrongField(name, undefined, 'tabs', tabs, 'an array');
  for (let j = 0; j < tabs.length; j++) {
    const problem = wrongField(name, undefined, `tab ${j}`, tabs[j], 'an object') ?? fieldsProblem(name, `tab ${j}`, tabs[j] as Fields, ['tab_id', 'title', 'url']);
    if (problem !== undefined) return problem;
  }
  if (changes === undefined || changes === null) return undefined;
  if (!Array.isArray(changes)) return wrongField(name, undefined, 'state_changes', changes, 'an array');
  for (let j = 0; j < changes.length; j++) {
    const change = changes[j];
    const wrong = wrongField(name, undefined, `state change ${j}`, change, 'an object');
    if (wrong !== undefined) return wrong;
    const { type } = change as Fields;
    const needs = typeof type === 'string' && Object.hasOwn(STATE_CHANGES, type) ? STATE_CHANGES[type] : undefined;
    if (needs === undefined) {
      return `${name} whose state change ${j} is of no known type (its type: ${typeof type === 'string' ? `'${type}'` : 'none'}; a state change is ${Object.keys(STATE_CHANGES).join(', ')})`;
    }
    const problem = fieldsProblem(name, `state change ${j}`, change as Fields, needs);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** The first of `fields` of `value` (the block, or its `part`) that is no string, in words. */
function fieldsProblem(name: string, part: string | undefined, value: Fields, fields: readonly string[]): string | undefined {
  for (const field of fields) {
    const wrong = wrongField(name, part, field, value[field], 'a string');
    if (wrong !== undefined) return wrong;
  }
  return undefined;
}

/**
 * A field of the block (or of its `part`, `'base64 source'`) that is not what it must be, in words:
 * `'an image block without a source'`, `'a document block whose source is a number, not an object'`,
 * `'an image block whose url source has no url'`; `undefined` when it is.
 */
function wrongField(name: string, part: string | undefined, field: string, value: unknown, want: 'a string' | 'an object' | 'an array' | 'a string or an array'): string | undefined {
  const fits =
    want === 'an object'
      ? typeof value === 'object' && value !== null && !Array.isArray(value)
      : (want !== 'an array' && typeof value === 'string') || (want !== 'a string' && Array.isArray(value));
  if (fits) return undefined;
  if (value === undefined) return part === undefined ? `${name} without ${ARTICLED.has(field) ? `a ${field}` : field}` : `${name} whose ${part} has no ${field}`;
  return `${name} whose ${part === undefined ? '' : `${part}'s `}${field} is ${kindOf(value)}, not ${want}`;
}

/** The fields a missing one is named with `a` ("without a source", but "without text"). */
const ARTICLED = new Set(['source', 'title', 'tool_name']);

function blockName(type: string): string {
  return `${type === 'image' ? 'an' : 'a'} ${type} block`;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' || type === 'undefined' ? `an ${type}` : `a ${type}`;
}

/**
 * A block the run could not keep: the SDK sends it as JSON, where a BigInt, a cycle or a `toJSON` that
 * throws fails every later request; the runner copies its history with `structuredClone` (a snapshot,
 * a new run over it), where a function or a symbol throws. What JSON leaves out (`undefined`, a method
 * of a class) and what it turns into a string (a `Date`) are harmless.
 */
function unsendable(block: object, type: string): string | undefined {
  try {
    JSON.stringify(block);
  } catch (error) {
    return `${blockName(type)} that cannot be sent as JSON (${jsonFailureAt(block, '', []) ?? thrownMessage(error)})`;
  }
  try {
    structuredClone(block);
  } catch (error) {
    return `${blockName(type)} that the run cannot copy (${uncopyableAt(block, '', []) ?? thrownMessage(error)})`;
  }
  return undefined;
}


/** Where in `value` JSON fails, in words (`'meta is a BigInt'`, `'meta.self makes a cycle'`); `undefined` if not found. */
function jsonFailureAt(value: unknown, path: string, inside: object[]): string | undefined {
  const at = path === '' ? 'the block' : path;
  if (typeof value === 'bigint') return `${at} is a BigInt`;
  if (typeof value !== 'object' || value === null) return undefined;
  if (inside.includes(value)) return `${at} makes a cycle`;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    let json: unknown;
    try {
      json = (value as { toJSON: (key: string) => unknown }).toJSON(path.slice(path.lastIndexOf('.') + 1));
    } catch (error) {
      return `${at}'s toJSON threw: ${thrownMessage(error)}`;
    }
    return json === value ? undefined : jsonFailureAt(json, path, [...inside, value]);
  }
  return insideAt(value, path, inside, jsonFailureAt);
}

/** Where in `value` `structuredClone` fails, in words (`'format is a function'`); `undefined` if not found. */
function uncopyableAt(value: unknown, path: string, inside: object[]): string | undefined {
  const at = path === '' ? 'the block' : path;
  if (typeof value === 'function' || typeof value === 'symbol') return `${at} is a ${typeof value}`;
  if (typeof value !== 'object' || value === null || inside.includes(value)) return undefined;
  return insideAt(value, path, inside, uncopyableAt);
}

/** The first of `value`'s items or own fields where `find` finds something. */
function insideAt(value: object, path: string, inside: object[], find: (value: unknown, path: string, inside: object[]) => string | undefined): string | undefined {
  inside.push(value);
  try {
    const entries: Array<[string, unknown]> = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
    for (const [key, inner] of entries) {
      const found = find(inner, path === '' ? key : `${path}.${key}`, inside);
      if (found !== undefined) return found;
    }
    return undefined;
  } catch (error) {
    return `${path === '' ? 'the block' : path} could not be read: ${thrownMessage(error)}`;
  } finally {
    inside.pop();
  }
}
