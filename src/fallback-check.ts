/**
 * The check of `options.fallback` at construction: a mistake in an entry would otherwise be found only
 * in an outage, when the entry is first sent to (a request the API refuses, or none at all).
 */
import { canSend } from './client.js';
import { namesOutputFormat } from './output.js';
import { described, misspeltName, oneEditApart, oneSwapApart, wrongType, wrongValue } from './described.js';

/** What an entry may not hold, and why. */
const NOT_OVERRIDDEN: ReadonlyMap<string, string> = new Map([
  ['messages', 'the whole history goes to every entry'],
  ['stream', 'the run sets it for every request'],
  ['thread', 'a message thread does not cross clients'],
  ['tools', "the run's tools answer the calls of any entry"],
  ['max_iterations', 'it is a setting of the run'],
  ['runToolsEagerly', 'it is a setting of the run'],
  ['compactionControl', 'it is a setting of the run'],
]);

/**
 * The params of a Messages request (the SDK's `MessageCreateParamsBase`, and the sampling params older
 * models take), against which an entry's keys are checked for a slip. A key near none of them passes:
 * the API may take params this version does not know yet.
 */
const PARAMS = [
  'model', 'max_tokens', 'system', 'thinking', 'tool_choice', 'betas', 'metadata', 'output_config', 'output_format',
  'service_tier', 'speed', 'stop_sequences', 'container', 'context_management', 'compaction', 'mcp_servers', 'inference_geo',
  'cache_control', 'billing_policy', 'diagnostics', 'fallbacks', 'fallback_credit_token', 'user_profile_id', 'workspace_id',
  'temperature', 'top_k', 'top_p',
];

/** A slip of a param's name: its case or separators (`maxTokens`), or one letter (added, dropped, changed, or two swapped) in a name of five or more. */
const nearParam = (key: string, name: string) => name.length >= 5 && (oneEditApart(key, name) || oneSwapApart(key, name));

/**
 * Throws a clear error for a malformed `options.fallback`; `optionKeys`, the runner's options (no param of a request);
 * `output`: the run has `options.output`, whose format every entry's requests carry.
 */
export function checkFallback(entries: unknown, optionKeys: ReadonlySet<string>, output = false): void {
  if (entries === undefined) return;
  if (!Array.isArray(entries)) throw new TypeError('toolRunner: options.fallback must be an array of { client?, model?, ...params }');
  // A hole (`[, entry]`) too: `forEach` would pass over it.
  for (let i = 0; i < entries.length; i++) checkEntry(entries[i], `toolRunner: options.fallback[${i}]`, optionKeys, output);
}

function checkEntry(entry: unknown, where: string, optionKeys: ReadonlySet<string>, output: boolean): void {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new TypeError(`${where} must be an object: { client?, model?, ...params }, got ${described(entry)}`);
  const { client, model, max_tokens: maxTokens, system } = entry as Record<string, unknown>;
  if (client !== undefined) checkClient(client, where);
  if (model !== undefined && (typeof model !== 'string' || model === '')) throw wrongType(model, `${where}.model must be a non-empty string`);
  if (maxTokens !== undefined && !(typeof maxTokens === 'number' && Number.isInteger(maxTokens) && maxTokens >= 1)) {
    throw wrongValue(maxTokens, `${where}.max_tokens must be a whole number of at least 1`);
  }
  if (system !== undefined && typeof system !== 'string' && !Array.isArray(system)) throw wrongType(system, `${where}.system must be a string or an array of text blocks`);
  // Beside options.output's format, an entry's own would be replaced in silence (output_config.format), or sent with it: the SDK refuses the pair.
  if (output && namesOutputFormat(entry as Record<string, unknown>)) {
    throw new TypeError(`${where}: options.output and a format of the entry's own (output_config.format or output_format) were both given; keep options.output, which every entry's requests carry as output_config.format`);
  }
  for (const key of Object.keys(entry)) {
    if (key === 'client' || PARAMS.includes(key)) continue;
    const why = NOT_OVERRIDDEN.get(key);
    if (why) throw new TypeError(`${where}.${key}: a fallback entry may replace the request's params, but not '${key}' (${why})`);
    // It would go to the API as a field of the request, which the API refuses (400): found only in an outage.
    if (optionKeys.has(key)) {
      throw new TypeError(`${where}.${key}: \`${key}\` is an option of the runner, not a request param; an entry holds a client and params, and its requests take the run's options`);
    }
    const meant = misspeltName(key, ['client', ...PARAMS], nearParam);
    if (meant !== undefined) throw new TypeError(`${where}: unknown ${meant === 'client' ? 'key' : 'param'} '${key}'. Did you mean '${meant}'?`);
  }
}

/** An Anthropic client (or Bedrock, Vertex, ...): `beta.messages.create` or `messages.create`, a function. */
function checkClient(client: unknown, where: string): void {
  if (!canSend(client)) {
    throw new TypeError(`${where}.client must be an Anthropic client (or Bedrock, Vertex, ...: any client with \`beta.messages\` or \`messages\`), got ${described(client)}`);
  }
}
