/**
 * The mock server's message threads: the conversations it holds between turns, by the id of the
 * reply that ends them, and the errors the API answers a thread request with.
 */
import { MESSAGE_THREADS_BETA } from '../thread.js';
import type { ScriptedError } from './api-errors.js';

/** What the request fields of a thread must keep: the server takes them from the thread. */
interface Fingerprint {
  model: string;
  system: string;
  tools: string;
}

/** The thread's system prompt and tools, as its create request gave them: the model sees them on every turn. */
export interface ThreadPrompt {
  system: unknown;
  tools: unknown;
}

/** The system prompt and tools the model sees: the body's, or on a thread's continue that sends none, the thread's (only those there are). */
export function promptSeen(body: { system?: unknown; tools?: unknown } | undefined, opened: OpenedThread | undefined): Partial<ThreadPrompt> {
  const held = opened && 'prompt' in opened ? opened.prompt : undefined;
  const system = body?.system ?? held?.system;
  const tools = body?.tools ?? held?.tools;
  return { ...(system !== undefined && { system }), ...(tools !== undefined && { tools }) };
}

interface HeldThread {
  messages: unknown[];
  fingerprint: Fingerprint;
  prompt: ThreadPrompt;
  /** A request continued from it and got its reply: it cannot be continued again. */
  continued: boolean;
  /** A request continuing from it is in progress. */
  inFlight: boolean;
}

/** How a thread request opens: the whole conversation the model sees, or the API's rejection. */
export type OpenedThread = { conversation: unknown[]; fingerprint: Fingerprint; prompt: ThreadPrompt; from: string | undefined } | { error: ScriptedError };

/** `hold`: threads work; `unsupported`: every thread request is rejected as `thread_unsupported_request`. */
export type ThreadSupport = 'hold' | 'unsupported';

/** The most threads held at once; the oldest are forgotten first, as a server expires them. */
const MAX_HELD = 100;

/** Request fields a thread cannot carry (a subset of the API's list). */
const UNSUPPORTED_FIELDS = ['context_management'];

export class ThreadStore {
  readonly #held = new Map<string, HeldThread>();
  readonly #support: ThreadSupport;

  constructor(support: ThreadSupport) {
    this.#support = support;
  }

  /** Opens a request that has a `thread` field. */
  open(body: any, betaHeader: string | string[] | undefined): OpenedThread {
    const betas = String(betaHeader ?? '').split(',').map((beta) => beta.trim());
    if (!betas.includes(MESSAGE_THREADS_BETA)) {
      return { error: { status: 400, message: `thread: the ${MESSAGE_THREADS_BETA} beta is required (anthropic-beta header)` } };
    }
    const unsupported = this.#support === 'unsupported' ? ['hipaa'] : UNSUPPORTED_FIELDS.filter((field) => body[field] !== undefined);
    if (unsupported.length > 0) {
      return rejection(400, 'thread_unsupported_request', `Threads do not support: ${unsupported.join(', ')}`, { unsupported });
    }
    const fingerprint = fingerprintOf(body);
    const thread = body.thread as { type?: unknown; previous_message_id?: unknown };
    // A malformed thread is a bad request, as the API answers it: read as a lost thread, a runner would replay and hide the bug.
    const shapeProblem = threadShapeProblem(thread);
    if (shapeProblem) return { error: { status: 400, message: `thread: ${shapeProblem}` } };
    if (thread.type === 'create') return { conversation: body.messages ?? [], fingerprint, prompt: { system: body.system, tools: body.tools }, from: undefined };
    const id = thread.previous_message_id as string;
    const held = this.#held.get(id);
    if (!held) return rejection(404, 'thread_not_found', `No usable thread state for previous_message_id ${id}`);
    if (held.inFlight) return rejection(400, 'thread_continue_in_flight', `Another request is still continuing from ${id}`);
    if (held.continued) return rejection(400, 'thread_already_continued', `${id} has already been continued`);
    const changed = (['model', 'system', 'tools'] as const).filter(
      (field) => body[field] !== undefined && fingerprint[field] !== held.fingerprint[field],
    );
    if (changed.length > 0) {
      return rejection(400, 'thread_fingerprint_mismatch', `Differs from the thread: ${changed.join(', ')}`);
    }
    held.inFlight = true;
    return { conversation: [...held.messages, ...(body.messages ?? [])], fingerprint: held.fingerprint, prompt: held.prompt, from: id };
  }

  /** The reply was delivered (or computed): hold the conversation under its id. */
  hold(opened: Exclude<OpenedThread, { error: ScriptedError }>, replyId: string, content: unknown[]): void {
    this.#end(opened.from, true);
    if (this.#held.size >= MAX_HELD) this.#held.delete(this.#held.keys().next().value!);
    this.#held.set(replyId, {
      messages: [...opened.conversation, { role: 'assistant', content }],
      fingerprint: opened.fingerprint,
      prompt: opened.prompt,
      continued: false,
      inFlight: false,
    });
  }

  /** The request ended: unless its reply is held (`hold`, after which this changes nothing), the thread it continued can be continued again. */
  release(opened: Exclude<OpenedThread, { error: ScriptedError }>): void {
    this.#end(opened.from, false);
  }

  #end(from: string | undefined, continued: boolean): void {
    const held = from === undefined ? undefined : this.#held.get(from);
    if (!held) return;
    held.inFlight = false;
    if (continued) {
      // Only its id is needed now, to answer `thread_already_continued`.
      held.continued = true;
      held.messages = [];
    }
  }

  /** Forgets every thread, as a server that lost its state would. */
  forget(): void {
    this.#held.clear();
  }
}

function fingerprintOf(body: any): Fingerprint {
  return { model: String(body.model), system: JSON.stringify(body.system ?? null), tools: JSON.stringify(body.tools ?? null) };
}

function rejection(status: number, code: string, message: string, details: Record<string, unknown> = {}): { error: ScriptedError } {
  return { error: { status, message, details: { error_code: code, ...details } } };
}

/** What makes `thread` no thread the API takes, in words; none for `{ type: 'create' }` or `{ type: 'continue', previous_message_id }`. */
function threadShapeProblem(thread: { type?: unknown; previous_message_id?: unknown }): string | undefined {
  if (typeof thread !== 'object' || thread === null) return `must be an object, got ${JSON.stringify(thread)}`;
  if (thread.type === 'create') return undefined;
  if (thread.type !== 'continue') return `type must be 'create' or 'continue', got ${JSON.stringify(thread.type)}`;
  if (typeof thread.previous_message_id !== 'string' || thread.previous_message_id === '') return 'a continue needs previous_message_id (the id of the reply it continues)';
  return undefined;
}
