/**
 * Calls that waited for approval and will not run (an abort, a reply that was not kept): their wait
 * ends for the listeners too, with a `tool.end` marked `cancelled` (and the result the history
 * gives them, if any), a sub-agent's calls inside them with their `path`.
 */
import { abortedText, wentOnPastStartedText } from './call-texts.js';
import { abortedWaitingText, answeringEvery, toolUsesOf } from './history.js';
import { openApprovals } from './nested-approvals.js';
import type { RunContext } from './run-context.js';
import type { HeldCall } from './snapshot.js';
import type { BetaToolResultBlockParam, BetaToolUseBlock, ToolResultMessage } from './types.js';

/**
 * Aborted while calls waited for approval: each of `uses` is answered (a waiting one as aborted), and the waits end.
 * An agent's call waiting for a call inside its sub-agent had started: its sub-agent's finished calls ran.
 */
export function abortedWaits(run: RunContext, message: ToolResultMessage, uses: BetaToolUseBlock[], pending: HeldCall[]): ToolResultMessage {
  const started = new Set(pending.filter((call) => call.agent).map((call) => call.id));
  const answered = answeringEvery(message, uses, (use) => (started.has(use.id) ? abortedText(use.name) : abortedWaitingText(use.name)));
  const results = answered.content as BetaToolResultBlockParam[];
  endWaits(run, pending, (id) => results.find((block) => block.type === 'tool_result' && block.tool_use_id === id));
  return answered;
}

/**
 * The history went on past calls that waited for approval (`held`; `uses`: the calls of its last message): their waits
 * end. An agent's call had started (its sub-agent's finished calls ran): told 'not run', the model would call it again.
 */
export function wentOnPast(run: RunContext, held: readonly HeldCall[], uses: readonly BetaToolUseBlock[], settled: (id: string) => BetaToolResultBlockParam | undefined): void {
  endWaits(run, held);
  for (const call of held) if (call.agent && !uses.some((use) => use.id === call.id)) run.state.markNotRun(call.id, wentOnPastStartedText(call.name));
  // The calls of their reply that ran (needing no approval, or approved) answer with their results: told 'not run', the
  // model would make them again (a payment twice).
  const reply = run.state.messages.findLast((message) => toolUsesOf(message).some((use) => use.id === held[0]!.id));
  run.state.keepRanResults(toolUsesOf(reply).flatMap((use) => settled(use.id) ?? []));
}

/** Each held call's wait ends for the run's listeners (`resultOf`: the result the history gives it, if any). */
export function endWaits(run: RunContext, held: readonly HeldCall[], resultOf?: (id: string) => BetaToolResultBlockParam | undefined): void {
  const { emit, runner } = run;
  if (!emit) return;
  for (const call of held) {
    const result = resultOf?.(call.id);
    emit({ type: 'tool.end', runner, call: { id: call.id, name: call.name, input: call.input, toolUse: call.toolUse }, ...(result && { result }), cancelled: true });
    if (!call.agent) continue;
    for (const inner of openApprovals([call])) {
      const { id, name, input, toolUse, path, callPath } = inner;
      emit({ type: 'tool.end', runner, call: { id, name, input, toolUse }, cancelled: true, ...(path && { path }), ...(callPath && { callPath }) });
    }
  }
}
