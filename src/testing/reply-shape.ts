/** A scripted step checked before it is sent: a mistake in the script is a clear 400, never an empty reply. */
import { described, misspeltField, nearNameOr, withoutUnit } from '../described.js';

/** The fields of a scripted reply (`ScriptedReply`). */
const REPLY_FIELDS = ['content', 'stop_reason', 'stop_sequence', 'stop_details', 'usage', 'container', 'delayMs', 'eventDelayMs', 'chunkSize', 'error', 'disconnectAfterEvents', 'malformed', 'stallAfterEvents'];

/** A slip in a long field's name, or in `content` (`contents`), the field a step is made of, or a time without its unit (`delay`). */
const nearField = (key: string, name: string) => nearNameOr('content')(key, name) || withoutUnit(key, name);

/**
 * A message's fields the server makes itself: a step may carry them (a reply recorded from the API), and they are left
 * out. `parsed_output` is the SDK's: it adds it to a stream's final message (`null` without an output format) and to one of
 * `messages.parse()`, so a reply recorded from a streamed run has it.
 */
const MESSAGE_FIELDS = ['id', 'type', 'role', 'model', 'context_management', 'diagnostics', 'input_transformations', 'parsed_output'];

/** The fields of a scripted error (`ScriptedError`). */
const ERROR_FIELDS = ['status', 'type', 'message', 'retryAfter', 'afterEvents', 'details', 'headers'];
/** The fields of an error that mean nothing on the step itself: given there, the step would answer otherwise. */
const ERROR_ONLY = new Set(['retryAfter', 'afterEvents', 'details']);

/** The step's numbers, each a count or a time (a NaN chunk size streamed every text as ''; a negative count never fired). */
const NUMBERS: Array<[field: string, least: number, whole: boolean]> = [
  ['chunkSize', 1, true],
  ['eventDelayMs', 0, false],
  ['delayMs', 0, false],
  ['disconnectAfterEvents', 0, true],
  ['stallAfterEvents', 0, true],
];

/** What makes a scripted reply no reply the server can send, in words; none for one it can. */
export function replyShapeProblem(reply: object): string | undefined {
  // A block given where a reply belongs: `text('hi')` for `{ content: [text('hi')] }`.
  if (Array.isArray(reply) || (typeof (reply as { type?: unknown }).type === 'string' && !('content' in reply))) {
    return 'the step is a content block (or a list of them), not a reply: give { content: [block, ...] }';
  }
  // A field misspelt would be left out silently (`stopReason`, `chunksize`): the reply would not be the one scripted.
  const slip = misspeltField(reply, REPLY_FIELDS, nearField);
  if (slip) return `the step has no field \`${slip.key}\`: did you mean \`${slip.meant}\`?`;
  const misplaced = Object.keys(reply).find((key) => ERROR_ONLY.has(key));
  if (misplaced) return `the step has no field \`${misplaced}\`: it belongs in its error ({ error: { status, ${misplaced} } })`;
  // Any other field was left out too: `{ text: 'hi' }` answered an empty reply, not the one scripted.
  const unknown = Object.keys(reply).find((key) => !REPLY_FIELDS.includes(key) && !MESSAGE_FIELDS.includes(key));
  if (unknown) {
    const hint =
      unknown === 'text' ? ": the reply's text goes in its content, { content: [text('…')] }"
      : unknown === 'status' || unknown === 'headers' ? `: it belongs in its error ({ error: { status, … } })`
      : `; a reply's fields are ${REPLY_FIELDS.join(', ')}`;
    return `the step has no field \`${unknown}\`${hint}`;
  }
  const { content, error } = reply as { content?: unknown; error?: { status?: unknown } };
  const wrongNumber = numberProblem(reply, NUMBERS, "the step's");
  if (wrongNumber) return wrongNumber;
  // Spread into the reply as they are: a string's characters would become a usage's or a container's fields.
  const wrongKind = kindProblem(reply, REPLY_KINDS, "the step's ");
  if (wrongKind) return wrongKind;
  if (error !== undefined) {
    const problem = errorProblem(error);
    if (problem) return problem;
  }
  if (content === undefined) return undefined;
  if (!Array.isArray(content)) return `the step's content is ${typeof content}, not an array of blocks`;
  for (let at = 0; at < content.length; at++) {
    const block = content[at] as { type?: unknown; text?: unknown } | null;
    if (typeof block?.type !== 'string') return `the step's content[${at}] is no content block (it has no type)`;
    if (block.type === 'text' && typeof block.text !== 'string') return `the step's content[${at}] is a text block without text`;
    // The runner answers a call by its id; the API gives every call one (toolUse() makes one like it).
    if (block.type === 'tool_use' || block.type === 'server_tool_use' || block.type === 'mcp_tool_use') {
      const { id, name, input, server_name: server } = block as { id?: unknown; name?: unknown; input?: unknown; server_name?: unknown };
      // The API sends every call an input (`{}` for none): without one, the JSON reply and the stream would differ.
      let missing = typeof id !== 'string' ? 'an id' : typeof name !== 'string' ? 'a name' : input === undefined ? 'an input' : undefined;
      // (An MCP connector's call names its server, as the API's always do.)
      if (!missing && block.type === 'mcp_tool_use' && typeof server !== 'string') missing = 'a server_name';
      if (missing) return `the step's content[${at}] is a ${block.type} block without ${missing}: ${MADE_WITH[block.type]}`;
    }
  }
  return undefined;
}

