/**
 * A durable run's runner (the agent's, or a sub-agent's) as its tools' steps see it: the very runner (`context.runner`
 * is `event.runner`, a `WeakMap` keyed by the run finds it), whose changes a tool's step may not make.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { TOOLSETS_NOT_DURABLE, TOOL_SOURCES_NOT_DURABLE } from '../agent-link.js';
import type { AnyTool, Runner } from '../surface.js';
import { isToolSource } from '../tool-set.js';
import { isRunnableToolset } from '../toolsets.js';

/** The name of the tool whose step runs in this async context (its code, and what it awaits). */
const toolStep = new AsyncLocalStorage<string>();

/** Runs a tool's step: what it calls on a durable run's runner is refused when it changes the run. */
export function inToolStep<T>(name: string, run: () => T): T {
  return toolStep.run(name, run);
}

/**
 * What a tool's step may not call on the run: what it changes, a recovery that replays the step would not (a call of a
 * tool the step added answered "not found" where it had run, a message it pushed missing from the history, params or
 * request options it set back as they were; a compaction it asked for not sent, the next turn's request replaying the
 * compaction's recorded reply).
 */
const CHANGES_THE_RUN = ['addTools', 'removeTools', 'pushMessages', 'setMessagesParams', 'setRequestOptions', 'compactBeforeNextTurn'] as const;

/**
 * Makes `runner` a durable run's: its changes refused in its tools' steps, and the tools added to it (by an `onEvent`
 * listener, which runs again on recovery) made steps by `asStep`, as its own are (a toolset as it is: refused).
 * The methods are the runner's own fields, so that the runner stays the very object its listeners and tools get.
 */
export function durableRunner(runner: Runner, asStep: (tool: AnyTool) => AnyTool): void {
  const steps = (tools: unknown[]) =>
    tools.map((entry) => {
      // A source's tools (MCP) would be no steps, run again on recovery: refused, as in the agent's own tools.
      if (isToolSource(entry)) throw new TypeError(`durableToolRunner: ${TOOL_SOURCES_NOT_DURABLE}`);
      return isRunnableToolset(entry) ? entry : asStep(entry as AnyTool);
    });
  // (Params the runner refuses go as they are, for its error.)
  const withSteps = (params: unknown) => {
    const tools = typeof params === 'object' && params !== null ? (params as { tools?: unknown }).tools : undefined;
    if (!Array.isArray(tools)) return params;
    // A toolset's calls would be no steps either (addTools refuses one itself).
    if (tools.some(isRunnableToolset)) throw new TypeError(`durableToolRunner: ${TOOLSETS_NOT_DURABLE}`);
    return { ...(params as object), tools: steps(tools) };
  };
  for (const key of CHANGES_THE_RUN) {
    const own = (runner[key] as (...args: unknown[]) => unknown).bind(runner);
    const changed = (...args: unknown[]) => {
      const name = toolStep.getStore();
      if (name !== undefined) {
        throw new TypeError(
          `durableToolRunner: tool '${name}' called runner.${key}(), which a durable run's tool cannot: its step is not run again on recovery, and the change would be lost. Make it in an onEvent listener (event.runner), which runs again on recovery`,
        );
      }
      if (key === 'addTools') return own(...steps(args));
      // New params' tools are steps too: a listener may give the run a tool there as with addTools.
      const [given] = args;
      if (key === 'setMessagesParams') return own(typeof given === 'function' ? (previous: unknown) => withSteps(given(previous)) : withSteps(given));
      return own(...args);
    };
    Object.defineProperty(runner, key, { value: changed, writable: true, configurable: true });
  }
}
