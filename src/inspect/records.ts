/**
 * What the inspector keeps of each lifecycle event: a record made of plain JSON (the event without
 * its `runner`, with the run's id and the time), the same for the page, the recorded file and the
 * CLI that serves one. Contents (tool inputs and results, the model's text, the prompt) are kept
 * only when the inspector captures them.
 */
import { hiddenMessage } from '../output-error-text.js';
import type { RunnerEvent } from '../events.js';
import type { Runner } from '../surface.js';
import { textOf } from '../text.js';
import type { BetaMessage, BetaToolResultBlockParam } from '../types.js';
import type { Usage } from '../usage.js';
import { cutText } from '../cut.js';
import { withoutHeaderValues } from '../header-values.js';

/** Fields every record has. */
export interface RecordBase {
  /** The run's id in this inspector (one per runner object; sub-agents' events carry their parent's). */
  run: string;
  /** Milliseconds since the epoch. */
  time: number;
  /** The sub-agent the event comes from (`agentTool` names, outermost first); absent for the run's own events. */
  path?: string[];
  /** With `path`: the id of the call that started each of those sub-agents (absent in records of older versions). */
  callPath?: string[];
}

/** Where a call is: its run, and the sub-agent it belongs to (none for the run's own calls). */
export type CallWhere = Pick<RecordBase, 'run' | 'path' | 'callPath'>;

/** An error as the page shows it: never the error object (its headers, its cause). */
export interface ErrorInfo {
  name: string;
  message: string;
  status?: number;
}

/** A reply's token counts. */
export interface RecordedUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** The known records; `OtherRecord` holds the plain fields of an event type this version does not know. */
export type InspectorRecord =
  | (RecordBase & {
      type: 'run.start';
      model?: string;
      prompt?: string;
      /** Recorded without contents (`captureContent: false`): a page over the recorded file says so. */
      captureContent?: false;
      /** The tokens the run had counted before this start (resumed from a snapshot, or iterated again); none when 0. */
      usage?: RecordedUsage;
    })
  | (RecordBase & {
      type: 'run.end';
      /** `waiting` when the run stopped with calls waiting for `runner.approve` / `runner.deny`. */
      state: 'finished' | 'failed' | 'waiting';
      stoppedBy?: string;
      error?: ErrorInfo;
      usage?: RecordedUsage;
      pending?: Array<{ id: string; name: string }>;
    })
  | (RecordBase & { type: 'request.start'; requestId: number; purpose: string; model?: string; messages?: number; serverCompaction?: true })
  | (RecordBase & {
      type: 'request.end';
      requestId: number;
      stopReason?: string | null;
      model?: string;
      usage?: RecordedUsage;
      text?: string;
      toolUses?: Array<{ id: string; name: string }>;
      error?: ErrorInfo;
      /** The fallback entry that answered (0-based), when not the primary; with `error`, the entry that failed last. */
      fallback?: number;
    })
  | (RecordBase & { type: 'request.text'; requestId: number; text: string })
  | (RecordBase & { type: 'agent.text'; text: string })
  | (RecordBase & { type: 'tool.start'; id: string; name: string; input?: unknown })
  | (RecordBase & {
      type: 'tool.end';
      id: string;
      name: string;
      /** The run stopped with this call waiting for `runner.approve` / `runner.deny`. */
      pending?: true;
      isError?: boolean;
      result?: string;
      timedOut?: true;
      truncated?: true;
      aborted?: true;
      denied?: true;
      /** What its handling threw (a hook, the approver): the run failed with it. */
      error?: ErrorInfo;
    })
  | (RecordBase & { type: 'approval.waiting'; id: string; name: string; input?: unknown })
  | (RecordBase & { type: 'approval.decided'; id: string; decision: 'allow' | 'deny' | 'aborted' | 'timedOut' | 'closed'; reason?: string; edited?: true; input?: unknown });

/** An event type this version does not know: its own string, number and boolean fields. */
export interface OtherRecord extends RecordBase {
  type: string;
  [field: string]: unknown;
}

/** How much of one captured text or value a record keeps. */
export const CAPTURE_LIMIT = 100_000;

