/**
 * The `tools` option of an MCP toolset: which of the server's tools it offers the model. A big server's every tool costs
 * tokens in each request and invites wrong calls, and one tool the Messages API would refuse (its name, its input
 * schema) made the whole server unusable: the tools left out are never checked, defined or callable.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { described, misspeltName, nearNameOr, thrownMessage } from '../described.js';
import { isThenable } from '../completion.js';

/** A tool as the server lists it (`tools/list`): its MCP name, description, input schema, annotations. */
export type McpTool = Awaited<ReturnType<Client['listTools']>>['tools'][number];

/** The tools to keep: their MCP names (before any `prefix`), or a rule given each listed tool. */
export type McpToolFilter = readonly string[] | ((tool: McpTool) => boolean);

/** A list that is no list of names, or an empty one (it would keep none of the tools): a clear error before anything is listed. */
export function checkToolFilter(filter: unknown): void {
  if (filter === undefined || typeof filter === 'function') return;
  if (!Array.isArray(filter)) throw new TypeError(`mcpToolset: tools must be the MCP names of the tools to keep or a function that decides for each tool, got ${described(filter)}`);
  if (filter.length === 0) throw new TypeError('mcpToolset: tools is an empty list, which keeps none of the server\'s tools (leave the toolset out instead)');
  const seen = new Set<string>();
  for (const name of filter) {
    if (typeof name !== 'string' || name === '') throw new TypeError(`mcpToolset: tools must list the MCP names of the tools to keep, got ${described(name)} in it`);
    if (seen.has(name)) throw new TypeError(`mcpToolset: tools names '${name}' twice`);
    seen.add(name);
  }
}

/**
 * The listed tools `filter` keeps. At the first listing (`first`) each name it gives must be listed: a misspelt one
 * would drop a tool silently. After a list change, a tool that went away is just gone.
 */
export function keptTools(listed: readonly McpTool[], filter: McpToolFilter | undefined, first: boolean, prefix: string): McpTool[] {
  if (filter === undefined) return [...listed];
  if (typeof filter === 'function') return listed.filter((entry) => kept(filter, entry));
  const names = new Set(filter);
  if (first) checkListed(filter, listed.map((entry) => entry.name), prefix);
  return listed.filter((entry) => names.has(entry.name));
}

/** The rule's answer for `entry`: true or false (`undefined`, a forgotten return, would drop every tool silently). */
function kept(rule: (tool: McpTool) => boolean, entry: McpTool): boolean {
  let answer: unknown;
  try {
    answer = rule(entry);
  } catch (error) {
    throw new Error(`mcpToolset: the tools rule failed for the server's tool '${entry.name}': ${thrownMessage(error)}`, { cause: error });
  }
  if (typeof answer === 'boolean') return answer;
  const promise = isThenable(answer) ? ' (a promise: the rule decides at once, as the tools are listed)' : '';
  throw new TypeError(`mcpToolset: the tools rule must answer true or false for each tool, got ${described(answer)}${promise} for '${entry.name}'`);
}

/** Names the tools `wanted` names that the server does not list, and what it lists. */
function checkListed(wanted: readonly string[], listed: readonly string[], prefix: string): void {
  const have = new Set(listed);
  const missing = wanted.filter((name) => !have.has(name));
  if (missing.length === 0) return;
  const hints = missing.map((name) => {
    // Given with the prefix: the names are the server's.
    if (prefix !== '' && name.startsWith(prefix) && have.has(name.slice(prefix.length))) return `'${name}' (the names are the server's, without the prefix '${prefix}': '${name.slice(prefix.length)}')`;
    const meant = misspeltName(name, listed, nearNameOr(...listed));
    return meant === undefined ? `'${name}'` : `'${name}' (did you mean '${meant}'?)`;
  });
  const lists = listed.length === 0 ? 'it lists none' : `it lists ${listed.map((name) => `'${name}'`).join(', ')}`;
  throw new Error(`mcpToolset: tools names ${missing.length > 1 ? 'tools' : 'a tool'} the server does not list: ${hints.join(', ')}; ${lists}`);
}
