/**
 * A run's budget (`options.budget`): a ceiling on its tokens, and on its tool calls (in all, and
 * per tool). Tokens stop the run before a request; a call past a call limit is not run, and is
 * answered with an `is_error` result saying so.
 */
import type { Budget } from './run-control-options.js';
import type { Usage } from './usage.js';

/** What a snapshot keeps of a budget: the calls counted so far. */
export interface BudgetJSON {
  toolCalls: number;
  perTool: Record<string, number>;
  /** The iteration of the first reply that called past a limit (a later one stops the run). */
  overAt?: number;
}

/** The tokens a run has used, as `maxTokens` counts them. */
export function tokensOf(usage: Usage): number {
  return usage.input_tokens + usage.output_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
}

/** The budget of one run and what it has used of its calls. */
export class RunBudget {
  readonly #budget: Budget;
  #toolCalls = 0;
  readonly #perTool = new Map<string, number>();
  #overAt: number | undefined;
  /** `onLimit: 'answer'`: a call that stops the run is read by the model at once, in the request for its answer. */
  readonly #answersAtStop: boolean;

  constructor(budget: Budget, snapshot?: BudgetJSON, answersAtStop = false) {
    this.#budget = budget;
    this.#answersAtStop = answersAtStop;
    if (snapshot) this.restore(snapshot);
  }

  /** Counts from `json` again (a snapshot's, or the counts before a reply that was not kept). */
  restore(json: BudgetJSON): void {
    this.#toolCalls = json.toolCalls;
    this.#perTool.clear();
    for (const [name, count] of Object.entries(json.perTool)) this.#perTool.set(name, count);
    this.#overAt = json.overAt;
  }

  /** The run's tokens have reached `maxTokens`: no more requests. */
  tokensReached(usage: Usage): boolean {
    const max = this.#budget.maxTokens;
    return max !== undefined && tokensOf(usage) >= max;
  }

  /** The tokens the run has left under `maxTokens` (none, or fewer: reached); `undefined` without it. */
  tokensLeft(usage: Usage): number | undefined {
    const max = this.#budget.maxTokens;
    return max === undefined ? undefined : max - tokensOf(usage);
  }

  tokensReachedText(usage: Usage): string {
    return `budget.maxTokens reached: ${tokensOf(usage)} of ${this.#budget.maxTokens} tokens`;
  }

  /** The text of a not-run result for the tokens: the run reached `maxTokens`. */
  tokensText(name: string, usage: Usage): string {
    return `Error: the call to '${name}' was not run: the run reached its limit of ${this.#budget.maxTokens} tokens (budget.maxTokens; ${tokensOf(usage)} used). Answer with what you have.`;
  }

  /**
   * A call of the reply of `iteration`, in the model's order: counted, or past a call limit (not
   * run) with the text of its result, and whether an earlier reply called past a limit already.
   */
  admit(name: string, iteration: number): { text: string; again: boolean } | undefined {
    const { maxToolCalls } = this.#budget;
    const perTool = this.#maxCallsOf(name);
    const calls = this.#perTool.get(name) ?? 0;
    let limit: string | undefined;
    let otherTools = false;
    if (maxToolCalls !== undefined && this.#toolCalls >= maxToolCalls) {
      limit = `the run reached its limit of ${maxToolCalls} tool calls (budget.maxToolCalls)`;
    } else if (perTool !== undefined && calls >= perTool) {
      limit = `'${name}' reached its limit of ${perTool} calls in this run (budget.maxCallsPerTool)`;
      otherTools = true;
    }
    if (limit === undefined) {
      this.#toolCalls++;
      this.#perTool.set(name, calls + 1);
      return undefined;
    }
    this.#overAt ??= iteration;
    const again = this.#overAt !== iteration;
    let next = 'Answer with what you have.';
    // A call that stops the run is read only by a run that goes on after the stop (resumed with a larger budget,
    // say); with `onLimit: 'answer'`, in the request for the answer, which may call no tool.
    if (again && !this.#answersAtStop) next = 'The run stopped there and has gone on since: call it again if you still need it.';
    else if (!again && otherTools) next = 'Answer with what you have, or use another tool.';
    return { text: `Error: the call to '${name}' was not run: ${limit}. ${next}`, again };
  }

  #maxCallsOf(name: string): number | undefined {
    const max = this.#budget.maxCallsPerTool;
    return typeof max === 'object' && max !== null ? (Object.hasOwn(max, name) ? max[name] : undefined) : max;
  }

  toJSON(): BudgetJSON {
    const json: BudgetJSON = { toolCalls: this.#toolCalls, perTool: Object.fromEntries(this.#perTool) };
    if (this.#overAt !== undefined) json.overAt = this.#overAt;
    return json;
  }
}

/**
 * The type of a server tool's definition (`web_search_20250305`, ...): the API runs its calls within the turn, never the
 * runner. A tool search's goes without its date too (`tool_search_tool_regex`), as the SDK types it.
 */
const SERVER_TOOL_TYPE = /^(?:(?:web_search|web_fetch|code_execution|advisor)_\d{8}|tool_search_tool_(?:regex|bm25)(?:_\d{8})?)$/;

/**
 * The names a server call (`server_tool_use`) goes by that no definition has: the code execution tool's calls are named
 * `bash_code_execution` and `text_editor_code_execution` in the reply, and a caller reading them there caps those names.
 */
const SERVER_CALL_NAMES = new Set(['bash_code_execution', 'text_editor_code_execution']);

/**
 * What a `budget.maxCallsPerTool` object limits nothing with: a key that names none of the run's tools (likely misspelt;
 * a warning, not an error: `addTools()` may bring the tool later), and one that names a server tool, whose calls the API
 * runs within the turn (`server_tool_use`): the budget never sees them, so it cannot refuse them.
 */
export function perToolWarnings(perTool: unknown, definitions: readonly unknown[] | undefined): string[] {
  if (typeof perTool !== 'object' || perTool === null) return [];
  const names = new Set<string>();
  const server = new Set<string>();
  // A definition without a name (an MCP connector's toolset) has tools no name here tells: any key may be one of them.
  let unnamed = false;
  for (const definition of definitions ?? []) {
    const { name, type } = definition as { name?: unknown; type?: unknown };
    if (typeof name !== 'string') {
      unnamed = true;
      continue;
    }
    names.add(name);
    if (typeof type === 'string' && SERVER_TOOL_TYPE.test(type)) server.add(name);
  }
  const keys = Object.keys(perTool);
  const servedCall = (key: string) => server.has(key) || (!names.has(key) && SERVER_CALL_NAMES.has(key));
  const unknown = unnamed ? [] : keys.filter((key) => !names.has(key) && !servedCall(key));
  const served = keys.filter(servedCall);
  const quoted = (list: Iterable<string>) => [...list].map((name) => `'${name}'`).join(', ');
  const warnings: string[] = [];
  if (unknown.length > 0) warnings.push(`budget.maxCallsPerTool names no tool of this run: ${quoted(unknown)} (its tools: ${quoted(names) || 'none'}); a misspelt name limits nothing`);
  if (served.length > 0) {
    warnings.push(`budget.maxCallsPerTool names a server tool: ${quoted(served)}; the API runs its calls within the turn, so the budget never sees them and limits nothing (a web search's or fetch's definition takes max_uses)`);
  }
  return warnings;
}
