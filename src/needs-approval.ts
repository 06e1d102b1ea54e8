/**
 * Whether a call needs approval: the tool's `needsApproval`, `true` or a rule of the call's input. A
 * rule's answer must be a boolean (anything else fails the run: an approval never fails open), and
 * the run's signal ends a rule that hangs (a policy service that does not answer), and so does the tool's
 * timeout (`timeoutMs`: a `StepTimedOut`).
 */
import { described, quotingTypeError } from './described.js';
import { isThenable } from './completion.js';
import { STOPPED, StepTimedOut, stepWithin, timeoutReason } from './guards.js';
import { tie } from './on-abort.js';
import { HookError } from './hooks.js';
import type { RunnableTool, ToolContext } from './surface.js';

export async function needsApproval(tool: RunnableTool, input: unknown, context: ToolContext, timeoutMs: number | undefined): Promise<boolean | typeof STOPPED | StepTimedOut> {
  const rule = tool.needsApproval;
  if (typeof rule !== 'function') return rule === true;
  let answer: unknown;
  // With a time limit, the rule's signal is its own: tied to the run's, and aborted when the limit ends the wait.
  const own = timeoutMs === undefined ? undefined : new AbortController();
  const untie = own && tie(own, context.signal);
  try {
    answer = rule(input, own ? { ...context, signal: own.signal } : context);
    if (isThenable(answer)) {
      answer = await stepWithin(Promise.resolve(answer), context.signal, timeoutMs, () => own?.abort(timeoutReason(timeoutMs!)));
    }
  } catch (error) {
    throw new HookError(`needsApproval of '${tool.name}'`, error);
  } finally {
    untie?.();
  }
  if (answer === STOPPED || typeof answer === 'boolean' || answer instanceof StepTimedOut) return answer;
  const said = (shown: string) => `it returned ${shown}: a rule must return true or false (a promise of one)`;
  // A string is shown whole, and may be a field of the call's input returned for its truth (\`({ note }) => note\`): spans and
  // the inspector show it only when they capture contents.
  throw new HookError(`needsApproval of '${tool.name}'`, typeof answer === 'string' ? quotingTypeError(said, answer, described(answer), 'a string') : new TypeError(said(described(answer))));
}