/** How a call block of each type is written whole. */
const MADE_WITH: Record<string, string> = {
  tool_use: 'make it with toolUse(name, input)',
  server_tool_use: 'make it with serverToolUse(name, input)',
  mcp_tool_use: 'give it { type, id, name, server_name, input }',
};

/** What is wrong with a step's `error`, in words; none when the server can send it. */
function errorProblem(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return `the step's error must be an object ({ status: 529, ... }), got ${described(error)}`;
  // A status that is no error (200) would be answered as a reply of no message.
  const status = (error as { status?: unknown }).status;
  if (!(typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599)) {
    return `the step's error.status must be an HTTP error status (400 to 599), got ${described(status)}`;
  }
  // Any other field would be left out silently (`afterEvent`, `retry_after`): a plain error, which the SDK retries, for one mid-stream.
  const unknown = Object.keys(error).find((key) => !ERROR_FIELDS.includes(key));
  if (unknown) return `the step's error has no field \`${unknown}\`; its fields are ${ERROR_FIELDS.join(', ')}`;
  const wrongKind = kindProblem(error, ERROR_KINDS, "the step's error.");
  if (wrongKind) return wrongKind;
  return numberProblem(error, [['afterEvents', 0, true], ['retryAfter', 0, false]], "the step's error.");
}

type Kind = 'string' | 'object';

/** The kind each field of a reply must be when given: an object or a string, `null` where the API sends one. */
const REPLY_KINDS: Array<[field: string, kind: Kind, nullable: boolean]> = [
  ['stop_reason', 'string', true],
  ['stop_sequence', 'string', true],
  ['stop_details', 'object', true],
  ['usage', 'object', false],
  ['container', 'object', true],
];
const ERROR_KINDS: Array<[field: string, kind: Kind, nullable: boolean]> = [
  ['type', 'string', false],
  ['message', 'string', false],
  ['details', 'object', false],
  ['headers', 'object', false],
];

function kindProblem(fields: object, kinds: ReadonlyArray<[field: string, kind: Kind, nullable: boolean]>, where: string): string | undefined {
  for (const [field, kind, nullable] of kinds) {
    const value = (fields as Record<string, unknown>)[field];
    if (value === undefined || (value === null && nullable)) continue;
    const fits = kind === 'string' ? typeof value === 'string' : typeof value === 'object' && value !== null && !Array.isArray(value);
    if (!fits) return `${where}${field} must be ${kind === 'string' ? 'a string' : 'an object'}${nullable ? ' or null' : ''}, got ${described(value)}`;
  }
  return undefined;
}

function numberProblem(fields: object, numbers: ReadonlyArray<[field: string, least: number, whole: boolean]>, where: string): string | undefined {
  for (const [field, least, whole] of numbers) {
    const value = (fields as Record<string, unknown>)[field];
    if (value === undefined || (typeof value === 'number' && value >= least && (whole ? Number.isInteger(value) : Number.isFinite(value)))) continue;
    return `${where}${where.endsWith('.') ? '' : ' '}${field} must be ${whole ? 'a whole number' : 'a number'}, ${least} or more, got ${described(value)}`;
  }
  return undefined;
}
