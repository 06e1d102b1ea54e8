/**
 * The options of run control (SPEC §9.2): a typed final output, a budget, a loop guard, and what a
 * limit does. Their types, and the checks that turn bad values into clear errors at construction.
 */
import { wrongValue } from './described.js';
import type { OutputSchema } from './output.js';

/** `options.budget`. */
export interface Budget {
  /** Input + output + cache-creation + cache-read tokens of every request (summaries too): no request once the total reaches it. */
  maxTokens?: number | undefined;
  /** Tool calls in the whole run: calls past it are not run. */
  maxToolCalls?: number | undefined;
  /** Calls of each tool (a number), or of the tools named (a record by tool name): calls past it are not run. */
  maxCallsPerTool?: number | Readonly<Record<string, number>> | undefined;
}

/** `options.loopGuard`. */
export interface LoopGuardOptions {
  /** How many identical calls (same name, deep-equal input) run; the next one is answered as a repeat instead. */
  maxRepeats: number;
}

/** `options.onLimit`: stop where the limit is hit, or ask the model for its answer first. */
export type OnLimit = 'stop' | 'answer';

/** The run-control keys of the runner's options. */
export interface RunControlOptions<Output extends OutputSchema | undefined = OutputSchema | undefined> {
  /**
   * A zod / Standard Schema / JSON Schema object schema for the run's final answer: sent as the
   * structured output format (`output_config.format`), and the final text parsed and validated into
   * `runner.output` (typed from the schema).
   */
  output?: Output;
  /** Repair turns for a final text that does not validate (a user message naming each failing field). Default 1. */
  outputRepairs?: number | undefined;
  /** A ceiling on the run's tokens and tool calls. */
  budget?: Budget | undefined;
  /** Stops a model that repeats the same call (off by default). */
  loopGuard?: LoopGuardOptions | undefined;
  /**
   * `'answer'`: when `max_iterations` or the budget stops a run whose last reply asked for tools,
   * those calls are answered as not run and one more request (`tool_choice: none`) gets the model's
   * answer. Default `'stop'`.
   */
  onLimit?: OnLimit | undefined;
}

export const RUN_CONTROL_KEYS = ['output', 'outputRepairs', 'budget', 'loopGuard', 'onLimit'] as const;

const BUDGET_KEYS: ReadonlySet<string> = new Set(['maxTokens', 'maxToolCalls', 'maxCallsPerTool']);

/** Throws a clear error for a run-control option of the wrong kind or out of range (the output schema: output.ts). */
export function checkRunControlOptions(options: RunControlOptions): void {
  const { outputRepairs, budget, loopGuard, onLimit } = options;
  wholeNumber('outputRepairs', outputRepairs, 0);
  if (budget !== undefined) checkBudget(budget);
  if (loopGuard !== undefined) checkLoopGuard(loopGuard);
  if (onLimit !== undefined && onLimit !== 'stop' && onLimit !== 'answer') {
    throw new TypeError(`toolRunner: options.onLimit must be 'stop' or 'answer', got ${JSON.stringify(onLimit) ?? String(onLimit)}`);
  }
}

function checkBudget(budget: unknown): void {
  if (typeof budget !== 'object' || budget === null || Array.isArray(budget)) {
    throw new TypeError('toolRunner: options.budget must be an object: { maxTokens?, maxToolCalls?, maxCallsPerTool? }');
  }
  for (const key of Object.keys(budget)) {
    if (!BUDGET_KEYS.has(key)) throw new TypeError(`toolRunner: unknown key options.budget.${key}; the keys are ${[...BUDGET_KEYS].join(', ')}`);
  }
  const { maxTokens, maxToolCalls, maxCallsPerTool } = budget as Budget;
  wholeNumber('budget.maxTokens', maxTokens, 1);
  wholeNumber('budget.maxToolCalls', maxToolCalls, 0);
  // An array's entries would be read as limits of tools named '0', '1', ...: none of the run's.
  if (Array.isArray(maxCallsPerTool)) {
    throw new TypeError("toolRunner: options.budget.maxCallsPerTool must be a whole number (each tool's limit) or an object of limits by tool name ({ search: 3 }), got an array");
  }
  if (typeof maxCallsPerTool === 'object' && maxCallsPerTool !== null) {
    for (const [name, max] of Object.entries(maxCallsPerTool)) wholeNumber(`budget.maxCallsPerTool['${name}']`, max, 0);
  } else {
    wholeNumber('budget.maxCallsPerTool', maxCallsPerTool, 0);
  }
}

function checkLoopGuard(guard: unknown): void {
  if (typeof guard !== 'object' || guard === null || Array.isArray(guard)) throw new TypeError('toolRunner: options.loopGuard must be an object: { maxRepeats }');
  for (const key of Object.keys(guard)) {
    if (key !== 'maxRepeats') throw new TypeError(`toolRunner: unknown key options.loopGuard.${key}; the key is maxRepeats`);
  }
  const { maxRepeats } = guard as { maxRepeats?: unknown };
  if (maxRepeats === undefined) throw new TypeError('toolRunner: options.loopGuard.maxRepeats is required (how many identical calls run)');
  wholeNumber('loopGuard.maxRepeats', maxRepeats, 1);
}

/** A limit: none, or a whole number of at least `least`. */
function wholeNumber(name: string, value: unknown, least: 0 | 1): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < least) {
    throw wrongValue(value, `toolRunner: options.${name} must be a whole number of at least ${least}`);
  }
}