/** The record of one event, or undefined for an event to leave out. Built field by field: it runs for every event. */
export function recordOf(event: RunnerEvent, run: string, time: number, capture: boolean): InspectorRecord | OtherRecord | undefined {
  let record: InspectorRecord | OtherRecord;
  switch (event.type) {
    case 'run.start': {
      record = { run, time, type: 'run.start' };
      if (typeof event.model === 'string') record.model = event.model;
      // What the run counted before this start (resumed from a snapshot, or iterated again): the page's usage so far
      // starts from it, as runner.usage does (a resumed run showed only its own requests' tokens, then, at its end, the
      // snapshot's too).
      const before = usageOf(event.runner.usage);
      if (before.input_tokens + before.output_tokens + before.cache_creation_input_tokens + before.cache_read_input_tokens > 0) record.usage = before;
      break;
    }
    case 'run.end':
      record = runEnd(run, time, event.runner, event.error, capture);
      break;
    case 'request.start': {
      const { body } = event;
      const model = body['model'];
      const messages = body['messages'];
      record = { run, time, type: 'request.start', requestId: event.requestId, purpose: event.purpose };
      if (typeof model === 'string') record.model = model;
      if (Array.isArray(messages)) record.messages = messages.length;
      if (body['compaction'] !== undefined) record.serverCompaction = true;
      break;
    }
    case 'request.end':
      record = requestEnd(run, time, event, capture);
      break;
    case 'request.text':
      if (!capture) return undefined;
      record = { run, time, type: 'request.text', requestId: event.requestId, text: event.text };
      break;
    case 'agent.text':
      if (!capture) return undefined;
      record = { run, time, type: 'agent.text', text: event.text };
      break;
    case 'tool.start':
      record = { run, time, type: 'tool.start', id: event.call.id, name: event.call.name };
      if (capture) record.input = clipValue(event.call.input);
      break;
    case 'tool.end':
      record = event.pending
        ? { run, time, type: 'tool.end', id: event.call.id, name: event.call.name, pending: true }
        : toolEnd(run, time, event.call.id, event.call.name, event.result, capture);
      if (event.error !== undefined) Object.assign(record, { isError: true, error: errorInfo(event.error, capture) });
      // A wait that ended without a result (the reply that made the call was not kept): cut short.
      else if (event.cancelled && !event.result) Object.assign(record, { aborted: true });
      break;
    default:
      record = otherRecord(run, time, event as unknown as Record<string, unknown>, capture);
  }
  const { path, callPath } = event as { path?: unknown; callPath?: unknown };
  if (Array.isArray(path) && path.length > 0) record.path = path.map(String);
  if (record.path && Array.isArray(callPath) && callPath.length === record.path.length) record.callPath = callPath.map(String);
  return record;
}

/** The prompt a run starts from: the text of its last user message (captured contents only). */
export function promptOf(runner: Runner): string | undefined {
  const last = runner.params.messages.at(-1);
  if (last?.role !== 'user') return undefined;
  const text = textOf(last);
  return text === '' ? undefined : clip(text);
}

function runEnd(run: string, time: number, runner: Runner, error: unknown, capture: boolean): InspectorRecord {
  const stoppedBy = (runner as { stoppedBy?: unknown }).stoppedBy;
  const pending = error === undefined ? runner.pendingApprovals.map(({ id, name }) => ({ id, name })) : [];
  return {
    run,
    time,
    type: 'run.end',
    state: error !== undefined ? 'failed' : pending.length > 0 ? 'waiting' : 'finished',
    ...(typeof stoppedBy === 'string' && { stoppedBy }),
    ...(error !== undefined && { error: errorInfo(error, capture) }),
    usage: usageOf(runner.usage),
    ...(pending.length > 0 && { pending }),
  };
}

function requestEnd(run: string, time: number, event: Extract<RunnerEvent, { type: 'request.end' }>, capture: boolean): InspectorRecord {
  const { message } = event;
  const fallback = (event as { fallback?: unknown }).fallback;
  const record: InspectorRecord = { run, time, type: 'request.end', requestId: event.requestId };
  if (typeof fallback === 'number') record.fallback = fallback;
  if (event.error !== undefined) record.error = errorInfo(event.error, capture);
  if (message) {
    record.stopReason = message.stop_reason;
    record.model = message.model;
    record.usage = usageOf(message.usage);
    let text = '';
    for (const block of message.content) {
      if (block.type === 'tool_use') (record.toolUses ??= []).push({ id: block.id, name: block.name });
      else if (capture && block.type === 'text') text += block.text;
    }
    if (text !== '') record.text = clip(text);
  }
  return record;
}

