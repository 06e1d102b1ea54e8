/** A tool result's content as the API gets it: a tool's and a toolset member's alike. */
import { wellFormedDeep } from './cut.js';
import { resultContentToSend } from './history.js';
import { truncateResult } from './truncate.js';
import type { BetaToolResultBlockParam, ToolResultContent } from './types.js';

/**
 * Sets `result`'s content as it is sent: each text well formed (a lone surrogate, from a tool that cut its text
 * inside an emoji, as U+FFFD: the API refuses it as invalid JSON, and would refuse every later request of the
 * history), blank text blocks left out (the API refuses them in a result too), a result left without any without
 * content, an error that says something (the API refuses an empty one), cut to `maxChars`.
 * Returns the content before the cut.
 */
export function setContentToSend(result: BetaToolResultBlockParam, maxChars: number): ToolResultContent | undefined {
  const uncut = resultContentToSend(result.content === undefined ? undefined : wellFormedDeep(result.content), result.is_error);
  if (uncut === undefined) delete result.content;
  else result.content = truncateResult(uncut, maxChars);
  return uncut;
}
