/**
 * A toolset's member call as one of the run's calls: its lifecycle events, the run's concurrency and its tracing
 * around the member's own run (toolsets.ts, toolset-member.ts).
 */
import type { BetaRunnableToolset } from '@anthropic-ai/sdk/lib/tools/BetaRunnableToolset';
import { toolEnd } from './call-end.js';
import type { CallOutcome, ExecutionContext } from './execution-context.js';
import { runMemberGuarded } from './toolsets.js';
import { toolsetResultBlock } from './toolset-member.js';
import type { BetaToolResultBlockParam, BetaToolUseBlock } from './types.js';

/**
 * One call of a toolset, with its lifecycle events; a call never to run (`notRun`: the answer it gets) is answered
 * without running.
 */
export async function runToolsetMember(toolset: BetaRunnableToolset | undefined, family: string, toolUse: BetaToolUseBlock, context: ExecutionContext, notRun: string | undefined): Promise<CallOutcome> {
  const call = { id: toolUse.id, name: toolUse.name, input: toolUse.input, toolUse };
  context.emit?.({ type: 'tool.start', runner: context.runner, call });
  if (notRun !== undefined) {
    const result = toolsetResultBlock(toolUse, notRun, true);
    context.emit?.({ type: 'tool.end', runner: context.runner, call, result });
    return { result };
  }
  // Within the run's concurrency, as any call.
  const guarded = () => runMemberGuarded(toolset, family, toolUse, context);
  const run = async (): Promise<{ result: BetaToolResultBlockParam; cancelled: boolean }> => {
    const result = await (context.limiter ? context.limiter.run(guarded) : guarded());
    return { result, cancelled: result.is_error === true && context.signal?.aborted === true };
  };
  const { scope } = context;
  let outcome: { result: BetaToolResultBlockParam; cancelled: boolean };
  try {
    // In its span's context, when something traces (a toolset's span is named after the member, as the SDK's).
    outcome = scope ? await scope.toolCall({ runner: context.runner, call, tool: { name: toolUse.name }, signal: context.signal, byCaller: context.byCaller }, run) : await run();
  } catch (error) {
    // Aborted (or the toolset misused): the call ends with the error, as any call whose handling threw (execute.ts `endsSeen`).
    context.emit?.({ type: 'tool.end', runner: context.runner, call, error });
    throw error;
  }
  if (context.emit) {
    context.results.keepSettled(toolUse.id, outcome.result);
    context.emit(toolEnd(call, outcome.result, context, outcome.cancelled));
  }
  return outcome.cancelled ? outcome : { result: outcome.result };
}
