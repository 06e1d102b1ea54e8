/**
 * Typed final output (`options.output`): the schema goes to the API as the structured output format
 * (`output_config.format`), and the final reply's text is parsed and validated into `runner.output`.
 * An invalid text gets a repair turn (a user message naming each failing field); still invalid, a
 * refusal or a cut-off reply is an `OutputError`.
 */
import { APIUserAbortError } from '@anthropic-ai/sdk';
import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';
import { COMPACTED_INTRO_START } from './compaction.js';
import { OutputError } from './errors.js';
import { STOPPED, unlessAborted } from './guards.js';
import { type AnySchema, type CompiledSchema, type SchemaValue, type ValidationIssue, compileSchema, listedIssues } from './schema.js';
import { unfinishedReply } from './stop-reason.js';
import { textOf } from './text.js';
import type { BetaMessage, BetaMessageParam } from './types.js';
import { thrownMessage } from './described.js';

/** Whether `params` (a run's, or a fallback entry's) give a structured output format of their own: `output_config.format` or `output_format`. */
export function namesOutputFormat(params: Record<string, unknown>): boolean {
  const config = params['output_config'] as { format?: unknown } | null | undefined;
  return config?.format != null || params['output_format'] != null;
}

/**
 * What `options.output` takes: a zod / Standard Schema / JSON Schema object schema. (A zod schema of another type,
 * `z.string()` say, is a TypeError when the runner is made: typed by its output, a `.transform()` to any value is fine.)
 */
export type OutputSchema = AnySchema;

/** The type of `runner.output` for an `options.output` schema (`unknown` without one). */
export type OutputOf<S> = [S] extends [undefined] ? unknown : SchemaValue<S>;

/** What a snapshot keeps of the output. */
export interface OutputJSON {
  /** The final reply's text the output was parsed from, once the run ended with one: a resumed run parses it again with the schema. */
  text?: string;
  /** The validated output, as older snapshots kept it (as JSON left it: a transformed value, a `Date`, did not survive); read when there is no text. */
  value?: unknown;
  /** Repair turns sent so far. */
  repaired: number;
  /** The issues of the final reply an `OutputError` was thrown for (the history's last message): going on asks for a repair. */
  failed?: ValidationIssue[];
}

/** The repair turns of a run by default. */
export const DEFAULT_OUTPUT_REPAIRS = 1;

const OWNER = { label: 'toolRunner', key: 'options.output', noun: 'options.output' };

/** The output schema of a run, what was parsed with it, and its repair turns. */
export class RunOutput {
  readonly #schema: CompiledSchema<unknown>;
  /** `output_config.format` as sent. */
  readonly #format: { type: 'json_schema'; schema: Record<string, unknown> };
  readonly #repairs: number;
  #repaired = 0;
  /** The output, and the text it was parsed from. */
  #value: { value: unknown; text: string } | undefined;
  /** Counts the times the output was read again or dropped: an asynchronous read of a resumed run's answer that ends after one is too late. */
  #changes = 0;
  /** The caller's `output_config` last merged with the format, and the merge (made again only when it changes). */
  #mergedFrom: unknown;
  #merged: Record<string, unknown> | undefined;
  /** The final reply an `OutputError` was thrown for, and its issues: iterating again asks for a repair. */
  #failed: { reply: BetaMessageParam; issues: ValidationIssue[] } | undefined;

