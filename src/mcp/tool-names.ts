/**
 * The Messages API's rules for a tool's name and input schema, which MCP does not have (an MCP tool may be named
 * `files.read`): a request with a tool it refuses fails whole, with a 400, so the toolset refuses
 * such a tool first, naming it.
 */
import { refusedByApi } from '../api-input-schema.js';
import { API_TOOL_NAME, TOOL_NAME_RULE as RULE } from '../tool-name.js';

/** The way around a tool the API refuses: the toolset's `tools` option leaves it out. */
const LEAVE_OUT = " (the option 'tools' offers the model only the others)";

/** A `prefix` the API could never take in a name: a clear error before anything is listed. */
export function checkPrefix(prefix: unknown): void {
  if (prefix === undefined) return;
  if (typeof prefix !== 'string' || !/^[a-zA-Z0-9_-]*$/.test(prefix) || prefix.length > 127) {
    throw new TypeError(`mcpToolset: prefix ${JSON.stringify(prefix)} cannot begin a tool name: ${RULE}`);
  }
}

/** Refuses the names (after the prefix) the API would refuse, all of them in one error. */
export function checkToolNames(names: readonly string[], prefix: string): void {
  const refused = names.filter((name) => !API_TOOL_NAME.test(`${prefix}${name}`));
  if (refused.length === 0) return;
  const listed = refused.map((name) => `'${name}'${described(`${prefix}${name}`, prefix !== '')}`).join(', ');
  throw new Error(`mcpToolset: the server's tool${refused.length > 1 ? 's' : ''} ${listed} cannot be sent to the model: ${RULE}; the request would be refused whole${LEAVE_OUT}`);
}

/** How a refused name is sent: with its prefix, and its length when too long. */
function described(sent: string, prefixed: boolean): string {
  const notes = [...(prefixed ? [`as '${sent}'`] : []), ...(sent.length > 128 ? [`${sent.length} characters`] : [])];
  return notes.length > 0 ? ` (${notes.join(', ')})` : '';
}

/** Refuses the input schemas the API would refuse (`refusedByApi`), all of them in one error naming each tool. */
export function checkInputSchemas(tools: ReadonlyArray<{ name: string; inputSchema: Record<string, unknown> }>, prefix: string): void {
  const refused = tools.flatMap(({ name, inputSchema }) => {
    const why = refusedByApi(inputSchema);
    return why.length > 0 ? [`'${prefix}${name}': ${why.join('; ')}`] : [];
  });
  if (refused.length === 0) return;
  throw new Error(`mcpToolset: the input schema of the server's tool${refused.length > 1 ? 's' : ''} ${refused.join(', ')} cannot be sent to the model; the request would be refused whole${LEAVE_OUT}`);
}
