/** The runner's params: the Messages create params plus runner-only keys, checked and split apart. */
import { AnthropicError } from '@anthropic-ai/sdk';
import { wrongType, wrongValue } from './described.js';
import { OPTION_KEYS, misspeltSetting } from './options.js';
import { type CompactionControl, checkCompactionControl } from './compaction.js';
import { rejectCompactionParam } from './server-compaction.js';
import { type RunnerSettings, SETTING_NAMES } from './settings.js';
import type { RunnerParams, ToolEntry } from './surface.js';
import type { BetaMessageParam } from './types.js';


export interface SplitParams {
  api: Record<string, unknown>;
  settings: RunnerSettings;
  messages: BetaMessageParam[];
  tools: ToolEntry[] | undefined;
}

/** `params` is an object: checked first (null failed with "Cannot read properties of null (reading 'tools')", from the options' check). */
export function checkParamsObject(params: unknown): void {
  if (typeof params !== 'object' || params === null) throw wrongType(params, 'toolRunner: params must be an object');
}

/** Checks the params and splits them into what is sent and what configures the runner. */
export function splitParams(params: RunnerParams): SplitParams {
  checkParamsObject(params);
  const { messages, tools, ...rest } = params;
  rejectCompactionParam(rest);
  if (!Array.isArray(messages)) throw new TypeError('toolRunner: params.messages must be an array of messages');
  messages.forEach((message, i) => {
    const { role, content } = (message ?? {}) as { role?: unknown; content?: unknown };
    if (role !== 'user' && role !== 'assistant' && role !== 'system') {
      throw new TypeError(`toolRunner: params.messages[${i}].role must be 'user', 'assistant' or 'system' (a system message, SDK 1.14), got ${JSON.stringify(role)}`);
    }
    if (typeof content !== 'string' && !Array.isArray(content)) {
      throw new TypeError(`toolRunner: params.messages[${i}].content must be a string or an array of content blocks`);
    }
  });
  const { thread } = params as { thread?: unknown };
  if (thread !== undefined && thread !== false) {
    // The SDK runner's words (a program may look for them), after ours.
    throw new TypeError('toolRunner: `thread` cannot be set in the params of a tool runner. The runner sets it for each request itself. To run without a message thread, pass `thread: false`.');
  }
  if (tools !== undefined && !Array.isArray(tools)) throw new TypeError('toolRunner: params.tools must be an array');
  // Copied key by key, not deleted from a copy: a deleted key leaves an object slow to copy and send.
  const api: Record<string, unknown> = {};
  const settings: Record<string, unknown> = {};
  for (const key in rest) {
    const value = (rest as Record<string, unknown>)[key];
    if (SETTING_NAMES.has(key)) {
      if (value !== undefined) settings[key] = value;
    } else if (!OPTION_KEYS.has(key)) {
      const setting = misspeltSetting(key);
      // Sent as it is, the API would refuse it (400); the SDK's runner sends it.
      if (setting) throw new TypeError(`toolRunner: unknown param \`${key}\`: did you mean \`${setting}\`?`);
      api[key] = value;
    } else if (value !== undefined) {
      // An option of the runner would go to the API as a field of the request, which the API refuses (400).
      throw new TypeError(`toolRunner: \`${key}\` is an option of the runner, not a request param: pass it in the third argument, toolRunner(client, params, { ${key} })`);
    }
  }
  // As the SDK's runner, whose thread refuses the pair when it is made (the same error).
  if (api['output_format'] && (api['output_config'] as { format?: unknown } | undefined)?.format) {
    throw new AnthropicError('Both output_format and output_config.format were provided. Please use only output_config.format (output_format is deprecated).');
  }
  checkCompactionControl(settings['compactionControl'] as CompactionControl | undefined);
  const max = settings['max_iterations'] as number | undefined;
  if (max !== undefined && !(Number.isInteger(max) && max >= 0)) {
    throw wrongValue(max, 'toolRunner: max_iterations must be a positive integer (or 0 for no limit, as in the SDK)');
  }
  return { api, settings: settings as RunnerSettings, messages, tools };
}