  /**
   * Throws a clear error for a schema that is not an object schema, or that can't be sent as a
   * format. On resume: `last`, the history's last message (the reply a snapshot's failure is about);
   * `final`, the run's last reply (an older snapshot's output is parsed again from its text).
   */
  constructor(schema: OutputSchema, repairs: number, snapshot?: OutputJSON, last?: BetaMessageParam, final?: BetaMessage) {
    this.#schema = compileSchema(OWNER, schema);
    let sent: Record<string, unknown>;
    try {
      sent = transformJSONSchema(this.#schema.jsonSchema);
    } catch (error) {
      throw new TypeError(`toolRunner: options.output can't be sent as a structured output format: ${thrownMessage(error)}`);
    }
    this.#format = { type: 'json_schema', schema: sent };
    this.#repairs = repairs;
    if (snapshot) {
      this.#repaired = snapshot.repaired;
      this.#restore(snapshot, final);
      if (snapshot.failed && last) this.#failed = { reply: last, issues: snapshot.failed };
    }
  }

  /**
   * A run that ended with an output: its text parsed again with the schema supplied now, so that the
   * output has the schema's type (an older snapshot's stored value when the text does not pass).
   */
  #restore(snapshot: OutputJSON, final: BetaMessage | undefined): void {
    const older = 'value' in snapshot;
    const text = snapshot.text ?? (older && final ? textOf(final) : undefined);
    const stored = older ? { value: snapshot.value, text: text ?? '' } : undefined;
    if (text === undefined) {
      this.#value = stored;
      return;
    }
    const read = this.#read(text);
    if (!(read instanceof Promise)) {
      // The answer the run ended on does not fit the schema given on resume: a mistake of the caller's, said at once.
      if (!read.ok && !stored) throw new TypeError(`resumeToolRunner: the run ended on an answer that options.output does not take:\n${issueLines(read.issues)}\nResume with the output schema the run had.`);
      this.#value = read.ok ? { value: read.value, text } : stored;
      return;
    }
    // An asynchronous schema: the output once it has read the text (unless the run went on from that answer, or settled another, meanwhile).
    this.#value = stored;
    const changes = this.#changes;
    read.then((result) => {
      if (result.ok && this.#changes === changes) this.#value = { value: result.value, text };
    }, ignore);
  }

  /** The validated output, once the run ended with one. */
  get value(): unknown {
    return this.#value?.value;
  }

  /** The request's `output_config`: the caller's other keys, and the format. */
  requestConfig(callers: unknown): Record<string, unknown> {
    if (this.#merged === undefined || this.#mergedFrom !== callers) {
      this.#merged = { ...(typeof callers === 'object' && callers !== null ? callers : {}), format: this.#format };
      this.#mergedFrom = callers;
    }
    return this.#merged;
  }

  /**
   * The run is about to end on `reply`: stores its output, or returns the user message of a repair
   * turn (unless `limit`: the run is at a limit and may send no more request), or throws an `OutputError`. The run's
   * `signal`, aborted while the check runs, ends it (an async refinement whose lookup never answers): `APIUserAbortError`.
   * One that aborted before (in the loop body of the answer) is not a stop of this check: it runs to its end, as a
   * synchronous one does and as a hook called after the abort is waited for (hooks.ts).
   */
  async settle(reply: BetaMessage, replyParam: BetaMessageParam | undefined, limit: string | undefined, signal?: AbortSignal): Promise<BetaMessageParam | undefined> {
    this.#value = undefined;
    this.#changes++;
    const text = textOf(reply);
    const reading = this.#read(text, true);
    const read = reading instanceof Promise ? await unlessAborted(reading, signal?.aborted ? undefined : signal) : reading;
    if (read === STOPPED) throw new APIUserAbortError();
    const stopReason = reply.stop_reason;
    // A reply the model declined, or that was cut off, is not read as output, nor repaired.
    const unfinished = unfinishedReply(stopReason) !== undefined;
    if (read.ok && !unfinished) {
      this.#value = { value: read.value, text };
      this.newAnswer();
      return undefined;
    }
    const issues = read.ok ? [] : read.issues;
    const mayRepair = !unfinished && this.#repaired < this.#repairs;
    if (mayRepair && limit === undefined) {
      this.#repaired++;
      return repairMessage(issues);
    }
    if (replyParam) this.#failed = { reply: replyParam, issues };
    throw new OutputError(failureText(stopReason, issues, this.#repaired, mayRepair ? limit : undefined), { text, issues, stopReason });
  }

  /** The run goes on from the answer the output was read from (another request goes): no output until it ends again. */
  wentOn(): void {
    this.#value = undefined;
    this.#changes++;
  }

  /** The repair turns are each final answer's: the run goes on to another (valid output was read, or the loop body went on after a reply). */
  newAnswer(): void {
    this.#repaired = 0;
  }

  /**
   * Iterating again after an `OutputError`: the repair message to send, if the history still ends
   * with the reply it was thrown for (a history the caller changed goes as it is).
   */
  retry(last: BetaMessageParam | undefined): BetaMessageParam | undefined {
    const failed = this.#failed;
    this.#failed = undefined;
    if (failed && failed.reply === last) return repairMessage(failed.issues);
    // The caller went on from the failure with messages of its own: the next final answer gets its own repair turns.
    if (failed) this.newAnswer();
    return undefined;
  }

  /** The text parsed and validated; a promise only when the schema validates asynchronously (always, `once`, with code of the user's). */
  #read(text: string, once = false): Read | Promise<Read> {
    if (text.trim() === '') return { ok: false, issues: [{ path: '(root)', message: 'is missing: the reply has no text' }] };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return { ok: false, issues: [{ path: '(root)', message: `is not valid JSON (${thrownMessage(error)})` }] };
    }
    return once && this.#schema.validateOnce ? this.#schema.validateOnce(parsed) : this.#schema.validate(parsed);
  }

  /** `last`: the history's last message (a failure is kept only while the history still ends with its reply). */
  toJSON(last: BetaMessageParam | undefined): OutputJSON {
    // The caller went on with a message of its own (after a failure, or in the loop body after a reply):
    // the count restarts, as it will in the run (`retry`, `newAnswer`).
    const wentOn = this.#failed ? this.#failed.reply !== last : isCallersMessage(last);
    const json: OutputJSON = { repaired: wentOn ? 0 : this.#repaired };
    // The text, not the value: a parsed value (a Date, a URL a transform made) does not survive JSON or a clone.
    if (this.#value) json.text = this.#value.text;
    if (this.#failed && this.#failed.reply === last) json.failed = this.#failed.issues;
    return json;
  }
}

type Read = { ok: true; value: unknown } | { ok: false; issues: ValidationIssue[] };

const ignore = () => {};

const REPAIR_START = 'Your reply is not valid output for the required JSON schema:';

/** The repair turn's message: each failing field, and what to do. */
function repairMessage(issues: ValidationIssue[]): BetaMessageParam {
  // (At most 20 issues, each cut, as an invalid call's: an answer with hundreds of failing items would be repeated in full.)
  return { role: 'user', content: `${REPAIR_START}\n${listedIssues(issues)}\nReply again with only the corrected JSON.` };
}

/**
 * A user message neither a repair turn, the results of calls, nor the summary a compaction put in place of the
 * history (the run's own, which keeps the repair turns counted): the caller's (a question it pushed).
 */
function isCallersMessage(message: BetaMessageParam | undefined): boolean {
  if (message?.role !== 'user') return false;
  const { content } = message;
  if (typeof content === 'string') return !content.startsWith(REPAIR_START);
  if (content.length === 1 && content[0]!.type === 'text' && content[0]!.text.startsWith(COMPACTED_INTRO_START)) return false;
  return !content.some((block) => block.type === 'tool_result');
}

/** The issues as indented lines, a field's path and what is wrong with it (the error's `issues` hold them all). */
function issueLines(issues: readonly ValidationIssue[]): string {
  return listedIssues(issues, '  ');
}

/** `limit`: the limit the run reached, which left no request for a repair turn. */
function failureText(stopReason: string | null, issues: ValidationIssue[], repaired: number, limit: string | undefined): string {
  if (stopReason === 'refusal') return 'The model refused to give the output (stop_reason: refusal).';
  if (unfinishedReply(stopReason)) return `The final reply was cut off (stop_reason: ${stopReason}) before its output was complete.`;
  const lines = issueLines(issues);
  let after = repaired === 0 ? '' : ` after ${repaired} repair turn${repaired === 1 ? '' : 's'}`;
  if (limit !== undefined) after += ` (no ${repaired === 0 ? '' : 'further '}repair turn: the run reached its limit, ${limit})`;
  return `The final reply is not valid output for options.output${after}:\n${lines}`;
}
