/** The summed token usage of every request of a run, with the API's field names. */
import type { BetaUsage } from './types.js';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  server_tool_use: { web_search_requests: number; web_fetch_requests: number };
}

/** The usage of a run before its first reply: one frozen object for every run (`addUsage` never mutates). */
export const NO_USAGE: Usage = Object.freeze({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  server_tool_use: Object.freeze({ web_search_requests: 0, web_fetch_requests: 0 }),
});

/** `total` plus one reply's usage (missing or null fields count as 0). */
export function addUsage(total: Usage, usage: Partial<BetaUsage> | null | undefined): Usage {
  if (!usage) return total;
  const server = usage.server_tool_use;
  return {
    input_tokens: total.input_tokens + (usage.input_tokens ?? 0),
    output_tokens: total.output_tokens + (usage.output_tokens ?? 0),
    cache_creation_input_tokens: total.cache_creation_input_tokens + (usage.cache_creation_input_tokens ?? 0),
    cache_read_input_tokens: total.cache_read_input_tokens + (usage.cache_read_input_tokens ?? 0),
    server_tool_use: {
      web_search_requests: total.server_tool_use.web_search_requests + (server?.web_search_requests ?? 0),
      web_fetch_requests: total.server_tool_use.web_fetch_requests + (server?.web_fetch_requests ?? 0),
    },
  };
}

/** A copy the caller may change (`structuredClone` costs ~100× more, and sub-agents read it on every call). */
export function copyUsage(usage: Usage): Usage {
  const { web_search_requests, web_fetch_requests } = usage.server_tool_use;
  return {
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
    server_tool_use: { web_search_requests, web_fetch_requests },
  };
}

/** What `now` adds to `before` (the usage of a sub-agent's run since it started or resumed). */
export function usageSince(now: Usage, before: Usage): Usage {
  return {
    input_tokens: now.input_tokens - before.input_tokens,
    output_tokens: now.output_tokens - before.output_tokens,
    cache_creation_input_tokens: now.cache_creation_input_tokens - before.cache_creation_input_tokens,
    cache_read_input_tokens: now.cache_read_input_tokens - before.cache_read_input_tokens,
    server_tool_use: {
      web_search_requests: now.server_tool_use.web_search_requests - before.server_tool_use.web_search_requests,
      web_fetch_requests: now.server_tool_use.web_fetch_requests - before.server_tool_use.web_fetch_requests,
    },
  };
}
