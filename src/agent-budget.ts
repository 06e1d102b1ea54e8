/**
 * A parent's `budget.maxTokens` bounds its sub-agents too: their usage is the run's (`runner.usage`), so a sub-agent
 * is lent what the run has left when its call starts, and sends no request once it has spent that.
 */
import type { AgentLink } from './agent-link.js';
import { tokensOf } from './budget.js';
import type { ToolRunnerOptions } from './options.js';
import { ToolError } from './tool-error.js';
import type { Usage } from './usage.js';

/**
 * Sets in `options` (the sub-agent's) the tokens the parent's run has left it, below a `maxTokens` of its own.
 * `counted`: what the parent already holds of a resumed sub-agent's usage (its own budget counts that too).
 * A sub-agent that would start with none left is not run: its call is answered as a call past the budget is.
 */
export function lendTokens(options: ToolRunnerOptions, link: AgentLink | undefined, name: string, counted: Usage | undefined): void {
  const tokens = link?.tokensLeft?.();
  if (!tokens) return;
  if (!counted && tokens.left <= 0) throw new ToolError(tokens.notRun(name));
  // Sub-agents run at once are each lent what was left when their call started: the run's budget stops it at its next request.
  // One that goes on (it had started) with none left runs what it holds, then stops before its next request (`maxTokens` is 1 at least).
  const maxTokens = Math.max(1, (counted ? tokensOf(counted) : 0) + tokens.left);
  const own = options.budget?.maxTokens;
  options.budget = { ...options.budget, maxTokens: own === undefined ? maxTokens : Math.min(own, maxTokens) };
}
