/**
 * The run's own hooks, `onRequest` and `onMessage`, called in the context of the run's span when something traces (its
 * `invoke_agent` span, or the pass's `anthropic.messages.tool_runner`): neither can be in the request's span, which starts
 * after `onRequest` (the request it records is the one the hook left) and ends before `onMessage` (it measures the request).
 * Called outside any span, a span the hook started (an audit log's, a database's) was the root of a trace of its own.
 */
import { type Hooks, callHook } from './hooks.js';
import type { RunContext } from './run-context.js';

export function callRunHook<K extends 'onRequest' | 'onMessage'>(run: RunContext, name: K, signal: AbortSignal | null | undefined, ...args: Parameters<NonNullable<Hooks[K]>>) {
  const scope = run.tracing.scope;
  // No hook, nothing to scope: called as it is (the hot path of a run without hooks, no closure made).
  if (!scope?.hook || !run.options.hooks?.[name]) return callHook(run.options.hooks, name, signal, ...args);
  return scope.hook(run.runner, () => callHook(run.options.hooks, name, signal, ...args));
}