function toolEnd(run: string, time: number, id: string, name: string, result: BetaToolResultBlockParam | undefined, capture: boolean): InspectorRecord {
  const record: InspectorRecord = { run, time, type: 'tool.end', id, name };
  if (!result) return record;
  const text = resultText(result.content);
  if (result.is_error) {
    record.isError = true;
    // The runner's own texts for these outcomes (execute.ts, approval.ts), marked even when contents are not kept.
    if (/^Error: the call to '.*' timed out after \d+ ms/.test(text)) record.timedOut = true;
    else if (/^Error: the call to '.*' was aborted/.test(text)) record.aborted = true;
    else if (/^Error: the call to '.*' was denied by the user/.test(text)) record.denied = true;
  }
  if (text.includes('[truncated: ') && /\[truncated: the result had \d+ characters; only the first \d+ are shown\]/.test(text)) record.truncated = true;
  if (capture) record.result = clip(text);
  return record;
}

/** A result's content as one text: text blocks as they are, other blocks named. */
export function resultText(content: BetaToolResultBlockParam['content']): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((block) => {
      if (block.type === 'text') return block.text;
      const source = (block as { source?: { media_type?: unknown } }).source;
      return `[${block.type}${typeof source?.media_type === 'string' ? ` ${source.media_type}` : ''}]`;
    })
    .join('\n');
}

function usageOf(usage: Partial<Usage> | BetaMessage['usage'] | undefined): RecordedUsage {
  return {
    input_tokens: usage?.input_tokens ?? 0,
    output_tokens: usage?.output_tokens ?? 0,
    cache_creation_input_tokens: usage?.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: usage?.cache_read_input_tokens ?? 0,
  };
}

/**
 * An error's name, message and HTTP status: nothing else of it (the SDK's errors hold the response
 * headers), and no header's value its message quotes (`withoutHeaderValues`: it may be the API key).
 * Without captured contents, an `OutputError` names only the fields at fault: its message quotes the
 * model's answer.
 */
export function errorInfo(error: unknown, capture: boolean): ErrorInfo {
  if (!(error instanceof Error)) return { name: 'Error', message: withoutHeaderValues(String(error)) };
  const status = (error as { status?: unknown }).status;
  // (A message set to something else than a string is shown as its text.)
  const message = withoutHeaderValues(hiddenMessage(error, capture) ?? String(error.message));
  return { name: error.name, message, ...(typeof status === 'number' && { status }) };
}

/** An event type this version does not know (a newer runner's): its plain fields; text only when captured. */
function otherRecord(run: string, time: number, event: Record<string, unknown>, capture: boolean): OtherRecord {
  const record: OtherRecord = { run, time, type: String(event['type']) };
  for (const [key, value] of Object.entries(event)) {
    if (key === 'runner' || key === 'path' || key === 'callPath' || key === 'type' || key === 'run' || key === 'time') continue;
    if (key === 'text' && !capture) continue;
    if (typeof value === 'number' || typeof value === 'boolean') record[key] = value;
    else if (typeof value === 'string') record[key] = clip(value);
    else if (key === 'error' && value !== undefined) record[key] = errorInfo(value, capture);
  }
  return record;
}

/** A captured value (a call's input) as a record keeps it: itself, or past the limit its JSON, clipped. */
export function clipValue(value: unknown): unknown {
  if (typeof value === 'string') return clip(value);
  if (typeof value !== 'object' || value === null) return value;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    // Not JSON (a BigInt an onToolCall hook put there): said in words, so that the record (and its batch) can be written.
    return `[not JSON: ${(error as Error).message}]`;
  }
  return json === undefined || json.length <= CAPTURE_LIMIT ? value : clip(json);
}

function clip(text: string): string {
  return text.length <= CAPTURE_LIMIT ? text : `${cutText(text, CAPTURE_LIMIT)}\n[… ${text.length - CAPTURE_LIMIT} more characters not kept by the inspector]`;
}
