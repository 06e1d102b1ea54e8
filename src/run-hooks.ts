/**
 * The run's own hooks, `onRequest` and `onMessage`, called in the context of the run's span when something traces (its
 * `invoke_agent` span, or the pass's `anthropic.messages.tool_runner`): neither can be in the request's span, which starts
 * after `onRequest` (the request it records is the one the hook left) and ends before `onMessage` (it measures the request).
 * Called outside any span, a span the hook started (an audit log's, a database's) was the root of a trace of its own.
 */
import { type Hooks, callHook } from './hooks.js';
import type { RunContext } from './run-context.js';

type RunHook = 'onRequest' | 'onMessage';

/**
 * Each of these hooks takes one argument, passed as one (not `...args`): a run without hooks, called for each request and
 * each reply, makes nothing (no array, no closure) and calls nothing more.
 */
export function callRunHook<K extends RunHook>(run: RunContext, name: K, signal: AbortSignal | null | undefined, arg: Parameters<NonNullable<Hooks[K]>>[0]): ReturnType<typeof callHook<K>> {
  const hooks = run.options.hooks;
  if (!hooks?.[name]) return undefined;
  const args = [arg] as Parameters<NonNullable<Hooks[K]>>;
  const scope = run.tracing.scope;
  return scope?.hook ? scope.hook(run.runner, () => callHook(hooks, name, signal, ...args)) : callHook(hooks, name, signal, ...args);
}
