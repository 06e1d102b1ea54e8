/** Runs the tool calls of one assistant message into `tool_result` blocks, in the model's order. */
import type { LeveledLogger } from './log.js';
import { formatIssues } from './schema.js';
import { type RunnableTool, type ToolContext } from './tool.js';
import { thrownValueToContent } from './tool-error.js';
import { errorResult } from './history.js';
import type { ToolRunner } from './runner.js';
import type { BetaToolResultBlockParam, BetaToolUseBlock, ToolResultContent } from './types.js';

/** What running one call needs from the runner. */
export interface ExecutionContext {
  tools: ReadonlyMap<string, RunnableTool>;
  logger: LeveledLogger;
  signal: AbortSignal | undefined;
  iteration: number;
  runner: ToolRunner<boolean>;
}

/** Runs one call: find the tool, validate the input, run it, and turn any failure into an `is_error` result. */
export async function executeToolCall(
  toolUse: BetaToolUseBlock,
  context: ExecutionContext,
): Promise<BetaToolResultBlockParam> {
  const { logger } = context;
  const tool = context.tools.get(toolUse.name);
  if (!tool) {
    logger.warn(`Tool '${toolUse.name}' (${toolUse.id}) not found`);
    return errorResult(toolUse.id, `Error: Tool '${toolUse.name}' not found`);
  }
  if (context.signal?.aborted) return errorResult(toolUse.id, abortedText(tool.name));

  const validated = await validateInput(tool, toolUse.input);
  if (!validated.ok) {
    logger.warn(`Tool '${tool.name}' (${toolUse.id}) got invalid input`);
    if (logger.enabled('debug')) logger.debug(`Invalid input for '${tool.name}' (${toolUse.id}): ${validated.message}`);
    return errorResult(toolUse.id, validated.message);
  }

  const signal = context.signal ?? NEVER_ABORTED;
  const toolContext: ToolContext = {
    toolUse,
    toolUseBlock: toolUse,
    signal,
    iteration: context.iteration,
    runner: context.runner,
  };
  if (logger.enabled('debug')) logger.debug(`Running tool '${tool.name}' (${toolUse.id}) with input ${safeJson(validated.value)}`);
  try {
    const running = Promise.resolve().then(() => tool.run(validated.value, toolContext));
    const outcome = signal === NEVER_ABORTED ? { aborted: false as const, value: await running } : await untilAborted(running, signal);
    if (outcome.aborted) {
      running.catch(() => {});
      logger.warn(`Tool '${tool.name}' (${toolUse.id}) was aborted before it finished`);
      return errorResult(toolUse.id, abortedText(tool.name));
    }
    const content = resultContent(tool.name, outcome.value);
    if (logger.enabled('debug')) logger.debug(`Tool '${tool.name}' (${toolUse.id}) returned ${safeJson(content)}`);
    return content === undefined
      ? { type: 'tool_result', tool_use_id: toolUse.id }
      : { type: 'tool_result', tool_use_id: toolUse.id, content };
  } catch (thrown) {
    const stack = thrown instanceof Error ? (thrown.stack ?? `${thrown.name}: ${thrown.message}`) : String(thrown);
    logger.warn(`Tool '${tool.name}' (${toolUse.id}) failed: ${stack}`);
    return errorResult(toolUse.id, thrownValueToContent(thrown));
  }
}

/** The signal of tools in a run that cannot be aborted: one shared signal that never fires. */
const NEVER_ABORTED = new AbortController().signal;

type Validated = { ok: true; value: unknown } | { ok: false; message: string };

async function validateInput(tool: RunnableTool, input: unknown): Promise<Validated> {
  try {
    if (tool.validateInput) {
      const result = await tool.validateInput(input);
      return result.ok ? result : { ok: false, message: formatIssues(tool.name, result.issues) };
    }
    if (tool.parse) return { ok: true, value: tool.parse(input) };
    return { ok: true, value: input };
  } catch (thrown) {
    const reason = thrown instanceof Error ? thrown.message : String(thrown);
    return { ok: false, message: `Invalid input for tool '${tool.name}': ${reason}` };
  }
}

/**
 * A string is sent as the result's content, which the API reads as one text block (as the SDK
 * sends it); content blocks pass through; anything else is the tool's bug.
 */
function resultContent(toolName: string, value: unknown): ToolResultContent | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (Array.isArray(value)) return value as ToolResultContent;
  throw new TypeError(
    `Tool '${toolName}' returned ${value === null ? 'null' : typeof value}; return a string (JSON.stringify structured data) or an array of content blocks`,
  );
}

const abortedText = (name: string) => `Error: the call to '${name}' was aborted before it finished.`;

type Outcome<T> = { aborted: true } | { aborted: false; value: T };

/** Settles with the promise, or with `aborted` as soon as the signal aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<Outcome<T>> {
  if (signal.aborted) return Promise.resolve({ aborted: true });
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve({ aborted: true });
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ aborted: false, value });
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
