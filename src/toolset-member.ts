/**
 * One member call of a runnable toolset, by the SDK's contract: `toolset.run(context, toolUse)`
 * renders the result content; a `ToolError` is the member's own refusal and anything else it throws
 * becomes an `Error: <message>` result, both `is_error`; a call stopped by the run's abort is answered as aborted
 * (the run then rejects with the abort), and a `ToolsetUsageError` (your code misusing the toolset) ends the run.
 * Texts the model reads are one well-formed line, cut to the API's field limit.
 */
import { type BetaRunnableToolset, ToolsetContractError, ToolsetUsageError } from '@anthropic-ai/sdk/lib/tools/BetaRunnableToolset';
import type { BetaToolResultBlockParam, BetaToolUseBlock, ToolResultContent } from './types.js';
import { invalidResultKind } from './result-kind.js';
import { isToolError, thrownForLog } from './tool-error.js';
import type { LeveledLogger } from './log.js';
import { thrownMessage } from './described.js';
import { abortedText } from './call-texts.js';
import { wellFormed } from './cut.js';

/** The API's limit for a text field, and the most of an exception's text an error result holds. */
const FIELD_MAX = 4096;
/** A model-chosen name echoed in a text: at most this many code points. */
const NAME_MAX = 200;
/** Characters that would break or reorder the one line a name goes into: controls, line separators, bidi controls. */
const LINE_UNSAFE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g;

const NOT_EXECUTED: Readonly<Record<string, string>> = {
  browser: 'Not executed: an earlier action in this turn failed.',
  computer: 'Not executed: an earlier computer action in this turn failed.',
};

/** The text for a call not run because an earlier call of its toolset failed (the browser's for an unknown family). */
export function notExecutedText(family: string): string {
  return Object.prototype.hasOwnProperty.call(NOT_EXECUTED, family) ? NOT_EXECUTED[family]! : NOT_EXECUTED['browser']!;
}

/** A member call's result: echoes `toolset_name` (the API requires it). (Its content is made ready to send, an empty error too, by `runMemberGuarded`.) */
export function toolsetResultBlock(toolUse: BetaToolUseBlock, content: ToolResultContent, isError = false): BetaToolResultBlockParam {
  return {
    type: 'tool_result',
    tool_use_id: toolUse.id,
    toolset_name: (toolUse as { toolset_name?: string | null }).toolset_name ?? null,
    content,
    ...(isError && { is_error: true }),
  } as BetaToolResultBlockParam;
}

/** A model-chosen name inside single quotes in a text the model reads: one line, short, no quotes. */
export function quotedName(name: string): string {
  return cutPoints(wellFormed(name).replace(LINE_UNSAFE, ' ').trim(), NAME_MAX).replace(/[' ]+/g, ' ').trim();
}

/** Runs one member call of `toolset` into its result; what it throws is logged as a tool's is (execute.ts). */
export async function runToolsetMember(toolset: BetaRunnableToolset, family: string, toolUse: BetaToolUseBlock, signal: AbortSignal | undefined, logger: LeveledLogger): Promise<BetaToolResultBlockParam> {
  const called = (toolUse as { toolset_name?: unknown }).toolset_name;
  if (called !== family) {
    throw new ToolsetContractError(
      `tool_use ${JSON.stringify(toolUse.id)} (toolset_name=${JSON.stringify(called ?? null)}, name=${JSON.stringify(toolUse.name)}) is not a member call of the ${JSON.stringify(family)} toolset`,
    );
  }
  try {
    const result: unknown = await toolset.run({ toolUse, toolUseBlock: toolUse, signal } as never, toolUse);
    // Checked as a tool's result is: a value no result may hold would be sent, and refused by the API.
    const kind = invalidResultKind(result);
    if (kind !== undefined) return toolsetResultBlock(toolUse, `Error: the ${family} toolset returned ${kind} for '${quotedName(toolUse.name)}'; a result is a string or content blocks`, true);
    return toolsetResultBlock(toolUse, result as ToolResultContent);
  } catch (error) {
    if (error instanceof ToolsetUsageError) throw error;
    // Stopped by the run's abort: answered as any call cut short is (the run then rejects with the abort), so the
    // reply's other results stay in the history.
    if (signal?.aborted) return toolsetResultBlock(toolUse, abortedText(toolUse.name), true);
    // The member's own refusal without its text (a result: logged only at debug); anything else with its stack.
    if (isToolError(error)) logger.info(`Tool '${toolUse.name}' (${toolUse.id}) of the ${family} toolset answered with an error (a ToolError)`);
    else logger.warn(`Tool '${toolUse.name}' (${toolUse.id}) of the ${family} toolset failed: ${thrownForLog(error)}`);
    return toolsetResultBlock(toolUse, errorContent(error), true);
  }
}

/** What the model reads for a member's exception: a ToolError's text blocks, else `Error: <message>`, cut to the limit. */
function errorContent(error: unknown): ToolResultContent {
  if (isToolError(error)) {
    const content = error.content;
    // The API takes only text on an error result: an image a member attached is dropped, its text kept. (A lone
    // surrogate in it is mended with every tool result: result-sent.ts.)
    if (typeof content === 'string') return content;
    return content.filter((block) => block.type === 'text' && block.text !== '');
  }
  return cutPoints(`Error: ${thrownMessage(error)}`, FIELD_MAX);
}

/** The first `limit` code points of `text` (a cut by UTF-16 units could split a pair). */
function cutPoints(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = 0;
  let points = 0;
  for (const ch of text) {
    if (points === limit) break;
    points++;
    end += ch.length;
  }
  return text.slice(0, end);
}
